"""Model and lexicon files: ``.npz`` arrays plus a JSON header; atomic writes; no pickle.

The header is stored inside the archive as the uint8 array ``__header__`` and holds the
format version, the kind of file, every setting needed to use it and a SHA-256 checksum.
From format 2 the checksum covers every byte that changes what the file does: the arrays
(names, dtypes, shapes and bytes) and the header itself (its canonical JSON without the
checksum); format 1 files, whose checksum covers the arrays only, still load. Members are
stored uncompressed. Loading refuses what is not a regular file, compressed members,
object arrays and sizes the file cannot hold, checks the kind, version and checksum, and
never unpickles.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, cast

import numpy as np

from nbsvm.errors import NBSVMError
from nbsvm.io.outputs import atomic_path  # noqa: F401  (re-exported: models and reports are written with it)

HEADER_KEY = "__header__"
MAX_MEMBERS = 4096
MAX_HEADER_BYTES = 1 << 20

#: The newest file format read. 4: a learner's mostly-zero arrays may be kept as their
#: nonzero entries (arrays ``*.nonzero_index``; written as 4 only then). 3: lexicon counts
#: may be (bucket, class) pairs (arrays ``*pair_counts``; written as 3 only then, so that
#: older versions read the rest). 2: the
#: checksum covers the header as well as the arrays, and a model keeps its labels' types
#: (``label_values``). 1: the checksum covers the arrays only.
FORMAT_VERSION = 4
#: The format of files with pair counts and no nonzero entries.
PAIRS_FORMAT = 3
#: The format of files without pair counts.
PLAIN_FORMAT = 2
#: The first format whose checksum covers the header.
HEADER_CHECKSUM_FORMAT = 2


def canonical_header(header: dict) -> bytes:
    """The header as the checksum sees it: its JSON without the ``checksum`` field, keys
    sorted, no spaces. ``json.loads`` of the stored header gives it back exactly (the
    stored header is this JSON's round trip, see :func:`_header_blob`)."""
    rest = {k: v for k, v in header.items() if k != "checksum"}
    return json.dumps(rest, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _array_parts(digest, name: str, dtype: np.dtype, shape: tuple) -> None:
    digest.update(f"{name}|{dtype.str}|{tuple(shape)}|".encode())


def checksum(arrays: dict[str, np.ndarray], header: dict | None = None) -> str:
    """SHA-256 over ``arrays`` (each one's name, dtype, shape and bytes, in name order)
    and, given ``header`` (format 2 and later), its :func:`canonical_header`: what a file's
    ``checksum`` field must say. Without ``header``: format 1's checksum (arrays only)."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        _array_parts(h, name, a.dtype, a.shape)
        if a.size:  # an empty array has no bytes (and no byte view)
            h.update(a.data.cast("B"))  # a.data: memoryview(a)
    if header is not None:
        h.update(b"|" + HEADER_KEY.encode() + b"|" + canonical_header(header))
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


def _plain(value: object) -> object:
    """A numpy number as the Python number JSON writes (a parameter given as
    ``np.float32(0.5)``); anything else: not JSON, refused as json refuses it."""
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _header_blob(header: dict, kind: str, digest, version: int = PLAIN_FORMAT) -> np.ndarray:
    """The ``__header__`` array: ``header`` with the kind, the format version and the
    checksum (``digest`` holds the arrays' part; the header's is added here). The header is
    taken through JSON first, so the checksum is over exactly what a loader parses (tuples
    become lists, number keys strings)."""
    full = dict(header, kind=kind, format_version=version)
    full.pop("checksum", None)
    full = json.loads(json.dumps(full, sort_keys=True, default=_plain))
    digest.update(b"|" + HEADER_KEY.encode() + b"|" + canonical_header(full))
    full["checksum"] = digest.hexdigest()
    return np.frombuffer(json.dumps(full, sort_keys=True).encode(), dtype=np.uint8)


def save_npz(
    path: str | os.PathLike[str],
    kind: str,
    header: dict,
    arrays: dict,
    before_replace: Callable[[], None] | None = None,
) -> None:
    """Write ``arrays`` (ndarrays or :class:`Chunked`) and ``header`` to ``path`` atomically
    (``before_replace``: :func:`~nbsvm.io.outputs.atomic_path`'s).

    The result is a plain uncompressed ``.npz`` that ``np.load(allow_pickle=False)`` reads.
    Arrays are streamed into the archive in name order while their checksum is computed;
    the header, checksummed too, is written last.
    """
    digest = hashlib.sha256()
    # the file is opened here, not by zipfile (which opens "w+b"): a FIFO or a device is
    # then written through as a stream
    with (
        ThreadPoolExecutor(1, thread_name_prefix="nbsvm-checksum") as hasher,
        atomic_path(path, before_replace=before_replace) as tmp,
        open(tmp, "wb") as out,
        zipfile.ZipFile(
            out if stat.S_ISREG(os.fstat(out.fileno()).st_mode) else cast(IO[bytes], _Stream(out)),
            "w",
            compression=zipfile.ZIP_STORED,
            allowZip64=True,
        ) as zf,
    ):
        for name in sorted(arrays):
            a = arrays[name]
            if isinstance(a, np.ndarray):
                a = np.ascontiguousarray(a)
                spec = Chunked(a.dtype, a.shape, lambda a=a: iter([a]))
            else:
                spec = a
            if spec.dtype == object:
                raise TypeError(f"array {name!r} has dtype object; refusing to save it")
            _array_parts(digest, name, spec.dtype, spec.shape)
            with zf.open(name + ".npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array_header_1_0(
                    fh,
                    {
                        "descr": np.lib.format.dtype_to_descr(spec.dtype),
                        "fortran_order": False,
                        "shape": spec.shape,
                    },
                )
                written = 0
                for piece in spec.pieces():
                    piece = np.ascontiguousarray(piece, dtype=spec.dtype)
                    if piece.size == 0:
                        continue
                    view = piece.data.cast("B")  # memoryview(piece)
                    # the checksum on the second core while zipfile's CRC and the write
                    # run here (each lets go of the GIL)
                    hashed = hasher.submit(digest.update, view)
                    fh.write(view)
                    hashed.result()
                    written += piece.size
                if written != int(np.prod(spec.shape, dtype=np.int64)):
                    raise ValueError(
                        f"array {name!r}: wrote {written} items, expected shape {spec.shape}"
                    )
        version = (
            FORMAT_VERSION
            if any(name.endswith(".nonzero_index") for name in arrays)
            else PAIRS_FORMAT
            if any(name.endswith("pair_counts") for name in arrays)
            else PLAIN_FORMAT
        )
        blob = _header_blob(header, kind, digest, version)
        with zf.open(HEADER_KEY + ".npy", "w") as fh:
            np.lib.format.write_array(fh, blob, allow_pickle=False)


ALLOWED_KINDS = "biuf"  # bool, integers, floats: nothing else is ever saved
MAX_NPY_HEADER = 10000  # numpy's own cap on an .npy member's header


def member_spec(
    fh: IO[bytes], info: zipfile.ZipInfo, kind: str, path: str | os.PathLike[str]
) -> tuple[tuple, np.dtype, int]:
    """Read and check an ``.npy`` member's header from the open member ``fh``: numeric
    C-order data whose shape matches the member's size; returns ``(shape, dtype, nbytes)``
    and leaves ``fh`` at the start of the data (nothing is allocated)."""
    name = info.filename[:-4]
    version = np.lib.format.read_magic(fh)
    if version not in ((1, 0), (2, 0)):
        raise ValueError(f"unsupported .npy version {version}")
    read_header = (
        np.lib.format.read_array_header_1_0
        if version == (1, 0)
        else np.lib.format.read_array_header_2_0
    )
    shape, fortran, dtype = read_header(fh, max_header_size=MAX_NPY_HEADER)
    if (
        dtype.hasobject
        or dtype.fields is not None
        or dtype.subdtype is not None
        or dtype.kind not in ALLOWED_KINDS
    ):
        raise NBSVMError(
            f"refusing array {name!r} of dtype {dtype} in the {kind} file "
            f"(object or structured data; nbsvm never unpickles)",
            path=str(path),
        )
    if fortran:
        raise NBSVMError(f"corrupted {kind} file: array {name!r} is not in C order", path=str(path))
    count = int(np.prod(shape, dtype=object)) if shape else 1  # exact: no overflow
    nbytes = count * dtype.itemsize
    if count < 0 or nbytes != info.file_size - fh.tell():
        raise NBSVMError(
            f"corrupted or truncated {kind} file: array {name!r} has "
            f"{info.file_size - fh.tell()} bytes of data, its shape {shape} "
            f"needs {nbytes}",
            path=str(path),
        )
    return shape, dtype, nbytes


def _read_member(zf: zipfile.ZipFile, info: zipfile.ZipInfo, kind: str, path) -> np.ndarray:
    """One ``.npy`` member, its header checked before any data is allocated or read."""
    name = info.filename[:-4]
    with zf.open(info) as fh:
        shape, dtype, nbytes = member_spec(fh, info, kind, path)
        if name == HEADER_KEY and nbytes > MAX_HEADER_BYTES:
            raise NBSVMError(
                f"corrupted {kind} file: header of {nbytes} bytes is over the "
                f"{MAX_HEADER_BYTES}-byte limit",
                path=str(path),
            )
        out = np.empty(shape, dtype=dtype)
        got = _read_into(cast(zipfile.ZipExtFile, fh), out.reshape(-1).data.cast("B"))
        if got != nbytes:
            raise NBSVMError(
                f"corrupted or truncated {kind} file: array {name!r} is short", path=str(path)
            )
        return out


#: The piece a member is read in: ZipExtFile.readinto reads all it is asked for into a
#: bytes object (two while it joins its reads) and copies it, which held every array twice
#: while a model loaded; 1 MB pieces read as fast as 16 MB ones.
READ_PIECE = 1 << 20


def _read_into(fh: zipfile.ZipExtFile, view: memoryview) -> int:
    """Fill ``view`` from ``fh`` piece by piece; the bytes read (fewer at its end)."""
    got = 0
    while got < len(view):
        n = fh.readinto(view[got : got + READ_PIECE])
        if not n:
            break
        got += n
    return got


def _array_spec(zf: zipfile.ZipFile, info: zipfile.ZipInfo, kind: str, path) -> tuple:
    """``(shape, dtype, nbytes)`` of a member from its ``.npy`` header; its data unread."""
    with zf.open(info) as fh:
        return member_spec(fh, info, kind, path)


def open_regular(path: str | os.PathLike[str], what: str) -> IO[bytes]:
    """``path`` opened for reading in binary, refusing what is not a regular file: a
    missing path, a folder, a device (``/dev/zero`` would never end), a FIFO (opened
    without blocking, so an absent writer cannot hang the load). ``what`` names the file
    in errors ("model file")."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        if str(path) == "-":
            raise NBSVMError(f"a {what} is not read from standard input: give the file") from None
        raise NBSVMError("no such file", path=str(path)) from None
    except IsADirectoryError:
        raise NBSVMError(f"is a folder, expected a {what}", path=str(path)) from None
    except OSError as e:
        raise NBSVMError(f"cannot read the {what}: {e.strerror or e}", path=str(path)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise NBSVMError(f"is a folder, expected a {what}", path=str(path))
        other = (
            "a character device"
            if stat.S_ISCHR(mode)
            else "a block device"
            if stat.S_ISBLK(mode)
            else "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a socket"
            if stat.S_ISSOCK(mode)
            else "not a file"
        )
        raise NBSVMError(f"not a regular file ({other}), expected a {what}", path=str(path))
    return os.fdopen(fd, "rb")


def check_members(
    infos: list[zipfile.ZipInfo], file_bytes: int, what: str, path: str | os.PathLike[str]
) -> dict:
    """The archive's members by name, checked from the zip directory alone (before any
    member is read): at most :data:`MAX_MEMBERS`, every one a distinct ``.npy``, stored
    (nbsvm never compresses: a compressed member could declare a size far beyond the
    file's), and sizes the file can hold, one by one and together. An ``.npy`` header's
    shape is then checked against its member's size (:func:`member_spec`), so no array is
    allocated larger than the file."""
    members = {i.filename: i for i in infos}
    # a model with one backend learner per class holds a few arrays per class
    if (
        len(infos) > MAX_MEMBERS
        or len(members) != len(infos)
        or any(not n.endswith(".npy") for n in members)
    ):
        raise NBSVMError(f"corrupted {what}: unexpected members", path=str(path))
    for i in infos:
        if i.compress_type != zipfile.ZIP_STORED:
            # zipfile's private table of method names, which typeshed leaves out
            method = zipfile.compressor_names.get(i.compress_type, i.compress_type)  # type: ignore[attr-defined]
            raise NBSVMError(
                f"corrupted {what}: member {i.filename!r} is compressed "
                f"({method}); nbsvm writes members uncompressed and reads no "
                f"other",
                path=str(path),
            )
        if i.compress_size != i.file_size or i.header_offset + i.file_size > file_bytes:
            raise NBSVMError(
                f"corrupted or truncated {what}: member {i.filename!r} declares "
                f"{i.file_size} bytes, the file has {file_bytes}",
                path=str(path),
            )
    if sum(i.file_size for i in infos) > file_bytes:
        raise NBSVMError(
            f"corrupted {what}: its members declare more bytes than the file has ({file_bytes})",
            path=str(path),
        )
    return members


def _json_header(zf: zipfile.ZipFile, members: dict, label: str, what: str, path) -> dict:
    """The JSON header (a JSON object) of an archive whose members are checked."""
    raw = _read_member(zf, members[HEADER_KEY + ".npy"], label, path)
    if raw.dtype != np.uint8 or raw.ndim != 1:
        raise NBSVMError(f"corrupted {what}: bad header", path=str(path))
    header = json.loads(raw.tobytes().decode("utf-8"))
    if not isinstance(header, dict):
        raise NBSVMError(f"corrupted {what}: bad header", path=str(path))
    if _nesting(header) > MAX_HEADER_NESTING:
        raise NBSVMError(
            f"corrupted {what}: its header nests deeper than {MAX_HEADER_NESTING} levels",
            path=str(path),
        )
    return header


#: A header nests a few levels (a search's settings, a history's inputs); one that nests
#: hundreds (a hand-made file) passed json.loads and then overflowed the stack of whatever
#: walked it (nbsvm info --json: a traceback).
MAX_HEADER_NESTING = 64


def _nesting(value: object) -> int:
    """How deep lists and dicts nest in ``value`` (without recursion)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, depth)
            stack.extend(
                (v, depth + 1) for v in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


def _check_kind_and_version(header: dict, kind: str, path) -> None:
    if header.get("kind") != kind:
        raise NBSVMError(
            f"expected an nbsvm {kind} file, found kind {header.get('kind')!r}", path=str(path)
        )
    version = header.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise NBSVMError("corrupted header: bad format_version", path=str(path))
    if version > FORMAT_VERSION:
        raise NBSVMError(
            f"written by a newer nbsvm (format {version}, this one reads "
            f"up to {FORMAT_VERSION}); upgrade nbsvm to load it",
            path=str(path),
        )


#: A member read into place (:func:`load_npz`'s ``into``): called with each piece of the
#: member's data, flat and in C order, and the index of the piece's first item. The piece
#: is a buffer the next piece is read into: a sink copies what it keeps.
Sink = Callable[[np.ndarray, int], None]


def _stream_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, kind: str, path, sink: Sink, digest
) -> None:
    """A member's data given to ``sink`` piece by piece (one piece of :data:`READ_PIECE`
    bytes held, never the array): its name, dtype and shape, then each piece as it is read,
    added to ``digest``."""
    name = info.filename[:-4]
    with zf.open(info) as fh:
        shape, dtype, nbytes = member_spec(fh, info, kind, path)
        _array_parts(digest, name, dtype, shape)
        total, start = nbytes // dtype.itemsize, 0
        buffer = np.empty(max(1, min(total, READ_PIECE // dtype.itemsize)), dtype=dtype)
        view = buffer.data.cast("B")
        while start < total:
            n = min(buffer.size, total - start)
            if (
                _read_into(cast(zipfile.ZipExtFile, fh), view[: n * dtype.itemsize])
                != n * dtype.itemsize
            ):
                raise NBSVMError(
                    f"corrupted or truncated {kind} file: array {name!r} is short", path=str(path)
                )
            digest.update(view[: n * dtype.itemsize])
            sink(buffer[:n], start)
            start += n


def _read_arrays(zf, members: dict, header: dict, label: str, path, into, digest) -> dict:
    """The arrays of the archive's members, in name order (the checksum's): each one's
    name, dtype and shape, then its data, added to ``digest``; the members ``into`` gives
    a sink for go to that sink piece by piece and are left out of what is returned (their
    ``.npy`` headers are read once for ``into``'s specs, once for their data)."""
    infos = {n[:-4]: i for n, i in members.items() if n != HEADER_KEY + ".npy"}
    sinks: dict[str, Sink] = {}
    if into is not None:
        specs = {name: _array_spec(zf, i, label, path) for name, i in infos.items()}
        sinks = into(header, specs)
    arrays = {}
    for name in sorted(infos):
        if name in sinks:
            _stream_member(zf, infos[name], label, path, sinks[name], digest)
            continue
        a = _read_member(zf, infos[name], label, path)
        _array_parts(digest, name, a.dtype, a.shape)
        if a.size:  # an empty array has no bytes (and no byte view)
            digest.update(a.data.cast("B"))
        arrays[name] = a
    return arrays


def read_npz(
    path: str | os.PathLike[str],
    kind: str | None = None,
    data: bool = True,
    into: Callable[[dict, dict], dict[str, Sink]] | None = None,
) -> tuple[dict, dict]:
    """``(header, arrays)`` of an nbsvm file, everything checked that can be before the
    checksum: a regular file, a zip archive (:func:`check_members`), numeric ``.npy``
    members (:func:`member_spec`), a JSON header under :data:`MAX_HEADER_BYTES`; with
    ``kind``, the kind and a format this nbsvm reads. ``data=False`` (``nbsvm info``): each
    array's ``(shape, dtype, nbytes)`` instead, its data unread. With ``data`` the
    checksum is checked too (:func:`_check_digest`, over what was read), and
    ``into(header, specs)`` (``specs``: each array's ``(shape, dtype, nbytes)``, read
    before any data) may name members to read piece by piece into the caller's own arrays
    (:data:`Sink`): a model is read into its learner's state without a second copy."""
    path = Path(path)
    what = f"{kind} file" if kind else "file"
    with open_regular(path, what) as fh:
        if fh.read(4) != b"PK\x03\x04":
            raise NBSVMError(f"not an nbsvm {what} (not an .npz archive)", path=str(path))
        fh.seek(0)
        label = kind or "nbsvm"
        digest = hashlib.sha256()
        try:
            with zipfile.ZipFile(fh) as zf:
                infos = zf.infolist()
                if all(i.filename != HEADER_KEY + ".npy" for i in infos):
                    raise NBSVMError(f"not an nbsvm {what} (no header)", path=str(path))
                members = check_members(infos, os.fstat(fh.fileno()).st_size, what, path)
                header = _json_header(zf, members, label, what, path)
                if kind is not None:
                    _check_kind_and_version(header, kind, path)
                if not data:
                    return header, {
                        n[:-4]: _array_spec(zf, i, label, path)
                        for n, i in sorted(members.items())
                        if n != HEADER_KEY + ".npy"
                    }
                arrays = _read_arrays(zf, members, header, label, path, into, digest)
        except NBSVMError:
            raise
        except Exception as e:  # zipfile/numpy/json raise many types on damaged archives
            raise NBSVMError(
                f"corrupted or truncated {what} ({type(e).__name__}: {e})", path=str(path)
            ) from None
    _check_digest(header, digest, kind or "nbsvm", path)
    return header, arrays


def _check_digest(header: dict, digest, kind: str, path) -> None:
    """Refuse a file whose checksum does not match: from format 2 over the header and the
    arrays (``digest`` holds the arrays' part), in format 1 files over the arrays only (a
    file claiming format 2 is verified completely; one edited to claim format 1 keeps its
    format-2 checksum, which cannot match the arrays alone)."""
    covers_header = header.get("format_version", 1) >= HEADER_CHECKSUM_FORMAT
    if covers_header:
        digest.update(b"|" + HEADER_KEY.encode() + b"|" + canonical_header(header))
    if header.get("checksum") != digest.hexdigest():
        raise NBSVMError(
            f"checksum mismatch: the {kind} file is corrupted or was edited "
            f"({'header or arrays' if covers_header else 'arrays'} changed)",
            path=str(path),
        )


def load_npz(
    path: str | os.PathLike[str],
    kind: str,
    into: Callable[[dict, dict], dict[str, Sink]] | None = None,
) -> tuple[dict, dict[str, np.ndarray]]:
    """Read and verify a file written by :func:`save_npz`; return ``(header, arrays)``
    (without the members ``into`` read into place, see :func:`read_npz`).

    Never unpickles: each member's ``.npy`` header is parsed first and any object,
    structured or non-numeric dtype is refused, as is a compressed member or a size the
    file cannot hold (so a crafted shape cannot make it allocate), a header over
    ``MAX_HEADER_BYTES``, another kind of file, a newer format version (asks for an
    upgrade) and a checksum that does not match the header and the arrays. The caller
    still checks the arrays against the header (shapes, value ranges) before using them;
    what ``into`` filled is checked only after the checksum: a caller keeps none of it
    when this raises.
    """
    return read_npz(path, kind, into=into)


def model_file_kind(path: str | os.PathLike[str]) -> str | None:
    """The ``kind`` in a model file's header (``"learner"``, ``"model"``...), ``None`` if
    the file has no readable header (the loaders then say what is wrong). Read by the
    loaders' own checks (a regular file, stored members within the file), so a link to
    ``/dev/zero`` or a FIFO is never read here."""
    try:
        header, _ = read_npz(path, data=False)  # the header and .npy headers only
    except NBSVMError:
        return None
    kind = header.get("kind")
    return kind if isinstance(kind, str) else None
