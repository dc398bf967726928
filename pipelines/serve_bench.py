#!/usr/bin/env python
"""Load test of ``nbsvm serve`` on the IMDB model (``make serve-bench``,
``results/serve_bench.md``): throughput and latency (p50 / p99) for single texts and for
batches of 64 at 1, 8 and 64 concurrent clients, the server's peak RSS, beside scoring
IMDB's test set with ``nbsvm predict`` (documents/s, the whole process); then a fuzz run of malformed requests (no
5xx, the server alive, its memory flat).

The server runs in its own process (one worker) on a loopback port. The load comes from wrk
(``apt-get install wrk``): one thread, so the server keeps the other of the 2 cores, with
1, 8 or 64 connections, each sending its next request when the last is answered (closed
loop), for ``--seconds`` per setting; p50 and p99 come from wrk's latency histogram. The
fuzz requests are sent by httpx (asyncio), 8 at a time.

    python pipelines/serve_bench.py [--model models/imdb-3gram-24b.npz] [--seconds 8]
                                    [--fuzz 10000] [--seed 0]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from _report import ROOT, start, write_results

from nbsvm import datasets
from nbsvm.serve.registry import model_name

NBSVM = Path(sys.executable).parent / "nbsvm"
WRK = shutil.which("wrk") or "wrk"
CONCURRENCY = (1, 8, 64)
BATCH = 64


def imdb_test_texts(n: int) -> list[str]:
    """The first ``n`` reviews of IMDB's test set (``data/aclImdb``, else the shared archive),
    alternating positive and negative."""
    folder = ROOT / "data" / "aclImdb" / "test"
    if folder.is_dir():
        pos = sorted((folder / "pos").iterdir())[:n // 2 + 1]
        neg = sorted((folder / "neg").iterdir())[:n // 2 + 1]
        files = [f for pair in zip(pos, neg) for f in pair][:n]
        return [f.read_text(encoding="utf-8", errors="replace") for f in files]
    texts = []
    with tarfile.open(datasets.archive("imdb"), "r|gz") as tar:     # sha256 checked
        for member in tar:
            if member.isfile() and member.name.startswith("aclImdb/test/") and \
                    member.name.endswith(".txt"):
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


def start_server(model: Path, port: int, log: Path) -> subprocess.Popen:
    """``nbsvm serve model`` on ``port``, its output to ``log`` (a pipe nobody reads would
    fill with uvicorn's warnings about malformed requests and stop the server)."""
    import httpx
    with open(log, "w") as out:
        proc = subprocess.Popen([str(NBSVM), "serve", str(model), "--port", str(port)],
                                stdout=out, stderr=out)
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
    out = subprocess.run([WRK, "-t1", f"-c{clients}", f"-d{seconds}s", "--timeout", "30s",
                          "-s", str(script), url], capture_output=True, text=True, check=True,
                         env=dict(os.environ, NBSVM_BODIES=str(lines))).stdout
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
        subprocess.run([str(NBSVM), "predict", str(path), "-m", str(model), "--format", "plain-lines",
                        "-o", str(work / "serve_bench_pred.csv"), "-q"], check=True)
        times.append(time.perf_counter() - t)
    s = float(np.median(times))
    return {"seconds": s, "docs_per_s": len(texts) / s}


# ---- fuzzing ----------------------------------------------------------------------------

def malformed_requests(n: int, seed: int, texts: list[str], model: str):
    """``n`` requests ``(method, path, headers, body)`` a careless or hostile client could
    send: broken JSON, wrong types, huge or nested values, bad UTF-8, unknown fields,
    paths and models, oversized batches and bodies. Most are bodies posted to the scoring
    endpoints, where parsing and scoring could fail."""
    rng = random.Random(seed)
    scoring = ["/predict"] * 4 + ["/explain"] * 2 + [f"/models/{model}/predict",
                                                     f"/models/{model}/explain",
                                                     "/models/nope/predict", "/models/%00/explain"]
    other = ["/models/nope/reload", "/models", f"/models/{model}", "/health", "/metrics", "/",
             "/predict/../explain", "/" + "a" * 3000, "/openapi.json", "/models/%ff%fe"]
    values = [None, True, 0, -1, 1e308, -1e308, 2**70, "", "x", [], {}, [[]], {"a": 1},
              "\ud800", "é" * 5, "\x00", [1, "a"], float("nan")]

    def value():
        return rng.choice(values + [rng.choice(texts)[:rng.randint(0, 500)]])

    def body():
        kind = rng.randrange(12)
        t = rng.choice(texts)
        if kind == 0:
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300)))
        if kind == 1:
            full = json.dumps({"text": t})
            return full[:rng.randint(0, len(full))].encode()
        if kind == 2:
            return json.dumps({rng.choice(["text", "texts", "model", "top_k", "threshold",
                                           "class", "zzz"]): value() for _ in range(3)},
                              allow_nan=True).encode()
        if kind == 3:
            return json.dumps({"texts": [value() for _ in range(rng.randint(0, 5))]}).encode()
        if kind == 4:
            return ("[" * rng.randint(100, 5000) + "]" * rng.randint(0, 5000)).encode()
        if kind == 5:
            return json.dumps({"text": t}).encode("utf-16")
        if kind == 6:
            return b'{"text": "' + bytes([0xff, 0xfe, 0xc3]) + b'"}'
        if kind == 7:
            return json.dumps({"text": t, "top_k": rng.choice([0, -5, 10**12, "3", 2.5])}).encode()
        if kind == 8:
            return json.dumps({"texts": [t[:50]] * rng.choice([1001, 5000])}).encode()
        if kind == 9:
            return json.dumps({"text": "x" * rng.choice([100_001, 2_000_000])}).encode()
        if kind == 10:
            return json.dumps({"text": t, "class": value()}).encode()
        return json.dumps(value()).encode()

    for _ in range(n):
        method = rng.choice(["POST"] * 16 + ["GET", "PUT", "DELETE", "PATCH"])
        path = rng.choice(scoring if rng.random() < 0.9 else other)
        headers = {"content-type": rng.choice(["application/json", "text/plain", "",
                                                "application/json; charset=latin-1"])}
        yield method, path, headers, body()


async def fuzz(url: str, requests) -> dict:
    import httpx
    statuses: dict = {}
    failures = []
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        sem = asyncio.Semaphore(8)

        async def one(req):
            method, path, headers, body = req
            async with sem:
                try:
                    r = await client.request(method, path, headers=headers, content=body)
                    statuses[r.status_code] = statuses.get(r.status_code, 0) + 1
                    if r.status_code >= 500:
                        failures.append((method, path, body[:200], r.text[:200]))
                except httpx.HTTPError as e:
                    failures.append((method, path, body[:200], repr(e)))

        await asyncio.gather(*(one(r) for r in requests))
    return {"statuses": dict(sorted(statuses.items())), "failures": failures}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=str(ROOT / "models" / "imdb-3gram-24b.npz"))
    ap.add_argument("--texts", type=int, default=2000, help="IMDB test reviews sent")
    ap.add_argument("--predict-texts", type=int, default=25_000,
                    help="IMDB test reviews scored by nbsvm predict (many: its start-up "
                         "is not what is compared)")
    ap.add_argument("--seconds", type=int, default=8, help="per setting")
    ap.add_argument("--fuzz", type=int, default=10_000, help="malformed requests (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--name", default="serve_bench")
    args = ap.parse_args(argv)
    config = start("serve_bench", vars(args), [__file__, *(argv if argv is not None else sys.argv[1:])])
    model = Path(args.model)
    if not model.is_file():
        raise SystemExit(f"{model}: no model; `make imdb` trains it")
    if not shutil.which(WRK):
        raise SystemExit("the load is made by wrk (a C load generator; the machine has 2 "
                         "cores, and a Python client would take one from the server): "
                         "apt-get install wrk")
    work = ROOT / "results" / "tmp"
    work.mkdir(parents=True, exist_ok=True)
    texts = imdb_test_texts(args.texts)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(model, port, work / "serve_bench_server.log")
    rows = []
    try:
        single = [json.dumps({"text": t}).encode() for t in texts]
        batches = [json.dumps({"texts": texts[i:i + BATCH]}).encode()
                   for i in range(0, len(texts) - BATCH + 1, BATCH)]
        load(url, single, 4, 2, work)           # warm-up: numba's first calls
        load(url, batches, 4, 2, work)
        for kind, bodies, per in (("single text", single, 1), (f"batch of {BATCH}", batches, BATCH)):
            for clients in CONCURRENCY:
                r = load(url, bodies, clients, args.seconds, work)
                row = dict(request=kind, clients=clients, **r, docs_per_s=r["requests_per_s"] * per)
                rows.append(row)
                print(f"   {kind:12s} {clients:3d} clients: {row['requests_per_s']:8,.0f} req/s "
                      f"{row['docs_per_s']:8,.0f} docs/s p50 {row['p50_ms']:.2f} ms p99 "
                      f"{row['p99_ms']:.2f} ms errors {row['errors']}", flush=True)
        peak = status_mb(server.pid, "VmHWM")
        print(f"   server peak RSS {peak:.0f} MB", flush=True)
        fuzz_result = None
        if args.fuzz:
            # in five parts, the server's RSS read after each: flat, or growing per request
            requests = list(malformed_requests(args.fuzz, args.seed, texts, model_name(str(model))))
            rss = [status_mb(server.pid, "VmRSS")]
            fuzz_result = {"statuses": {}, "failures": []}
            for part in np.array_split(np.arange(len(requests)), 5):
                got = asyncio.run(fuzz(url, [requests[i] for i in part]))
                for status, count in got["statuses"].items():
                    fuzz_result["statuses"][status] = fuzz_result["statuses"].get(status, 0) + count
                fuzz_result["failures"] += got["failures"]
                rss.append(status_mb(server.pid, "VmRSS"))
            fuzz_result["statuses"] = dict(sorted(fuzz_result["statuses"].items()))
            before, after = rss[0], rss[-1]
            alive = server.poll() is None and load(url, single, 1, 1, work)["errors"] == 0
            fuzz_result.update(rss_mb=[round(r, 1) for r in rss], alive=alive, n=args.fuzz)
            print(f"   fuzz: {args.fuzz:,} malformed requests, answers {fuzz_result['statuses']}, "
                  f"{len(fuzz_result['failures'])} 5xx or dropped, RSS by fifth "
                  f"{' -> '.join(f'{r:.0f}' for r in rss)} MB, server alive: {alive}", flush=True)
            for f in fuzz_result["failures"][:5]:
                print("     ", f)
    finally:
        server.terminate()
        server.wait(30)
    pred_texts = imdb_test_texts(args.predict_texts)
    pred = predict_rate(model, pred_texts, work)
    print(f"   nbsvm predict: {pred['docs_per_s']:,.0f} docs/s ({pred['seconds']:.2f} s for "
          f"{len(pred_texts):,} texts, the whole process)", flush=True)
    frame = pd.DataFrame(rows)
    batch_best = frame[frame.request != "single text"].docs_per_s.max()
    single8 = frame[(frame.request == "single text") & (frame.clients == 8)].iloc[0]
    notes = [f"Model {model.name}; {len(texts):,} IMDB test reviews; the server's peak RSS "
             f"{peak:.0f} MB; one worker; clients in the same 2-core machine.",
             f"nbsvm predict on {len(pred_texts):,} IMDB test reviews (the first {len(texts):,} "
             f"are the server's): {pred['docs_per_s']:,.0f} documents/s, the whole process "
             f"(median of 3); the server's best batch throughput {batch_best:,.0f} documents/s "
             f"({batch_best / pred['docs_per_s']:.2f}x).",
             f"Single text at 8 clients: p99 {single8.p99_ms:.2f} ms (target < 10 ms)."]
    if fuzz_result:
        notes.append(f"Fuzz: {fuzz_result['n']:,} malformed requests, answers by status "
                     f"{fuzz_result['statuses']}, 5xx or dropped: {len(fuzz_result['failures'])}, "
                     f"server RSS before and after each fifth {fuzz_result['rss_mb']} MB, "
                     f"alive after: {fuzz_result['alive']}.")
    write_results(args.name, frame, title="nbsvm serve under load", config=config, notes=notes)
    if fuzz_result and (fuzz_result["failures"] or not fuzz_result["alive"]):
        raise SystemExit("the fuzz run found 5xx answers or dropped connections")


if __name__ == "__main__":
    main()
