"""Model and lexicon files: ``.npz`` arrays plus a JSON header; atomic writes; no pickle.

The header is stored inside the archive as the uint8 array ``__header__`` and holds the
format version, the kind of file, every setting needed to use it and a SHA-256 checksum over
the arrays (names, dtypes, shapes and bytes). Loading refuses object arrays, checks the kind,
version and checksum, and never unpickles.
"""
from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
from pathlib import Path

import numpy as np

from nbsvm.config import FORMAT_VERSION
from nbsvm.errors import NBSVMError
from nbsvm.io.outputs import atomic_path  # noqa: F401  (re-exported: models and reports are written with it)

HEADER_KEY = "__header__"
MAX_MEMBERS = 4096
MAX_HEADER_BYTES = 1 << 20


def checksum(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        if a.size:                  # an empty array has no bytes (and no byte view)
            h.update(memoryview(a).cast("B"))
    return h.hexdigest()


class Chunked:
    """An array written piece by piece: ``pieces()`` yields its C-order data in parts.

    Lets a model be saved from views of its state without materializing full copies.
    """

    def __init__(self, dtype, shape, pieces):
        self.dtype, self.shape, self.pieces = np.dtype(dtype), tuple(shape), pieces


class _Stream:
    """A file seen as a stream: writes only. A device or FIFO written through is given to
    zipfile this way, which then counts offsets itself and writes data descriptors
    (``/dev/null`` would report position 0 after every write)."""

    def __init__(self, fh):
        self.write, self.flush = fh.write, fh.flush


def save_npz(path, kind: str, header: dict, arrays: dict) -> None:
    """Write ``arrays`` (ndarrays or :class:`Chunked`) and ``header`` to ``path`` atomically.

    The result is a plain uncompressed ``.npz`` that ``np.load(allow_pickle=False)`` reads.
    Arrays are streamed into the archive in name order while their checksum is computed.
    """
    digest = hashlib.sha256()
    # the file is opened here, not by zipfile (which opens "w+b"): a FIFO or a device is
    # then written through as a stream
    with atomic_path(path) as tmp, open(tmp, "wb") as out, \
            zipfile.ZipFile(out if stat.S_ISREG(os.fstat(out.fileno()).st_mode) else _Stream(out),
                            "w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        for name in sorted(arrays):
            a = arrays[name]
            if isinstance(a, np.ndarray):
                a = np.ascontiguousarray(a)
                spec = Chunked(a.dtype, a.shape, lambda a=a: iter([a]))
            else:
                spec = a
            if spec.dtype == object:
                raise TypeError(f"array {name!r} has dtype object; refusing to save it")
            digest.update(f"{name}|{spec.dtype.str}|{spec.shape}|".encode())
            with zf.open(name + ".npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array_header_1_0(
                    fh, {"descr": np.lib.format.dtype_to_descr(spec.dtype),
                         "fortran_order": False, "shape": spec.shape})
                written = 0
                for piece in spec.pieces():
                    piece = np.ascontiguousarray(piece, dtype=spec.dtype)
                    if piece.size == 0:
                        continue
                    view = memoryview(piece).cast("B")
                    digest.update(view)
                    fh.write(view)
                    written += piece.size
                if written != int(np.prod(spec.shape, dtype=np.int64)):
                    raise ValueError(f"array {name!r}: wrote {written} items, expected "
                                     f"shape {spec.shape}")
        full = dict(header, kind=kind, format_version=FORMAT_VERSION,
                    checksum=digest.hexdigest())
        blob = np.frombuffer(json.dumps(full, sort_keys=True).encode(), dtype=np.uint8)
        with zf.open(HEADER_KEY + ".npy", "w") as fh:
            np.lib.format.write_array(fh, blob, allow_pickle=False)


ALLOWED_KINDS = "biuf"           # bool, integers, floats: nothing else is ever saved
MAX_NPY_HEADER = 10000          # numpy's own cap on an .npy member's header


def member_spec(fh, info: zipfile.ZipInfo, kind: str, path) -> tuple[tuple, np.dtype, int]:
    """Read and check an ``.npy`` member's header from the open member ``fh``: numeric
    C-order data whose shape matches the member's size; returns ``(shape, dtype, nbytes)``
    and leaves ``fh`` at the start of the data (nothing is allocated)."""
    name = info.filename[:-4]
    version = np.lib.format.read_magic(fh)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"unsupported .npy version {version}")
    read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                   else np.lib.format.read_array_header_2_0)
    shape, fortran, dtype = read_header(fh, max_header_size=MAX_NPY_HEADER)
    if dtype.hasobject or dtype.fields is not None or dtype.subdtype is not None \
            or dtype.kind not in ALLOWED_KINDS:
        raise NBSVMError(f"refusing array {name!r} of dtype {dtype} in the {kind} file "
                         f"(object or structured data; nbsvm never unpickles)",
                         path=str(path))
    if fortran:
        raise NBSVMError(f"corrupted {kind} file: array {name!r} is not in C order",
                         path=str(path))
    count = int(np.prod(shape, dtype=np.int64)) if shape else 1
    nbytes = count * dtype.itemsize
    if count < 0 or nbytes != info.file_size - fh.tell():
        raise NBSVMError(f"corrupted or truncated {kind} file: array {name!r} has "
                         f"{info.file_size - fh.tell()} bytes of data, its shape {shape} "
                         f"needs {nbytes}", path=str(path))
    return shape, dtype, nbytes


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, kind: str, path) -> np.ndarray:
    """One ``.npy`` member, its header checked before any data is allocated or read."""
    name = info.filename[:-4]
    with zf.open(info) as fh:
        shape, dtype, nbytes = member_spec(fh, info, kind, path)
        if name == HEADER_KEY and nbytes > MAX_HEADER_BYTES:
            raise NBSVMError(f"corrupted {kind} file: header of {nbytes} bytes is over the "
                             f"{MAX_HEADER_BYTES}-byte limit", path=str(path))
        out = np.empty(shape, dtype=dtype)
        got = fh.readinto(memoryview(out.reshape(-1)).cast("B")) if nbytes else 0
        if got != nbytes:
            raise NBSVMError(f"corrupted or truncated {kind} file: array {name!r} is short",
                             path=str(path))
        return out


def load_npz(path, kind: str) -> tuple[dict, dict[str, np.ndarray]]:
    """Read and verify a file written by :func:`save_npz`; return ``(header, arrays)``.

    Never unpickles: each member's ``.npy`` header is parsed first and any object,
    structured or non-numeric dtype is refused, as is a shape that does not match the
    member's size (so a crafted shape cannot make it allocate), a header over
    ``MAX_HEADER_BYTES``, another kind of file, a newer format version (asks for an
    upgrade) and a checksum that does not match the arrays. The caller still checks the
    arrays against the header (shapes, value ranges) before using them.
    """
    path = Path(path)
    if not path.is_file():
        raise NBSVMError("no such file", path=str(path))
    with open(path, "rb") as fh:
        if fh.read(4) != b"PK\x03\x04":
            raise NBSVMError(f"not an nbsvm {kind} file (not an .npz archive)", path=str(path))
    try:
        with zipfile.ZipFile(path) as zf:
            infos = {i.filename: i for i in zf.infolist()}
            if HEADER_KEY + ".npy" not in infos:
                raise NBSVMError(f"not an nbsvm {kind} file (no header)", path=str(path))
            # a model with one backend learner per class holds a few arrays per class
            if len(infos) > MAX_MEMBERS or any(not n.endswith(".npy") for n in infos):
                raise NBSVMError(f"corrupted {kind} file: unexpected members", path=str(path))
            raw = _read_member(zf, infos[HEADER_KEY + ".npy"], kind, path)
            if raw.dtype != np.uint8 or raw.ndim != 1:
                raise NBSVMError(f"corrupted {kind} file: bad header", path=str(path))
            header = json.loads(raw.tobytes().decode("utf-8"))
            if not isinstance(header, dict):
                raise NBSVMError(f"corrupted {kind} file: bad header", path=str(path))
            if header.get("kind") != kind:
                raise NBSVMError(f"expected an nbsvm {kind} file, found kind "
                                 f"{header.get('kind')!r}", path=str(path))
            version = header.get("format_version")
            if not isinstance(version, int) or isinstance(version, bool) or version < 1:
                raise NBSVMError("corrupted header: bad format_version", path=str(path))
            if version > FORMAT_VERSION:
                raise NBSVMError(f"written by a newer nbsvm (format {version}, this one reads "
                                 f"up to {FORMAT_VERSION}); upgrade nbsvm to load it",
                                 path=str(path))
            arrays = {n[:-4]: _read_member(zf, i, kind, path)
                      for n, i in infos.items() if n != HEADER_KEY + ".npy"}
    except NBSVMError:
        raise
    except Exception as e:   # zipfile/numpy/json raise many types on damaged archives
        raise NBSVMError(f"corrupted or truncated {kind} file ({type(e).__name__}: {e})",
                         path=str(path)) from None
    if header.get("checksum") != checksum(arrays):
        raise NBSVMError(f"checksum mismatch: the {kind} file is corrupted or was edited",
                         path=str(path))
    return header, arrays
