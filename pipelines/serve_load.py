"""The serving benchmark's load: the IMDB test texts as requests, a server started on a
free port, its memory, and wrk's request rates (single texts and batches)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
from _report import ROOT

from nbsvm import datasets

NBSVM = Path(sys.executable).parent / "nbsvm"
WRK = shutil.which("wrk") or "wrk"


def imdb_test_texts(n: int) -> list[str]:
    """The first ``n`` reviews of IMDB's test set (``data/aclImdb``, else the shared archive),
    alternating positive and negative."""
    folder = ROOT / "data" / "aclImdb" / "test"
    if folder.is_dir():
        pos = sorted((folder / "pos").iterdir())[: n // 2 + 1]
        neg = sorted((folder / "neg").iterdir())[: n // 2 + 1]
        files = [f for pair in zip(pos, neg) for f in pair][:n]
        return [f.read_text(encoding="utf-8", errors="replace") for f in files]
    texts = []
    with tarfile.open(datasets.archive("imdb"), "r|gz") as tar:  # sha256 checked
        for member in tar:
            if (
                member.isfile()
                and member.name.startswith("aclImdb/test/")
                and member.name.endswith(".txt")
            ):
                texts.append(tar.extractfile(member).read().decode("utf-8", "replace"))
                if len(texts) == n:
                    break
    return texts


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def status_mb(pid: int, field: str) -> float:
    """A ``/proc/PID/status`` memory field in MB: ``VmRSS`` now, ``VmHWM`` its peak."""
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return float("nan")


def start_server(model: Path, port: int, log: Path, *extra: str, env=None) -> subprocess.Popen:
    """``nbsvm serve model`` on ``port``, its output to ``log`` (a pipe nobody reads would
    fill with uvicorn's warnings about malformed requests and stop the server)."""
    import httpx

    with open(log, "w") as out:
        proc = subprocess.Popen(
            [str(NBSVM), "serve", str(model), "--port", str(port), *extra],
            stdout=out,
            stderr=out,
            env=env,
        )
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"the server ended: {log.read_text()}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            time.sleep(0.2)
        if time.monotonic() > deadline:
            raise SystemExit("the server did not answer in 120 s")


WRK_SCRIPT = r"""
local bodies, i = {}, 0
for line in io.lines(os.getenv("NBSVM_BODIES")) do bodies[#bodies + 1] = line end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
request = function()
  i = i % #bodies + 1
  return wrk.format(nil, "/predict", nil, bodies[i])
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('RESULT {"requests": %d, "errors": %d, "seconds": %.4f, '
    .. '"p50_ms": %.4f, "p99_ms": %.4f, "max_ms": %.4f}\n', summary.requests,
    e.connect + e.read + e.write + e.status + e.timeout, summary.duration / 1e6,
    latency:percentile(50) / 1e3, latency:percentile(99) / 1e3, latency.max / 1e3))
end
"""


def load(url: str, bodies: list[bytes], clients: int, seconds: float, work: Path) -> dict:
    """``clients`` connections of wrk (one thread: the server keeps the other core), each
    posting ``bodies`` in turn and sending the next when the last is answered (closed
    loop), for ``seconds``; wrk's own latency histogram gives p50 and p99."""
    script, lines = work / "serve_bench.lua", work / "serve_bench_bodies.txt"
    script.write_text(WRK_SCRIPT)
    lines.write_bytes(b"".join(b + b"\n" for b in bodies))
    out = subprocess.run(
        [WRK, "-t1", f"-c{clients}", f"-d{seconds}s", "--timeout", "30s", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, NBSVM_BODIES=str(lines)),
    ).stdout
    r = json.loads(out.split("RESULT ", 1)[1].splitlines()[0])
    r["requests_per_s"] = r["requests"] / r["seconds"]
    return r


def predict_rate(model: Path, texts: list[str], work: Path, runs: int = 3) -> dict:
    """``nbsvm predict`` over ``texts`` (one per line), median of ``runs``."""
    path = work / "serve_bench_texts.txt"
    path.write_text("".join(" ".join(t.split()) + "\n" for t in texts), encoding="utf-8")
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(
            [
                str(NBSVM),
                "predict",
                str(path),
                "-m",
                str(model),
                "--format",
                "plain-lines",
                "-o",
                str(work / "serve_bench_pred.csv"),
                "-q",
            ],
            check=True,
        )
        times.append(time.perf_counter() - t)
    s = float(np.median(times))
    return {"seconds": s, "docs_per_s": len(texts) / s}


class Corrector:
    """A client posting labelled texts to ``POST /models/NAME/learn`` in a closed loop (the
    next request when the last is answered), ``per_request`` at a time, while it runs."""

    def __init__(self, url: str, name: str, token: str, texts: list[str], per_request: int = 50):
        import threading

        self.url, self.name, self.token = url, name, token
        self.texts, self.per = texts, per_request
        self.accepted, self.refused, self.failed = 0, 0, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Corrector:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        import httpx

        headers = {"content-type": "application/json", "authorization": f"Bearer {self.token}"}
        i = 0
        with httpx.Client(timeout=60) as client:
            while not self._stop.is_set():
                texts = [self.texts[(i + k) % len(self.texts)] for k in range(self.per)]
                labels = ["pos" if (i + k) % 2 == 0 else "neg" for k in range(self.per)]
                i += self.per
                try:
                    r = client.post(
                        f"{self.url}/models/{self.name}/learn",
                        headers=headers,
                        json={"texts": texts, "labels": labels},
                    )
                except httpx.HTTPError:
                    self.failed += 1
                    continue
                if r.status_code == 202:
                    self.accepted += self.per
                elif r.status_code == 503:  # the queue is full: wait as told
                    self.refused += 1
                    time.sleep(float(r.headers.get("retry-after", "1")))
                else:
                    self.failed += 1
