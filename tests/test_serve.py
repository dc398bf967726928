"""``nbsvm serve``: the answers against the model's own API, then the real server over HTTP
on a loopback port (the console script in a subprocess, not an in-process client): every
endpoint, the 4xx answers to bad input, and reload under concurrent requests."""
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from nbsvm import NBSVMClassifier  # noqa: E402
from nbsvm.errors import NBSVMError  # noqa: E402
from nbsvm.evaluation.explain import explain_text  # noqa: E402
from nbsvm.serve.registry import parse_models  # noqa: E402
from nbsvm.serve.scoring import predictions  # noqa: E402

from conftest import synthetic  # noqa: E402

NBSVM = Path(sys.executable).parent / "nbsvm"
JSON = {"content-type": "application/json"}
# the tests' plain requests: httpx.get() and httpx.post() build a client, and with it a TLS
# context, for every request (0.1 s of CPU each: most of these tests' time). One client
# without keep-alive sends each request on a connection of its own, as they did.
http = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))


def _texts_labels(docs):
    return [d.text for d in docs], [d.label for d in docs]


@pytest.fixture(scope="module")
def three_class():
    X, y = _texts_labels(synthetic(600, n_classes=3, seed=1))
    return NBSVMClassifier(n_bits=16, seed=0).fit(X, y), X[:40]


@pytest.fixture(scope="module")
def two_class():
    X, y = _texts_labels(synthetic(400, n_classes=2, seed=2))
    return NBSVMClassifier(n_bits=16, seed=0).fit(X, y), X[:40]


# ---- the answers, in process ----------------------------------------------------------------

def test_predictions_match_the_model(three_class):
    clf, X = three_class
    rows = predictions(clf, X)
    assert [r["label"] for r in rows] == list(clf.predict(X))
    P = clf.predict_proba(X)
    for r, p in zip(rows, P):
        assert r["probability"] == pytest.approx(p.max())
        assert [r["probabilities"][c] for c in clf.classes_] == pytest.approx(list(p))


def test_top_k_is_the_k_most_probable_classes(three_class):
    clf, X = three_class
    P = clf.predict_proba(X)
    for k in (1, 2, 3, 10):
        for r, p in zip(predictions(clf, X, top_k=k), P):
            order = np.argsort(-p, kind="stable")[:k]
            assert [t["label"] for t in r["top"]] == [clf.classes_[i] for i in order]
            assert [t["probability"] for t in r["top"]] == pytest.approx(list(p[order]))


def test_threshold_keeps_classes_at_or_above_it(three_class):
    clf, X = three_class
    P = clf.predict_proba(X)
    for r, p in zip(predictions(clf, X, threshold=0.2), P):
        assert {t["label"] for t in r["top"]} == {c for c, q in zip(clf.classes_, p) if q >= 0.2}
    with pytest.raises(NBSVMError, match="between 0 and 1"):
        predictions(clf, X, threshold=1.5)


def test_binary_score_is_signed_toward_the_predicted_label(two_class):
    clf, X = two_class
    s = clf.decision_function(X)
    for r, v, p in zip(predictions(clf, X), s, clf.predict_proba(X)):
        assert r["label"] == clf.classes_[int(v > 0)]
        assert r["score"] == pytest.approx(abs(v))
        assert r["probabilities"][clf.classes_[1]] == pytest.approx(p[1])


def test_parse_models_names():
    assert parse_models(["a/imdb.npz", "x=b/other.npz"]) == {"imdb": "a/imdb.npz", "x": "b/other.npz"}
    with pytest.raises(NBSVMError, match="two models named"):
        parse_models(["a/m.npz", "b/m.npz"])
    with pytest.raises(NBSVMError, match="model name"):
        parse_models(["bad name=m.npz"])


@pytest.mark.slow  # over 1.5 s (a process importing the server; make test-slow, run by CI)
def test_a_model_loaded_to_serve_has_its_kernels_loaded_already(two_class, tmp_path):
    """load_served predicts once: in a process of its own, with the server's modules
    imported (numba among them, so requests run the kernels) and no kernel loaded yet, the
    hashing kernel a request runs is loaded when the model is, not in the first request."""
    two_class[0].save(tmp_path / "m.npz")
    code = (
        "import sys, nbsvm.serve.app\n"
        "from nbsvm.text._ngram_ids import _hash_docs\n"
        "assert 'numba' in sys.modules and not _hash_docs.signatures\n"
        "from nbsvm.serve.registry import load_served\n"
        f"load_served('m', {str(tmp_path / 'm.npz')!r}, 1, 5)\n"
        "print(len(_hash_docs.signatures))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert int(out) >= 1


# ---- the real server ------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``nbsvm serve`` in a subprocess on a free loopback port, ready when /health answers.
    ``wait=False``: started, and :meth:`ready` waits for it (servers started together)."""

    def __init__(self, *args, log: Path, wait: bool = True):
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        with open(log, "w") as err:     # a file, not a pipe nobody reads
            self.proc = subprocess.Popen([str(NBSVM), "serve", *map(str, args), "--port",
                                          str(self.port)], stdout=err, stderr=err)
        if wait:
            self.ready()

    def ready(self) -> "Server":
        """Wait until /health answers (a minute at most); this server."""
        deadline = time.monotonic() + 60
        while True:
            if self.proc.poll() is not None:
                raise AssertionError(self.log.read_text())
            try:
                if http.get(self.url + "/health", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)

    def stop(self) -> str:
        self.proc.terminate()
        self.proc.wait(timeout=30)
        return self.log.read_text()


@pytest.fixture(scope="module")
def served(tmp_path_factory, three_class, two_class):
    folder = tmp_path_factory.mktemp("serve")
    three, two = folder / "topics.npz", folder / "polarity.npz"
    three_class[0].save(three)
    two_class[0].save(two)
    # what the server loads: the expected answers come from the same files
    loaded = {"topics": (NBSVMClassifier.load(three), three_class[1]),
              "pol": (NBSVMClassifier.load(two), two_class[1])}
    server = Server(three, f"pol={two}", "--max-body-mb", "0.5", "--allow-reload",
                    log=folder / "server.log")
    yield server, loaded, folder
    err = server.stop()
    assert "Traceback" not in err, err


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_predict_one_and_batch_over_http(served):
    server, models, _ = served
    clf, X = models["topics"]
    r = http.post(server.url + "/predict", json={"texts": X, "top_k": 2})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["model"] == "topics" and body["version"] == 1
    assert body["predictions"] == json.loads(json.dumps(predictions(clf, X, top_k=2)))
    # curl -d sends application/x-www-form-urlencoded, a type any page may send to any site:
    # refused, saying what to send (tests/test_serve_security.py has the rest)
    form = http.post(server.url + "/predict", content=json.dumps({"texts": X[:2], "top_k": 2}),
                     headers={"content-type": "application/x-www-form-urlencoded"})
    assert form.status_code == 415 and "-H 'Content-Type: application/json'" in form.text
    typed = http.post(server.url + "/predict", content=json.dumps({"texts": X[:2], "top_k": 2}),
                      headers={"content-type": "application/json; charset=utf-8"})
    assert typed.status_code == 200 and typed.json()["predictions"] == body["predictions"][:2]
    one = http.post(server.url + "/models/pol/predict", json={"text": models["pol"][1][0]}).json()
    assert one["model"] == "pol"
    assert one["predictions"][0]["label"] == models["pol"][0].predict([models["pol"][1][0]])[0]


def test_explain_over_http_sums_to_the_score(served):
    server, models, _ = served
    clf, X = models["pol"]
    r = http.post(server.url + "/explain", json={"text": X[3], "model": "pol"})
    assert r.status_code == 200, r.text
    e = r.json()
    local = explain_text(clf, X[3])
    assert e["class"] == local["class"] and e["score"] == pytest.approx(local["score"])
    assert e["constant"] + sum(g["contribution"] for g in e["ngrams"]) == pytest.approx(e["score"])
    assert "<span" in e["html"] and e["prediction"]["label"] == local["class"]


def test_models_health_metrics_schema_and_page(served):
    server, models, _ = served
    listed = http.get(server.url + "/models").json()
    assert [m["name"] for m in listed] == ["topics", "pol"]
    assert "path" not in listed[0] and str(server.log.parent) not in json.dumps(listed)
    assert listed[0]["classes"] == models["topics"][0].classes_
    info = http.get(server.url + "/models/pol").json()
    assert set(info["strongest"]) == set(models["pol"][0].classes_)
    assert http.get(server.url + "/health").json()["status"] == "ok"
    schema = http.get(server.url + "/openapi.json").json()
    assert {"/predict", "/explain", "/models", "/health", "/metrics",
            "/models/{name}/reload"} <= set(schema["paths"])
    page = http.get(server.url + "/")
    assert page.status_code == 200 and "<textarea" in page.text
    assert "http" not in page.text.replace("http-equiv", "")     # no external resources
    X = models["topics"][1][:3]
    assert http.post(server.url + "/predict", json={"texts": X}).status_code == 200
    metrics = http.get(server.url + "/metrics").text
    assert 'nbsvm_requests_total{method="POST",path="/predict",status="200"}' in metrics
    assert "nbsvm_request_seconds_bucket" in metrics
    assert 'nbsvm_documents_scored_total{model="topics"}' in metrics


@pytest.mark.parametrize("request_args, status, says", [
    (dict(content=b"{not json"), 422, "JSON"),
    (dict(json={"texts": ["a"], "text": "b"}), 422, "either 'text'"),
    (dict(json={"texts": "not a list"}), 422, "list"),
    (dict(json={"texts": [1, 2]}), 422, "string"),
    (dict(json={"text": "x", "top_k": 0}), 422, "greater than or equal to 1"),
    (dict(json={"text": "x", "surprise": 1}), 422, "Extra inputs"),
    (dict(json={"text": "x", "model": "nope"}), 404, "no model named 'nope'"),
    (dict(json={"texts": ["x"] * 1001}), 413, "at most 1,000"),
    (dict(json={"text": "x" * 100_001}), 413, "at most 100,000"),
    (dict(content=b"x" * 600_000), 413, "request body over"),
    (dict(content=iter([b"x" * 300_000] * 2)), 413, "request body over"),      # chunked
    (dict(json={"text": "x", "threshold": 7}), 422, "between 0 and 1"),
    # what the fuzz run found: inputs FastAPI's own 422 could not echo back (500 before)
    (dict(content=b'{"texts": [NaN, "x"]}'), 422, "valid string"),
    (dict(content=b'{"text": "x", "threshold": NaN}'), 422, "finite"),
    (dict(content=b'{"texts": ["\\ud800", 5]}'), 422, "valid string"),
    (dict(content=b'{"text": "x", "top_k": Infinity}'), 422, "top_k"),
    (dict(content=b'{"text": "\xff\xfe\xc3"}'), 422, "not UTF-8 text"),
    (dict(content=b"[" * 3000), 422, "nested too deeply"),
])
def test_bad_requests_get_a_4xx_with_a_message(served, request_args, status, says):
    server, _, _ = served
    r = http.post(server.url + "/predict", headers={"content-type": "application/json"},
                  **request_args)
    assert r.status_code == status, r.text
    assert says in r.text


def test_explain_answers_are_bounded_by_the_text_it_takes(served):
    """/explain answers about 100 bytes a character (98,000 characters answered 10 MB in
    0.9 s): it takes texts up to --max-explain-chars (20,000 by default), 413 beyond."""
    server, _, _ = served
    text = "great film with a fine cast "
    ok = http.post(server.url + "/explain", json={"text": (text * 800)[:20_000]}, timeout=60)
    assert ok.status_code == 200 and len(ok.content) < 4 * 2**20, len(ok.content)
    r = http.post(server.url + "/explain", json={"text": (text * 800)[:20_001]})
    assert r.status_code == 413 and "/explain takes at most 20,000" in r.text, r.text
    assert http.post(server.url + "/predict", json={"text": text * 800}).status_code == 200


def test_odd_but_valid_input_is_scored(served):
    """A lone surrogate (valid JSON, not valid UTF-8) scores as U+FFFD; an empty batch gives
    no predictions; explain handles both too."""
    server, models, _ = served
    clf, X = models["topics"]
    r = http.post(server.url + "/predict", content=b'{"texts": ["a \\ud800 b", "a \\ufffd b"]}',
                  headers=JSON)
    assert r.status_code == 200, r.text
    one, two = r.json()["predictions"]
    assert one == two
    r = http.post(server.url + "/predict", json={"texts": []})
    assert r.status_code == 200 and r.json()["predictions"] == []
    r = http.post(server.url + "/explain", content=b'{"text": "\\ud800 x"}', headers=JSON)
    assert r.status_code == 200 and "\ufffd" in r.json()["html"]


def test_unknown_paths_models_and_classes(served):
    server, _, _ = served
    assert http.get(server.url + "/nowhere").status_code == 404
    assert http.post(server.url + "/models/nope/reload").status_code == 404
    r = http.post(server.url + "/explain", json={"text": "x", "class": "nope"})
    assert r.status_code == 422 and "unknown class" in r.text
    assert http.get(server.url + "/predict").status_code == 405


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_reload_under_concurrent_requests(served, tmp_path):
    """Clients score the same texts while the file is replaced (write, rename) and reloaded,
    alternating two different models: every answer is complete, and equals what the model of
    its version gives (none mixes the two)."""
    server, models, folder = served
    X = models["topics"][1][:16]
    other_clf = NBSVMClassifier(n_bits=16, seed=0, ngrams=1).fit(
        *_texts_labels(synthetic(600, n_classes=3, seed=9)))
    files = {"a": folder / "topics_a.npz", "b": folder / "topics_b.npz"}
    models["topics"][0].save(files["a"])
    other_clf.save(files["b"])
    expected = {k: predictions(NBSVMClassifier.load(f), X) for k, f in files.items()}
    assert expected["a"] != expected["b"]
    target = folder / "topics.npz"
    by_version = {1: "a"}
    answers, failures, stop = [], [], threading.Event()

    def client():
        with httpx.Client(base_url=server.url, timeout=30) as c:
            while not stop.is_set():
                r = c.post("/predict", json={"texts": X})
                if r.status_code != 200:
                    failures.append(r.text)
                else:
                    answers.append(r.json())

    threads = [threading.Thread(target=client) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        for i in range(8):
            which = "b" if i % 2 == 0 else "a"
            tmp = folder / "topics.npz.tmp"
            tmp.write_bytes(files[which].read_bytes())
            os.replace(tmp, target)
            answered = len(answers)
            r = http.post(server.url + "/models/topics/reload", timeout=60)
            assert r.status_code == 200, r.text
            version = r.json()["version"]
            by_version[version] = which
            # until the clients are answered by the new version (it had slept 0.2 s)
            deadline = time.monotonic() + 30
            while not any(a["version"] == version for a in answers[answered:]):
                assert time.monotonic() < deadline and not failures, failures[:3]
                time.sleep(0.01)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not failures, failures[:3]
    assert len(answers) > 20
    seen = set()
    for a in answers:
        which = by_version[a["version"]]
        seen.add(which)
        assert a["predictions"] == json.loads(json.dumps(expected[which]))
    assert seen == {"a", "b"}
    tmp = folder / "topics.npz.tmp"         # leave the module's model as it was
    tmp.write_bytes(files["a"].read_bytes())
    os.replace(tmp, target)
    assert http.post(server.url + "/models/topics/reload", timeout=60).status_code == 200


def test_a_bad_file_on_reload_keeps_the_old_model(served, tmp_path):
    server, models, folder = served
    path = folder / "polarity.npz"
    good = path.read_bytes()
    before = http.get(server.url + "/health").json()["models"]["pol"]
    try:
        path.write_bytes(b"PK\x03\x04 not a model")
        r = http.post(server.url + "/models/pol/reload")
        assert r.status_code == 409, r.text  # the server's file, not the request
        assert http.get(server.url + "/health").json()["models"]["pol"] == before
        X = models["pol"][1][:3]
        r = http.post(server.url + "/predict", json={"texts": X, "model": "pol"})
        assert [p["label"] for p in r.json()["predictions"]] == list(models["pol"][0].predict(X))
    finally:
        path.write_bytes(good)


@pytest.mark.slow  # make test-slow: reloads are checked under concurrent requests elsewhere
def test_workers_watch_the_file_and_each_reloads_it(tmp_path, three_class):
    """``--workers 2`` watches the files: a model replaced on disk (write, rename) is served
    by every worker within a few seconds, with the new model's answers."""
    clf, X = three_class
    other = NBSVMClassifier(n_bits=16, seed=0, ngrams=1).fit(
        *_texts_labels(synthetic(600, n_classes=3, seed=9)))
    path = tmp_path / "m.npz"
    clf.save(path)
    other.save(tmp_path / "other.npz")
    expected = predictions(NBSVMClassifier.load(tmp_path / "other.npz"), X[:8])
    before = set(Path(tempfile.gettempdir()).glob("nbsvm-metrics-*"))
    server = Server(f"m={path}", "--workers", "2", log=tmp_path / "server.log")
    try:
        assert http.get(server.url + "/health").json()["models"]["m"] == 1
        os.replace(tmp_path / "other.npz", path)
        deadline, got, seen = time.monotonic() + 30, [], []
        while time.monotonic() < deadline:
            got = [http.post(server.url + "/predict", json={"texts": X[:8]}).json()
                   for _ in range(8)]           # new connections: both workers answer
            seen.append(got)
            if all(g["version"] == 2 for g in got):
                break
            time.sleep(0.3)
        assert all(g["version"] == 2 for g in got), [g["version"] for g in got]
        assert all(g["predictions"] == json.loads(json.dumps(expected)) for g in got)
        # /metrics sums the workers' counters (it had shown the one that answered: 11, 9,
        # 11, 9 for 20 requests)
        for _ in range(20):
            http.post(server.url + "/predict", json={"texts": X[:3]})
        sent = 20 + 8 * len(seen)
        predicts = 'nbsvm_requests_total{method="POST",path="/predict",status="200"}'
        # a worker counts a request once its answer is written: the last one may land just
        # after the client has it (75 of 76 seen once in CI), so the sums are awaited first
        deadline = time.monotonic() + 10
        while (_sample(http.get(server.url + "/metrics").text, predicts) < sent
               and time.monotonic() < deadline):
            time.sleep(0.1)
        for _ in range(6):  # then every read, whichever worker answers it, sums both
            text = http.get(server.url + "/metrics").text
            assert _sample(text, predicts) == sent
            assert _sample(text, 'nbsvm_documents_scored_total{model="m"}') == 60 + 64 * len(seen)
    finally:
        log = server.stop()
    assert "Traceback" not in log, log
    assert set(Path(tempfile.gettempdir()).glob("nbsvm-metrics-*")) <= before  # removed


def _sample(text: str, series: str) -> float:
    """The value of one series in Prometheus's text format."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith(series + " "))


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_serve_refuses_a_bad_model_file_before_listening(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a model")
    r = subprocess.run([str(NBSVM), "serve", str(bad), "--port", str(_free_port())],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "not an nbsvm model file" in r.stderr and "Traceback" not in r.stderr


# ---- real data: the IMDB slice, the page in a browser -----------------------------------------

@pytest.fixture(scope="module")
def imdb_served(imdb_slice, tmp_path_factory):
    from testhelpers import run_cli

    model = tmp_path_factory.mktemp("serve_imdb") / "imdb.npz"
    # the CLI in this process: no interpreter to start (the server is the subprocess here)
    r = run_cli("train", imdb_slice / "train", "-o", model, "--n-bits", "20", "-q")
    assert r.returncode == 0, r.stderr
    server = Server(model, log=model.parent / "server.log")
    yield server, model
    server.stop()


def test_imdb_served_answers_equal_nbsvm_predict(imdb_served, imdb_slice, tmp_path):
    server, model = imdb_served
    files = sorted((imdb_slice / "test" / "pos").iterdir())[:100] + \
        sorted((imdb_slice / "test" / "neg").iterdir())[:100]
    texts = [" ".join(f.read_text(encoding="utf-8").split()) for f in files]
    lines = tmp_path / "texts.txt"
    lines.write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    out = tmp_path / "pred.csv"
    from testhelpers import run_cli

    r = run_cli("predict", lines, "-m", model, "--format", "plain-lines", "-o", out, "-q")
    assert r.returncode == 0, r.stderr
    import pandas as pd
    expected = pd.read_csv(out)
    got = http.post(server.url + "/predict", json={"texts": texts}, timeout=60).json()
    assert [p["label"] for p in got["predictions"]] == list(expected["label"])
    P1 = [p["probabilities"]["pos"] for p in got["predictions"]]
    assert P1 == pytest.approx(list(expected["probability_pos"]), abs=1e-6)
    right = sum(p["label"] == ("pos" if i < 100 else "neg") for i, p in enumerate(got["predictions"]))
    assert right >= 160            # 80%+ on 200 test reviews: a working model


@pytest.mark.slow  # make test-slow: a Chromium page; the page's routes are checked over HTTP elsewhere
def test_page_in_a_headless_browser(imdb_served, tmp_path):
    """Debian's Chromium driven by Playwright: type a review, see the label and the shading."""
    pytest.importorskip("playwright")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
    import serve_page
    if not Path(serve_page.CHROMIUM).exists():
        pytest.skip(f"no Chromium at {serve_page.CHROMIUM} (apt-get install chromium)")
    server, _ = imdb_served
    shot = tmp_path / "page.png"
    seen = serve_page.browse(server.url + "/", serve_page.REVIEW, shot)
    assert seen["label"] == "pos" and seen["probability"].startswith("probability ")
    words = [w for w, _ in seen["shaded"]]
    assert "superb" in words and "wonderful" in words
    shade = dict(seen["shaded"])
    assert "0, 160, 0" in shade["superb"].replace("rgba(", "").replace("rgb(", "")
    assert seen["classes"] == ["neg", "pos"] or set(seen["classes"]) == {"neg", "pos"}
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:4] == b"\x89PNG"


def test_answers_are_sent_at_once_tcp_nodelay():
    """The listening socket names TCP, so asyncio turns Nagle off on each connection: without
    it an answer's second write waited for the client's delayed ACK, 40 ms a request
    (make serve-bench: single text 44 ms at one client instead of 0.5)."""
    import asyncio
    from nbsvm.serve.connections import _no_delay, bind_socket
    sock = bind_socket("127.0.0.1", 0)
    assert sock.proto == socket.IPPROTO_TCP
    sock.listen()
    client = socket.create_connection(sock.getsockname())
    conn, _ = sock.accept()
    loop = asyncio.new_event_loop()
    try:
        transport, _ = loop.run_until_complete(
            loop.connect_accepted_socket(asyncio.Protocol, conn))
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
        _no_delay(transport)                              # and the protocol sets it anyway
        assert conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
        transport.close()
    finally:
        loop.close()
        client.close()
        sock.close()


def test_a_watched_file_that_does_not_load_is_named_once_and_not_loaded_again(
        tmp_path, two_class, monkeypatch, caplog):
    """--watch kept serving the old model without a word (/health said ok, nothing was
    logged), and loaded the bad file again every second. Now the failure is logged once
    per version of the file and named in /health; a good file replacing it is served."""
    import logging

    import nbsvm.serve.registry as registry_module
    from starlette.testclient import TestClient

    from nbsvm.serve.app import create_app
    clf, _ = two_class
    path = tmp_path / "m.npz"
    clf.save(path)
    good, served_stat = path.read_bytes(), os.stat(path)
    monkeypatch.setattr(registry_module, "WATCH_INTERVAL", 0.0)
    app = create_app({"m": str(path)}, watch=True, allowed_hosts=["testserver"])
    loads = []
    real = registry_module.load_served
    monkeypatch.setattr(registry_module, "load_served",
                        lambda *a: loads.append(a) or real(*a))
    (tmp_path / "new").write_bytes(good[: len(good) // 2])      # a truncated model
    os.replace(tmp_path / "new", path)
    def health_when(client, done):  # a changed file is loaded in a thread of its own
        deadline = time.monotonic() + 30
        while not done(health := client.get("/health").json()):
            assert time.monotonic() < deadline, health
            time.sleep(0.01)
        return health

    with TestClient(app) as client, caplog.at_level(logging.WARNING, "uvicorn.error"):
        health_when(client, lambda h: "not_reloaded" in h)
        for _ in range(3):
            health = client.get("/health").json()
        assert health["models"] == {"m": 1} and len(loads) == 1
        assert health["not_reloaded"]["m"].startswith("model 'm' was not reloaded")
        assert str(tmp_path) not in health["not_reloaded"]["m"]
        assert sum("was not reloaded" in r.getMessage() for r in caplog.records) == 1
        os.replace(path, tmp_path / "away")                         # a deleted file too
        health = client.get("/health").json()
        assert health["models"] == {"m": 1} and "No such file" in health["not_reloaded"]["m"]
        assert sum("was not reloaded" in r.getMessage() for r in caplog.records) == 2
        path.write_bytes(good)                    # the served file back as it was (cp -p)
        os.utime(path, ns=(served_stat.st_atime_ns, served_stat.st_mtime_ns))
        health = client.get("/health").json()
        assert health["models"] == {"m": 1} and "not_reloaded" not in health
        os.replace(tmp_path / "away", path)
        (tmp_path / "new").write_bytes(good)
        os.replace(tmp_path / "new", path)
        os.utime(path, ns=(time.time_ns() + 10**9,) * 2)           # another stamp for sure
        health = health_when(client, lambda h: h["models"] != {"m": 1})
        assert health["models"] == {"m": 2} and "not_reloaded" not in health


def test_a_multilabel_tie_names_the_best_label_as_top_k_does(monkeypatch):
    """Probabilities flat beyond a margin tie: the answer's score and probability described
    the first tied label while its top-1 (and /explain) named the higher-scored one."""
    from nbsvm import NBSVMClassifier
    from nbsvm.datasets import fixture
    from nbsvm.serve.scoring import predictions
    rows = [line.rstrip("\n").split("\t", 1) for line in open(fixture("tags.txt"))]
    model = NBSVMClassifier(multilabel=True, n_bits=12).fit(
        [t for _, t in rows], [c.split(",") for c, _ in rows])
    raw = np.array([[1.467, -2.369, 1.506, -3.0]])
    monkeypatch.setattr(model, "decision_function", lambda texts: raw)
    values, kind = model.class_values(raw)
    assert kind == "probability" and values[0, 0] == values[0, 2] == 1.0  # a tie, really
    row = predictions(model, ["x"], top_k=1)[0]
    assert row["top"][0]["label"] == model.class_names_[2]
    assert row["score"] == pytest.approx(1.506)


def test_a_lone_surrogate_scores_the_same_through_every_path(tmp_path):
    """The server read "\\ud800" as U+FFFD, the Python API and a JSON lines file kept the
    surrogate, which hashed into other buckets: three paths, two scores. A label holding
    one broke every output file (UnicodeEncodeError)."""
    from starlette.testclient import TestClient

    from nbsvm import NBSVMClassifier
    from nbsvm.io.readers import read_inputs
    from nbsvm.serve.app import create_app
    X = ["bad \ud800 film", "good fun", "awful plot", "great cast"] * 3
    model = NBSVMClassifier(n_bits=12).fit(X, ["s\ud800", "pos", "s\ud800", "pos"] * 3)
    assert model.classes_ == ["pos", "s\ufffd"]
    model.save(tmp_path / "m.npz")
    (tmp_path / "t.jsonl").write_text('{"text": "bad \\ud800 film"}\n')
    [doc] = read_inputs([tmp_path / "t.jsonl"], labeled=False)
    api = model.decision_function(["bad \ud800 film"])[0]
    assert doc.text == "bad \ufffd film" and model.decision_function([doc.text])[0] == api
    client = TestClient(create_app({"m": str(tmp_path / "m.npz")}, allowed_hosts=["testserver"]))
    answer = client.post("/predict", content=b'{"text": "bad \\ud800 film"}',
                         headers={"content-type": "application/json"}).json()
    assert answer["predictions"][0]["score"] == pytest.approx(abs(api), abs=1e-12)


def test_a_path_and_a_body_naming_two_models_is_422(tmp_path):
    """POST /models/a/predict with "model": "b" answered with a, silently."""
    from starlette.testclient import TestClient

    from nbsvm import NBSVMClassifier
    from nbsvm.serve.app import create_app
    X, y = ["good fun", "bad dull"] * 4, ["pos", "neg"] * 4
    NBSVMClassifier(n_bits=10).fit(X, y).save(tmp_path / "a.npz")
    NBSVMClassifier(n_bits=10).fit(X, y).save(tmp_path / "b.npz")
    client = TestClient(create_app({"a": str(tmp_path / "a.npz"), "b": str(tmp_path / "b.npz")},
                                   allowed_hosts=["testserver"]))
    r = client.post("/models/a/predict", json={"text": "good", "model": "b"})
    assert r.status_code == 422 and "names model 'a' and the body 'b'" in r.text
    assert client.post("/models/a/predict", json={"text": "good", "model": "a"}).status_code == 200
    from nbsvm import NBSVMError
    with pytest.raises(NBSVMError, match="no documents to score"):  # was nan and a warning
        NBSVMClassifier.load(tmp_path / "a.npz").score([], [])


def test_a_watched_file_is_loaded_apart_while_the_old_model_serves(tmp_path, two_class,
                                                                   monkeypatch):
    """--watch loaded a changed file inside the request that noticed it, on the event loop:
    every request waited for the load (0.4-0.5 s for a 22 MB model). The load here blocks
    until released: requests are answered by the old model meanwhile."""
    import threading

    import nbsvm.serve.registry as registry_module
    from starlette.testclient import TestClient

    from nbsvm.serve.app import create_app
    clf, _ = two_class
    path = tmp_path / "m.npz"
    clf.save(path)
    monkeypatch.setattr(registry_module, "WATCH_INTERVAL", 0.0)
    app = create_app({"m": str(path)}, watch=True, allowed_hosts=["testserver"])
    release, real = threading.Event(), registry_module.load_served
    monkeypatch.setattr(registry_module, "load_served",
                        lambda *a: release.wait(30) and real(*a))
    clf.save(tmp_path / "new.npz")
    os.replace(tmp_path / "new.npz", path)
    os.utime(path, ns=(time.time_ns() + 10**9,) * 2)
    with TestClient(app) as client:
        for _ in range(5):  # the load waits; the requests do not
            r = client.post("/predict", json={"text": "a great film"})
            assert r.status_code == 200 and r.json()["version"] == 1
        release.set()
        deadline = time.monotonic() + 30
        while client.post("/predict", json={"text": "a great film"}).json()["version"] != 2:
            assert time.monotonic() < deadline
            time.sleep(0.01)


def test_a_small_body_with_a_large_answer_is_scored_off_the_event_loop(tmp_path, monkeypatch):
    """1,000 one-letter texts for a model of 200 classes: 5 KB of text, 18.5 MB of answer
    (a dict of 200 probabilities a text), made and encoded on the event loop, held every
    other client 0.7 s. The work is judged by the answer too; a short text for a few
    classes is still scored inline."""
    import asyncio

    import nbsvm.serve.app as app_module
    from starlette.responses import JSONResponse
    from starlette.testclient import TestClient

    where = []
    real = app_module._predictions

    def recorded(*args):
        try:
            asyncio.get_running_loop()
            where.append("loop")
        except RuntimeError:
            where.append("thread")
        return real(*args)

    monkeypatch.setattr(app_module, "_predictions", recorded)
    texts = [f"word{k} other{k}" for k in range(200) for _ in range(2)]
    many = NBSVMClassifier(n_bits=12, seed=0).fit(texts, [f"c{k}" for k in range(200) for _ in range(2)])
    many.save(tmp_path / "many.npz")
    few = NBSVMClassifier(n_bits=12, seed=0).fit(texts[:6], ["c0", "c0", "c1", "c1", "c2", "c2"])
    few.save(tmp_path / "few.npz")
    models = {"few": str(tmp_path / "few.npz"), "many": str(tmp_path / "many.npz")}
    app = app_module.create_app(models, allowed_hosts=["testserver"])
    with TestClient(app) as client:
        r = client.post("/predict", json={"text": "word1"})
        assert r.status_code == 200 and r.json()["predictions"][0]["label"] == "c1"
        r = client.post("/predict", json={"texts": ["a"] * 1000, "top_k": 200, "model": "many"})
        assert r.status_code == 200 and len(r.json()["predictions"]) == 1000
        # encoded in pieces (one call of the encoder held the GIL 0.4 s), the same bytes
        assert r.headers["content-type"] == "application/json"
        assert r.content == JSONResponse(r.json()).body
        assert r.json()["predictions"][0]["top"][0]["label"] == many.predict(["a"])[0]
    assert where == ["loop", "thread"]


def test_a_reload_asked_for_while_one_of_the_model_runs_is_refused(tmp_path, two_class,
                                                                   monkeypatch):
    """Each reload over HTTP loaded the model again beside the others: forty at once took
    the server from 246 MB to 2.4 GB. One at a time per model now: another is answered 503
    with Retry-After, and once the first is done a reload works again."""
    import threading

    import nbsvm.serve.registry as registry_module
    from starlette.testclient import TestClient

    from nbsvm.serve.app import create_app
    clf, _ = two_class
    clf.save(tmp_path / "m.npz")
    app = create_app({"m": str(tmp_path / "m.npz")}, allow_reload=True,
                     allowed_hosts=["testserver"])
    loading, release = threading.Event(), threading.Event()
    real = registry_module.load_served

    def slow(*args):
        loading.set()
        assert release.wait(30)
        return real(*args)

    monkeypatch.setattr(registry_module, "load_served", slow)
    with TestClient(app) as client:
        first = []
        worker = threading.Thread(target=lambda: first.append(client.post("/models/m/reload")))
        worker.start()
        assert loading.wait(30)
        r = client.post("/models/m/reload")
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert r.json()["detail"] == "a reload of model 'm' is under way: try again shortly"
        assert client.post("/predict", json={"text": "a great film"}).json()["version"] == 1
        release.set()
        worker.join(30)
        assert first[0].status_code == 200 and first[0].json()["version"] == 2
        r = client.post("/models/m/reload")
        assert r.status_code == 200 and r.json()["version"] == 3


def test_names_a_client_sends_are_quoted_cut_short(served):
    """A request naming a model of a million characters got a 404 of 11 MB (the name
    quoted whole, built on the event loop); an unknown class for /explain and unknown
    labels for /learn too. Each is cut to 80 characters (labels: three, 40 each)."""
    from starlette.testclient import TestClient

    from nbsvm.errors import shown_some
    from nbsvm.serve.app import create_app

    _, _, folder = served
    models = {"topics": str(folder / "topics.npz")}
    long = "\U000e0001" * 1_000_000
    with TestClient(create_app(models, allowed_hosts=["testserver"])) as client:
        r = client.post(f"/models/{'m' * 20_000}/predict", json={"text": "a great film"})
        assert r.status_code == 404 and len(r.content) < 2000
        assert r.json()["detail"].startswith(f"no model named {'m' * 80!r}...; served: ")
        r = client.post("/predict", json={"text": "a film", "model": long})
        assert r.status_code == 404 and len(r.content) < 2000
        r = client.post("/models/topics/predict", json={"text": "a film", "model": long})
        assert r.status_code == 422 and len(r.content) < 2000
        r = client.post("/explain", json={"text": "a film", "class": long})
        assert r.status_code == 422 and len(r.content) < 2000, r.text
    assert shown_some(["x" * 50, "b", "c", "d"]) == f"{'x' * 40!r}..., 'b', 'c' and 1 more"


def test_a_reload_over_http_of_a_changed_watched_file_is_not_refused(tmp_path, two_class,
                                                                      monkeypatch):
    """With --watch and --allow-reload, POST /models/m/reload after the file changed looked
    the model up first, which started --watch's reload of it, and then refused itself
    (503: a reload under way): a deploy script's curl -f failed every time."""
    import nbsvm.serve.registry as registry_module
    from starlette.testclient import TestClient

    from nbsvm.serve.app import create_app
    clf, _ = two_class
    path = tmp_path / "m.npz"
    clf.save(path)
    monkeypatch.setattr(registry_module, "WATCH_INTERVAL", 0.0)
    app = create_app({"m": str(path)}, watch=True, allow_reload=True,
                     allowed_hosts=["testserver"])
    with TestClient(app) as client:
        clf.save(tmp_path / "new.npz")
        os.replace(tmp_path / "new.npz", path)
        os.utime(path, ns=(time.time_ns() + 10**9,) * 2)
        r = client.post("/models/m/reload")
        assert r.status_code == 200 and r.json()["version"] == 2, r.text
