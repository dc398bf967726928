"""Feature caches kept between runs, keyed by everything that decides their content.

A kept cache is the hashed training data (each document's distinct bucket ids and its label)
of one set of inputs under one set of hashing settings; a later run with the same inputs and
settings reads it instead of tokenizing and hashing again. Its folder name is a digest of

- each input's identity: resolved path, size and modification time (ns); for an aclImdb
  folder, the name, size and modification time of every review file it reads;
- the reader settings (format, text and label columns, strict decoding);
- the hasher settings (n-gram orders, ``n_bits``, character n-grams, hash seed);
- the cache format and the package version.

Change any of them and the digest changes, so an edited input is hashed again and never
served from a stale cache. A cache is published by renaming its complete folder
(:class:`~nbsvm.data.cache.CacheWriter`), so an interrupted run leaves only a hidden
``.*.nbsvm-tmp`` folder, which no run reads and the next run removes once the process that
wrote it is gone.

Examples
--------
>>> import tempfile, pathlib
>>> from nbsvm.text.hashing import Hasher
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "train.txt").write_text("pos\\tgreat\\nneg\\tawful\\n")
>>> kept = KeptCache(d / "caches", [d / "train.txt"], {"format": "lines"}, Hasher(n_bits=10))
>>> kept.open() is None                # nothing kept yet
True
>>> kept.folder.name.startswith("train-")
True
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from nbsvm._version import __version__
from nbsvm.data.cache import CacheWriter, FeatureCache
from nbsvm.data.store import make_folder, owner_gone
from nbsvm.errors import NBSVMError
from nbsvm.io.document import read_once
from nbsvm.io.folders import is_document
from nbsvm.text.hashing import Hasher

#: 2: the readers drop a BOM on any line, refuse several labels in a single-label task
#: and record a multi-label run's empty labels (a cache of format 1 read otherwise)
CACHE_FORMAT = 2
SKIPPED_FOLDERS = ("unsup",)  # aclImdb folders the reader skips


def default_root() -> Path:
    """``$NBSVM_CACHE_DIR``, else ``$XDG_CACHE_HOME/nbsvm``, else ``~/.cache/nbsvm``."""
    if os.environ.get("NBSVM_CACHE_DIR"):
        return Path(os.environ["NBSVM_CACHE_DIR"])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "nbsvm"


def _stamp(s: os.stat_result) -> str:
    """A file's size, mtime, change time and inode, as a folder's digest takes them."""
    return f"{s.st_size}|{s.st_mtime_ns}|{s.st_ctime_ns}|{s.st_ino}"


def input_identity(path: str | os.PathLike[str], use: str = "a kept cache") -> dict:
    """What identifies an input's content without reading it: path, size, mtime, and the
    inode's change time and number (ns): a file rewritten with its size and mtime put back
    (``cp -p``, ``rsync -a``, an archive of fixed times) was taken for the same, and a kept
    cache of the old content trained the model; no one can set the change time back.

    A folder of class folders is identified by every document file in them
    (:func:`nbsvm.io.readers.is_document`), in name order (about 30 ms for 25,000 reviews),
    so editing one review changes it. Standard input, a pipe or a device has no such
    identity: refused, naming ``use`` (what needs it).
    """
    p = Path(path)
    if read_once(path) or not p.exists():
        raise NBSVMError(
            f"{use} needs inputs that are files or folders (their size and modification "
            "time identify them): save standard input or a pipe to a file first",
            path=str(path),
        )
    st = os.stat(p)  # (follows /dev/stdin redirected from a file to that file)
    p = p.resolve()
    if not p.is_dir():
        return {
            "path": str(p),
            "size": st.st_size,
            "mtime_ns": st.st_mtime_ns,
            "ctime_ns": st.st_ctime_ns,
            "inode": st.st_ino,
        }
    digest, n_files, size = hashlib.sha256(), 0, 0
    try:
        # the folder's own files too (a Blitzer domain folder holds its .review files)
        for entry in sorted(os.scandir(p), key=lambda e: e.name):
            if entry.is_file() and not entry.name.startswith("."):
                s = entry.stat()
                digest.update(f"{entry.name}|{_stamp(s)}\n".encode())
                n_files += 1
                size += s.st_size
        subs = [
            e
            for e in os.scandir(p)
            if e.is_dir() and e.name not in SKIPPED_FOLDERS and not e.name.startswith(".")
        ]
        for sub in sorted(subs, key=lambda e: e.name):
            for entry in sorted(os.scandir(sub.path), key=lambda e: e.name):
                if is_document(entry):
                    s = entry.stat()
                    digest.update(f"{sub.name}/{entry.name}|{_stamp(s)}\n".encode())
                    n_files += 1
                    size += s.st_size
    except OSError as e:
        raise NBSVMError(f"cannot list: {e.strerror or e}", path=e.filename or str(p)) from None
    return {"path": str(p), "files": n_files, "size": size, "listing": digest.hexdigest()}


def _writer_gone(name: str) -> bool:
    """Whether the writer of a ``.<cache>.<owner tag>.<random>.nbsvm-tmp`` folder is gone
    (:func:`~nbsvm.data.store.owner_gone`: only one of this machine can be)."""
    parts = name.split(".")
    return len(parts) > 2 and owner_gone(parts[2])


class KeptCache:
    """The kept cache of ``inputs`` (paths) read with ``reader`` settings and ``hasher``.

    :meth:`open` returns the finished cache, or ``None`` when there is none or it is
    unusable (then it is removed and :attr:`discarded` says why); :meth:`writer` starts
    building it. Before the new cache is published the inputs' identity is taken again:
    an input changed while it was read fails the run instead of keeping a cache of a
    mixture of old and new content.
    """

    def __init__(self, root, inputs, reader: dict, hasher: Hasher):
        self.root = Path(root)
        self.inputs = [str(p) for p in inputs]
        self.reader = dict(reader)
        self.hasher = hasher
        self.identity = self._identity()
        blob = json.dumps(self.identity, sort_keys=True).encode()
        self.key = hashlib.sha256(blob).hexdigest()[:32]
        self.folder = self.root / f"train-{self.key}"
        self.discarded: str | None = None

    def _identity(self) -> dict:
        return {
            "inputs": [input_identity(p) for p in self.inputs],
            "reader": self.reader,
            "hasher": self.hasher.settings(),
            "cache_format": CACHE_FORMAT,
            "version": __version__,
        }

    def remove_stale(self) -> list[Path]:
        """Remove half-written caches (``.*.nbsvm-tmp``) whose writer process is gone."""
        removed = []
        if self.root.is_dir():
            for p in self.root.glob(".train-*.nbsvm-tmp"):
                if _writer_gone(p.name):
                    shutil.rmtree(p, ignore_errors=True)
                    removed.append(p)
        return removed

    def open(self) -> FeatureCache | None:
        self.remove_stale()
        if not self.folder.exists():
            return None
        try:
            cache = FeatureCache(self.folder)
            if cache.meta.get("identity") != self.identity:
                raise NBSVMError(
                    "its recorded inputs and settings differ from its key", path=str(self.folder)
                )
            if cache.hasher != self.hasher:
                raise NBSVMError("its hasher settings differ from its key", path=str(self.folder))
            return cache
        except NBSVMError as e:
            self.discard(str(e))
            return None

    def discard(self, why: str) -> None:
        """Remove the kept cache (unusable or corrupted); the next run builds it again."""
        self.discarded = why
        shutil.rmtree(self.folder, ignore_errors=True)

    def owns(self, error: NBSVMError) -> bool:
        """Whether ``error`` was raised reading this kept cache."""
        return error.path is not None and Path(error.path) == self.folder

    def check_unchanged(self) -> None:
        now = self._identity()
        for before, after in zip(self.identity["inputs"], now["inputs"]):
            if before != after:
                raise NBSVMError(
                    "the input changed while it was being read; the feature "
                    "cache was not kept (run again on the finished file)",
                    path=before["path"],
                )

    def writer(self) -> CacheWriter:
        make_folder(self.root)
        w = CacheWriter(
            self.folder, self.hasher, extra_meta={"identity": self.identity}, durable=True
        )
        w.before_publish = self.check_unchanged
        w.keep_existing = True
        return w


class ReadyCache:
    """A finished cache handed to ``fit_documents(kept=...)``: read, never rebuilt."""

    def __init__(self, folder: Path, hasher):
        self.folder, self.hasher, self.discarded = folder, hasher, None

    def open(self) -> FeatureCache:
        return FeatureCache(self.folder)

    def owns(self, error: NBSVMError) -> bool:
        return False
