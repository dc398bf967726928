"""``nbsvm serve`` fuzzed from its own OpenAPI schema by schemathesis, live over HTTP, against
one server holding a model of every kind (binary, multi-class, multi-label, hinge, a
backend learner):

- for every operation, requests generated from the schema, valid ones (most naming a served
  model, so every kind is scored) and invalid ones (which must be refused with a 4xx);
- schemathesis's own runner (``st run``, its coverage phase): the schema's boundary values
  and type errors (it found ``"threshold": false`` accepted as 0).

Every answer must be no 5xx, a status the schema declares, of the declared content type,
with a body valid against the declared schema. Bounded: a fixed number of examples per
operation, derandomized (the same requests every run), no example database."""
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
schemathesis = pytest.importorskip(
    "schemathesis", reason="schemathesis is not installed: pip install -e '.[test]' (the "
                           "apifuzz extra) to fuzz the server's schema")

import requests  # noqa: E402  (schemathesis's own client)
from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis.errors import Unsatisfiable  # noqa: E402
from schemathesis.checks import not_a_server_error  # noqa: E402
from schemathesis.specs.openapi.checks import (  # noqa: E402
    content_type_conformance, negative_data_rejection, response_schema_conformance,
    status_code_conformance)

from nbsvm import NBSVMClassifier  # noqa: E402

from test_empty_input import _lines  # noqa: E402
from test_serve import Server  # noqa: E402

KINDS = {"binary": ("reviews.txt", {}), "multiclass": ("topics.txt", {}),
         "multilabel": ("tags.txt", {"multilabel": True}),
         "hinge": ("reviews.txt", {"loss": "hinge"}),
         "backend": ("topics.txt", {"learner": "pa"})}
EXAMPLES = {"positive": 25, "negative": 15}      # per operation
CHECK_NAMES = "not_a_server_error,status_code_conformance,content_type_conformance," \
              "response_schema_conformance,negative_data_rejection"
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("schema")
    specs = []
    for kind, (file, params) in KINDS.items():
        X, y = _lines(file)
        if params.get("multilabel"):
            y = [label.split(",") for label in y]
        NBSVMClassifier(n_bits=14, seed=0, **params).fit(X, y).save(folder / f"{kind}.npz")
        specs.append(f"{kind}={folder / kind}.npz")
    # --allow-reload: the reload operation is fuzzed too (it only reads the same files)
    server = Server(*specs, "--allow-reload", log=folder / "server.log")
    yield server
    log = server.stop()
    assert "Traceback" not in log, log


def _served_names(case, names: list[str], i: int) -> None:
    """Most cases name a served model (in the path or the body), so every kind is scored;
    the rest keep the generated name (404, declared)."""
    if i % 6 == 5:
        return
    name = names[i % len(names)]
    if case.path_parameters and "name" in case.path_parameters:
        case.path_parameters["name"] = name
    if isinstance(case.body, dict) and isinstance(case.body.get("model"), str):
        case.body["model"] = name


@pytest.mark.parametrize("mode", ["positive", "negative"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_schema_fuzzing_finds_no_5xx_and_no_undeclared_answer(server, mode):
    from schemathesis import GenerationMode

    schema = schemathesis.openapi.from_url(server.url + "/openapi.json")
    names = list(KINDS)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 9                 # every endpoint but the page is in the schema
    checks = CHECKS + ([negative_data_rejection] if mode == "negative" else [])
    seen: dict[str, int] = {}           # 'METHOD /path status' -> answers
    with requests.Session() as session:
        for operation in operations:
            counter = iter(range(10**9))

            @given(case=operation.as_strategy(generation_mode=GenerationMode(mode)))
            @settings(max_examples=EXAMPLES[mode], deadline=None, database=None,
                      derandomize=True, phases=[Phase.explicit, Phase.generate],
                      suppress_health_check=list(HealthCheck))
            def fuzz(case):
                if mode == "positive":      # an invalid case stays as generated
                    _served_names(case, names, next(counter))
                response = case.call_and_validate(session=session, checks=checks)
                key = f"{operation.label} {response.status_code}"
                seen[key] = seen.get(key, 0) + 1

            try:
                fuzz()
            except Unsatisfiable:           # nothing to make invalid (GET /health)
                assert mode == "negative"
    print(mode, sorted(seen.items()))
    assert not any(key.endswith(tuple(f" 5{d:02d}" for d in range(100))) for key in seen)
    if mode == "positive":              # every kind scored, over both routes
        assert seen.get("POST /predict 200") and seen.get("POST /models/{name}/predict 200")
        assert seen.get("POST /explain 200") and seen.get("GET /models/{name} 200")
    else:
        assert sum(n for key, n in seen.items() if " 4" in key) >= 30


@pytest.mark.slow  # make test-slow: another real-data run covers the command
def test_schemathesis_coverage_phase(server):
    """``st run --phases coverage``: boundary values, wrong types, missing and extra fields
    of every operation, as schemathesis's runner makes them (a separate process)."""
    st = Path(sys.executable).parent / "st"
    if not st.exists():
        pytest.skip("no st (schemathesis's runner) beside this Python")
    r = subprocess.run([str(st), "run", server.url + "/openapi.json", "--phases", "coverage",
                        "--checks", CHECK_NAMES, "--seed", "1", "--request-timeout", "30",
                        "--no-color"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failures" not in r.stdout.lower(), r.stdout[-3000:]
