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

import asyncio
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from _harness import positive, script_parser
from _report import ROOT, start, write_results
from serve_fuzz import malformed_requests
from serve_learning import BATCH, bodies_of, learning_note, learning_rows
from serve_load import WRK, free_port, imdb_test_texts, load, predict_rate, start_server, status_mb

from nbsvm.serve.registry import model_name

CONCURRENCY = (1, 8, 64)


# ---- fuzzing ----------------------------------------------------------------------------


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


def parse_args(argv=None):
    ap = script_parser(__doc__, seed=True)
    ap.add_argument("--model", default=str(ROOT / "models" / "imdb-3gram-24b.npz"))
    ap.add_argument("--texts", type=positive, default=2000, help="IMDB test reviews sent")
    ap.add_argument(
        "--predict-texts",
        type=int,
        default=25_000,
        help="IMDB test reviews scored by nbsvm predict (many: its start-up "
        "is not what is compared)",
    )
    ap.add_argument("--seconds", type=positive, default=8, help="per setting")
    ap.add_argument("--fuzz", type=int, default=10_000, help="malformed requests (0: none)")
    ap.add_argument("--name", default="serve_bench")
    ap.add_argument("--out", default=None, help="results folder (default results/)")
    ap.add_argument("--clients", default="1,8,64", help="concurrent clients (8 among them)")
    ap.add_argument("--predict-runs", type=positive, default=3, help="nbsvm predict runs (median)")
    ap.add_argument(
        "--no-learn",
        dest="learn",
        action="store_false",
        help="skip the run with a client posting corrections (nbsvm serve --learn)",
    )
    return ap.parse_args(argv)


def check_inputs(model: Path) -> None:
    if not model.is_file():
        raise SystemExit(f"{model}: no model; `make imdb` trains it")
    if not shutil.which(WRK):
        raise SystemExit(
            "the load is made by wrk (a C load generator; the machine has 2 "
            "cores, and a Python client would take one from the server): "
            "apt-get install wrk"
        )


def load_rows(
    url: str, single: list, batches: list, seconds: int, work: Path, clients_list=CONCURRENCY
) -> list[dict]:
    """Single texts and batches at every concurrency, after a warm-up (numba's first
    calls): a row each."""
    rows = []
    load(url, single, 4, min(2, seconds), work)  # warm-up: numba's first calls
    load(url, batches, 4, min(2, seconds), work)
    for kind, bodies, per in (
        ("single text", single, 1),
        (f"batch of {BATCH}", batches, BATCH),
    ):
        for clients in clients_list:
            r = load(url, bodies, clients, seconds, work)
            row = dict(request=kind, clients=clients, **r, docs_per_s=r["requests_per_s"] * per)
            rows.append(row)
            print(
                f"   {kind:12s} {clients:3d} clients: {row['requests_per_s']:8,.0f} req/s "
                f"{row['docs_per_s']:8,.0f} docs/s p50 {row['p50_ms']:.2f} ms p99 "
                f"{row['p99_ms']:.2f} ms errors {row['errors']}",
                flush=True,
            )
    return rows


def fuzz_run(args, server, url: str, requests: list, single: list, work: Path) -> dict:
    """The malformed requests in five parts, the server's RSS read after each: flat, or
    growing per request; then whether the server still answers."""
    rss = [status_mb(server.pid, "VmRSS")]
    fuzz_result = {"statuses": {}, "failures": []}
    for part in np.array_split(np.arange(len(requests)), 5):
        got = asyncio.run(fuzz(url, [requests[i] for i in part]))
        for status, count in got["statuses"].items():
            fuzz_result["statuses"][status] = fuzz_result["statuses"].get(status, 0) + count
        fuzz_result["failures"] += got["failures"]
        rss.append(status_mb(server.pid, "VmRSS"))
    fuzz_result["statuses"] = dict(sorted(fuzz_result["statuses"].items()))
    alive = server.poll() is None and load(url, single, 1, 1, work)["errors"] == 0
    fuzz_result.update(rss_mb=[round(r, 1) for r in rss], alive=alive, n=args.fuzz)
    print(
        f"   fuzz: {args.fuzz:,} malformed requests, answers {fuzz_result['statuses']}, "
        f"{len(fuzz_result['failures'])} 5xx or dropped, RSS by fifth "
        f"{' -> '.join(f'{r:.0f}' for r in rss)} MB, server alive: {alive}",
        flush=True,
    )
    for f in fuzz_result["failures"][:5]:
        print("     ", f)
    return fuzz_result


def serve(args, model: Path, texts: list[str], work: Path):
    """The server under load, then fuzzed: the load rows, its peak RSS, the fuzz result."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = start_server(model, port, work / "serve_bench_server.log")
    try:
        single, batches = bodies_of(texts)
        clients = tuple(int(c) for c in args.clients.split(","))
        rows = load_rows(url, single, batches, args.seconds, work, clients)
        peak = status_mb(server.pid, "VmHWM")
        print(f"   server peak RSS {peak:.0f} MB", flush=True)
        fuzz_result = None
        if args.fuzz:
            requests = list(malformed_requests(args.fuzz, args.seed, texts, model_name(str(model))))
            fuzz_result = fuzz_run(args, server, url, requests, single, work)
    finally:
        server.terminate()
        server.wait(30)
    return rows, peak, fuzz_result


def report_notes(model: Path, texts, pred_texts, pred, peak, frame, fuzz_result) -> list[str]:
    batch_best = frame[frame.request != "single text"].docs_per_s.max()
    single8 = frame[(frame.request == "single text") & (frame.clients == 8)].iloc[0]
    notes = [
        f"Model {model.name}; {len(texts):,} IMDB test reviews; the server's peak RSS "
        f"{peak:.0f} MB; one worker; clients in the same 2-core machine.",
        f"nbsvm predict on {len(pred_texts):,} IMDB test reviews (the first {len(texts):,} "
        f"are the server's): {pred['docs_per_s']:,.0f} documents/s, the whole process "
        f"(median of 3); the server's best batch throughput {batch_best:,.0f} documents/s "
        f"({batch_best / pred['docs_per_s']:.2f}x).",
        f"Single text at 8 clients: p99 {single8.p99_ms:.2f} ms (target < 10 ms).",
    ]
    if fuzz_result:
        notes.append(
            f"Fuzz: {fuzz_result['n']:,} malformed requests, answers by status "
            f"{fuzz_result['statuses']}, 5xx or dropped: {len(fuzz_result['failures'])}, "
            f"server RSS before and after each fifth {fuzz_result['rss_mb']} MB, "
            f"alive after: {fuzz_result['alive']}."
        )
    return notes


def main(argv=None):
    args = parse_args(argv)
    config = start(
        "serve_bench", vars(args), [__file__, *(argv if argv is not None else sys.argv[1:])]
    )
    model = Path(args.model)
    check_inputs(model)
    out = Path(args.out) if args.out else ROOT / "results"
    work = out / "tmp"
    work.mkdir(parents=True, exist_ok=True)
    texts = imdb_test_texts(args.texts)
    rows, peak, fuzz_result = serve(args, model, texts, work)
    pred_texts = imdb_test_texts(args.predict_texts)
    pred = predict_rate(model, pred_texts, work, runs=args.predict_runs)
    print(
        f"   nbsvm predict: {pred['docs_per_s']:,.0f} docs/s ({pred['seconds']:.2f} s for "
        f"{len(pred_texts):,} texts, the whole process)",
        flush=True,
    )
    learn_rows, learned = learning_rows(args, model, texts, work) if args.learn else ([], None)
    frame = pd.DataFrame([dict(r, learning="off") for r in rows] + learn_rows)
    notes = report_notes(
        model, texts, pred_texts, pred, peak, frame[frame.learning == "off"], fuzz_result
    )
    if learned:
        notes.append(learning_note(frame, learned))
    write_results(
        args.name, frame, title="nbsvm serve under load", config=config, notes=notes, out=out
    )
    if fuzz_result and (fuzz_result["failures"] or not fuzz_result["alive"]):
        raise SystemExit("the fuzz run found 5xx answers or dropped connections")


if __name__ == "__main__":
    main()
