"""The models a server holds, by name, swapped atomically on reload.

A request takes one :class:`Served` (``registry.get(name)``) and uses it to the end: a
reload builds the new model completely (the checked loader of every command:
:meth:`NBSVMClassifier.load`), then replaces the reference under a lock. Requests in flight
finish on the model they started with; none sees half of each. A model file that fails to
load leaves the served model as it was.

With ``watch``, :meth:`ModelRegistry.get` also reloads a model whose file changed on disk
(checked at most once a second per model), in a thread of its own while the loaded model
serves: with several worker processes, each worker picks up a new file by itself.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from nbsvm.errors import NBSVMError

if TYPE_CHECKING:
    from nbsvm.models.nbsvm import NBSVMClassifier

WATCH_INTERVAL = 1.0  # seconds between two looks at a model file's mtime


@dataclass(frozen=True)
class Served:
    """One loaded model: what requests score with (never changed once built)."""

    name: str
    path: str
    model: NBSVMClassifier  # fitted
    version: int  # 1, then +1 at every reload
    loaded_at: float  # time.time()
    stamp: tuple  # the file's (mtime_ns, size) when it was read
    strongest: dict = field(default_factory=dict)  # class -> [(n-gram, contribution)]


def model_name(path: str) -> str:
    """``NAME=PATH`` -> NAME; a bare path -> its file name without ``.npz``."""
    return Path(path).name.removesuffix(".npz")


def parse_models(specs: list[str]) -> dict[str, str]:
    """``["imdb=models/imdb.npz", "other.npz"]`` -> ``{name: path}``; names must be unique
    and URL-safe (letters, digits, ``-``, ``_``, ``.``)."""
    out: dict[str, str] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = model_name(spec), spec
        if not name or not all(c.isalnum() or c in "-_." for c in name):
            raise NBSVMError(
                f"model name {name!r} (from {spec!r}): use letters, digits, "
                "'-', '_' or '.'; give NAME=PATH to choose one"
            )
        if name in out:
            raise NBSVMError(f"two models named {name!r}: give NAME=PATH to tell them apart")
        out[name] = path
    if not out:
        raise NBSVMError("no model to serve: give at least one model file")
    return out


def _stamp(path: str) -> tuple:
    st = os.stat(path)
    return (st.st_mtime_ns, st.st_size)


def reload_failure(name: str, path: str, exc: Exception) -> str:
    """Why ``name``'s file did not load, as the loader says it, without the file's path
    (an answer over HTTP must not show where the server's files are)."""
    why = (
        exc.message
        if isinstance(exc, NBSVMError)
        else (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))
    )
    why = hide_paths(why, {path: f"{name}'s file"})
    return f"model {name!r} was not reloaded (the loaded one still serves): {why}"


def hide_paths(text: str, labels: dict[str, str]) -> str:
    """``text`` with each path of ``labels`` (as given, absolute or resolved) replaced by
    its label, the longest first (a journal's path begins with its model's)."""
    spelled = {
        shown: label
        for path, label in labels.items()
        for shown in (str(path), os.path.abspath(path), os.path.realpath(path))
    }
    for shown in sorted(spelled, key=len, reverse=True):
        text = text.replace(shown, spelled[shown])
    return text


def load_served(name: str, path: str, version: int, top: int) -> Served:
    """Load and check ``path``, precompute what the page shows (the strongest n-grams of
    each class), so that requests only read, and predict once: the compiled kernels a
    request runs load from numba's cache now, not in the first request (0.5-0.7 s here,
    over a second on a loaded machine)."""
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.serve.scoring import predictions, strongest_ngrams

    stamp = _stamp(path) if os.path.exists(path) else (0, 0)
    model = NBSVMClassifier.load(path)
    strongest = strongest_ngrams(model, top)
    predictions(model, ["a first text"])
    return Served(name, str(path), model, version, time.time(), stamp, strongest)


class ReloadUnderWay(Exception):
    """A reload of the model was asked for while another one of it runs."""


class ModelRegistry:
    """Models by name; :meth:`get` for requests, :meth:`reload` to swap one in."""

    def __init__(self, models: dict[str, str], watch: bool = False, top: int = 10):
        self.paths = dict(models)
        self.watch = watch
        self.top = top
        self._lock = threading.Lock()
        self._served = {name: load_served(name, path, 1, top) for name, path in models.items()}
        self._looked = {name: time.monotonic() for name in models}
        #: name -> (the file's stamp, why it did not load): a file --watch could not load
        #: is tried again only once it changes (a bad model was loaded every second), and
        #: /health names it
        self.failed: dict[str, tuple[tuple, str]] = {}
        self._reloading: set[str] = set()  # --watch reloads under way

    @property
    def names(self) -> list[str]:
        return list(self.paths)

    @property
    def default(self) -> str:
        return next(iter(self.paths))

    def get(self, name: str | None = None, look: bool = True) -> Served:
        """The model serving ``name`` now (``None``: the first one given); with ``watch``
        and ``look``, its file looked at (a changed one reloaded apart)."""
        name = self.default if name is None else name
        served = self._served.get(name)
        if served is None:
            raise KeyError(name)
        if look and self.watch and time.monotonic() - self._looked[name] >= WATCH_INTERVAL:
            self._looked[name] = time.monotonic()
            try:
                stamp = _stamp(served.path)
            except OSError as e:  # gone (a rename never is): named, the loaded one serves
                if self.failed.get(name, ((),))[0] != ("missing",):
                    self._failed(name, ("missing",), e)
                return served
            if stamp == served.stamp:  # the served file is back as it was (mv, cp -p)
                self.failed.pop(name, None)
            elif self.failed.get(name, ((),))[0] != stamp:
                self._reload_apart(name, stamp)
        return served

    def _claim(self, name: str) -> bool:
        """Whether this caller may reload ``name`` now (no other reload of it under way:
        each load holds a model's memory again, and forty reloads at once took 2.4 GB)."""
        with self._lock:
            if name in self._reloading:
                return False
            self._reloading.add(name)
            return True

    def _release(self, name: str) -> None:
        with self._lock:
            self._reloading.discard(name)

    def _reload_apart(self, name: str, stamp: tuple) -> None:
        """Reload ``name`` in a thread of its own (one at a time per model), the loaded
        model serving until the new one is swapped in: loaded inline, on the event loop, a
        22 MB model held every request for 0.4-0.5 s."""
        if not self._claim(name):
            return

        def load() -> None:
            try:
                self._swap_in(name)
            except (NBSVMError, OSError) as e:  # a half-written or bad file: keep the old
                self._failed(name, stamp, e)
            finally:
                self._release(name)

        threading.Thread(target=load, name=f"nbsvm-reload-{name}", daemon=True).start()

    def _failed(self, name: str, stamp: tuple, error: Exception) -> None:
        """Remember and log (once per version of the file) a file --watch could not load."""
        why = reload_failure(name, self.paths[name], error)
        with self._lock:
            self.failed[name] = (stamp, why)
        logging.getLogger("uvicorn.error").warning("%s", why)

    def not_reloaded(self) -> dict[str, str]:
        """Why each model whose changed file did not load was not reloaded (a copy taken
        under the lock: a reload thread changes them while /health reads)."""
        with self._lock:
            return {name: why for name, (_, why) in self.failed.items()}

    def reload(self, name: str) -> Served:
        """Load ``name``'s file again and swap it in; raises (the old model stays) if the
        file does not load, :class:`ReloadUnderWay` while another reload of it runs."""
        if name not in self.paths:
            raise KeyError(name)
        if not self._claim(name):
            raise ReloadUnderWay(f"a reload of model {name!r} is under way: try again shortly")
        try:
            return self._swap_in(name)
        finally:
            self._release(name)

    def _swap_in(self, name: str) -> Served:
        old = self._served[name]
        new = load_served(name, self.paths[name], old.version + 1, self.top)
        with self._lock:  # one swap at a time; versions stay ordered
            current = self._served[name]
            new = Served(
                new.name,
                new.path,
                new.model,
                current.version + 1,
                new.loaded_at,
                new.stamp,
                new.strongest,
            )
            self._served[name] = new
            self.failed.pop(name, None)
        return new

    def swap(self, name: str, model: NBSVMClassifier) -> Served:
        """Serve ``model`` (built apart, never changed after) as ``name``'s next version:
        how a model that learns over HTTP is updated, as :meth:`reload` updates from a file.
        """
        from nbsvm.serve.scoring import strongest_ngrams

        strongest = strongest_ngrams(model, self.top)
        with self._lock:
            current = self._served[name]
            new = Served(
                name,
                current.path,
                model,
                current.version + 1,
                time.time(),
                current.stamp,
                strongest,
            )
            self._served[name] = new
        return new

    def all(self) -> list[Served]:
        """Every model serving now (with ``watch``, changed files reloaded first)."""
        return [self.get(name) for name in self.paths]
