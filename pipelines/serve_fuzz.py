"""Malformed requests against a running server: every one must get a 4xx answer, never
a crash, a hang or memory that grows."""

from __future__ import annotations

import json
import random


def malformed_requests(n: int, seed: int, texts: list[str], model: str):
    """``n`` requests ``(method, path, headers, body)`` a careless or hostile client could
    send: broken JSON, wrong types, huge or nested values, bad UTF-8, unknown fields,
    paths and models, oversized batches and bodies. Most are bodies posted to the scoring
    endpoints, where parsing and scoring could fail."""
    rng = random.Random(seed)
    scoring = (
        ["/predict"] * 4
        + ["/explain"] * 2
        + [
            f"/models/{model}/predict",
            f"/models/{model}/explain",
            "/models/nope/predict",
            "/models/%00/explain",
        ]
    )
    other = [
        "/models/nope/reload",
        "/models",
        f"/models/{model}",
        "/health",
        "/metrics",
        "/",
        "/predict/../explain",
        "/" + "a" * 3000,
        "/openapi.json",
        "/models/%ff%fe",
    ]
    values = [
        None,
        True,
        0,
        -1,
        1e308,
        -1e308,
        2**70,
        "",
        "x",
        [],
        {},
        [[]],
        {"a": 1},
        "\ud800",
        "é" * 5,
        "\x00",
        [1, "a"],
        float("nan"),
    ]

    def value():
        return rng.choice(values + [rng.choice(texts)[: rng.randint(0, 500)]])

    def body():
        kind = rng.randrange(12)
        t = rng.choice(texts)
        if kind == 0:
            return bytes(rng.getrandbits(8) for _ in range(rng.randint(0, 300)))
        if kind == 1:
            full = json.dumps({"text": t})
            return full[: rng.randint(0, len(full))].encode()
        if kind == 2:
            return json.dumps(
                {
                    rng.choice(
                        ["text", "texts", "model", "top_k", "threshold", "class", "zzz"]
                    ): value()
                    for _ in range(3)
                },
                allow_nan=True,
            ).encode()
        if kind == 3:
            return json.dumps({"texts": [value() for _ in range(rng.randint(0, 5))]}).encode()
        if kind == 4:
            return ("[" * rng.randint(100, 5000) + "]" * rng.randint(0, 5000)).encode()
        if kind == 5:
            return json.dumps({"text": t}).encode("utf-16")
        if kind == 6:
            return b'{"text": "' + bytes([0xFF, 0xFE, 0xC3]) + b'"}'
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
        headers = {
            "content-type": rng.choice(
                ["application/json", "text/plain", "", "application/json; charset=latin-1"]
            )
        }
        yield method, path, headers, body()
