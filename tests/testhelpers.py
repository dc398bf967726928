"""Helpers shared by tests of both folders (``tests/`` and ``tests/reliability/``, whose
conftest puts ``tests/`` on the path): import as ``from testhelpers import ...``."""
import tarfile
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from nbsvm import datasets
from nbsvm.learners.kernels.losses import loss_dloss


def write_long_corpus(path: Path, n_docs=3000, words=300, seed=0, signal=True):
    """``pos``/``neg`` (in turn) ``<TAB>`` ``words`` random words of 5000, one document a
    line: a corpus that trains long enough to be stopped midway. ``signal``: a weak one,
    each positive document's first 30 words drawn from the first 100."""
    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}" for i in range(5000)])
    with open(path, "w", encoding="utf-8") as fh:
        for i in range(n_docs):
            ids = rng.integers(0, 5000, size=words)
            if signal and i % 2:
                ids[:30] = rng.integers(0, 100, size=30)
            fh.write(("pos" if i % 2 else "neg") + "\t" + " ".join(vocab[ids]) + "\n")


class Stop(Exception):
    """What :func:`stop_at`'s callback raises."""


def write_task_rows(path: Path, kind: str, n=400, seed=0, spread=1, first=0) -> Path:
    """svmlight rows of a task (``binary``, ``multi`` with 20% label noise, ``reg``, ``ml``):
    six of 40 features a row, feature j at index ``first + spread * j``."""
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        idx = sorted(rng.choice(40, 6, replace=False))
        x = rng.normal(size=6)
        y = {"binary": "+1" if x[0] + x[1] > 0 else "-1",
             "multi": str(int(abs(2 * x[0])) % 3),
             "reg": f"{2 * x[0] + x[1]:.4f}",
             "ml": ",".join(sorted({str(int(abs(2 * x[0])) % 3),
                                    str(int(abs(2 * x[1])) % 3)}))}[kind]
        if kind == "multi" and rng.random() < 0.2:      # noise: no learner converges early
            y = str(rng.integers(3))
        lines.append(y + " " + " ".join(f"{first + spread * j}:{v:.3f}" for j, v in zip(idx, x)))
    path.write_text("\n".join(lines) + "\n")
    return path


def stop_at(epoch):
    """A callback that interrupts training when ``epoch`` is done (after its checkpoint)."""
    def callback(event):
        if event["stage"] == "epoch" and event["epoch"] == epoch:
            raise Stop
    return callback


class Ran:
    """A CLI run's exit status and output, named as :func:`subprocess.run`'s."""

    def __init__(self, result):
        self.returncode, self.stdout, self.stderr = \
            result.exit_code, result.stdout, result.stderr


def run_cli(*args) -> Ran:
    """The real CLI, in this process (the typer app ``nbsvm`` runs; no interpreter start)."""
    from typer.testing import CliRunner

    from nbsvm.cli import app

    return Ran(CliRunner().invoke(app, [str(a) for a in args]))


def shared_file(*parts: str) -> Path:
    """A file of the shared corpora (:func:`nbsvm.datasets.shared_root`); the test is
    skipped without it."""
    path = datasets.shared_root().joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"{path} not found")
    return path


def blitzer_books(polarity: str) -> list[str]:
    """The lines (ends kept) of Blitzer's processed books reviews of one polarity,
    ``"positive"`` or ``"negative"``: real data in the sparse ``feature:count`` format."""
    with tarfile.open(shared_file("blitzer_mds", "processed_acl_labeled.tar.gz")) as tar:
        data = tar.extractfile(f"processed_acl/books/{polarity}.review").read()
    return data.decode("latin-1").splitlines(keepends=True)


def kept_cache(docs, hasher, keep, folder):
    """A cache of the documents' buckets, without the buckets ``keep`` rules out (a model
    drops them: they have no ratio). Same rows, so the same blocks when replaying."""
    from nbsvm.data.batches import Batch, hash_batches
    from nbsvm.data.cache import CacheWriter

    writer = CacheWriter(folder, hasher)
    for batch in hash_batches(iter(docs), hasher):
        mask = keep[batch.ids]
        kept = np.concatenate([[0], np.cumsum(mask)])
        writer.add(Batch(batch.ids[mask], kept[batch.offsets].astype(np.int64), batch.labels,
                         batch.sources, batch.lines))
    return writer.close()


def first_epoch_kept(learner, buckets, keep, rng, positive, folder, hasher):
    """The first epoch as a model runs it: each shuffled group of ``buckets`` (a cache of
    bucket ids), the buckets ``keep`` rules out removed, trained on by ``learner`` and
    written to a cache of the kept ones (with the same label codes). Returns that cache and
    the number of groups."""
    from nbsvm.data.batches import Batch
    from nbsvm.data.cache import CacheWriter

    writer = CacheWriter(folder, hasher)
    for label in buckets.labels:  # the same label codes in both caches
        writer.code_of(label)
    n_groups = 0
    for ids, offsets, codes, order, _ in buckets.shuffled_groups(rng):
        mask = keep[ids]
        kept = np.concatenate([[0], np.cumsum(mask)]).astype(np.int64)
        ids, offsets = ids[mask], kept[offsets]
        learner.epoch(ids, offsets, codes, order, positive)
        writer.add(Batch(ids, offsets, [buckets.labels[c] for c in codes]))
        n_groups += 1
    return writer.close(), n_groups


def random_rows(rng, n_docs: int, n_columns: int, longest: int):
    """``n_docs`` random rows of 1 to ``longest - 1`` distinct sorted columns below
    ``n_columns``: the rows as lists, and as the kernels take them (int32 ids, int64
    offsets)."""
    docs = [
        sorted(rng.choice(n_columns, size=int(rng.integers(1, longest)), replace=False).tolist())
        for _ in range(n_docs)
    ]
    offsets = np.concatenate([[0], np.cumsum([len(x) for x in docs])]).astype(np.int64)
    return docs, np.concatenate(docs).astype(np.int32), offsets


def check_bad_line(read, good: str, line: str, says: str) -> list:
    """``read`` (a line reader) refuses ``line`` after the ``good`` one with an error
    matching ``says`` that names line 2, and with --skip-bad-lines skips it and counts it;
    returns what it read then."""
    import io

    from nbsvm.errors import NBSVMError
    from nbsvm.io.decoding import ReadStats

    with pytest.raises(NBSVMError, match=says) as e:
        list(read(io.StringIO(good + line + "\n")))
    assert ":2:" in str(e.value)
    stats = ReadStats(skip_bad=True)
    docs = list(read(io.StringIO(good + line + "\n"), stats=stats))
    assert stats.bad_lines == 1
    return docs


def write_class_folders(root: Path, name="{i}.txt"):
    """A tiny folders corpus: ``root/pos`` and ``root/neg``, three reviews each (file
    ``name`` formatted with their number)."""
    for label in ("pos", "neg"):
        (root / label).mkdir(parents=True)
        for i in range(3):
            (root / label / name.format(i=i)).write_text(f"{label} review number {i}")


@njit
def kernel_loss(kind, p, y):
    """``(loss, derivative)`` by the losses' compiled kernel, called from compiled code as
    the epochs call it."""
    return loss_dloss(kind, p, y)


def model_content(path) -> tuple:
    """A model file's header and arrays without its history, which names the input files:
    two files trained from the same documents in other files compare equal."""
    import json

    from nbsvm.io.npzfile import load_npz
    header, arrays = load_npz(path, "model")
    header.pop("checksum", None)  # of the whole file, the history included
    history = header.pop("history", None)
    assert history is None or [e["event"] for e in history][-1:] in (["fit"], ["continue"])
    return (json.dumps(header, sort_keys=True),
            {k: np.asarray(v).tobytes() for k, v in dict(arrays).items()})
