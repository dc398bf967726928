"""The n-gram names of a model's buckets (:mod:`.bucket_names`) as flat numeric arrays of a
model file, and back, checked: no pickle, no object arrays, and no numba (loading a model
never compiles anything)."""

from __future__ import annotations

import os

import numpy as np

from nbsvm.errors import NBSVMError


def encode_map(mapping: dict) -> dict[str, np.ndarray]:
    """The map as flat numeric arrays for a model file (no pickle, no object arrays)."""
    buckets, counts, texts = [], [], []
    for b in sorted(mapping):
        for s, n in mapping[b]:
            buckets.append(b)
            counts.append(n)
            texts.append(s.encode("utf-8"))
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum([len(t) for t in texts], out=offsets[1:])
    return {
        "map_buckets": np.asarray(buckets, dtype=np.int32),
        "map_counts": np.asarray(counts, dtype=np.int64),
        "map_offsets": offsets,
        "map_text": np.frombuffer(b"".join(texts), dtype=np.uint8).copy(),
    }


def decode_map(
    arrays: dict, n_bits: int, path: str | os.PathLike[str] | None = None
) -> dict[int, list[tuple[str, int]]]:
    """Inverse of :func:`encode_map`, checking every array (the file may be crafted)."""
    names = ("map_buckets", "map_counts", "map_offsets", "map_text")
    if not all(k in arrays for k in names):
        raise NBSVMError(
            "corrupted model file: part of the n-gram map is missing",
            path=None if path is None else str(path),
        )
    b, n, o, t = (arrays[k] for k in names)
    ok = (
        b.ndim == n.ndim == o.ndim == t.ndim == 1
        and b.dtype == np.int32
        and n.dtype == np.int64
        and o.dtype == np.int64
        and t.dtype == np.uint8
        and n.size == b.size
        and o.size == b.size + 1
        and o[0] == 0
        and o[-1] == t.size
        and bool(np.all(np.diff(o) >= 0))
        and (b.size == 0 or (b.min() >= 0 and b.max() < (1 << n_bits)))
    )
    if not ok:
        raise NBSVMError(
            "corrupted model file: the n-gram map arrays do not fit together",
            path=None if path is None else str(path),
        )
    data = t.tobytes()
    out: dict[int, list[tuple[str, int]]] = {}
    for j, bucket in enumerate(b.tolist()):
        out.setdefault(bucket, []).append(
            (data[o[j] : o[j + 1]].decode("utf-8", "replace"), int(n[j]))
        )
    return out
