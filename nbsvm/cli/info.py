"""``nbsvm info``: what an nbsvm file is and holds, from its header (arrays are not read).

Every nbsvm file (model, lexicon, online learner, checkpoint) is an uncompressed ``.npz``
whose ``__header__.npy`` member is a JSON header (:mod:`nbsvm.io.npzfile`). :func:`read_header`
reads that member, and only the ``.npy`` headers (dtype, shape) of the other members, with
the checks :func:`nbsvm.io.npzfile.load_npz` makes before reading any data (the same
code): a regular file, the zip magic, at most 4096 members all ``.npy`` and stored
uncompressed with sizes the file holds, numeric C-order arrays whose shape matches their
size, a header under 1 MiB that is a JSON object. So a crafted file is refused the same way,
and a 2 GB model is described in milliseconds. ``--verify`` also loads the arrays with
:func:`~nbsvm.io.npzfile.load_npz` and checks the checksum (from format 2 it covers the
header too: a header edited by hand fails it).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import typer

from nbsvm._version import __version__
from nbsvm.cli._app import app
from nbsvm.cli.common import cli_errors
from nbsvm.errors import NBSVMError

KINDS = {
    "model": "NBSVM model",
    "lexicon": "NB lexicon",
    "learner": "online learner",
    "checkpoint": "training checkpoint",
}


def read_header(path: str | os.PathLike[str]) -> tuple[dict, dict]:
    """``(header, arrays)`` of an nbsvm file: its JSON header and, for each array, its
    ``{"dtype", "shape", "bytes"}``; no array data is read. Raises
    :class:`~nbsvm.errors.NBSVMError` for anything that is not an nbsvm file, with the
    checks :func:`nbsvm.io.npzfile.load_npz` makes before reading array data (one
    implementation: :func:`nbsvm.io.npzfile.read_npz`)."""
    from nbsvm.io.npzfile import read_npz

    header, specs = read_npz(path, data=False)
    if not isinstance(header.get("kind"), str):
        raise NBSVMError("corrupted file: bad header", path=str(path))
    return header, {
        name: {"dtype": dtype.str, "shape": list(shape), "bytes": nbytes}
        for name, (shape, dtype, nbytes) in specs.items()
    }


def _shape(arrays: dict, name: str, axis: int = -1):
    spec = arrays.get(name)
    if spec is None or not spec["shape"]:
        return None
    return spec["shape"][axis]


def _int(v):
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _sum(v) -> float | None:
    """The sum of a list of numbers, else None."""
    ok = isinstance(v, list) and all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in v
    )
    return float(sum(v)) if ok else None


def _dict(v) -> dict:
    """``v`` when it is a dict (a header's section), else an empty one."""
    return v if isinstance(v, dict) else {}


def describe(path: str | os.PathLike[str], verify: bool = False) -> dict:
    """Everything ``nbsvm info`` shows, as plain JSON values."""
    from nbsvm.io.npzfile import FORMAT_VERSION, load_npz

    path = Path(path)
    header, arrays = read_header(path)
    kind = header["kind"]
    version = header.get("format_version")
    array_bytes = sum(a["bytes"] for a in arrays.values())
    info = {
        "path": str(path),
        "kind": kind,
        "description": KINDS.get(
            kind, f"unknown kind {kind!r} (not one this nbsvm {__version__} writes)"
        ),
        "format_version": version,
        "readable": isinstance(version, int) and 1 <= version <= FORMAT_VERSION,
        "package_version": header.get("package_version"),
        "checksum": header.get("checksum"),
        "verified": False,
        "file_bytes": path.stat().st_size,
        "array_bytes": array_bytes,
        "settings": {},
        "hasher": None,
        "classes": [],
        "training": {},
        "sizes": {},
        "ngram_map": None,
        "arrays": arrays,
    }
    _describe_hashing(info, header)
    describe_kind = {
        "model": _describe_model,
        "lexicon": _describe_lexicon,
        "learner": _describe_learner,
        "checkpoint": _describe_checkpoint,
    }.get(kind)
    if describe_kind is not None:
        describe_kind(info, header, arrays)
    if verify:
        if not info["readable"]:
            raise NBSVMError(
                f"cannot verify: format {version!r}, this nbsvm reads 1 to {FORMAT_VERSION}",
                path=str(path),
            )
        load_npz(path, kind)  # reads every array and checks the checksum
        info["verified"] = True
    return info


def _describe_hashing(info: dict, header: dict) -> None:
    """The classes with their training counts, and the hashing settings, of any kind."""
    hasher = _dict(header.get("hasher"))
    n_bits = _int(hasher.get("n_bits"))
    counts = header.get("class_counts")
    classes = header.get("classes")
    if isinstance(classes, list):
        info["classes"] = [
            {
                "name": str(c),
                "count": counts[i] if isinstance(counts, list) and i < len(counts) else None,
            }
            for i, c in enumerate(classes)
        ]
    if hasher:
        info["hasher"] = hasher
    if n_bits is not None and 0 <= n_bits <= 64:  # else not a size: shown as the header has it
        info["sizes"]["n_bits"] = n_bits
        info["sizes"]["buckets"] = 1 << n_bits


def _describe_model(info: dict, header: dict, arrays: dict) -> None:
    """A model's settings, what --auto, the data, quantize and --calibrate recorded, its
    training, sizes and n-gram map."""
    from nbsvm.memory import row_width

    sizes = info["sizes"]
    params = _dict(header.get("params"))
    info["settings"] = dict(params)
    if "eta0_" in header:
        info["settings"]["eta0_chosen"] = header["eta0_"]
    if isinstance(header.get("auto"), dict):  # what --auto changed and why
        info["auto"] = header["auto"]
    if isinstance(header.get("corpus"), dict):  # what the data-dependent defaults read
        info["corpus"] = header["corpus"]
    if isinstance(header.get("quantized"), dict):  # nbsvm quantize
        info["quantized"] = header["quantized"]
    if isinstance(header.get("calibration"), dict):  # train --calibrate
        info["calibration"] = {
            k: v for k, v in header["calibration"].items() if k in ("method", "report")
        }
    if isinstance(header.get("history"), list):  # trained on, continued with, learned
        info["history"] = header["history"]
    if isinstance(header.get("thresholds"), list):  # train --threshold auto
        classes = header.get("classes")
        names = [str(c) for c in classes] if isinstance(classes, list) else []
        info["thresholds"] = dict(zip(names, header["thresholds"]))
    stored = _shape(arrays, "buckets", 0)
    n_out = _shape(arrays, "coef", 0)
    n_bits = sizes.get("n_bits")
    sizes["stored_buckets"] = stored
    info["training"] = {
        "n_docs": header.get("n_docs"),
        "seen_buckets": header.get("n_seen_buckets"),
    }
    if header.get("weight_sum", header.get("n_docs")) != header.get("n_docs"):
        info["training"]["weight_sum"] = header.get("weight_sum")
    # load reads the arrays, then keeps a learner (W float32 per column and output: 3
    # with AdaGrad, 2 with SGD) and a bucket -> column map of 2**n_bits int32
    width = row_width("adagrad" if _shape(arrays, "adagrad_sq", 0) is not None else "sgd")
    if stored is not None and n_out is not None and n_bits is not None:
        sizes["memory_to_load"] = info["array_bytes"] + n_out * stored * width + 4 * (1 << n_bits)
    n_map = _shape(arrays, "map_buckets", 0)
    info["ngram_map"] = {
        "present": n_map is not None and n_map > 0,
        "ngrams": n_map or 0,
        "text_bytes": _shape(arrays, "map_text", 0) or 0,
    }


def _describe_lexicon(info: dict, header: dict, arrays: dict) -> None:
    """A lexicon's smoothing, training documents and sizes."""
    sizes = info["sizes"]
    counts = header.get("class_counts")
    classes = header.get("classes")
    n_bits = sizes.get("n_bits")
    info["settings"] = {"alpha": header.get("alpha")}
    if isinstance(header.get("corpus"), dict):  # train --lexicon's data-dependent defaults
        info["corpus"] = header["corpus"]
    stored = _shape(arrays, "buckets", 0)
    sizes["stored_buckets"] = stored
    info["training"] = {"n_docs": None, "seen_buckets": stored}
    if header.get("weighted") is True:  # class counts are sums of weights
        info["training"]["n_docs"] = _int(header.get("n_docs"))
        info["training"]["weight_sum"] = _sum(counts)
    elif isinstance(counts, list):
        info["training"]["n_docs"] = sum(c for c in counts if _int(c) is not None)
    if n_bits is not None and isinstance(classes, list) and stored is not None:
        # load keeps the counts as sparse pairs (an int64 key and an int32 count, float64
        # when weighted, per class and stored bucket), never a dense table of 2**n_bits:
        # 16.0 GB was said of a 7 KB file
        pair = 16 if header.get("weighted") is True else 12
        sizes["memory_to_load"] = info["array_bytes"] + pair * len(classes) * stored


def _describe_learner(info: dict, header: dict, arrays: dict) -> None:
    """An online learner's settings, input, classes, training and sizes."""
    sizes = info["sizes"]
    params = _dict(header.get("params"))
    state = _dict(header.get("state"))
    info["settings"] = {
        "learner": header.get("learner"),
        "task": header.get("task"),
        "params": params,
        "input": {
            k.rstrip("_"): state[k]
            for k in ("format_", "n_bits_", "hash_seed_", "index_base_", "encoding_")
            if k in state
        },
    }
    learner_classes = state.get("classes_")
    if isinstance(learner_classes, list):
        info["classes"] = [{"name": str(c), "count": None} for c in learner_classes]
    info["training"] = {
        "n_examples": state.get("n_train_"),
        "n_features": state.get("n_features_in_"),
    }
    if _int(state.get("n_bits_")) and 0 <= state["n_bits_"] <= 64:
        sizes["n_bits"] = state["n_bits_"]
        sizes["buckets"] = 1 << state["n_bits_"]
    sizes["memory_to_load"] = info["array_bytes"] + _dense_bytes(header.get("sparse"), arrays)


def _dense_bytes(sparse: object, arrays: dict) -> int:
    """Bytes of the learned arrays a learner file keeps by their nonzero entries, once
    loaded dense (:func:`nbsvm.learners.persistence.sparse_parts`)."""
    import numpy as np

    from nbsvm.learners.persistence import VALUES_SUFFIX

    total = 0
    for name, shape in (sparse if isinstance(sparse, dict) else {}).items():
        values = arrays.get(name + VALUES_SUFFIX)
        if values is not None and isinstance(shape, list) and all(_int(n) and n > 0 for n in shape):
            total += math.prod(shape) * np.dtype(values["dtype"]).itemsize
    return total


def _describe_checkpoint(info: dict, header: dict, arrays: dict) -> None:
    """A checkpoint's settings, training so far and sizes."""
    fingerprint = _dict(header.get("fingerprint"))
    params = _dict(fingerprint.get("params"))
    info["settings"] = dict(params)
    info["training"] = {
        "n_docs": header.get("n_docs"),
        "after_epoch": header.get("epoch"),
        "data": fingerprint.get("data"),
    }
    info["sizes"]["columns"] = _shape(arrays, "S", 1)
    info["sizes"]["memory_to_load"] = info["array_bytes"]


def _size(n) -> str:
    from nbsvm.memory import human

    return "?" if n is None else f"{human(n)} ({n:,} bytes)" if n >= 1024 else f"{n} bytes"


def _num(n) -> str:
    return f"{n:,}" if _int(n) is not None else "?" if n is None else str(n)


def _flat(d: dict, prefix: str = "") -> list[str]:
    out = []
    for k in sorted(d):
        v = d[k]
        if isinstance(v, dict):
            out += _flat(v, f"{prefix}{k}.")
        else:
            out.append(f"{prefix}{k}={json.dumps(v) if isinstance(v, (list, str)) else v}")
    return out


LABELS = {
    "n_docs": "documents",
    "weight_sum": "summed weights",
    "seen_buckets": "buckets seen in training",
    "n_examples": "examples",
    "n_features": "features",
    "after_epoch": "after epoch",
    "data": "data",
    "stored_buckets": "buckets stored",
    "features": "features",
    "columns": "columns",
}


def print_info(info: dict) -> None:
    """``key: value`` lines, aligned."""
    lines = _file_lines(info) + _recorded_lines(info) + _content_lines(info)
    lines += _storage_lines(info)
    width = max(len(k) for k, _ in lines)
    for k, v in lines:
        typer.echo(f"{k + ':' if k else '':<{width + 1}} {v}")  # no key: the line above's


def _file_lines(info: dict) -> list[tuple[str, str]]:
    """The file, its kind, format and the nbsvm that wrote it."""
    from nbsvm.io.npzfile import FORMAT_VERSION

    lines = [("file", info["path"]), ("kind", f"{info['description']} ({info['kind']})")]
    version = info["format_version"]
    lines.append(
        (
            "format",
            f"{version}"
            + (
                ""
                if info["readable"]
                else f" (this nbsvm reads up to {FORMAT_VERSION}: upgrade nbsvm to load it)"
            ),
        )
    )
    lines.append(
        (
            "written by",
            f"nbsvm {info['package_version']}"
            if info["package_version"]
            else "(not recorded in this kind of file)",
        )
    )
    return lines


def _recorded_lines(info: dict) -> list[tuple[str, str]]:
    """The settings, and what the data, --auto, quantize and --calibrate recorded."""
    lines = []
    if info["settings"]:
        lines.append(("settings", " ".join(_flat(info["settings"]))))
    for key, title, describe in _RECORDS:
        if info.get(key):
            lines.append((title, describe(info[key])))
    if info.get("history"):  # one line per event, oldest first
        from nbsvm.models.history import describe as describe_history

        for i, line in enumerate(describe_history(info["history"]).splitlines()):
            lines.append(("history" if i == 0 else "", line))
    return lines


def _corpus(c: dict) -> str:
    return (
        f"{_num(c['documents'])} documents, median "
        f"{_num(c['median_ngrams'])} n-grams each, {_num(c['ngrams'])} in all"
    )


def _auto(a: dict) -> str:
    from nbsvm.models.auto import describe

    return (
        f"{describe(a.get('changed') or {})}: {a.get('reason')} "
        f"({a.get('split')}, {a.get('trainings')} trainings, a search budget of "
        f"{a.get('budget')} s)"
    )


def _quantized(q: dict) -> str:
    return (
        f"{q.get('dtype')}, {_num(q.get('buckets_kept'))} buckets "
        f"kept, {_num(q.get('buckets_dropped'))} dropped"
    )


def _calibration(c: dict) -> str:
    """The calibration method, with its held-out errors where recorded."""
    rep = c.get("report") or {}
    return f"{c.get('method')}" + (
        f", held-out ECE {rep['ece_before']:.4f} before, {rep['ece_after']:.4f} after"
        if isinstance(rep.get("ece_before"), float) and isinstance(rep.get("ece_after"), float)
        else ""
    )


# what a file may record beyond its settings: the key, its line's title, and how it reads
_RECORDS = (
    ("corpus", "read from the data", _corpus),
    ("auto", "auto", _auto),
    ("quantized", "quantized", _quantized),
    ("calibration", "calibration", _calibration),
    ("thresholds", "thresholds", lambda t: ", ".join(f"{k} {v:.3g}" for k, v in t.items())),
)


def _content_lines(info: dict) -> list[tuple[str, str]]:
    """The hashing, the classes, the training and the sizes the file records."""
    lines = []
    if info["hasher"]:
        lines.append(("hashing", " ".join(_flat(info["hasher"]))))
    if info["classes"]:
        lines.append(
            (
                "classes",
                ", ".join(
                    c["name"] if c["count"] is None else f"{c['name']} ({_num(c['count'])})"
                    for c in info["classes"]
                ),
            )
        )
    for k, v in info["training"].items():
        if v is not None:
            lines.append(
                (LABELS.get(k, k), json.dumps(v) if isinstance(v, (dict, list)) else _num(v))
            )
    sizes = info["sizes"]
    if sizes.get("n_bits") is not None:
        lines.append(("hash buckets", f"2**{sizes['n_bits']} = {sizes['buckets']:,}"))
    for k in ("stored_buckets", "features", "columns"):
        if sizes.get(k) is not None:
            lines.append((LABELS[k], _num(sizes[k])))
    return lines


def _storage_lines(info: dict) -> list[tuple[str, str]]:
    """The file's size and arrays, the memory to load it, its n-gram map and checksum."""
    from nbsvm.memory import human

    sizes = info["sizes"]
    lines = [("file size", _size(info["file_bytes"]))]
    lines.append(
        (
            "arrays",
            ", ".join(f"{n} {a['dtype']} {tuple(a['shape'])}" for n, a in info["arrays"].items())
            or "none",
        )
    )
    if sizes.get("memory_to_load") is not None:
        lines.append(("memory to load", f"about {human(sizes['memory_to_load'])}"))
    if info["ngram_map"] is not None:
        m = info["ngram_map"]
        lines.append(
            (
                "n-gram map",
                f"yes, {m['ngrams']:,} n-grams name the strongest buckets for nbsvm explain"
                if m["present"]
                else "no (nbsvm explain shows bucket numbers)",
            )
        )
    lines.append(
        (
            "checksum",
            (info["checksum"] or "?")
            + (" (verified)" if info["verified"] else " (not verified; --verify checks it)"),
        )
    )
    return lines


def _json_safe(value: Any) -> Any:
    """``value`` with NaN and infinities as null: JSON has no such numbers (``NaN`` is not
    JSON that a strict reader takes)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(v) for v in value]
    return value


@app.command("info")
def info_command(
    path: str = typer.Argument(
        ...,
        metavar="FILE",
        help="A model, lexicon, learner or checkpoint file (.npz).",
        show_default=False,
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the description as JSON."),
    verify: bool = typer.Option(
        False,
        "--verify",
        help="Also read every array and check the file's checksum (default: read the header only).",
    ),
) -> None:
    """Describe an nbsvm file: its kind, settings, classes with their training counts,
    sizes, training data, format and nbsvm version, and whether it names n-grams for
    `nbsvm explain`."""
    with cli_errors():
        try:
            info = describe(path, verify=verify)
            text = json.dumps(_json_safe(info), indent=2) if json_out else None
            if not json_out:
                print_info(info)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            # a header edited by hand (info reads it without the checksum): not a traceback
            raise NBSVMError(
                f"corrupted header ({type(e).__name__}: {e}); `nbsvm info --verify` checks "
                "the file against its checksum",
                path=str(path),
            ) from None
        if text is not None:
            typer.echo(text)
