"""The learning-on part of ``make serve-bench`` (:mod:`serve_bench`): predictions under load
while a client posts corrections to ``nbsvm serve --learn``."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from serve_load import Corrector, free_port, load, start_server

from nbsvm.serve.registry import model_name

BATCH = 64


def bodies_of(texts: list[str]) -> tuple[list[bytes], list[bytes]]:
    """Request bodies: one text each, and batches of :data:`BATCH`."""
    single = [json.dumps({"text": t}).encode() for t in texts]
    batches = [
        json.dumps({"texts": texts[i : i + BATCH]}).encode()
        for i in range(0, len(texts) - BATCH + 1, BATCH)
    ]
    return single, batches


def learning_rows(args, model: Path, texts: list[str], work: Path) -> tuple[list[dict], dict]:
    """8 clients predicting (single texts, then batches) while one client posts corrections
    (50 labelled reviews a request, closed loop) to ``nbsvm serve --learn``, on a copy of
    the model (learning rewrites its file): a row each, and what was learned."""
    copy = work / "serve_bench_learn.npz"
    for old in work.glob("serve_bench_learn.npz*"):
        old.unlink()
    shutil.copyfile(model, copy)
    port, token = free_port(), "serve-bench"
    url = f"http://127.0.0.1:{port}"
    env = dict(os.environ, NBSVM_LEARN_TOKEN=token)
    server = start_server(copy, port, work / "serve_bench_learn.log", "--learn", env=env)
    rows = []
    try:
        single, batches = bodies_of(texts)
        load(url, single, 4, min(2, args.seconds), work)  # warm-up: numba's first calls
        t0 = time.perf_counter()
        with Corrector(url, model_name(str(copy)), token, texts) as corrector:
            for kind, bodies, per in (
                ("single text", single, 1),
                (f"batch of {BATCH}", batches, BATCH),
            ):
                r = load(url, bodies, 8, args.seconds, work)
                rows.append(
                    dict(
                        request=kind,
                        clients=8,
                        learning="on",
                        **r,
                        docs_per_s=r["requests_per_s"] * per,
                    )
                )
                print(
                    f"   learning on, {kind:12s} 8 clients: {rows[-1]['docs_per_s']:8,.0f} docs/s p99 {r['p99_ms']:.2f} ms",
                    flush=True,
                )
        seconds = time.perf_counter() - t0
        import httpx

        state = httpx.get(f"{url}/models/{model_name(str(copy))}", timeout=30).json()["learning"]
        learned = dict(
            accepted=corrector.accepted,
            learned=state["learned"],
            seconds=seconds,
            refused=corrector.refused,
            failed=corrector.failed,
        )
        print(f"   learned {learned}", flush=True)
    finally:
        server.terminate()
        server.wait(60)
    return rows, learned


def learning_note(frame, learned: dict) -> str:
    """Predictions at 8 clients with learning on beside off, and the corrections learned."""
    cells = []
    for kind in ("single text", f"batch of {BATCH}"):
        off = frame[
            (frame.request == kind) & (frame.clients == 8) & (frame.learning == "off")
        ].iloc[0]
        on = frame[(frame.request == kind) & (frame.learning == "on")].iloc[0]
        cells.append(
            f"{kind}: {on.docs_per_s:,.0f} docs/s and p99 {on.p99_ms:.2f} ms with learning on, "
            f"{off.docs_per_s:,.0f} docs/s and p99 {off.p99_ms:.2f} ms off"
        )
    rate = learned["learned"] / learned["seconds"]
    return (
        "Learning on (nbsvm serve --learn; one client posting 50 labelled reviews a request, "
        "closed loop), 8 predicting clients: " + "; ".join(cells) + f". Learned "
        f"{learned['learned']:,} of {learned['accepted']:,} acknowledged corrections in "
        f"{learned['seconds']:.1f} s ({rate:,.0f}/s); 503 (queue full) {learned['refused']}, "
        f"failed {learned['failed']}."
    )
