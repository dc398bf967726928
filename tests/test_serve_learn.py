"""A served model that learns (issue 38 item 1): corrections over HTTP while clients predict,
a journal that survives kill -9, and a model equal to one trained offline on the journal's
batches. The real server on a loopback port (the console script in a subprocess)."""
import copy
import os
import signal
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
httpx = pytest.importorskip("httpx")

from nbsvm import NBSVMClassifier, NBSVMError  # noqa: E402
from nbsvm.serve.journal import initial_path, journal_path, read_journal  # noqa: E402
from nbsvm.serve.scoring import predictions  # noqa: E402

from test_serve import JSON, Server, _free_port, http  # noqa: E402

TOKEN = "s3cret-token"
AUTH = {**JSON, "authorization": f"Bearer {TOKEN}"}
PHRASE = "zorblax gadget"
PROBES = [PHRASE, "a truly great and moving film", "dull awful boring mess", "zorblax"]


def corpus(n: int, seed: int = 0):
    """Two classes; the made-up word 'zorblax' appears only in positive texts."""
    rng = np.random.default_rng(seed)
    pos = "great fun loved moving superb wonderful".split()
    neg = "awful dull boring mess lifeless bad".split()
    texts, labels = [], []
    for i in range(n):
        label = "pos" if i % 2 == 0 else "neg"
        words = list(rng.choice(pos if label == "pos" else neg, 6))
        if label == "pos" and i % 4 == 0:
            words += ["zorblax", "gadget"]
        texts.append(" ".join(words))
        labels.append(label)
    return texts, labels


@pytest.fixture()
def model_file(tmp_path):
    texts, labels = corpus(400)
    path = tmp_path / "m.npz"
    NBSVMClassifier(n_bits=14, ngrams=2, keep_counts=True, seed=0).fit(texts, labels).save(path)
    return path


def learning_server(path, tmp_path, *extra, wait: bool = True):
    env_token = os.environ.get("NBSVM_LEARN_TOKEN")
    os.environ["NBSVM_LEARN_TOKEN"] = TOKEN            # never on the command line
    try:
        return Server(path, "--learn", "--learn-batch", "200", "--checkpoint-every", "500",
                      *extra, log=tmp_path / f"server-{time.monotonic_ns()}.log", wait=wait)
    finally:
        if env_token is None:
            del os.environ["NBSVM_LEARN_TOKEN"]
        else:
            os.environ["NBSVM_LEARN_TOKEN"] = env_token


def state(server) -> dict:
    return http.get(f"{server.url}/models/m", timeout=10).json()["learning"]


def wait_learned(server, through: int, checkpointed: bool = False) -> dict:
    deadline = time.monotonic() + 120
    while True:
        s = state(server)
        done = s["pending"] == 0 and s["last_sequence"] >= through
        if done and (not checkpointed or s["checkpointed_sequence"] >= through):
            return s
        assert time.monotonic() < deadline, s
        time.sleep(0.05)


def offline_models(path: Path):
    """The initial model trained by partial_fit on the journal's batches in order: the model
    after each batch (index 0: before any)."""
    requests, applied = read_journal(journal_path(str(path)))
    model = NBSVMClassifier.load(initial_path(str(path)))
    models = [model]
    for first, last in applied:
        records = [requests[s] for s in range(first, last + 1)]
        model = copy.deepcopy(model)
        model.partial_fit([t for r in records for t in r["texts"]],
                          [y for r in records for y in r["labels"]],
                          sample_weight=[w for r in records
                                         for w in r.get("weights") or [1.0] * len(r["texts"])])
        models.append(model)
    return models


def assert_same_model(a: NBSVMClassifier, b: NBSVMClassifier, tmp_path: Path) -> None:
    """Equal scores, and bit for bit the same stored state (``b`` saved and loaded as the
    server's file was: a file keeps the seen buckets only)."""
    texts = PROBES + corpus(50, seed=3)[0]
    np.testing.assert_array_equal(a.decision_function(texts), b.decision_function(texts))
    b.save(tmp_path / "offline.npz")
    b = NBSVMClassifier.load(tmp_path / "offline.npz")
    np.testing.assert_array_equal(a.linear_.S_, b.linear_.S_)
    np.testing.assert_array_equal(a.column_of_, b.column_of_)
    np.testing.assert_array_equal(a.lexicon_.compact()[1], b.lexicon_.compact()[1])
    assert a.n_docs_ == b.n_docs_


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_learn_is_off_without_the_flag_and_needs_the_token(model_file, tmp_path):
    # both started at once, the plain one on a copy (the learning one journals beside its file)
    plain_file = tmp_path / "plain" / "m.npz"
    plain_file.parent.mkdir()
    plain_file.write_bytes(model_file.read_bytes())
    plain = Server(plain_file, log=tmp_path / "plain.log", wait=False)
    server = learning_server(model_file, tmp_path, wait=False)
    try:
        try:
            plain.ready()
            r = http.post(f"{plain.url}/models/m/learn", headers=AUTH,
                          json={"text": PHRASE, "label": "neg"})
            assert r.status_code == 403 and "--learn" in r.json()["detail"]
        finally:
            plain.stop()
        server.ready()
        url = f"{server.url}/models/m/learn"
        for headers in (JSON, {**JSON, "authorization": "Bearer wrong"}):
            r = http.post(url, headers=headers, json={"text": PHRASE, "label": "neg"})
            assert r.status_code == 401, r.text
        bad = [({"text": PHRASE, "label": "neutral"}, 422, "unknown label"),
               ({"texts": [PHRASE, "x"], "labels": ["neg"]}, 422, "as many"),
               ({"text": PHRASE}, 422, "label")]
        for body, status, says in bad:
            r = http.post(url, headers=AUTH, json=body)
            assert r.status_code == status and says in r.text, r.text
        assert http.post(f"{server.url}/models/nope/learn", headers=AUTH,
                         json={"text": PHRASE, "label": "neg"}).status_code == 404
        assert state(server)["last_sequence"] == -1        # nothing refused was journalled
    finally:
        assert "Traceback" not in server.stop()


@pytest.mark.slow  # make test-slow: learning while serving is checked elsewhere by the kill -9 test
def test_corrections_while_four_clients_predict(model_file, tmp_path):
    held_out = tmp_path / "valid.tsv"
    held_out.write_text(f"neg\t{PHRASE}\nneg\tthe {PHRASE}\npos\tgreat fun loved it\n")
    # the tail after the last --checkpoint-every 500 is written within a second, not after
    # the default minute (the batches fall as the writer finds them)
    server = learning_server(model_file, tmp_path, "--learn-validation", held_out,
                             "--checkpoint-seconds", "1")
    assert state(server)["validation"] == {"accuracy": pytest.approx(1 / 3), "documents": 3,
                                           "sequence": -1}
    answers: list[tuple[int, str, float]] = []
    failures: list[str] = []
    done = threading.Event()

    def predictor():
        with httpx.Client(timeout=30) as client:
            last = 0
            while not done.is_set():
                r = client.post(f"{server.url}/models/m/predict", headers=JSON,
                                json={"texts": PROBES})
                if r.status_code != 200:
                    failures.append(r.text)
                    continue
                body = r.json()
                if body["version"] < last:
                    failures.append(f"version went back: {last} -> {body['version']}")
                last = body["version"]
                answers.extend((body["version"], t, p["score"])
                               for t, p in zip(PROBES, body["predictions"]))

    try:
        before = http.post(f"{server.url}/models/m/predict", headers=JSON,
                           json={"text": PHRASE}).json()["predictions"][0]["label"]
        assert before == "pos"
        threads = [threading.Thread(target=predictor) for _ in range(4)]
        for t in threads:
            t.start()
        with httpx.Client(timeout=30) as client:
            last_seq = -1
            for _ in range(100):                       # 10,000 corrections, 100 a request
                r = client.post(f"{server.url}/models/m/learn", headers=AUTH,
                                json={"texts": [PHRASE] * 100, "labels": ["neg"] * 100})
                assert r.status_code == 202, r.text
                last_seq = r.json()["sequence"]
        assert wait_learned(server, last_seq, checkpointed=True)["validation"] == {
            "accuracy": 1.0, "documents": 3, "sequence": last_seq}
        done.set()
        for t in threads:
            t.join()
        after = http.post(f"{server.url}/models/m/predict", headers=JSON,
                          json={"text": PHRASE}).json()["predictions"][0]["label"]
        assert after == "neg"
        learned = state(server)["learned"]
    finally:
        done.set()
        assert "Traceback" not in server.stop()
    assert not failures, failures[:3]
    assert learned == 10_000 and len({v for v, _, _ in answers}) > 2
    # every answer is one whole version's: the offline model after that many batches
    models = offline_models(model_file)
    start_version = min(v for v, _, _ in answers)
    scores = {}
    for version, text, score in answers:
        k = version - 1                                  # version 1: the file as trained
        if (k, text) not in scores:
            scores[k, text] = predictions(models[k], [text])[0]["score"]
        assert score == scores[k, text], (version, text)
    assert start_version >= 1


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_kill_9_loses_no_acknowledged_correction(model_file, tmp_path):
    server = learning_server(model_file, tmp_path)
    acknowledged = 0
    with httpx.Client(timeout=30) as client:
        for i in range(60):
            body = {"texts": [f"{PHRASE} {i}"] * 10, "labels": ["neg"] * 10}
            if i % 3 == 0:                                 # weighted corrections replay too
                body["weights"] = [0.5 * (k % 4) for k in range(10)]
            r = client.post(f"{server.url}/models/m/learn", headers=AUTH, json=body)
            assert r.status_code == 202
            acknowledged = r.json()["sequence"]
    os.kill(server.proc.pid, signal.SIGKILL)          # mid-stream: batches still queued
    server.proc.wait()
    from nbsvm.serve.learning import learned_through
    on_disk = learned_through(NBSVMClassifier.load(model_file))
    assert on_disk < acknowledged                      # the file alone lost the last ones
    server = learning_server(model_file, tmp_path)    # replays the journal
    try:
        s = wait_learned(server, acknowledged, checkpointed=True)
        assert s["learned"] == 10 * (acknowledged + 1)
    finally:
        server.stop()
    requests, applied = read_journal(journal_path(str(model_file)))
    assert sorted(requests) == list(range(acknowledged + 1))
    covered = [s for a, b in applied for s in range(a, b + 1)]
    assert covered == list(range(acknowledged + 1))    # each request in one batch, in order
    served = NBSVMClassifier.load(model_file)
    assert_same_model(served, offline_models(model_file)[-1], tmp_path)
    assert [e["event"] for e in served.history_] == ["fit", "learn"]
    assert served.history_[-1]["through"] == acknowledged


@pytest.mark.slow  # make test-slow: a Chromium page; the /learn route is checked over HTTP elsewhere
def test_the_page_sends_a_correction_in_a_headless_browser(model_file, tmp_path):
    """Debian's Chromium driven by Playwright: classify, pick the right label, send it with
    the token; the server journals and learns it."""
    pytest.importorskip("playwright")
    import sys
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
    import serve_page
    if not Path(serve_page.CHROMIUM).exists():
        pytest.skip(f"no Chromium at {serve_page.CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright
    plain = Server(model_file, log=tmp_path / "plain.log")
    server = None
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=serve_page.CHROMIUM,
                                        args=serve_page.FLAGS, headless=True)
            page = browser.new_page()
            page.goto(plain.url + "/")
            page.wait_for_selector("#strongest h3")
            page.fill("#text", PHRASE)
            page.click("#go")
            page.wait_for_selector("#result:not([hidden])")
            assert page.is_hidden("#correct")            # this server does not learn
            plain.stop()
            server = learning_server(model_file, tmp_path)
            page.goto(server.url + "/")
            page.wait_for_selector("#strongest h3")
            page.fill("#text", PHRASE)
            page.click("#go")
            page.wait_for_selector("#correct:not([hidden])")
            assert page.inner_text("#label") == "pos"
            page.select_option("#right", "neg")
            page.fill("#token", "wrong")
            page.click("#send")
            page.wait_for_selector("#error:not([hidden])")
            assert "Authorization" in page.inner_text("#error")
            page.fill("#token", TOKEN)
            page.click("#send")
            page.wait_for_function("document.getElementById('sent').textContent.length > 0")
            assert page.inner_text("#sent").startswith("queued as correction 0")
            browser.close()
        assert wait_learned(server, 0)["learned"] == 1
        requests, _ = read_journal(journal_path(str(model_file)))
        assert requests[0]["texts"] == [PHRASE] and requests[0]["labels"] == ["neg"]
    finally:
        if plain.proc.poll() is None:
            plain.stop()
        if server is not None:
            server.stop()


@pytest.mark.parametrize("keep_counts", [True, False])
def test_a_learning_copy_never_changes_the_served_model(keep_counts):
    from nbsvm.models.partial import partial_fit
    from nbsvm.serve.learning import learning_copy
    texts, labels = corpus(200)
    served = NBSVMClassifier(n_bits=12, keep_counts=keep_counts).fit(texts, labels)
    scores, state = served.decision_function(PROBES), served.linear_.S_.copy()
    learned = learning_copy(served)
    partial_fit(learned, [PHRASE] * 50, ["neg"] * 50)
    np.testing.assert_array_equal(served.decision_function(PROBES), scores)
    np.testing.assert_array_equal(served.linear_.S_, state)
    assert learned.predict([PHRASE])[0] == "neg" and served.predict([PHRASE])[0] == "pos"
    # the same batch on a deep copy: the shared parts are read only
    deep = copy.deepcopy(served)
    partial_fit(deep, [PHRASE] * 50, ["neg"] * 50)
    np.testing.assert_array_equal(deep.decision_function(PROBES), learned.decision_function(PROBES))


# ---- what a careless or hostile client can send (in process: starlette's TestClient) ----

def app_client(path, **settings):
    from starlette.testclient import TestClient

    from nbsvm.serve.app import create_app
    from nbsvm.serve.learning import LearnSettings
    app = create_app({"m": str(path)}, allowed_hosts=["testserver"],
                     learn=LearnSettings(TOKEN, **settings))
    return TestClient(app)


def post(client, body, token=TOKEN, scheme="Bearer"):
    return client.post("/models/m/learn", json=body,
                       headers={"authorization": f"{scheme} {token}"})


def test_labels_partial_fit_would_refuse_are_422_and_never_journalled(model_file):
    with app_client(model_file) as client:
        for body in ({"text": PHRASE, "label": ["neg"]},          # a list: single-label
                     {"texts": [PHRASE], "labels": [["neg", "pos"]]},
                     {"text": PHRASE, "label": "neutral"}):
            r = post(client, body)
            assert r.status_code == 422, r.text
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        s = wait_in_process(client, 0)
        assert s["learned"] == 1 and s["last_sequence"] == 0   # the writer is still alive
    requests, applied = read_journal(journal_path(str(model_file)))
    assert list(requests) == [0] and applied == [(0, 0)]


def test_weighted_corrections_equal_partial_fit_with_sample_weight(model_file, tmp_path):
    """POST /learn's weights reach the counts and the steps as partial_fit's sample_weight;
    a weight that is not a number from 0 to 1e9, or a count that does not match, is 422."""
    with app_client(model_file) as client:
        for body in ({"text": PHRASE, "label": "neg", "weight": -1},
                     {"texts": [PHRASE, PHRASE], "labels": ["neg", "neg"], "weights": [1]},
                     {"texts": [PHRASE], "labels": ["neg"], "weight": 2},
                     {"text": PHRASE, "label": "neg", "weight": "heavy"},
                     {"text": PHRASE, "label": "neg", "weight": 1e300},
                     {"texts": [PHRASE], "labels": ["neg"], "weights": [2e9]},
                     # JSON true and false, and numbers as strings, are no numbers: they
                     # were learned (and journalled) as weights 1, 0 and 1e9
                     {"text": PHRASE, "label": "neg", "weight": False},
                     {"text": PHRASE, "label": "neg", "weight": True},
                     {"texts": [PHRASE], "labels": ["neg"], "weights": ["1e9"]},
                     {"text": PHRASE, "label": "neg", "weight": "1"}):
            assert post(client, body).status_code == 422, body
        r = client.post("/models/m/learn", headers=AUTH,
                        content=b'{"text": "x", "label": "neg", "weight": Infinity}')
        assert r.status_code == 422
        assert post(client, {"text": PHRASE, "label": "neg", "weight": 3}).status_code == 202
        body = {"texts": [PHRASE, "great fun", "zorblax"], "labels": ["neg", "pos", "neg"],
                "weights": [0, 2.5, 1]}
        assert post(client, body).status_code == 202
        wait_in_process(client, 1)
    requests, _ = read_journal(journal_path(str(model_file)))
    assert requests[0]["weights"] == [3.0] and requests[1]["weights"] == [0.0, 2.5, 1.0]
    served = NBSVMClassifier.load(model_file)
    assert served.lexicon_.weighted
    assert_same_model(served, offline_models(model_file)[-1], tmp_path)


def test_weights_for_a_backend_learner_are_422_and_never_journalled(tmp_path):
    """A backend learner takes no weights: the request is refused before the journal, so
    the writer and a later replay never meet it."""
    texts, labels = corpus(200)
    path = tmp_path / "pa.npz"
    NBSVMClassifier(n_bits=12, learner="pa", seed=0).fit(texts, labels).save(path)
    with app_client(path) as client:
        r = post(client, {"text": PHRASE, "label": "neg", "weight": 2})
        assert r.status_code == 422 and "backend learners" in r.text
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
    requests, _ = read_journal(journal_path(str(path)))
    assert list(requests) == [0] and "weights" not in requests[0]


def wait_in_process(client, through: int) -> dict:
    deadline = time.monotonic() + 60
    while True:
        s = client.get("/models/m").json()["learning"]
        if s["pending"] == 0 and s["last_sequence"] >= through:
            return s
        assert time.monotonic() < deadline, s
        time.sleep(0.02)


def test_a_lone_surrogate_is_learned_as_u_fffd(model_file):
    with app_client(model_file) as client:
        r = client.post("/models/m/learn", headers={**AUTH},
                        content=b'{"text": "bad \\ud800 text", "label": "neg"}')
        assert r.status_code == 202, r.text
        wait_in_process(client, 0)
    requests, _ = read_journal(journal_path(str(model_file)))
    assert requests[0]["texts"] == ["bad \ufffd text"]


def journal_after_one_request(model_file, tail: str) -> Path:
    """The journal of a server that learned one request, with ``tail`` appended."""
    with app_client(model_file) as client:
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
    journal = journal_path(str(model_file))
    with open(journal, "a") as f:
        f.write(tail)
    return journal


def test_a_torn_last_line_is_cut_before_the_next_request(model_file):
    journal = journal_after_one_request(model_file, '{"seq": 1, "texts": ["torn')  # a crash
    with app_client(model_file) as client:
        r = post(client, {"text": PHRASE, "label": "neg"})
        assert r.status_code == 202 and r.json()["sequence"] == 1
        wait_in_process(client, 1)
    requests, applied = read_journal(journal)
    assert sorted(requests) == [0, 1] and applied == [(0, 0), (1, 1)]


@pytest.mark.parametrize("line, said", [
    ('{"foo": 1}', "a request needs 'seq'"),
    ('{"applied": 5}', "'applied' must be [first, last]"),
    ('{"applied": [3, 1]}', "0 <= first <= last"),
    ('{"seq": "x", "texts": [], "labels": []}', "a request needs 'seq'"),
    ('{"seq": 1, "texts": ["a", "b"], "labels": ["neg"]}', "as long as its texts"),
    ('{"seq": 1, "texts": "abc", "labels": ["neg"]}', "'texts', a list of strings"),
    ('{"seq": 1, "texts": ["a"], "labels": ["neg"], "weights": [true]}', "'weights'"),
    ("[1, 2]", "a JSON list, not an object"),
])
def test_a_damaged_journal_is_said_naming_its_line(model_file, line, said):
    """An edited or damaged journal line was a KeyError, TypeError or ValueError at the
    server's start (a helper's hunt): now an error naming the journal and the line."""
    from nbsvm.errors import NBSVMError
    journal = journal_after_one_request(model_file, line + "\n")
    with pytest.raises(NBSVMError, match="not a journal line") as e:
        app_client(model_file).__enter__()
    assert said in str(e.value) and e.value.path == str(journal) and e.value.line == 4


@pytest.mark.parametrize("raw", [
    b'{"seq": 1, "texts": ["caf\xe9"], "labels": ["neg"]}',   # invalid UTF-8 (a bit flipped)
    b"[" * 100_000 + b"]" * 100_000,                          # nested past the recursion limit
    b'{"seq": ' + b"1" * 5001 + b', "texts": [], "labels": []}',  # past int()'s digits
])
def test_damage_json_cannot_read_is_said_naming_its_line(model_file, raw):
    """A helper's hunt: these were a UnicodeDecodeError, RecursionError or ValueError
    traceback at the server's start."""
    journal = journal_after_one_request(model_file, "")
    with open(journal, "ab") as f:
        f.write(raw + b"\n")
    with pytest.raises(NBSVMError, match="not a JSON line of UTF-8") as e:
        app_client(model_file).__enter__()
    assert e.value.path == str(journal) and e.value.line == 4


def test_a_request_a_full_disk_refused_is_never_in_the_journal(model_file, monkeypatch):
    """A helper's hunt: a line the disk refused (503) stayed in the buffered file's buffer
    and went to disk at the next flush or the close, to be learned at the next start (a
    request the client was told failed; its sequence number given again)."""
    from nbsvm.serve import journal as module

    j = module.Journal(str(model_file))
    j.append({"seq": 0, "texts": ["a"], "labels": ["neg"]})
    real = os.write

    def full(fd, data):  # half the line written, then the disk is full
        if len(data) > 8:
            real(fd, bytes(data[: len(data) // 2]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(module.os, "write", full)
    with pytest.raises(OSError, match="No space left"):
        j.append({"seq": 1, "texts": ["refused " * 50], "labels": ["pos"]})
    monkeypatch.undo()
    j.append({"seq": 1, "texts": ["b"], "labels": ["pos"]})  # the next one takes its number
    j.close()
    requests, _ = read_journal(journal_path(str(model_file)))
    assert {k: r["texts"] for k, r in requests.items()} == {0: ["a"], 1: ["b"]}


def test_a_journal_cut_before_what_the_model_learned_with_it_is_refused(model_file):
    """A hunt: a journal cut by hand at a line boundary before the requests the model file
    learned through was accepted without a word (the initial model and the journal could
    no longer rebuild the model, and new requests took the lost numbers' places)."""
    with app_client(model_file, checkpoint_every=1) as client:
        for _ in range(3):
            assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 2)
    journal = journal_path(str(model_file))
    lines = journal.read_text(encoding="utf-8").splitlines(keepends=True)
    journal.write_text(lines[0], encoding="utf-8")  # its own line alone: every request cut
    with pytest.raises(NBSVMError, match=r"ends at request -1, but .* learned through "
                                         r"request 2 with it: the journal lost requests"):
        app_client(model_file).__enter__()


def test_a_journal_whose_requests_cannot_be_learned_is_named(model_file):
    from nbsvm.errors import NBSVMError
    journal = journal_after_one_request(
        model_file, '{"seq": 1, "texts": ["a b"], "labels": ["zzz"]}\n'
    )
    with pytest.raises(NBSVMError, match="requests 1-1 cannot be learned: .*'zzz'") as e:
        app_client(model_file).__enter__()
    assert e.value.path == str(journal)
    with open(journal, "a") as f:
        f.write('{"applied": [1, 2]}\n')
    with pytest.raises(NBSVMError, match="applied batch 1-2 names request 2"):
        app_client(model_file).__enter__()


def test_a_journal_of_another_model_is_refused(model_file, tmp_path):
    from nbsvm.errors import NBSVMError
    with app_client(model_file) as client:
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
    texts, labels = corpus(300, seed=5)                     # trained again to the same path
    NBSVMClassifier(n_bits=14, keep_counts=True).fit(texts, labels).save(model_file)
    retrained = model_file.read_bytes()
    with pytest.raises(NBSVMError, match="started from another model"):
        app_client(model_file).__enter__()
    assert model_file.read_bytes() == retrained             # never overwritten
    r = tmp_path / "other"
    r.mkdir()
    other = r / "m.npz"                                     # a model that learned elsewhere
    other.write_bytes(Path(model_file.with_suffix(".npz.initial.npz")).read_bytes())
    with app_client(other) as client:
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
    journal_path(str(other)).write_bytes(journal_path(str(model_file)).read_bytes())
    with pytest.raises(NBSVMError, match="learned with journal"):
        app_client(other).__enter__()


def test_a_lost_journal_keeps_the_initial_model_and_a_new_one_starts_from_the_file(
        model_file):
    """The journal of a model that learned was deleted: the next start replaced
    m.npz.initial.npz (the model before it learned) by the learned file, then refused to
    start, leaving a new journal that blocked every later start."""
    from nbsvm.errors import NBSVMError
    initial = initial_path(str(model_file))
    with app_client(model_file, checkpoint_every=1) as client:
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
    kept, learned = initial.read_bytes(), model_file.read_bytes()
    assert kept != learned
    journal_path(str(model_file)).unlink()
    for _ in range(2):  # refused, and nothing written: the same again
        with pytest.raises(NBSVMError, match="is the model a former journal started from"):
            app_client(model_file).__enter__()
        assert initial.read_bytes() == kept and model_file.read_bytes() == learned
        assert not journal_path(str(model_file)).exists()
    initial.rename(initial.with_name("before.npz"))  # as the message says: a new journal
    with app_client(model_file):  # started, nothing learned: the file still names the
        pass                      # journal it learned with
    far = dict(checkpoint_every=1000, checkpoint_seconds=3600)
    with app_client(model_file, **far) as client:   # started again: accepted (it was not)
        r = post(client, {"text": PHRASE, "label": "pos"})
        assert r.status_code == 202
        seq = r.json()["sequence"]  # numbered on from what the file learned
        wait_in_process(client, seq)
        online = client.app.state.online["m"]  # a crash: no checkpoint at exit (the
        online.close = online.journal.close     # journal's lock goes with the process)
    assert model_file.read_bytes() == learned
    with app_client(model_file, **far) as client:   # the acknowledged request is replayed
        state = client.get("/models/m").json()["learning"]
        assert state["last_sequence"] == state["checkpointed_sequence"] == seq
    assert initial.read_bytes() == learned and model_file.read_bytes() != learned


def test_two_names_for_one_file_are_refused_with_learn(model_file, tmp_path):
    """Both names learned into one file and one journal, numbering requests 0, 0, 1, 1:
    acknowledged examples lost from the model."""
    from nbsvm.errors import NBSVMError
    from nbsvm.serve.app import create_app
    from nbsvm.serve.learning import LearnSettings
    link = tmp_path / "link.npz"
    link.symlink_to(model_file)
    for other in (str(model_file).replace("/m.npz", "/./m.npz"), str(link)):
        with pytest.raises(NBSVMError, match="'a' and 'b' are one file"):
            create_app({"a": str(model_file), "b": other}, learn=LearnSettings(TOKEN))
    assert not journal_path(str(model_file)).exists()


def test_a_failing_checkpoint_stops_learning_with_503(model_file, monkeypatch):
    with app_client(model_file, checkpoint_every=1) as client:
        def full_disk(self, path):
            raise OSError(28, "No space left on device")
        monkeypatch.setattr(NBSVMClassifier, "save", full_disk)
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        deadline = time.monotonic() + 30
        while (r := post(client, {"text": PHRASE, "label": "neg"})).status_code == 202:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert r.status_code == 503 and "No space left" in r.text
        monkeypatch.undo()


def test_a_model_file_replaced_while_served_is_never_written_over(model_file, tmp_path):
    """Training another model to the served path (or copying one over it) while the server
    learns: its checkpoint wrote the old model back over the new one without a word. It
    refuses, learning stops (503), the corrections stay in the journal; at shutdown too."""
    other = tmp_path / "other.npz"
    NBSVMClassifier(n_bits=12, seed=0).fit(["apple pie", "goal scored", "fresh bread",
                                            "final whistle"], ["food", "sports"] * 2).save(other)
    # at a checkpoint, in the writer thread
    with app_client(model_file, checkpoint_every=2) as client:
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
        os.replace(other, model_file)                     # trained again to the same path
        replaced = model_file.read_bytes()
        deadline = time.monotonic() + 30
        while (r := post(client, {"text": PHRASE, "label": "neg"})).status_code == 202:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert r.status_code == 503 and "was replaced on disk" in r.text
        # (an answer shows no path of the server's: it named the file and the journal)
        assert str(tmp_path) not in r.text and "m's file" in r.text and "its journal" in r.text
        assert client.get("/models/m").json()["learning"]["stopped"]
    assert model_file.read_bytes() == replaced
    requests, _ = read_journal(journal_path(str(model_file)))
    assert len(requests) >= 2                               # every acknowledged one kept
    # at shutdown, a copy over the file (same inode, new contents)
    served = tmp_path / "served.npz"
    texts, labels = corpus(400)
    NBSVMClassifier(n_bits=14, ngrams=2, keep_counts=True, seed=0).fit(texts, labels).save(served)
    with app_client(served) as client:
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
        served.write_bytes(replaced)
    assert served.read_bytes() == replaced
    # a file only this server wrote is written as before
    with app_client(model_file_copy(tmp_path)) as client:
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
    assert NBSVMClassifier.load(tmp_path / "copy.npz").history_[-1]["event"] == "learn"


def test_the_kept_initial_model_is_its_own_file(model_file):
    """The model before it learned is kept beside it to rebuild it from the journal: as a
    hard link it shared the file's inode, so a copy written over the model file in place
    (`cp`, `cat >`) replaced it too."""
    original = model_file.read_bytes()
    with app_client(model_file) as client:
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 0)
        initial = initial_path(str(model_file))
        assert os.stat(initial).st_ino != os.stat(model_file).st_ino
        with open(model_file, "r+b") as fh:                     # written over in place
            fh.write(b"\0" * 64)
        assert initial.read_bytes() == original


def test_a_file_replaced_between_its_load_and_the_learners_start_is_refused(model_file, tmp_path):
    """The file's identity was taken when learning started, not when it was loaded: one
    replaced in between would have been taken as the one served."""
    from nbsvm.serve.learning import LearnSettings, OnlineModel
    from nbsvm.serve.registry import ModelRegistry

    registry = ModelRegistry({"m": str(model_file)})
    texts, labels = corpus(40, seed=3)
    NBSVMClassifier(n_bits=12, keep_counts=True, seed=0).fit(texts, labels).save(model_file)
    with pytest.raises(NBSVMError, match="changed since it was loaded to be served"):
        OnlineModel(registry, "m", LearnSettings(TOKEN))
    assert not journal_path(str(model_file)).exists()


def model_file_copy(tmp_path):
    texts, labels = corpus(400)
    path = tmp_path / "copy.npz"
    NBSVMClassifier(n_bits=14, ngrams=2, keep_counts=True, seed=0).fit(texts, labels).save(path)
    return path


def test_pending_text_is_bounded_in_characters(model_file):
    with app_client(model_file, max_pending_chars=1000) as client:
        r = post(client, {"texts": ["x" * 600, "y" * 600], "labels": ["neg", "pos"]})
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        assert client.get("/models/m").json()["learning"]["last_sequence"] == -1


@pytest.mark.parametrize("header, ok", [
    (f"Bearer {TOKEN}", True), (f"bearer {TOKEN}", True), (TOKEN, False),
    (f"Basic {TOKEN}", False), ("Bearer", False), ("", False)])
def test_the_token_goes_with_the_bearer_scheme(header, ok):
    from nbsvm.serve.learning import LearnSettings
    assert LearnSettings(f" {TOKEN}\n").authorized(header) is ok


def test_learn_refuses_reload_workers_and_watch(model_file):
    import socket

    from testhelpers import run_cli
    # the CLI in this process (no interpreter to start for each); on a busy port, so that a
    # server that did not refuse fails to listen instead of serving on
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for extra in (["--allow-reload"], ["--workers", "2"], ["--watch"]):
            r = run_cli("serve", model_file, "--learn", *extra, "--port", port)
            assert r.returncode == 2 and "--learn needs one worker" in r.stderr, r.stderr


def test_a_model_of_int_labels_learns_them_as_json_numbers(tmp_path):
    """A model fitted in Python on 0 / 1 answers 0 and 1, but /learn took only "0" and
    "1" (a JSON 0 was 422 'Input should be a valid string'). Numbers are read as the
    class's name; the journal holds names, so "1" and 1 from two clients never clash."""
    texts, labels = corpus(400)
    path = tmp_path / "m.npz"
    numbers = [int(label == "pos") for label in labels]
    NBSVMClassifier(n_bits=14, ngrams=2, keep_counts=True, seed=0).fit(texts, numbers).save(path)
    with app_client(path) as client:
        assert post(client, {"text": PHRASE, "label": 3}).status_code == 422   # no class 3
        assert post(client, {"texts": [PHRASE] * 30, "labels": [0] * 30}).status_code == 202
        assert post(client, {"texts": [PHRASE] * 30, "labels": ["0"] * 30}).status_code == 202
        # 1.0 and 0.0 are the classes of 1 and 0 (they were 422 'unknown label 1.0')
        assert post(client, {"texts": [PHRASE] * 2, "labels": [0.0, 1.0]}).status_code == 202
        wait_in_process(client, 2)
        r = client.post("/predict", json={"text": PHRASE})
        assert r.json()["predictions"][0]["label"] == "0", r.text
    requests, _ = read_journal(journal_path(str(path)))
    assert requests[0]["labels"] == ["0"] * 30 == requests[1]["labels"]
    assert requests[2]["labels"] == ["0", "1"]


def test_a_multilabel_model_of_int_labels_learns_json_number_lists(tmp_path):
    """Label lists were list[str]: [1, 2] for a model fitted on int lists was 422."""
    texts, labels = corpus(200)
    path = tmp_path / "m.npz"
    sets = [[1, 2] if label == "pos" else [3] for label in labels]
    NBSVMClassifier(n_bits=14, multilabel=True, keep_counts=True, seed=0).fit(texts, sets).save(path)
    with app_client(path) as client:
        assert post(client, {"texts": [PHRASE] * 2, "labels": [[1.0, 2], ["3"]]}).status_code == 202
        assert post(client, {"text": PHRASE, "label": [4]}).status_code == 422  # no class 4
        assert post(client, {"text": PHRASE, "label": 3}).status_code == 202  # one label
        wait_in_process(client, 1)
    requests, _ = read_journal(journal_path(str(path)))
    assert requests[0]["labels"] == [["1", "2"], ["3"]] and requests[1]["labels"] == [["3"]]


def test_create_app_refuses_learning_with_watch_or_reload(model_file):
    """The CLI refused --learn with --watch and --allow-reload; create_app took them: a
    reload could put a checkpoint back over what the server had learned."""
    from nbsvm.serve.app import create_app
    from nbsvm.serve.learning import LearnSettings
    from nbsvm.serve.registry import ModelRegistry

    for kw in (dict(watch=True), dict(allow_reload=True)):
        with pytest.raises(NBSVMError, match="learn goes without watch and allow_reload"):
            create_app({"m": str(model_file)}, learn=LearnSettings(TOKEN), **kw)
    with pytest.raises(NBSVMError, match="learn goes without watch"):
        create_app(ModelRegistry({"m": str(model_file)}, watch=True), learn=LearnSettings(TOKEN))


def test_a_model_that_cannot_learn_is_refused_when_the_server_starts(model_file, tmp_path):
    """A quantized model (or one with tuned thresholds) was served with --learn: the first
    POST was acknowledged and journalled, then the learning thread died on it (503 for
    every later one)."""
    from nbsvm.models.quantize import quantize

    quantized = tmp_path / "q.npz"
    model = NBSVMClassifier.load(model_file)
    quantize(model)
    model.save(quantized)
    with pytest.raises(NBSVMError, match="a quantized model does not train further"):
        app_client(quantized)
    # the exact solver keeps its training rows, which its file does not hold
    texts, labels = corpus(100)
    dcd = tmp_path / "dcd.npz"
    NBSVMClassifier(n_bits=14, learner="dcd").fit(texts, labels).save(dcd)
    with pytest.raises(NBSVMError, match="learner 'dcd' loaded from a file does not train"):
        app_client(dcd)
    with pytest.raises(NBSVMError, match="does not train further"):
        NBSVMClassifier.load(dcd).partial_fit(texts[:4], labels[:4])


@pytest.mark.slow  # make test-slow: a second server; kill -9 and the token are checked elsewhere
def test_one_process_at_a_time_learns_into_a_model_file(model_file, tmp_path):
    """Two `serve --learn` on one file (another port) both acknowledged corrections from the
    same sequence numbers and wrote over each other's checkpoints: after a restart half of
    the acknowledged ones were gone. The second is refused while the first runs; the lock
    goes with the process."""
    import subprocess
    import sys

    from nbsvm.serve.journal import Journal, lock_path

    first = Journal(str(model_file))
    with pytest.raises(NBSVMError, match=rf"another process \(pid {os.getpid()}\) is learning "
                                         "into this model"):
        Journal(str(model_file))
    first.close()
    again = Journal(str(model_file))  # released: taken again
    again.close()
    assert not journal_path(model_file).with_name(journal_path(model_file).name + ".tmp").exists()
    server = learning_server(model_file, tmp_path)
    try:
        env = dict(os.environ, NBSVM_LEARN_TOKEN=TOKEN)
        r = subprocess.run([sys.executable, "-m", "nbsvm", "serve", str(model_file), "--learn",
                            "--port", str(_free_port())], capture_output=True, text=True,
                           env=env, timeout=60)
        assert r.returncode == 2, r.stderr
        assert "is learning into this model: one server learns into a file at a time" in r.stderr
        assert lock_path(model_file).read_text().strip() == str(server.proc.pid)
    finally:
        log = server.stop()
    # SIGTERM is a server's normal end: exit 0, no 'terminated' (a command's late signal)
    assert server.proc.returncode == 0 and "terminated" not in log, log
    Journal(str(model_file)).close()  # the stopped server's lock went with it


def test_a_link_to_the_model_file_takes_the_same_lock(model_file, tmp_path):
    """Served as m.npz and as link.npz (a symbolic link to it), two servers learned into
    one file: the lock was named after the path given, not the file."""
    from nbsvm.serve.journal import Journal

    link = tmp_path / "link.npz"
    link.symlink_to(model_file)
    first = Journal(str(model_file))
    try:
        with pytest.raises(NBSVMError, match="is learning into this model"):
            Journal(str(link))
    finally:
        first.close()


def test_a_body_of_many_wrong_items_is_answered_at_once_and_in_a_few_lines(model_file):
    """A body's size is bounded before its items are validated: a list longer than the
    batch is 413 whatever its items (a million numbers where texts belong had made a million
    errors, a 94 MB answer and a minute of a blocked event loop), and so, before it is
    parsed, is a body of more JSON values than 50 a text of the batch; many unknown keys are
    one error, a wrong label one error, and an answer lists at most 20 errors and a
    count."""
    from nbsvm.serve.bodies import MAX_ERRORS
    with app_client(model_file) as client:
        r = client.post("/predict", json={"texts": [1] * 1_000_000})
        assert r.status_code == 413 and "more than 50,000 JSON values" in r.text
        assert len(r.content) < 200
        r = client.post("/predict", json={"texts": ["a"] * 1001})
        assert r.status_code == 413 and "1,001 texts in one request; at most 1,000" in r.text
        r = client.post("/predict", json={"texts": [1] * 1000})       # at the limit: 422
        detail = r.json()["detail"]
        assert r.status_code == 422 and len(detail) == MAX_ERRORS + 1
        assert detail[0]["loc"] == ["body", "texts", "0"] and "string" in detail[0]["msg"]
        assert detail[-1] == {"loc": [], "msg": "and 980 more errors", "type": "more_errors"}
        r = client.post("/predict", json={"text": "a", **{str(i): 0 for i in range(5_000)}})
        assert r.status_code == 422 and len(r.json()["detail"]) == 1
        assert "5,000 unknown fields ('0', '1', '2', ...)" in r.text
        r = client.post("/predict", json={"text": "a", "x": 1, "y": 2})  # a few: each named
        assert [e["loc"][-1] for e in r.json()["detail"]] == ["x", "y"]
        r = client.post("/explain", json={"text": "a", **{str(i): 0 for i in range(100)}})
        assert r.status_code == 422 and len(r.json()["detail"]) == 1
        nulls = {"texts": ["a"] * 20_000, "labels": [None] * 20_000}
        assert post(client, nulls).status_code == 413
        for labels in ([None], [{"a": 1}], [["pos", None]]):
            r = post(client, {"texts": ["a"], "labels": labels})
            assert r.status_code == 422 and len(r.json()["detail"]) == 1, r.text
            assert "labels[0]: a label is a string" in r.text
        r = post(client, {"text": "a", "label": {"a": 1}})
        assert r.status_code == 422 and "label: a label is a string" in r.text


def test_learn_asks_for_the_token_before_it_reads_the_body(model_file):
    """Without the token a client gets 401 whatever it sends: not a 422 telling it (at the
    server's expense) what is wrong with its body."""
    with app_client(model_file) as client:
        for body in ({"text": "great"}, {"texts": ["a"] * 20_000, "labels": [None] * 20_000}):
            assert post(client, body, token="wrong").status_code == 401
            r = client.post("/models/m/learn", json=body)
            assert r.status_code == 401
        assert client.post("/models/nope/learn", json={}).status_code == 404


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_explains_waiting_their_turn_hold_no_thread_of_the_pool(model_file, monkeypatch):
    """/explain runs one at a time; the others wait on the event loop, not in the thread
    pool's 40 threads: with 45 explains queued behind one that has not finished, a long
    /predict (scored in the pool) and /learn (a plain def) are still answered (they had
    waited 17 s behind a hundred explains)."""
    import concurrent.futures

    import nbsvm.serve.app as app_module

    release = threading.Event()
    original = app_module.explanation

    def slow(*args, **kwargs):
        release.wait(30)
        return original(*args, **kwargs)

    monkeypatch.setattr(app_module, "explanation", slow)
    with app_client(model_file) as client, concurrent.futures.ThreadPoolExecutor(46) as pool:
        explains = [pool.submit(client.post, "/explain", json={"text": PHRASE})
                    for _ in range(45)]
        time.sleep(1.0)
        long_text = ("good " * 5000)[:20_001]
        predicted = pool.submit(client.post, "/predict", json={"text": long_text})
        try:
            assert predicted.result(timeout=20).status_code == 200
            assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        finally:
            release.set()
        assert all(f.result(timeout=60).status_code == 200 for f in explains)


def test_the_batch_limit_checked_before_validation_is_the_apps_own(model_file):
    """The limit the request models check before validating items is the app's
    --max-batch (set per request), not the default 1,000: 1,500 texts pass a server that
    takes 2,000, 2,001 are 413 naming 2,000; a server of 10 refuses 11."""
    from starlette.testclient import TestClient

    from nbsvm.serve.app import create_app
    wide = TestClient(create_app({"m": str(model_file)}, allowed_hosts=["testserver"],
                                 max_batch=2000))
    assert wide.post("/predict", json={"texts": ["good"] * 1500}).status_code == 200
    r = wide.post("/predict", json={"texts": [1] * 2001})
    assert r.status_code == 413 and "at most 2,000" in r.text
    narrow = TestClient(create_app({"m": str(model_file)}, allowed_hosts=["testserver"],
                                   max_batch=10))
    r = narrow.post("/predict", json={"texts": [1] * 11})   # wrong items: 413 all the same
    assert r.status_code == 413 and "at most 10" in r.text


def test_a_batch_that_blows_the_weights_up_is_refused_and_replayed_alike(tmp_path):
    """Weights of 1e9 (allowed) on a squared-hinge SGD model made the weights infinite:
    every prediction was then a 500 ('Out of range float values'), /health said ok, and
    a restart with --learn failed on the journal. The batch is not learned now: the
    model stays served (200), `refused` counts it, the server goes on learning, and a
    start replays the journal to the same model."""
    texts, labels = corpus(200)
    path = tmp_path / "sq.npz"
    NBSVMClassifier(n_bits=12, loss="squared_hinge", optimizer="sgd", calibrate=None,
                    seed=0).fit(texts, labels).save(path)
    blow = {"texts": ["a wonderful film", "a dull film"], "labels": ["neg", "pos"],
            "weights": [1e9, 1e9]}
    with app_client(path) as client:
        for through in range(4):
            assert post(client, blow).status_code == 202
            s = wait_in_process(client, through)
        assert s["refused"] >= 2 and not s["stopped"]
        r = client.post("/predict", json={"text": "a wonderful film"})
        assert r.status_code == 200, r.text
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        s = wait_in_process(client, 4)
        assert s["learned"] + s["refused"] == 9
        served = client.post("/predict", json={"text": PHRASE}).json()
    with app_client(path) as client:  # the journal replays: the same model, learning on
        assert client.post("/predict", json={"text": PHRASE}).json()["predictions"] == \
            served["predictions"]
        assert post(client, {"text": PHRASE, "label": "neg"}).status_code == 202
        wait_in_process(client, 5)


def test_counts_too_large_to_grow_are_refused_at_start(model_file, monkeypatch):
    """A keep_counts model whose learner of a column per bucket would not fit started,
    acknowledged a request (202, journalled), then stopped learning for good, and a
    restart was refused on that journal: refused at start now, nothing journalled."""
    import nbsvm.memory as memory
    monkeypatch.setattr(memory, "available_bytes", lambda: 1 << 20)
    with pytest.raises(NBSVMError, match="learning into a model loaded with keep_counts"):
        with app_client(model_file):
            pass
    assert not journal_path(str(model_file)).exists()
