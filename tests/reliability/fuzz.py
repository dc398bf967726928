"""Coverage-guided fuzzing (atheris) of every reader and loader; ``make fuzz``.

Each target turns the fuzzer's bytes into a file (or a folder, or a crafted ``.npz``), reads
or loads it completely, and accepts exactly two outcomes: it parses, or it raises
:class:`nbsvm.errors.NBSVMError` naming the file. Any other exception is a finding, as is a
hang (libFuzzer's ``-timeout``) or a crash of the interpreter.

    .venv/bin/python tests/reliability/fuzz.py --seconds 60          # every target, 60 s each
    .venv/bin/python tests/reliability/fuzz.py --runs 2000 --targets svmlight,lines

Every target runs in its own subprocess (atheris never returns from ``Fuzz()``) with
``-max_total_time`` or ``-runs``; the number of inputs it tried is parsed from libFuzzer's
``Done N runs`` line. The summary is printed and written to ``results/fuzz.md``; inputs that
fail are kept in ``results/tmp/fuzz/<target>/``.

The target functions (``TARGETS``) need no atheris and are shared with the property tests
of ``tests/reliability/test_fuzz_*.py``.
"""
from __future__ import annotations

import argparse
import atexit
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

# ---------------------------------------------------------------------------------- helpers

_SCRATCH: Path | None = None


def scratch() -> Path:
    """A private folder for this process's inputs (one per process, reused by every input)."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = _own_folder("nbsvm-fuzz-")
    return _SCRATCH


def _own_folder(prefix: str) -> Path:
    """A temporary folder named after this process, removed when it ends; the folders of
    the prefix whose process is gone are removed first (libFuzzer ends its process with
    C's exit, past Python's atexit: every run of the suite or of make fuzz left one, 617
    in one /tmp)."""
    from nbsvm.data.store import process_runs

    for old in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = old.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and old.is_dir() and not process_runs(int(pid)):
            shutil.rmtree(old, ignore_errors=True)
    folder = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    atexit.register(shutil.rmtree, folder, True)
    return folder


def fresh(name: str) -> Path:
    """An empty path ``name`` inside the scratch folder (whatever was there is removed)."""
    p = scratch() / name
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p)
    elif p.exists() or p.is_symlink():
        p.unlink()
    return p


def expect(run, where: Path):
    """Run ``run()``; an NBSVMError must name ``where`` (or a file inside it)."""
    from nbsvm.errors import NBSVMError

    try:
        return run()
    except NBSVMError as e:
        if e.path is None or not str(e.path).startswith(str(where)):
            raise AssertionError(f"NBSVMError without the file's name: {e}") from e
        if e.line is not None and (not isinstance(e.line, int) or e.line < 1):
            raise AssertionError(f"NBSVMError with a bad line number: {e.line!r}") from e
        return None


def write(name: str, data: bytes) -> Path:
    p = fresh(name)
    p.write_bytes(data)
    return p


# ---------------------------------------------------------------------------------- readers

def t_lines(data: bytes):
    from nbsvm.io import read_lines
    p = write("in.txt", data)
    docs = expect(lambda: list(read_lines(p)), p)
    for d in docs or ():
        assert d.label and d.label == d.label.strip() and "\t" not in d.label, d
        assert "\n" not in d.text and "\r" not in d.text, d
    return docs


def _nonblank_lines(data: bytes) -> list[tuple[int, str]]:
    """(line number, text) of the lines the line readers see as non-blank: split on LF, or
    on any line end in a file with no LF and two CRs or one at its end (classic Mac OS
    line ends); a UTF-8 BOM starting any line dropped."""
    out = []
    cr_only = b"\n" not in data and (data.count(b"\r") > 1 or data.endswith(b"\r"))
    for i, raw in enumerate(data.splitlines() if cr_only else data.split(b"\n"), 1):
        raw = raw.removeprefix(b"\xef\xbb\xbf")
        text = raw.decode("utf-8", "replace").rstrip("\r\n").replace("\r", " ")
        if i == 1:
            text = text.lstrip("\ufeff")
        if text.strip():
            out.append((i, text))
    return out


def t_jsonl(data: bytes):
    """JSON lines (deep nesting, texts and labels of any type, broken JSON): read with
    --skip-bad-lines every line is a document whose text and label are strings, or a
    counted malformed line; read without, it parses or the first bad line is an error
    naming the file (and the line)."""
    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.records import read_jsonl
    p = write("in.jsonl", data)
    stats = ReadStats(skip_bad=True)
    docs = expect(lambda: list(read_jsonl(p, stats=stats)), p)
    for d in docs or ():
        assert isinstance(d.text, str) and isinstance(d.label, str) and d.line >= 1, d
    expect(lambda: list(read_jsonl(p)), p)
    unlabeled = ReadStats(skip_bad=True)             # predict's reading: labels optional
    for d in expect(lambda: list(read_jsonl(p, labeled=False, label_optional=True,
                                            stats=unlabeled)), p) or ():
        assert isinstance(d.text, str) and (d.label is None or isinstance(d.label, str)), d
    return docs


def t_header_lines(data: bytes):
    """Header detection: a first line of column names is skipped (noted) or refused, and
    never becomes a document; every other line is a document or a counted bad line."""
    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.labeled_lines import header_columns, read_lines
    p = write("in.tsv", data)
    stats = ReadStats(skip_bad=True)
    docs = expect(lambda: list(read_lines(p, stats=stats)), p)
    if docs is None:
        return None
    if data.startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
        return docs                     # UTF-16/32 (a BOM), decoded: not the bytes' lines
    lines = _nonblank_lines(data)
    header = bool(lines) and lines[0][0] == 1 and header_columns(lines[0][1]) is not None
    assert not header or all(d.line != 1 for d in docs), docs[:1]
    assert len(docs) + stats.bad_lines == len(lines) - header, (len(docs), stats.bad_lines)
    return docs


def t_predict_lines(data: bytes):
    """predict's reading of line files: a leading label only when it is a known class;
    any other line is one document, whole."""
    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.labeled_lines import read_lines
    p = write("in.txt", data)
    known = {"pos", "neg"}
    docs = expect(lambda: list(read_lines(p, labeled=False, known_labels=known,
                                          stats=ReadStats())), p)
    for d in docs or ():
        assert d.label is None or d.label in known, d
        if d.label is None:
            assert d.text.strip(), d
    return docs


def t_csv_skip_bad(data: bytes):
    """Tables with --skip-bad-lines and two text columns: rows parse, or are counted."""
    from nbsvm.io.decoding import ReadStats
    from nbsvm.io.tables import read_table
    p = write("in.csv", data)
    stats = ReadStats(skip_bad=True)
    docs = expect(lambda: list(read_table(p, text_col=["title", "body"], stats=stats)), p)
    assert len(stats.bad_examples) <= min(stats.bad_lines, 5)
    return docs


def t_text_lines(data: bytes):
    from nbsvm.io import read_text_lines
    p = write("in.txt", data)
    return expect(lambda: list(read_text_lines(p)), p)


def t_lines_gz(data: bytes):
    """A ``.gz`` whose bytes are the input (mostly damaged gzip streams)."""
    from nbsvm.io import read_lines
    p = write("in.txt.gz", data)
    return expect(lambda: list(read_lines(p)), p)


def t_csv(data: bytes):
    from nbsvm.io import read_table
    p = write("in.csv", data)
    return expect(lambda: list(read_table(p)), p)


def t_tsv_inputs(data: bytes):
    """``read_inputs`` on a TSV table, unlabeled (the header sniffing path of predict)."""
    from nbsvm.io import read_inputs
    p = write("in.tsv", data)
    return expect(lambda: list(read_inputs([p], fmt="tsv", labeled=False)), p)


def t_inputs_auto(data: bytes):
    """``read_inputs`` with format detection (``.csv`` -> CSV, else lines)."""
    from nbsvm.io import read_inputs
    name = "in.csv" if data[:1] in (b"t", b"\"") else "in.txt"
    p = write(name, data)
    return expect(lambda: list(read_inputs([p])), p)


def t_aclimdb(data: bytes):
    """A split folder built from the input: parts separated by ``\\x00\\x00`` become
    reviews, spread over label folders; names come from the parts' first bytes."""
    from nbsvm.io import read_aclimdb
    root = fresh("acl")
    root.mkdir()
    labels = ["pos", "neg", "unsup", "train"]
    parts = data.split(b"\x00\x00")[:12]
    for i, part in enumerate(parts):
        b = part[0] if part else 0
        folder = root / labels[b % 4]
        folder.mkdir(exist_ok=True)
        name = f"{i}_{b % 10}.txt" if b % 7 else f"{i}.bin"
        if b % 11 == 3:                       # a folder where a review is expected
            (folder / name).mkdir(exist_ok=True)
        else:
            (folder / name).write_bytes(part[1:])
    return expect(lambda: list(read_aclimdb(root)), root)


def t_svmlight(data: bytes):
    from nbsvm.io import read_svmlight
    p = write("in.svm", data)
    rows = expect(lambda: list(read_svmlight(p)), p)
    import numpy as np
    for r in rows or ():
        assert r.keys.dtype == np.int64 and (r.keys >= 0).all(), r
        assert np.isfinite(r.values).all() and len(r.keys) == len(r.values), r
    return rows


def t_svmlight_unlabeled(data: bytes):
    from nbsvm.io import read_svmlight
    p = write("in.svm", data)
    return expect(lambda: list(read_svmlight(p, index_base=0, labeled=False)), p)


def t_blitzer(data: bytes):
    from nbsvm.io import read_blitzer
    p = write("in.review", data)
    rows = expect(lambda: list(read_blitzer(p)), p)
    import numpy as np
    for r in rows or ():
        assert r.labels and all(r.labels) and np.isfinite(r.values).all(), r
    return rows


def t_named(data: bytes):
    from nbsvm.io import read_named
    p = write("in.txt", data)
    rows = expect(lambda: list(read_named(p)), p)
    import numpy as np
    for r in rows or ():
        assert len(r.keys) == len(r.values) and np.isfinite(r.values).all(), r
    return rows


def t_reviews(data: bytes):
    from nbsvm.io import read_reviews
    p = write("positive.review", data)
    return expect(lambda: list(read_reviews(p, label="rating")), p)


def t_review_archive(data: bytes):
    """``review_members`` + ``read_reviews`` on an archive whose bytes are the input."""
    from nbsvm.io import read_reviews, review_members
    p = write("reviews.tar.gz", data)

    def run():
        out = []
        for name, fh in review_members(p):
            out.extend(read_reviews(fh, source=f"{p}:{name}"))
        return out
    return expect(run, p)


# ---------------------------------------------------------------------------------- loaders

_VALID: dict = {}


def tiny_docs(n=24):
    words = ["great", "awful", "fine", "film", "plot", "Café", "東京", "!", "w1", "w2"]
    return [(("pos", "neg")[i % 2], " ".join(words[(i * 7 + j) % len(words)] for j in range(6))
             + (" great" if i % 2 == 0 else " awful")) for i in range(n)]


def valid_files() -> dict[str, Path]:
    """Small valid model, lexicon, learner files and a feature cache (made once)."""
    if _VALID:
        return _VALID
    import numpy as np
    from nbsvm import NBSVMClassifier
    from nbsvm.data.cache import CacheWriter
    from nbsvm.data.batches import hash_batch
    from nbsvm.io import Document
    from nbsvm.lexicon.build import build_lexicon
    from nbsvm.learners.registry import make_learner
    from nbsvm.text.hashing import Hasher

    folder = _own_folder("nbsvm-fuzz-valid-")
    docs = [Document(label, text, "mem", i + 1) for i, (label, text) in enumerate(tiny_docs())]
    clf = NBSVMClassifier(ngrams=2, n_bits=8, epochs=1, seed=0)
    clf.fit([d.text for d in docs], [d.label for d in docs])
    clf.save(folder / "model.npz")
    hasher = Hasher(ngrams=2, n_bits=8)
    build_lexicon(docs, hasher).save(folder / "lexicon.npz")
    make_learner("pa", epochs=1).fit(np.eye(3), ["a", "b", "a"]).save(folder / "learner.npz")
    writer = CacheWriter(folder / "cache", hasher)
    writer.add(hash_batch(docs, hasher))
    writer.close().close()
    from nbsvm.models.checkpoint import Checkpoint
    NBSVMClassifier(ngrams=2, n_bits=8, epochs=2, seed=0).fit_documents(
        iter(docs), checkpoint=Checkpoint(folder / "checkpoint.npz", every=1))
    _VALID.update(model=folder / "model.npz", lexicon=folder / "lexicon.npz",
                  learner=folder / "learner.npz", cache=folder / "cache",
                  checkpoint=folder / "checkpoint.npz")
    return _VALID


def npz_parts(path) -> tuple[dict, dict]:
    """(header, arrays) of a file written by ``save_npz``, read without checks."""
    import numpy as np
    with np.load(path, allow_pickle=False) as z:
        arrays = {n: z[n] for n in z.files}
    header = json.loads(arrays.pop("__header__").tobytes())
    return header, arrays


def npy_bytes(a) -> bytes:
    """``a`` as the bytes of an ``.npy`` file."""
    import numpy as np
    buf = io.BytesIO()
    np.lib.format.write_array(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def write_npz(path: Path, header_bytes: bytes, arrays: dict) -> Path:
    """An ``.npz`` with these header bytes and arrays (what a crafted file looks like),
    members stored as nbsvm writes them (``t_model_zip`` crafts the zip layer itself)."""
    import numpy as np
    import zipfile
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as zf:
        for name, a in list(arrays.items()) + [
                ("__header__", np.frombuffer(header_bytes, dtype=np.uint8))]:
            zf.writestr(name + ".npy", npy_bytes(a))
    return path


def with_checksum(header_bytes: bytes, arrays: dict) -> bytes:
    """The header with its checksum made right for ``arrays`` and itself (when it is a
    JSON object), so that crafted contents reach the checks after the checksum. A header
    that says format 1 gets format 1's checksum (the arrays only), any other the one of
    format 2 and later (the header too)."""
    from nbsvm.io.npzfile import HEADER_CHECKSUM_FORMAT, checksum
    try:
        header = json.loads(header_bytes)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return header_bytes
    if not isinstance(header, dict):
        return header_bytes
    version = header.get("format_version")
    old = isinstance(version, int) and not isinstance(version, bool) \
        and version < HEADER_CHECKSUM_FORMAT
    try:
        header["checksum"] = checksum(arrays, None if old else header)
    except (TypeError, ValueError, RecursionError):  # JSON too deep to write again: as it is
        return header_bytes
    return json.dumps(header).encode()


def load_kind(kind: str, path: Path):
    """Load ``path`` as ``kind`` (an NBSVMError must name the file), then use the result a
    little (predict; an NBSVMError there may be one without a file name)."""
    import numpy as np
    from nbsvm.errors import NBSVMError
    if kind == "model":
        from nbsvm import NBSVMClassifier
        obj = expect(lambda: NBSVMClassifier.load(path), path)
        use = lambda: obj.predict(["great film", "awful plot", ""])   # noqa: E731
    elif kind == "lexicon":
        from nbsvm.lexicon.nblexicon import NBLexicon
        obj = expect(lambda: NBLexicon.load(path), path)
        use = lambda: obj.ratios()                                     # noqa: E731
    elif kind == "learner":
        from nbsvm.learners.base import OnlineLearner
        obj = expect(lambda: OnlineLearner.load(path), path)
        use = lambda: obj.predict(np.eye(3))                           # noqa: E731
    elif kind == "checkpoint":
        from nbsvm.models.checkpoint import Checkpoint
        clf = _checkpoint_base()
        ck = Checkpoint(path, every=1, resume=True)
        obj = expect(lambda: ck.load(clf), path)
        use = lambda: ck.restore(clf, obj, np.random.default_rng(0))   # noqa: E731
    else:
        raise ValueError(kind)
    if obj is not None:
        try:
            use()
        except NBSVMError:
            pass
    return obj


_CHECKPOINT_BASE: list = []


def _checkpoint_base():
    """A model of the checkpoint's settings at the point of resuming (its learner state
    fresh for every input: restoring overwrites it)."""
    import numpy as np
    from nbsvm import NBSVMClassifier
    if not _CHECKPOINT_BASE:
        docs = tiny_docs()
        clf = NBSVMClassifier(ngrams=2, n_bits=8, epochs=2, seed=0)
        clf.fit([t for _, t in docs], [label for label, _ in docs])
        _CHECKPOINT_BASE.append((clf, clf.linear_.S_.copy(), clf.linear_.state_.copy()))
    clf, S, state = _CHECKPOINT_BASE[0]
    clf.linear_.S_[...] = S
    clf.linear_.state_[...] = state
    return clf


def t_npz_bytes(kind):
    """The loader of ``kind`` on the input's bytes as the whole file (seeded with a valid
    file; mostly exercises the zip, npy and checksum layers)."""
    def target(data: bytes):
        p = write(f"{kind}.npz", data)
        return load_kind(kind, p)
    target.__name__ = f"t_{kind}_bytes"
    return target


def t_npz_header(kind):
    """The loader of ``kind`` on a valid file whose JSON header is the input (checksum made
    right), so every header field reaches the checks after the checksum."""
    def target(data: bytes):
        _, arrays = npz_parts(valid_files()[kind])
        p = write_npz(fresh(f"{kind}.npz"), with_checksum(data, arrays), arrays)
        return load_kind(kind, p)
    target.__name__ = f"t_{kind}_header"
    return target


_DTYPES = ["<i4", "<i8", "<f4", "<f8", "|u1", "<i2", "|b1", "<u4", "<c8", ">i4"]


def mutate_arrays(data: bytes, arrays: dict) -> dict:
    """Arrays rewritten as the input says: per array one op byte (keep, new dtype, cut,
    new contents from the input, 2-D, drop), then the input's bytes as contents."""
    import numpy as np
    out = dict(arrays)
    pos = 0
    for name in sorted(arrays):
        if pos >= len(data):
            break
        op, arg = data[pos] % 6, (data[pos + 1] if pos + 1 < len(data) else 0)
        pos += 2
        a = arrays[name]
        if op == 1:
            out[name] = a.astype(np.dtype(_DTYPES[arg % len(_DTYPES)]))
        elif op == 2:
            out[name] = a.reshape(-1)[: arg % (a.size + 1)]
        elif op == 3:
            dt = np.dtype(_DTYPES[arg % len(_DTYPES)]) if arg % 3 == 0 else a.dtype
            n = (arg % 5 + 1) * dt.itemsize * max(1, a.size // max(1, a.shape[-1] if a.ndim else 1))
            chunk = data[pos:pos + n]
            pos += n
            chunk = chunk[: len(chunk) // dt.itemsize * dt.itemsize]
            flat = np.frombuffer(chunk, dtype=dt).copy()
            out[name] = flat.reshape(a.shape) if flat.size == a.size else flat
        elif op == 4:
            out[name] = a.reshape(1, -1) if a.ndim == 1 else a.reshape(-1)
        elif op == 5:
            del out[name]
    return out


def t_npz_arrays(kind):
    """The loader of ``kind`` on a valid header with arrays rewritten by the input
    (dtypes, shapes, values: ids out of range, NaN...), checksum made right."""
    def target(data: bytes):
        header, arrays = npz_parts(valid_files()[kind])
        arrays = mutate_arrays(data, arrays)
        header_bytes = with_checksum(json.dumps(header).encode(), arrays)
        p = write_npz(fresh(f"{kind}.npz"), header_bytes, arrays)
        return load_kind(kind, p)
    target.__name__ = f"t_{kind}_arrays"
    return target


#: What one input of the zip target may cost the loader: seconds, and bytes allocated
#: (traced) beyond this many times the file's size (the arrays, then the learner's copy).
ZIP_SECONDS = 5.0
ZIP_ALLOC_FILE_TIMES, ZIP_ALLOC_SLACK = 3, 4 << 20
#: Zero bytes a member may be padded with (a compressed member then declares far more
#: than the file holds: a small zip bomb).
ZIP_MAX_PAD = 8 << 20


class _Bytes:
    """The fuzzer's input read a few bytes at a time (zeros once it runs out)."""

    def __init__(self, data: bytes):
        self.data, self.pos = data, 0

    def take(self, n: int) -> int:
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return int.from_bytes(chunk.ljust(n, b"\x00"), "little")


def _crafted_member(name: str, a, src: _Bytes) -> tuple[str, bytes, int]:
    """One member of a model zip as the input says: ``(name, .npy bytes, zip method)``.
    Its op byte chooses the compression (stored, deflated, bzip2, lzma), a declared shape
    or dtype other than the data's, the data cut or padded with zeros, a declared shape
    that fits the data so padded (an honest zip bomb), another name."""
    import zipfile
    import numpy as np
    op = src.take(1)
    method = (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2,
              zipfile.ZIP_LZMA)[op & 3]
    blob = npy_bytes(a)
    head, body = blob[:blob.index(b"\n") + 1], blob[blob.index(b"\n") + 1:]
    dtype, shape = a.dtype, a.shape
    if op & 4:          # another declared shape: the data stays what it was
        shape = tuple(src.take(4) % (1 << (8 + src.take(1) % 32))
                      for _ in range(src.take(1) % 3 + 1))
    if op & 8:          # another declared dtype
        dtype = np.dtype(_DTYPES[src.take(1) % len(_DTYPES)])
    if op & 16:         # data cut short
        body = body[: src.take(2) % (len(body) + 1)]
    if op & 32:         # data padded with zeros: megabytes behind a few compressed bytes
        body += bytes(min(ZIP_MAX_PAD, src.take(1) << (src.take(1) % 18)))
    if op & 128:        # a declared shape that fits the data (a bomb that says what it is)
        shape = (len(body) // dtype.itemsize,)
        body = body[:shape[0] * dtype.itemsize]
    if op & (4 | 8 | 128):
        head = _npy_header(dtype, shape)
    if op & 64:         # another name: no .npy, a path, a name taken twice, the header's
        name = ("coef", "../coef.npy", "ratios.npy", "__header__.npy", "a/b.npy",
                "x.npy")[src.take(1) % 6]
    return name, head + body, method


def _npy_header(dtype, shape) -> bytes:
    import numpy as np
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
              "shape": shape})
    return buf.getvalue()


def _patch_sizes(blob: bytes, src: _Bytes) -> bytes:
    """The zip's central directory with sizes the input chooses: one entry's compressed
    or uncompressed size, or its local header's offset, set to another value."""
    data = bytearray(blob)
    # every central-directory signature before the last 46 bytes (found with find: a
    # Python loop over each byte took 4 s of a padded 4 MB zip; the signature cannot
    # overlap itself, so the positions are the same)
    entries, i = [], data.find(b"PK\x01\x02")
    while 0 <= i < len(data) - 46:
        entries.append(i)
        i = data.find(b"PK\x01\x02", i + 1)
    for _ in range(src.take(1) % 3):
        if not entries:
            break
        at = entries[src.take(1) % len(entries)]
        field = (20, 24, 42)[src.take(1) % 3]      # compressed, uncompressed size; offset
        data[at + field:at + field + 4] = src.take(4).to_bytes(4, "little")
    return bytes(data)


def t_model_zip(data: bytes):
    """The model loader on a valid model's zip rebuilt as the input says: each member's
    compression, declared ``.npy`` shape and dtype, data size (cut, or padded with zeros
    that compress to nothing) and name, then sizes in the zip directory (checksum made
    right for the arrays as they were). Loads or ``NBSVMError`` naming the file, like the
    other targets, and within :data:`ZIP_SECONDS` seconds and memory bounded by the file's
    size (traced allocations): a member that declares more than the file holds must be
    refused before it is allocated."""
    import tracemalloc
    import warnings
    import zipfile
    import numpy as np
    from nbsvm import NBSVMClassifier
    from nbsvm.errors import NBSVMError
    header, arrays = npz_parts(valid_files()["model"])
    src = _Bytes(data)
    if src.take(1) & 1:         # a format 1 file (checksum over the arrays only)
        header["format_version"] = 1
    head = np.frombuffer(with_checksum(json.dumps(header).encode(), arrays), dtype=np.uint8)
    members = [_crafted_member(n + ".npy", a, src)
               for n, a in sorted(arrays.items()) + [("__header__", head)]]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf, warnings.catch_warnings():
        warnings.simplefilter("ignore")             # "Duplicate name": wanted here
        for name, blob, method in members:
            zf.writestr(zipfile.ZipInfo(name), blob, compress_type=method)
    p = write("model.npz", _patch_sizes(buf.getvalue(), src))
    size = p.stat().st_size
    tracemalloc.start()
    t0 = time.perf_counter()
    try:
        clf = expect(lambda: NBSVMClassifier.load(p), p)
        seconds, peak = time.perf_counter() - t0, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert seconds < ZIP_SECONDS, f"loading took {seconds:.1f} s"
    assert peak <= ZIP_ALLOC_FILE_TIMES * size + ZIP_ALLOC_SLACK, \
        f"loading a {size}-byte file allocated {peak} bytes"
    if clf is not None:             # what loads predicts (as in load_kind)
        try:
            clf.predict(["great film", "awful plot", ""])
        except NBSVMError:
            pass
    return clf


CACHE_FILES = ("ids.i32", "offsets.i64", "labels.i32")


def use_cache(folder: Path):
    """Open a feature cache and read all of it, in order and shuffled through a remap."""
    import numpy as np
    from nbsvm.data.cache import FeatureCache
    from nbsvm.errors import NBSVMError
    cache = expect(lambda: FeatureCache(folder), folder)
    if cache is None:
        return None
    try:
        for _ in cache.batches(chunk=7):
            pass
        remap = np.arange(1 << cache.hasher.n_bits, dtype=np.int32) % 5
        for _ in cache.translated_groups(remap, np.random.default_rng(0), rewrite=False):
            pass
    except NBSVMError:
        pass
    finally:
        cache.close()
    return cache


def t_cache_meta(data: bytes):
    """A valid cache whose ``meta.json`` is the input."""
    folder = fresh("cache")
    shutil.copytree(valid_files()["cache"], folder)
    (folder / "meta.json").write_bytes(data)
    return use_cache(folder)


def t_cache_arrays(data: bytes):
    """A cache whose three array files come from the input (split at ``|||``) with a
    ``meta.json`` consistent with their sizes, so the size checks pass and the contents
    (offsets out of order, ids out of range, unknown label codes) reach the readers."""
    folder = fresh("cache")
    shutil.copytree(valid_files()["cache"], folder)
    parts = (data.split(b"|||") + [b"", b"", b""])[:3]
    meta = json.loads((folder / "meta.json").read_text())
    ids, offsets, labels = parts
    ids = ids[: len(ids) // 4 * 4]
    labels = labels[: len(labels) // 4 * 4]
    n_docs = len(labels) // 4
    offsets = (offsets + b"\x00" * 8 * (n_docs + 1))[: 8 * (n_docs + 1)]
    meta.update(n_docs=n_docs, n_ids=len(ids) // 4)
    for name, blob in zip(CACHE_FILES, (ids, offsets, labels)):
        (folder / name).write_bytes(blob)
    (folder / "meta.json").write_text(json.dumps(meta))
    return use_cache(folder)


TARGETS = {
    "lines": t_lines, "text_lines": t_text_lines, "lines_gz": t_lines_gz, "csv": t_csv,
    "header_lines": t_header_lines, "predict_lines": t_predict_lines, "jsonl": t_jsonl,
    "csv_skip_bad": t_csv_skip_bad,
    "tsv_inputs": t_tsv_inputs, "inputs_auto": t_inputs_auto, "aclimdb": t_aclimdb,
    "svmlight": t_svmlight, "svmlight_unlabeled": t_svmlight_unlabeled,
    "blitzer": t_blitzer, "named": t_named, "reviews": t_reviews,
    "review_archive": t_review_archive,
    **{f"{k}_{how}": maker(k) for k in ("model", "lexicon", "learner", "checkpoint")
       for how, maker in (("bytes", t_npz_bytes), ("header", t_npz_header),
                          ("arrays", t_npz_arrays))},
    "model_zip": t_model_zip,
    "cache_meta": t_cache_meta, "cache_arrays": t_cache_arrays,
}


# ---------------------------------------------------------------------------------- seeds

def _tar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, blob in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(blob)
            tar.addfile(info, io.BytesIO(blob))
    return buf.getvalue()


REVIEW = (b"<review>\n<rating>\n5.0\n</rating>\n<title>\nFun &amp; good\n</title>\n"
          b"<review_text>\nA great read.\n</review_text>\n</review>\n")


def zip_seeds() -> list[bytes]:
    """model_zip inputs (first byte: 1 for a format 1 file): the valid model (both
    formats); its first member deflated, padded with 8 MiB of zeros and declaring them (a
    zip bomb); every member deflated; one size in the zip directory made 2**31 - 1; every
    member renamed or cut."""
    n = len(npz_parts(valid_files()["model"])[1]) + 1
    return [b"", b"\x01", b"\x01\xa1\xff\x11", b"\x00" + b"\x01" * n,
            b"\x00" * (n + 1) + b"\x01\x00\x01" + (2**31 - 1).to_bytes(4, "little"),
            b"\x00" + b"\x50\x40\x00\x01" * n]


def seeds(target: str) -> list[bytes]:
    """A small seed corpus per target (valid inputs and a few near-valid ones)."""
    import gzip
    text = {
        "lines": [b"pos\tgreat film\nneg\tawful\r\n", b"\xef\xbb\xbfpos\tok\n\nneg\t\n"],
        "text_lines": [b"one doc\ntwo\r\n"],
        "header_lines": [b"label\ttext\npos\tgood\nneg\tbad\n", b"id\tlabel\ttext\n1\tpos\tx\n",
                         b"Class\tReview\r\npos\t\nno tab\n"],
        "predict_lines": [b"pos\tgreat\nplain text\nother\twith a tab\n"],
        "jsonl": [b'{"label": "pos", "text": "great"}\n{"label": ["a", 3], "text": "x"}\n',
                  b'{"label": "pos", "text": ' + b"[" * 3000 + b"]" * 3000 + b"}\n"],
        "csv_skip_bad": [b"label,title,body\npos,Great,fun film\nneg,a,b,c\n,x,y\n"],
        "lines_gz": [gzip.compress(b"pos\tgreat\nneg\tbad\n")],
        "csv": [b"text,label\ngreat film,pos\n\"a, b\",neg\n", b"label,text\r\npos,\"x\"\"y\"\n"],
        "tsv_inputs": [b"text\tlabel\ngreat\tpos\n", b"text\nonly text\n"],
        "inputs_auto": [b"text,label\nok,pos\n", b"pos\tok\n"],
        "aclimdb": [b"\x01great film\x00\x00\x02awful\x00\x00\x05fine"],
        "svmlight": [b"1 1:0.5 4:2\n-1 qid:3 2:1 # c\n", b"1,3 |f 0:1e-3 7:-2\n"],
        "svmlight_unlabeled": [b"1:0.5 4:2\n2:1\n"],
        "blitzer": [b"great:2 a_b:1 #label#:positive\nbad:1 #label#:negative\n"],
        "named": [b"sports goal:1 team:0.5\nnews a:b:2\n"],
        "reviews": [REVIEW, b"<reviews>\n" + REVIEW + REVIEW.replace(b"5.0", b"1.0")],
        "review_archive": [_tar({"d/books/positive.review": REVIEW})],
        "cache_arrays": [b"\x01\x00\x00\x00\x02\x00\x00\x00|||\x00" * 1
                         + b"\x00" * 7 + b"\x02" + b"\x00" * 7 + b"|||\x00\x00\x00\x00"],
    }
    if target in text:
        return text[target]
    kind, _, how = target.rpartition("_")
    if target == "cache_meta":
        return [(valid_files()["cache"] / "meta.json").read_bytes()]
    if target == "model_zip":
        return zip_seeds()
    if how == "bytes":
        return [valid_files()[kind].read_bytes()]
    if how == "header":
        header, _ = npz_parts(valid_files()[kind])
        return [json.dumps(header).encode()]
    if how == "arrays":
        return [b"\x00\x00", b"\x03\x00" + bytes(range(64)), b"\x01\x03\x02\x01"]
    raise KeyError(target)


# ---------------------------------------------------------------------------------- driver

def child(target: str, libfuzzer_args: list[str]) -> None:
    """Run one target under atheris until libFuzzer's limits stop it."""
    import atheris
    from nbsvm.errors import NBSVMError  # noqa: F401  (imported before instrumenting)

    # Only pure-Python functions are instrumented: atheris rewrites bytecode, which numba's
    # compiler cannot read, so the readers' and loaders' functions are instrumented one by one.
    import inspect
    import nbsvm.data.cache, nbsvm.lexicon.nblexicon, nbsvm.models.nbsvm, nbsvm.learners.base  # noqa: E401,F401
    import nbsvm.io.blitzer, nbsvm.io.readers, nbsvm.io.sparse, nbsvm.io.npzfile  # noqa: E401
    import nbsvm.io.decoding, nbsvm.io.document, nbsvm.io.folders, nbsvm.io.labeled_lines, nbsvm.io.tables  # noqa: E401
    import nbsvm.learners.registry  # noqa: F401
    for module in (nbsvm.io.readers, nbsvm.io.decoding, nbsvm.io.document, nbsvm.io.labeled_lines,
                   nbsvm.io.folders, nbsvm.io.tables, nbsvm.io.sparse, nbsvm.io.blitzer,
                   nbsvm.io.npzfile):
        for obj in vars(module).values():
            funcs = [obj] if inspect.isfunction(obj) else \
                [f for f in vars(obj).values() if inspect.isfunction(f)] \
                if inspect.isclass(obj) and obj.__module__ == module.__name__ else []
            for f in funcs:
                if f.__module__ == module.__name__:
                    atheris.instrument_func(f)
    fn = TARGETS[target]
    valid_files()                      # made before fuzzing: not part of any input

    def TestOneInput(data: bytes):     # noqa: N802 (atheris' name)
        fn(data)                        # NBSVMError is caught inside (expect)

    atheris.Setup([sys.argv[0]] + libfuzzer_args, TestOneInput)
    atheris.Fuzz()


def run_target(target: str, seconds: float | None, runs: int | None, workdir: Path) -> dict:
    corpus = workdir / target / "corpus"
    artifacts = workdir / target / "artifacts"
    shutil.rmtree(workdir / target, ignore_errors=True)
    corpus.mkdir(parents=True)
    artifacts.mkdir(parents=True)
    for i, blob in enumerate(seeds(target)):
        (corpus / f"seed{i}").write_bytes(blob)
    args = [f"-artifact_prefix={artifacts}/", "-timeout=10", "-rss_limit_mb=2048",
            "-max_len=4096", "-print_final_stats=1"]
    args.append(f"-runs={runs}" if runs else f"-max_total_time={int(max(1, seconds))}")
    cmd = [sys.executable, __file__, "--child", target, "--", *args, str(corpus)]
    t0 = time.time()
    # the wall limit guards against a hang that libFuzzer's own timer misses
    limit = (seconds or 60) * 3 + 120
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace",
                              timeout=limit, env=dict(os.environ, PYTHONHASHSEED="0"))
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) \
            else (e.stdout or "")
        rc = "wall timeout"
    elapsed = time.time() - t0
    (workdir / target / "log.txt").write_text(out)
    done = re.findall(r"Done (\d+) runs in", out)
    execs = re.findall(r"stat::number_of_executed_units:\s*(\d+)", out)
    progress = re.findall(r"^#(\d+)\s", out, flags=re.M)
    n = int(done[-1]) if done else int(execs[-1]) if execs else \
        (int(progress[-1]) if progress else 0)
    finding = ""
    if rc != 0:
        m = re.search(r"=== Uncaught Python exception: ===\n(.*?)(?:\n\n|==\d+==)", out, re.S)
        if m:
            lines = [ln for ln in m.group(1).strip().splitlines() if ln.strip()]
            finding = lines[-1].strip()
            where = [ln.strip() for ln in lines if ln.strip().startswith("File ")]
            if where:
                finding += f" at {where[-1]}"
        elif "timeout" in out.lower() and "ERROR: libFuzzer: timeout" in out:
            finding = "hang (libFuzzer timeout, 10 s per input)"
        elif "out-of-memory" in out:
            finding = "out of memory (rss > 2048 MB)"
        elif rc == "wall timeout":
            finding = "the fuzzer did not stop (wall timeout)"
        else:
            finding = f"interpreter crash or error, exit status {rc}"
        crash = sorted(artifacts.glob("*"))
        if crash:
            finding += f" (input: {crash[0].relative_to(REPO) if crash[0].is_relative_to(REPO) else crash[0]})"
    return dict(target=target, inputs=n, seconds=round(elapsed, 1), finding=finding)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        target = argv[1]
        rest = argv[3:] if argv[2:3] == ["--"] else argv[2:]
        child(target, rest)
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60, help="per target")
    ap.add_argument("--runs", type=int, default=None, help="inputs per target (instead of time)")
    ap.add_argument("--targets", default="", help="comma-separated subset of " + ", ".join(TARGETS))
    ap.add_argument("--output", default=str(REPO / "results" / "fuzz.md"))
    ap.add_argument("--workdir", default=str(REPO / "results" / "tmp" / "fuzz"))
    args = ap.parse_args(argv)
    try:
        import atheris  # noqa: F401
    except ImportError:
        print("atheris is not installed: make install-fuzz", file=sys.stderr)
        return 2
    names = [t for t in args.targets.split(",") if t] or list(TARGETS)
    unknown = [t for t in names if t not in TARGETS]
    if unknown:
        print(f"unknown target(s) {unknown}; known: {', '.join(TARGETS)}", file=sys.stderr)
        return 2
    workdir = Path(args.workdir)
    results = []
    for name in names:
        r = run_target(name, None if args.runs else args.seconds, args.runs, workdir)
        results.append(r)
        print(f"{name:22s} {r['inputs']:>9d} inputs  {r['seconds']:7.1f} s  "
              f"{r['finding'] or 'no finding'}", flush=True)
    budget = f"-runs={args.runs}" if args.runs else f"{args.seconds:g} s per target"
    lines = ["# Fuzzing readers and loaders (atheris)", "",
             f"`tests/reliability/fuzz.py` ({budget}), Python {sys.version.split()[0]}, "
             f"{time.strftime('%Y-%m-%d')}. Each target accepts two outcomes: the input parses, "
             "or `NBSVMError` naming the file; anything else (another exception, a hang, a crash "
             "of the interpreter) is a finding. Inputs are the number libFuzzer reports "
             "(`Done N runs`).", "",
             "| target | inputs tried | seconds | finding |", "|---|---:|---:|---|"]
    for r in results:
        lines.append(f"| {r['target']} | {r['inputs']} | {r['seconds']} | "
                     f"{(r['finding'] or 'none').replace('|', '/')} |")
    lines += ["", f"Total: {sum(r['inputs'] for r in results)} inputs over {len(results)} targets; "
              f"{sum(1 for r in results if r['finding'])} with a finding."]
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, out)
    print(f"wrote {out}")
    return 1 if any(r["finding"] for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
