"""Training checkpoints: the learner's state after whole epochs, to resume an interrupted fit
(``nbsvm train`` and ``nbsvm learn``: ``--checkpoint-every N`` and ``--resume``).

A checkpoint holds the learner's state (NBSVM: the raw arrays (weights, NB ratios, AdaGrad
sums, the SGD scale and step count) and, with ``learner``, every backend learner's state too;
``nbsvm learn``: the backend learner's saved parts and the epoch history), the epoch it
completed and the state of the shuffling generator, plus a fingerprint of everything that
decides the result: the settings (all but ``epochs``, ``threads`` and ``cache_dir``) and the
identity of the training inputs (and lexicon). It is an ``.npz`` with a JSON header written
by :func:`~nbsvm.io.npzfile.save_npz` (atomic, checksummed, never pickled).

``nbsvm learn`` reads its inputs into a new row cache again, puts the learner and the
generator back and trains the remaining epochs: the model equals an uninterrupted run's bit
for bit (tested). NBSVM resuming rebuilds the lexicon and the epoch-1 column cache exactly as the first run did (from
the kept cache when there is one, else by hashing the inputs again) without training on
them, checks that the NB ratios equal the checkpoint's bit for bit (the same data), puts the
arrays and the generator back and trains the remaining epochs. With ``threads=1`` the final
model is bit-identical to an uninterrupted run (tested).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from nbsvm.config import DEFAULTS, FORMER_TOKENIZER
from nbsvm.data.cachestore import input_identity
from nbsvm.data.translate import mapped_buckets
from nbsvm.errors import NBSVMError
from nbsvm.io.npzfile import Chunked, load_npz, save_npz
from nbsvm.learners.reduction import NBReduction

if TYPE_CHECKING:
    from nbsvm.data.cachestore import KeptCache
    from nbsvm.learners.base import OnlineLearner
    from nbsvm.models.nbsvm import NBSVMClassifier

KIND = "checkpoint"
UNFINGERPRINTED = ("epochs", "threads", "cache_dir")  # may change between run and resume


def checkpoint_path(output: str | os.PathLike[str]) -> Path:
    """Where the checkpoints of a model written to ``output`` go: ``model.checkpoint.npz``."""
    out = Path(output)
    stem = out.name[:-4] if out.name.endswith(".npz") else out.name
    return out.with_name(stem + ".checkpoint.npz")


class Checkpoint:
    """Save the training state every ``every`` epochs to ``path``; with ``resume``, start
    from the state found there (if any).

    Parameters
    ----------
    path : str or Path
    every : int
        Save after every ``every``-th epoch (0: never save; ``resume`` still reads).
    resume : bool
        Continue from the checkpoint at ``path`` when it exists (without it, a checkpoint
        there is refused when ``every`` would write over it: an earlier run's progress).
    identity : dict
        What identifies the training data (input paths, sizes, mtimes, reader settings);
        a checkpoint of other data is refused.
    """

    def __init__(self, path, every: int = 0, resume: bool = False, identity: dict | None = None):
        if not (isinstance(every, int) and every >= 0):
            raise NBSVMError(f"checkpoint interval must be an integer >= 0 epochs, got {every!r}")
        self.path = Path(path)
        self.every = every
        self.resume = resume
        self.identity = identity or {}
        self.resumed_from: int | None = None  # the epoch a resumed fit started after
        if every and not resume and self.path.exists():
            # a run started again without --resume overwrote it, then removed it at the end
            raise NBSVMError(
                "a checkpoint of an earlier run is there: --resume continues that run; "
                "remove the file to start over",
                path=str(self.path),
            )

    @classmethod
    def for_run(
        cls,
        output: str | os.PathLike[str],
        every: int,
        resume: bool,
        inputs: Iterable[str | os.PathLike[str]],
        reader: dict,
        lexicon: str | os.PathLike[str] | None = None,
        kept: KeptCache | None = None,
    ) -> Checkpoint:
        """The checkpoint of a training run writing ``output``, identified by its inputs
        (paths, sizes, mtimes), the reader settings and the lexicon file, if any. ``kept``:
        the run's :class:`~nbsvm.data.cachestore.KeptCache`, which has stat'ed every input already
        (an aclImdb folder: 25k files)."""
        use = "--checkpoint-every / --resume"
        identities = (
            kept.identity["inputs"]
            if kept is not None
            else [input_identity(p, use) for p in inputs]
        )
        identity = {
            "inputs": identities,
            # (empty_label follows --multilabel, a setting checked with the others: a
            # checkpoint written before the reader recorded it still resumes)
            "reader": {k: v for k, v in reader.items() if k != "empty_label"},
            "lexicon": input_identity(lexicon, use) if lexicon else None,
        }
        return cls(checkpoint_path(output), every=every, resume=resume, identity=identity)

    def fingerprint(self, params: dict) -> dict:
        """What must match to resume: the settings (``params``, all but ``epochs``,
        ``threads`` and ``cache_dir``) and the identity of the training data."""
        return {
            "params": {k: v for k, v in params.items() if k not in UNFINGERPRINTED},
            "data": self.identity,
        }

    def due(self, epoch: int, epochs: int) -> bool:
        return self.every > 0 and epoch % self.every == 0 and epoch < epochs

    # ---- any trainer: the fingerprint, the epoch, the generator, the trainer's arrays ----

    def write(
        self, params: dict, epoch: int, rng: np.random.Generator, header: dict, arrays: dict
    ) -> None:
        """Save a trainer's ``header`` and ``arrays`` after ``epoch`` (atomically)."""
        save_npz(
            self.path,
            KIND,
            dict(
                header,
                fingerprint=self.fingerprint(params),
                epoch=int(epoch),
                rng=rng.bit_generator.state,
            ),
            arrays,
        )

    def read(
        self, params: dict, epochs: int | None, command: str = "train"
    ) -> tuple[dict, dict] | None:
        """``(header, arrays)`` if resuming and a checkpoint exists; refuses another run's
        (another ``command``'s, other settings or data) and one that leaves no epoch of
        ``epochs`` to do."""
        if not (self.resume and self.path.exists()):
            return None
        header, arrays = load_npz(self.path, KIND)
        written_by = "learn" if "learner" in header else "train" if "classes" in header else None
        if written_by not in (
            None,
            command,
        ):  # (its settings all differ: a list of 30 told nothing)
            raise NBSVMError(
                f"the checkpoint was written by nbsvm {written_by}, not nbsvm {command}: "
                "give this run another -o, or remove it to start over",
                path=str(self.path),
            )
        mine, theirs = self.fingerprint(params), header.get("fingerprint")
        if isinstance(theirs, dict) and isinstance(theirs.get("params"), dict):
            # written before split_scripts and nfkc: it tokenized without them
            theirs = dict(
                theirs,
                params={
                    **{k: v for k, v in FORMER_TOKENIZER.items() if k in mine["params"]},
                    **theirs["params"],
                },
            )
            theirs = _lam_default_as_written(mine, theirs)
            if "encoding" in mine["params"] and "encoding" not in theirs["params"]:
                # written before learn kept its encoding: the one given again is taken
                theirs = dict(
                    theirs, params=dict(theirs["params"], encoding=mine["params"]["encoding"])
                )
        if not isinstance(theirs, dict) or theirs.get("params") != mine["params"]:
            saved = theirs.get("params") if isinstance(theirs, dict) else None
            saved = saved if isinstance(saved, dict) else {}  # an edited file: all differ
            diff = sorted(
                k for k in set(saved) | set(mine["params"]) if saved.get(k) != mine["params"].get(k)
            )
            names = {"lam": "lambda"}  # as the options name them
            # the checkpoint's values beside: a default changed since is then plain to see
            shown = "; ".join(
                f"{names.get(k, k)}: {_brief(saved.get(k), k)} there, "
                f"{_brief(mine['params'].get(k), k)} now"
                for k in diff
            )
            raise NBSVMError(
                f"the checkpoint was written with other settings ({shown}); use the same "
                "settings or remove it to start over",
                path=str(self.path),
            )
        if theirs.get("data") != mine["data"]:
            raise NBSVMError(
                f"the checkpoint was written for other training data ({_data_diff(theirs, mine)}"
                "); use the same data and reading options, or remove it to start over",
                path=str(self.path),
            )
        epoch = header.get("epoch")
        if not isinstance(epoch, int) or epoch < 1:
            raise NBSVMError("corrupted checkpoint", path=str(self.path))
        if epochs is not None:
            self._check_epochs(epoch, epochs)
        return header, arrays

    def restore_rng(self, header: dict, rng: np.random.Generator) -> None:
        try:
            state: Any = header.get("rng")  # numpy checks it (a bad one raises below)
            rng.bit_generator.state = state
        except (TypeError, ValueError, KeyError) as e:
            raise NBSVMError(
                f"corrupted checkpoint: generator state ({e})", path=str(self.path)
            ) from None

    # ---- a backend learner trained by nbsvm learn ----

    def save_learner(
        self,
        learner: OnlineLearner,
        settings: dict,
        epoch: int,
        rng: np.random.Generator,
        history: list,
    ) -> None:
        header, arrays = learner.saved_parts()
        self.write(settings, epoch, rng, {"learner": header, "history": history}, arrays)

    def load_learner(self, settings: dict, epochs: int) -> tuple[OnlineLearner, int, dict] | None:
        """``(learner, epoch, header)`` from the checkpoint, or None (see :meth:`read`)."""
        from nbsvm.learners.base import OnlineLearner

        found = self.read(settings, epochs, command="learn")
        if found is None:
            return None
        header, arrays = found
        if not isinstance(header.get("learner"), dict) or not isinstance(
            header.get("history"), list
        ):
            raise NBSVMError("corrupted checkpoint (not a learner's)", path=str(self.path))
        learner = OnlineLearner.from_parts(header["learner"], arrays, path=str(self.path))
        return learner, header["epoch"], header

    # ---- NBSVM: the built-in learner's arrays (and a backend learner's state) ----

    def save(
        self,
        clf: NBSVMClassifier,
        epoch: int,
        rng: np.random.Generator,
        named: np.ndarray | None = None,
    ) -> None:
        """``named``: the columns the naming of the strongest buckets chose (a bitmap), once
        chosen: a run resumed after that epoch names them as the uninterrupted run did."""
        learner = clf.linear_
        header = {"classes": list(clf.class_names_), "n_docs": int(clf.n_docs_)}
        order = _bucket_order(clf)
        arrays = {"S": learner.S_ if order is None else _by_bucket(learner.S_, order),
                  "state": learner.state_}  # fmt: skip
        if clf.backend_learner is not None:  # the backend learners' whole state as well
            header["backend"], own = clf.backend_.parts()
            arrays.update(own)
        if named is not None:
            arrays["named"] = named
        self.write(clf.get_params(), epoch, rng, header, arrays)

    def load(self, clf: NBSVMClassifier) -> dict | None:
        """The saved state if resuming and a checkpoint exists; refuses another run's."""
        found = self.read(clf.get_params(), clf.epochs)  # epochs None: known with the classes
        if found is None:
            return None
        header, arrays = found
        backend = {k: a for k, a in arrays.items() if k.startswith("backend")}
        named = arrays.get("named")
        if (
            set(arrays) - set(backend) - {"named"} != {"S", "state"}
            or (clf.backend_learner is not None) != ("backend" in header)
            or (named is not None and (named.dtype != np.uint64 or named.ndim != 1))
        ):
            raise NBSVMError("corrupted checkpoint", path=str(self.path))
        return {
            "epoch": header["epoch"],
            "rng": header.get("rng"),
            "classes": header.get("classes"),
            "S": arrays["S"],
            "state": arrays["state"],
            "backend": (header.get("backend"), backend),
            "named": named,
        }

    def _check_epochs(self, epoch: int, epochs: int) -> None:
        if epoch >= epochs:
            raise NBSVMError(
                f"the checkpoint is after epoch {epoch}, which leaves nothing to do "
                f"for --epochs {epochs}",
                path=str(self.path),
            )

    def restore(self, clf: NBSVMClassifier, saved: dict, rng: np.random.Generator) -> int:
        """Put ``saved`` into ``clf``'s learner and ``rng``; return the epoch to start after.

        The NB ratios (column 0 of ``S``) were computed from the data again: they must equal
        the checkpoint's exactly, or the data is not what it was trained on."""
        self._check_epochs(saved["epoch"], clf.setting("epochs"))
        learner = clf.linear_
        S, state = saved["S"], saved["state"]  # S: by bucket (_by_bucket)
        order = _bucket_order(clf)
        if (
            saved["classes"] != list(clf.class_names_)
            or S.shape != learner.S_.shape
            or S.dtype != learner.S_.dtype
            or state.shape != learner.state_.shape
        ):
            raise NBSVMError(
                f"the checkpoint does not fit this data (classes "
                f"{saved['classes']} vs {list(clf.class_names_)}, state {S.dtype} {S.shape} "
                f"vs {learner.S_.dtype} {learner.S_.shape}, learner state {state.shape} vs "
                f"{learner.state_.shape})",
                path=str(self.path),
            )
        named = saved.get("named")
        if named is not None and named.size != max(1, -(-learner.n_features // 64)):
            raise NBSVMError("corrupted checkpoint (the named columns)", path=str(self.path))
        ratios = learner.S_[:, :, 0] if order is None else learner.S_[:, order, 0]
        if not np.array_equal(S[:, :, 0], ratios):
            raise NBSVMError(
                "the data gives other NB ratios than the checkpoint's: the "
                "training data changed; remove the checkpoint to start over",
                path=str(self.path),
            )
        if not (np.isfinite(S).all() and np.isfinite(state).all()):
            raise NBSVMError("corrupted checkpoint: non-finite values", path=str(self.path))
        self.restore_rng(saved, rng)
        if order is None:
            learner.S_[...] = S
        else:
            learner.S_[:, order] = S
        learner.state_[...] = state
        if clf.backend_learner is not None:
            header, arrays = saved["backend"]
            clf.backend_ = NBReduction.from_parts(
                header, arrays, learner.n_outputs, learner.n_features, str(self.path)
            )
        self.resumed_from = saved["epoch"]
        return saved["epoch"]

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def _bucket_order(clf: NBSVMClassifier) -> np.ndarray | None:
    """The columns of ``clf``'s kept buckets in bucket order, where its columns are laid
    out otherwise (hot first, :func:`~nbsvm.models.columns.column_layout`); None where
    they follow bucket order. A checkpoint keeps the state in bucket order, whatever the
    layout: one written before the hot columns came first resumes exactly."""
    if clf.column_of_ is None:
        return None
    _, columns, in_order = mapped_buckets(clf.column_of_)
    return None if in_order else columns


def _by_bucket(S: np.ndarray, order: np.ndarray, part: int = 1 << 20) -> Chunked:
    """``S[:, order]`` written a part of the columns at a time: no copy of the state."""

    def pieces():
        for k in range(S.shape[0]):
            for lo in range(0, order.size, part):
                yield S[k, order[lo : lo + part]]

    return Chunked(S.dtype, (S.shape[0], order.size, *S.shape[2:]), pieces)


def _lam_default_as_written(mine: dict, theirs: dict) -> dict:
    """A checkpoint written before lambda's default followed the loss recorded it as 1e-4;
    that is what lambda left unset is now, except for softmax (1e-5 with more classes)."""
    if (
        mine["params"].get("lam", 0) is None
        and theirs["params"].get("lam") == DEFAULTS["lam"]
        and mine["params"].get("loss") != "softmax"
    ):
        return dict(theirs, params=dict(theirs["params"], lam=None))
    return theirs


#: the settings whose None is not their default ('auto'): None says they are off
_NONE_IS_OFF = {"calibrate": "none"}


def _brief(value: object, name: str = "") -> str:
    """A setting's value in a message: ``default`` for one left unset (``none`` for a
    calibration turned off, whose default is 'auto'), else its repr cut to 60 characters
    (a class_weight of 300 classes)."""
    if value is None:
        return _NONE_IS_OFF.get(name, "default")
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _dict(value: object) -> dict:
    """A header's value where a dict is expected, or an empty one (a file edited by hand
    differs in every field)."""
    return value if isinstance(value, dict) else {}


def _data_diff(theirs: dict, mine: dict) -> str:
    """What differs between two checkpoints' training data: the reading options by name,
    else the inputs or the lexicon."""
    saved, now = _dict(theirs.get("data")), mine["data"]
    saved_reader, reader = _dict(saved.get("reader")), now.get("reader") or {}
    options = sorted(
        k for k in set(saved_reader) | set(reader) if saved_reader.get(k) != reader.get(k)
    )
    if options:
        if len(options) == 1:
            return f"reading option {options[0]} differs"
        return f"reading options {', '.join(options)} differ"
    if saved.get("lexicon") != now.get("lexicon"):
        return "the lexicon file differs"
    return "the inputs' paths, sizes or modification times differ"
