"""The methods of the Blitzer benchmark: NBSVM on the text or on NB-weighted processed
counts, and plain hinge SGD, each a trainer returning a predictor."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from blitzer_data import (
    LABELS,
    Examples,
)

from nbsvm import NBSVMClassifier
from nbsvm.config import DEFAULTS
from nbsvm.data.rows import SparseRows
from nbsvm.io import Document
from nbsvm.learners.linear import SGDClassifier
from nbsvm.lexicon.nblexicon import nb_ratios

Predictor = Callable[[Examples], np.ndarray]


class Progress:
    """Per-epoch lines for the runs marked ``verbose``; always the last epoch's summary."""

    def __init__(self, verbose: bool):
        self.verbose = verbose
        self.last = ""

    def epoch(self, epoch: int, stats: dict) -> None:
        """``callback(epoch, stats)`` of the backend learners."""
        self.last = (
            f"epoch {epoch}: {stats['n']} examples, mean loss "
            f"{stats['loss'] / max(stats['n'], 1):.4f}, mistakes {stats['mistakes']}"
        )
        if self.verbose:
            print("      " + self.last, flush=True)

    def nbsvm_event(self, event: dict) -> None:
        """``callback(event)`` of :meth:`NBSVMClassifier.fit_documents` (end of each epoch)."""
        if event.get("stage") == "epoch" and event["docs"] == event.get("total"):
            self.last = (
                f"epoch {event['epoch']}/{event['epochs']}: {event['docs']} examples, "
                f"mean loss {event['loss']:.4f}"
            )
            if self.verbose:
                print("      " + self.last, flush=True)


def train_nbsvm_text(train: Examples, setting: dict, cfg, progress: Progress) -> Predictor:
    """NBSVM on the review text (unigrams + bigrams, package defaults otherwise)."""
    clf = NBSVMClassifier(
        ngrams=cfg.ngrams,
        n_bits=cfg.n_bits,
        min_df=setting["min_df"],
        epochs=cfg.epochs,
        seed=cfg.seed,
    )
    docs = (
        Document(label, text, "<train>", i + 1)
        for i, (text, label) in enumerate(zip(train.texts, train.labels))
    )
    clf.fit_documents(docs, callback=progress.nbsvm_event)
    return lambda test: clf.predict(test.texts)


def binarized(rows: SparseRows) -> SparseRows:
    """The same rows with every stored value set to 1."""
    return SparseRows(rows.indices, np.ones(len(rows.values)), rows.offsets, rows.n_features)


def train_sgd_hinge(train: Examples, setting: dict, cfg, progress: Progress) -> Predictor:
    """Plain hinge SGD (Bottou's 'optimal' steps from eta0 0.1, L2 ``lam``) on binary hashed
    features: the step the results were measured with (the learner's default is now its
    calibration)."""
    clf = SGDClassifier(
        loss="hinge", eta0=0.1, lam=setting["lam"], epochs=cfg.epochs, seed=cfg.seed
    )
    clf.fit(binarized(train.rows), train.labels, callback=progress.epoch)
    return lambda test: clf.predict(binarized(test.rows))


def class_ratios(
    rows: SparseRows, labels: np.ndarray, min_df: int, alpha: float = DEFAULTS["alpha"]
) -> np.ndarray:
    """NB log-count ratios (positive against negative) of binarized bucket counts; buckets
    in fewer than ``min_df`` training documents get 0, as in NBSVM."""
    row_of = np.repeat(np.arange(len(rows)), np.diff(rows.offsets))
    positive = labels[row_of] == LABELS[1]
    # each bucket is stored once per row (the encoder merges collisions): counts = documents
    pos = np.bincount(rows.indices[positive], minlength=rows.n_features)
    neg = np.bincount(rows.indices[~positive], minlength=rows.n_features)
    ratios = nb_ratios(pos.astype(np.float64), neg.astype(np.float64), alpha)
    ratios[pos + neg < min_df] = 0.0
    return ratios


def nb_weighted(rows: SparseRows, ratios: np.ndarray) -> SparseRows:
    """Binarized rows whose values are the ratios of their buckets (NBSVM's features)."""
    return SparseRows(
        rows.indices, ratios[rows.indices].astype(np.float64), rows.offsets, rows.n_features
    )


def train_nb_features(train: Examples, setting: dict, cfg, progress: Progress) -> Predictor:
    """NBSVM's recipe on hashed processed features: NB-weighted binary features, AdaGrad
    with log loss and NBSVM's default step and L2 (beta 1: no interpolation)."""
    ratios = class_ratios(train.rows, train.labels, setting["min_df"])
    clf = SGDClassifier(
        loss="log",
        schedule="adagrad",
        eta0=DEFAULTS["eta0"],
        lam=DEFAULTS["lam"],
        epochs=cfg.epochs,
        seed=cfg.seed,
    )
    clf.fit(nb_weighted(train.rows, ratios), train.labels, callback=progress.epoch)
    return lambda test: clf.predict(nb_weighted(test.rows, ratios))


@dataclass(frozen=True)
class Method:
    """A method on a route, with the settings tried on the validation split."""

    name: str
    route: str
    train: Callable
    grid: tuple

    @property
    def label(self) -> str:
        return f"{self.name} ({self.route})"


def methods(routes) -> list[Method]:
    min_dfs = tuple({"min_df": m} for m in (1, 2))
    lams = tuple({"lam": lam} for lam in (1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0))
    every = [
        Method("NBSVM", "raw", train_nbsvm_text, min_dfs),
        Method("SGD hinge", "raw", train_sgd_hinge, lams),
        Method("NBSVM", "processed", train_nb_features, min_dfs),
        Method("SGD hinge", "processed", train_sgd_hinge, lams),
    ]
    return [m for m in every if m.route in routes]


def accuracy(predict: Predictor, test: Examples) -> float:
    return float(np.mean(predict(test) == test.labels))


def tidy_row(method: str, route: str, train_domain: str, test_domain: str, split: str, accuracy):
    """A tidy row of the Blitzer results (``results/blitzer.csv``)."""
    return dict(
        method=method,
        route=route,
        train_domain=train_domain,
        test_domain=test_domain,
        split=split,
        accuracy=accuracy,
    )
