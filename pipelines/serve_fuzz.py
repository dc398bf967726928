"""Malformed requests against a running server: every one must get a 4xx answer, never
a crash, a hang or memory that grows."""

from __future__ import annotations

import json
import random

VALUES = [
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
FIELDS = ["text", "texts", "model", "top_k", "threshold", "class", "zzz"]
METHODS = ["POST"] * 16 + ["GET", "PUT", "DELETE", "PATCH"]
CONTENT_TYPES = ["application/json", "text/plain", "", "application/json; charset=latin-1"]


def paths(model: str) -> tuple[list[str], list[str]]:
    """The scoring endpoints (most requests go there) and the other paths."""
    scoring = ["/predict"] * 4 + ["/explain"] * 2
    scoring += [
        f"/models/{model}/predict",
        f"/models/{model}/explain",
        "/models/nope/predict",
        "/models/%00/explain",
    ]
    other = ["/models/nope/reload", "/models", f"/models/{model}", "/health", "/metrics", "/"]
    other += ["/predict/../explain", "/" + "a" * 3000, "/openapi.json", "/models/%ff%fe"]
    return scoring, other


class Bodies:
    """The malformed bodies, one kind a method (``kind_0`` ... ``kind_11``), all drawn from
    one seeded ``random.Random``."""

    def __init__(self, rng: random.Random, texts: list[str]):
        self.rng, self.texts = rng, texts

    def value(self):
        rng = self.rng
        return rng.choice(VALUES + [rng.choice(self.texts)[: rng.randint(0, 500)]])

    def __call__(self) -> bytes:
        kind = self.rng.randrange(12)
        t = self.rng.choice(self.texts)
        return getattr(self, f"kind_{kind}")(t)

    def kind_0(self, t):  # random bytes
        return bytes(self.rng.getrandbits(8) for _ in range(self.rng.randint(0, 300)))

    def kind_1(self, t):  # JSON cut short
        full = json.dumps({"text": t})
        return full[: self.rng.randint(0, len(full))].encode()

    def kind_2(self, t):  # fields known and unknown, any values
        fields = {self.rng.choice(FIELDS): self.value() for _ in range(3)}
        return json.dumps(fields, allow_nan=True).encode()

    def kind_3(self, t):  # texts of any type
        return json.dumps({"texts": [self.value() for _ in range(self.rng.randint(0, 5))]}).encode()

    def kind_4(self, t):  # deep nesting
        return ("[" * self.rng.randint(100, 5000) + "]" * self.rng.randint(0, 5000)).encode()

    def kind_5(self, t):  # another encoding
        return json.dumps({"text": t}).encode("utf-16")

    def kind_6(self, t):  # bad UTF-8
        return b'{"text": "' + bytes([0xFF, 0xFE, 0xC3]) + b'"}'

    def kind_7(self, t):  # bad top_k
        return json.dumps({"text": t, "top_k": self.rng.choice([0, -5, 10**12, "3", 2.5])}).encode()

    def kind_8(self, t):  # oversized batch
        return json.dumps({"texts": [t[:50]] * self.rng.choice([1001, 5000])}).encode()

    def kind_9(self, t):  # oversized text
        return json.dumps({"text": "x" * self.rng.choice([100_001, 2_000_000])}).encode()

    def kind_10(self, t):  # a class of any type
        return json.dumps({"text": t, "class": self.value()}).encode()

    def kind_11(self, t):  # any value as the whole body
        return json.dumps(self.value()).encode()


def malformed_requests(n: int, seed: int, texts: list[str], model: str):
    """``n`` requests ``(method, path, headers, body)`` a careless or hostile client could
    send: broken JSON, wrong types, huge or nested values, bad UTF-8, unknown fields,
    paths and models, oversized batches and bodies. Most are bodies posted to the scoring
    endpoints, where parsing and scoring could fail."""
    rng = random.Random(seed)
    scoring, other = paths(model)
    body = Bodies(rng, texts)
    for _ in range(n):
        method = rng.choice(METHODS)
        path = rng.choice(scoring if rng.random() < 0.9 else other)
        headers = {"content-type": rng.choice(CONTENT_TYPES)}
        yield method, path, headers, body()
