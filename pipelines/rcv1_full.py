#!/usr/bin/env python
"""The full RCV1-v2 CCAT task prepared as Bottou's ``sgd`` benchmark does, and the learners
of ``pipelines/rcv1.py`` trained on it out of core (``RCV1_FULL=1 make rcv1``).

Bottou's ``prep_rcv1`` (sgd-2.0, ``svm/prep_rcv1.cpp``; his README, section 3) swaps the
official LYRL2004 split to get a larger training set: the four official *test* files
(781,265 documents) become the training set and the official *training* file (23,149)
the test set. Label: +1 if the document has topic CCAT in ``rcv1-v2.topics.qrels``, else
-1. Two routes, both streamed (memory bounded by the dictionary, never by the corpus):

``tokens`` (default, what ``prep_rcv1`` does)
    From the stemmed token files ``lyrl2004_tokens_*.dat.gz`` (``.I <id>`` / ``.W`` /
    tokens): the dictionary is the terms of the official training file, numbered from 1 in
    order of first appearance, then frozen (47,152 terms); TF-IDF is recomputed with the
    document frequencies of the *new* training set, ``(1 + log tf) log(N / df)``, terms
    with ``df = 0`` dropped, every vector scaled to unit length. Three passes: dictionary,
    document frequencies, writing.
``vectors``
    From the LYRL2004 vector files ``lyrl2004_vectors_*.dat.gz`` (``<id>  idx:val ...``):
    their TF-IDF (idf of the official training set, 47,236 stems) kept, every vector scaled
    to unit length. One pass.

Differences from ``prep_rcv1``: the training file is written in the order of the official
files, not shuffled (``nbsvm learn`` shuffles every epoch in a seeded block shuffle);
documents left without any feature are skipped and counted (``prep_rcv1`` stops).

Files come from the JMLR LYRL2004 appendices (``a08-topic-qrels``, ``a12-token-files``,
``a13-vector-files`` under ``https://jmlr.org/papers/volume5/lewis04a/``, with the old
``www.ai.mit.edu`` address as a fallback), or from a local folder with ``--source``.

    python pipelines/rcv1_full.py [--kind tokens|vectors] [--source DIR] [--out data/rcv1_full]
"""
from __future__ import annotations

import argparse
import gzip
import hashlib
import itertools
import math
import os
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import numpy as np

from _report import ROOT
from nbsvm.errors import NBSVMError

BASES = ("https://jmlr.org/papers/volume5/lewis04a/",
         "http://www.ai.mit.edu/projects/jmlr/papers/volume5/lewis04a/")
QRELS = "a08-topic-qrels/rcv1-v2.topics.qrels.gz"
PARTS = [f"test_pt{k}" for k in range(4)]
FOLDERS = {"tokens": "a12-token-files", "vectors": "a13-vector-files"}
# sha256 of the gzipped files as scikit-learn's fetch_rcv1 records them (its mirror)
SHA256 = {
    "lyrl2004_vectors_test_pt0.dat.gz":
        "ed40f7e418d10484091b059703eeb95ae3199fe042891dcec4be6696b9968374",
    "lyrl2004_vectors_test_pt1.dat.gz":
        "87700668ae45d45d5ca1ef6ae9bd81ab0f5ec88cc95dcef9ae7838f727a13aa6",
    "lyrl2004_vectors_test_pt2.dat.gz":
        "48143ac703cbe33299f7ae9f4995db49a258690f60e5debbff8995c34841c7f5",
    "lyrl2004_vectors_test_pt3.dat.gz":
        "dfcb0d658311481523c6e6ca0c3f5a3e1d3d12cde5d7a8ce629a9006ec7dbb39",
    "lyrl2004_vectors_train.dat.gz":
        "5468f656d0ba7a83afc7ad44841cf9a53048a5c083eedc005dcdb5cc768924ae",
    "rcv1-v2.topics.qrels.gz":
        "2a98e5e5d8b770bded93afc8930d88299474317fe14181aee1466cc754d0d1c1",
}
VECTOR_FEATURES = 47236
TRAIN_NAME, TEST_NAME = "rcv1.train.svm", "rcv1.test.svm"


# ---- the official files ------------------------------------------------------------------------

def official_files(kind: str) -> dict:
    """Relative URLs of the files a route needs: ``qrels``, ``train`` (Bottou's training
    set: the four official test parts) and ``test`` (the official training file)."""
    if kind not in FOLDERS:
        raise NBSVMError(f"unknown kind {kind!r}; allowed: {', '.join(FOLDERS)}")
    folder = FOLDERS[kind]
    return dict(qrels=QRELS, train=[f"{folder}/lyrl2004_{kind}_{p}.dat.gz" for p in PARTS],
                test=[f"{folder}/lyrl2004_{kind}_train.dat.gz"])


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(relative: str, dest: Path, bases=BASES, timeout: float = 60.0) -> Path:
    """Fetch ``relative`` from the first base that answers into ``dest`` (kept if already
    there; written under a temporary name, then renamed). A network failure is a clear
    error saying how to proceed without one."""
    target = dest / Path(relative).name
    if target.is_file():
        return target
    dest.mkdir(parents=True, exist_ok=True)
    reasons = []
    for base in bases:
        url = base + relative
        tmp = target.with_name(target.name + ".part")
        print(f"  downloading {url}", flush=True)
        try:
            with urllib.request.urlopen(url, timeout=timeout) as r, open(tmp, "wb") as out:
                for block in iter(lambda: r.read(1 << 20), b""):
                    out.write(block)
        except (urllib.error.URLError, OSError, ValueError) as e:
            tmp.unlink(missing_ok=True)
            reasons.append(f"{url}: {getattr(e, 'reason', e)}")
            continue
        os.replace(tmp, target)
        expected = SHA256.get(target.name)
        if expected and sha256(target) != expected:
            print(f"  warning: {target.name} differs from the sha256 scikit-learn records "
                  "for its copy", flush=True)
        return target
    raise NBSVMError("cannot download " + Path(relative).name + " (" + "; ".join(reasons) +
                     "). Without internet, put the official RCV1-v2 files in a folder and "
                     "pass it with --source (RCV1_SOURCE=DIR for make rcv1)")


def fetch(kind: str, source: Path | None, dest: Path, bases=BASES) -> dict:
    """Local paths of the files a route needs: from ``source`` (a folder holding them, no
    network) or downloaded into ``dest``."""
    files = official_files(kind)
    names = [files["qrels"], *files["train"], *files["test"]]
    if source is not None:
        source = Path(source)
        missing = [Path(n).name for n in names if not (source / Path(n).name).is_file()]
        if missing:
            raise NBSVMError(f"missing in the source folder: {', '.join(missing)}",
                             path=str(source))
        where = {n: source / Path(n).name for n in names}
    else:
        where = {n: download(n, dest, bases) for n in names}
    return dict(qrels=where[files["qrels"]], train=[where[n] for n in files["train"]],
                test=[where[n] for n in files["test"]])


# ---- readers of the original formats -------------------------------------------------------------

def open_text(path: Path):
    path = Path(path)
    if not path.is_file():
        raise NBSVMError("file not found", path=str(path))
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="latin-1")
    return open(path, encoding="latin-1")


def read_ccat(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """``(positive, known)`` boolean arrays indexed by document id from
    ``rcv1-v2.topics.qrels`` lines ``<topic> <docid> 1``: CCAT documents and documents with
    any topic (``prep_rcv1`` labels unknown ones -1 too)."""
    positive = np.zeros(1 << 20, dtype=bool)
    known = np.zeros(1 << 20, dtype=bool)
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != 3 or not fields[1].isdigit():
                raise NBSVMError("expected '<topic> <docid> 1'", path=str(path), line=lineno)
            doc = int(fields[1])
            if doc >= len(known):                           # grow, new entries False
                size = 2 * doc
                positive = np.concatenate([positive, np.zeros(size - len(positive), bool)])
                known = np.concatenate([known, np.zeros(size - len(known), bool)])
            known[doc] = True
            positive[doc] |= fields[0] == "CCAT"
    return positive, known


def label_of(doc: int, positive: np.ndarray) -> int:
    return 1 if doc < len(positive) and positive[doc] else -1


def token_documents(path: Path):
    """``(docid, tokens)`` of a LYRL2004 token file (``.I <id>``, ``.W``, then the stemmed
    tokens over any number of lines), one document at a time."""
    doc, tokens, name = None, [], str(path)
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            if line.startswith(".I"):
                if doc is not None:
                    yield doc, tokens
                parts = line.split()
                if len(parts) != 2 or not parts[1].isdigit():
                    raise NBSVMError("expected '.I <docid>'", path=name, line=lineno)
                doc, tokens = int(parts[1]), []
            elif line.startswith(".W"):
                continue
            elif doc is None:
                if line.strip():
                    raise NBSVMError("text before the first '.I <docid>'", path=name,
                                     line=lineno)
            else:
                tokens.extend(line.split())
    if doc is not None:
        yield doc, tokens


def vector_documents(path: Path):
    """``(docid, indices, values)`` of a LYRL2004 vector file (``<docid>  idx:val ...``)."""
    name = str(path)
    with open_text(path) as fh:
        for lineno, line in enumerate(fh, 1):
            fields = line.split()
            if not fields:
                continue
            try:
                doc = int(fields[0])
                pairs = [f.split(":") for f in fields[1:]]
                idx = np.array([int(i) for i, _ in pairs], dtype=np.int64)
                val = np.array([float(v) for _, v in pairs])
            except ValueError:
                raise NBSVMError("expected '<docid> idx:val ...'", path=name,
                                 line=lineno) from None
            yield doc, idx, val


# ---- the two preparations ------------------------------------------------------------------------

def build_dictionary(paths) -> dict:
    """Terms of the official training file numbered from 1 in order of first appearance
    (``prep_rcv1``'s ``dico``), then frozen."""
    dico: dict = {}
    for path in paths:
        for _, tokens in token_documents(path):
            for t in tokens:
                if t not in dico:
                    dico[t] = len(dico) + 1
    return dico


def document_frequencies(paths, dico: dict) -> tuple[np.ndarray, int]:
    """Per term id, the number of documents of ``paths`` containing it; and the number of
    documents with at least one dictionary term (the others are skipped when writing)."""
    df = np.zeros(len(dico) + 1, dtype=np.int64)
    n = 0
    for path in paths:
        for _, tokens in token_documents(path):
            ids = [dico[t] for t in set(tokens) if t in dico]
            df[ids] += 1
            n += bool(ids)
    return df, n


def tfidf_vector(tokens, dico: dict, idf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(1 + log tf) idf`` over the dictionary terms with ``idf > 0``, unit length,
    indices ascending."""
    counts = Counter(t for t in tokens if t in dico)
    idx = np.array(sorted(dico[t] for t in counts), dtype=np.int64)
    if not idx.size:
        return idx, np.zeros(0)
    inv = {dico[t]: c for t, c in counts.items()}
    tf = np.array([inv[i] for i in idx], dtype=np.float64)
    val = (1.0 + np.log(tf)) * idf[idx]
    keep = val > 0
    return unit(idx[keep], val[keep])


def unit(idx: np.ndarray, val: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    norm = math.sqrt(float(val @ val))
    return (idx, val / norm) if norm > 0 else (idx[:0], val[:0])


def svmlight_line(label: int, idx: np.ndarray, val: np.ndarray) -> str:
    return f"{label:d} " + " ".join(f"{i}:{v:.9g}" for i, v in zip(idx.tolist(),
                                                                     val.tolist())) + "\n"


def write_split(out_path: Path, documents, positive: np.ndarray) -> dict:
    """Write ``(docid, indices, values)`` documents as svmlight lines (temporary name, then
    renamed); count positives, negatives, skipped empty vectors and unlabeled ids."""
    counts = dict(positive=0, negative=0, skipped_empty=0, without_topics=0, nnz=0,
                  max_index=0)
    tmp = out_path.with_name(out_path.name + ".tmp")
    with open(tmp, "w") as out:
        for doc, idx, val in documents:
            if not idx.size:
                counts["skipped_empty"] += 1
                continue
            label = label_of(doc, positive)
            counts["positive" if label > 0 else "negative"] += 1
            counts["nnz"] += int(idx.size)
            counts["max_index"] = max(counts["max_index"], int(idx.max()))
            out.write(svmlight_line(label, idx, val))
    os.replace(tmp, out_path)
    return counts


def prepare_tokens(files: dict, out: Path) -> dict:
    """The ``tokens`` route (``prep_rcv1``): dictionary, document frequencies on the new
    training set, then both splits written."""
    positive, known = read_ccat(files["qrels"])
    dico = build_dictionary(files["test"])
    df, n = document_frequencies(files["train"], dico)
    with np.errstate(divide="ignore"):
        idf = np.where(df > 0, np.log(n / np.maximum(df, 1)), 0.0)

    def docs(paths):
        for path in paths:
            for doc, tokens in token_documents(path):
                yield (doc, *tfidf_vector(tokens, dico, idf))

    return dict(n_features=len(dico),
                train=write_split(out / TRAIN_NAME, docs(files["train"]), positive),
                test=write_split(out / TEST_NAME, docs(files["test"]), positive))


def prepare_vectors(files: dict, out: Path) -> dict:
    """The ``vectors`` route: LYRL2004's TF-IDF vectors, rescaled to unit length."""
    positive, known = read_ccat(files["qrels"])

    def docs(paths):
        for path in paths:
            for doc, idx, val in vector_documents(path):
                order = np.argsort(idx, kind="stable")
                yield (doc, *unit(idx[order], val[order]))

    return dict(n_features=VECTOR_FEATURES,
                train=write_split(out / TRAIN_NAME, docs(files["train"]), positive),
                test=write_split(out / TEST_NAME, docs(files["test"]), positive))


def prepare(kind: str, source: Path | None, out: Path, bases=BASES) -> dict:
    """Fetch (or take from ``source``) and convert; returns the two svmlight paths and the
    counts. Skipped when both files exist already (delete them to redo)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    train, test = out / TRAIN_NAME, out / TEST_NAME
    files = fetch(kind, source, out, bases)
    t0 = time.perf_counter()
    stats = (prepare_tokens if kind == "tokens" else prepare_vectors)(files, out)
    stats.update(train_path=train, test_path=test, seconds=time.perf_counter() - t0)
    for split in ("train", "test"):
        s = stats[split]
        print(f"  {split}: {s['positive'] + s['negative']:,} documents ({s['positive']:,} "
              f"CCAT), {s['nnz']:,} non-zeros, {s['skipped_empty']} skipped (no feature)",
              flush=True)
    return stats


# ---- training out of core ------------------------------------------------------------------------

def first_rows(path: Path, n: int, n_features: int):
    """The first ``n`` rows of an svmlight file as SparseRows and labels (eta0 calibration)."""
    from nbsvm.io.sparse import read_svmlight
    from rcv1 import rows_from_records
    return rows_from_records(itertools.islice(read_svmlight(path, index_base=1), n), n_features)


def streamed_objective(model, path: Path, lam: float, loss: str, n_features: int,
                       batch: int = 8192) -> float:
    """Bottou's cost ``lam/2 ||w||^2 + mean loss`` over an svmlight file read in batches."""
    from nbsvm.io.sparse import read_svmlight
    from rcv1 import rows_from_records, signs
    total, n = 0.0, 0
    records = read_svmlight(path, index_base=1)
    while True:
        chunk = list(itertools.islice(records, batch))
        if not chunk:
            break
        X, y = rows_from_records(chunk, n_features)
        z = signs(y) * model.decision_function(X)
        total += float((np.maximum(0.0, 1.0 - z) if loss == "hinge"
                        else np.logaddexp(0.0, -z)).sum())
        n += len(chunk)
    w = model.coef_
    return 0.5 * lam * float(w @ w) + total / max(n, 1)


def full_learners(train: Path, n_features: int, seed: int) -> list[dict]:
    """The learners of the small-data table with Bottou's epoch counts, eta0 calibrated on
    1,000 training rows as his programs do."""
    from rcv1 import HINGE_LAM, LOG_LAM, calibrate_eta0
    from nbsvm.learners.linear import SGDClassifier
    from nbsvm.learners.pegasos import Pegasos
    X, y = first_rows(train, 1000, n_features)
    eta_h = calibrate_eta0(X, y, "hinge", HINGE_LAM, seed)
    eta_l = calibrate_eta0(X, y, "log", LOG_LAM, seed)
    sgd = dict(schedule="optimal", penalty="l2", fit_intercept=True, bias_rate=0.01, seed=seed)
    return [
        dict(name="SGD hinge", loss="hinge", lam=HINGE_LAM, epochs=5,
             learner=SGDClassifier(loss="hinge", lam=HINGE_LAM, eta0=eta_h, **sgd)),
        dict(name="averaged SGD hinge", loss="hinge", lam=HINGE_LAM, epochs=3,
             learner=SGDClassifier(loss="hinge", lam=HINGE_LAM, eta0=eta_h, average=True,
                                   **sgd)),
        dict(name="Pegasos (no bias)", loss="hinge", lam=HINGE_LAM, epochs=5,
             learner=Pegasos(lam=HINGE_LAM, seed=seed)),
        dict(name="SGD log", loss="log", lam=LOG_LAM, epochs=12,
             learner=SGDClassifier(loss="log", lam=LOG_LAM, eta0=eta_l, **sgd)),
        dict(name="averaged SGD log", loss="log", lam=LOG_LAM, epochs=8,
             learner=SGDClassifier(loss="log", lam=LOG_LAM, eta0=eta_l, average=True, **sgd)),
    ]


def train_full(spec: dict, train: Path, test: Path, n_features: int, seed: int) -> dict:
    """One learner through ``nbsvm.workflows.learn.learn_sparse`` (streamed into a binary cache,
    epochs replayed in a bounded buffer), then its objective and test error, streamed."""
    from nbsvm.evaluation.sparse import evaluate_sparse
    from nbsvm.workflows.learn import learn_sparse

    def progress(e):
        if e.get("stage") == "epoch":
            print(f"  {spec['name']:<20} epoch {e['epoch']:3d}/{e['epochs']}  loss "
                  f"{e.get('loss', float('nan')):.5f}  {e['seconds']:.2f} s", flush=True)

    m = learn_sparse(spec["learner"], train, fmt="svmlight", index_base=1,
                     n_features=n_features, epochs=spec["epochs"], seed=seed, callback=progress)
    seconds = sum(h["seconds"] for h in m.history_)
    objective = streamed_objective(m, train, spec["lam"], spec["loss"], n_features)
    accuracy = evaluate_sparse(m, test, fmt="svmlight")["accuracy"]
    print(f"  {spec['name']}: objective {objective:.6f}, test error "
          f"{100 * (1 - accuracy):.3f}%", flush=True)
    return dict(part="full RCV1 (out of core)", method=spec["name"], loss=spec["loss"],
                lam=spec["lam"], bias="none" if spec["name"].startswith("Pegasos")
                else "unregularized", setting="Bottou's epochs", epochs=spec["epochs"],
                train_seconds=seconds, objective=objective, gap_pct=None,
                test_error_pct=100 * (1 - accuracy), source="ours")


def run_full(out: Path, seed: int = 0, kind: str = "tokens", source: Path | None = None,
             bases=BASES) -> list[dict]:
    """Prepare the full data (once) and train every learner on it; tidy rows for the
    results table of ``pipelines/rcv1.py``."""
    source = source or os.environ.get("RCV1_SOURCE") or None
    out = Path(out) if Path(out).is_absolute() else ROOT / out
    print(f"== full RCV1-v2 CCAT ({kind} route) in {out}", flush=True)
    train, test = out / TRAIN_NAME, out / TEST_NAME
    if train.is_file() and test.is_file():
        n_features = max_index(train, test)
        print("  prepared files found, not converted again", flush=True)
    else:
        n_features = prepare(kind, source, out, bases)["n_features"]
    return [train_full(spec, train, test, n_features, seed)
            for spec in full_learners(train, n_features, seed)]


def max_index(*paths: Path) -> int:
    """The largest 1-based feature index in svmlight files (one streaming pass)."""
    from nbsvm.io.sparse import read_svmlight
    top = 0
    for path in paths:
        for r in read_svmlight(path, index_base=1):
            if len(r.keys):
                top = max(top, int(r.keys.max()) + 1)
    return top


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kind", choices=sorted(FOLDERS), default="tokens")
    ap.add_argument("--source", type=Path, default=None,
                    help="folder holding the official files (no download)")
    ap.add_argument("--out", type=Path, default=Path("data") / "rcv1_full")
    ap.add_argument("--prepare-only", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    from _report import start
    start("rcv1_full", vars(args))
    if args.prepare_only:
        prepare(args.kind, args.source, args.out)
        return 0
    for row in run_full(args.out, args.seed, args.kind, args.source):
        print(row, flush=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except NBSVMError as e:
        print(f"error: {e}", file=sys.stderr)
        sys.exit(2)
