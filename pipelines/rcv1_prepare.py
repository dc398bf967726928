"""Bottou's prep_rcv1 for the full RCV1-v2 CCAT task: the original token or vector files
read, streamed and written as svmlight training and test files (see rcv1_full.py)."""

from __future__ import annotations

import gzip
import math
import os
import time
from collections import Counter
from pathlib import Path

import numpy as np
from rcv1_fetch import BASES, fetch

from nbsvm.errors import NBSVMError

VECTOR_FEATURES = 47236
TRAIN_NAME, TEST_NAME = "rcv1.train.svm", "rcv1.test.svm"


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
            if doc >= len(known):  # grow, new entries False
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
                    raise NBSVMError("text before the first '.I <docid>'", path=name, line=lineno)
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
                raise NBSVMError("expected '<docid> idx:val ...'", path=name, line=lineno) from None
            yield doc, idx, val


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
    return (
        f"{label:d} " + " ".join(f"{i}:{v:.9g}" for i, v in zip(idx.tolist(), val.tolist())) + "\n"
    )


def write_split(out_path: Path, documents, positive: np.ndarray) -> dict:
    """Write ``(docid, indices, values)`` documents as svmlight lines (temporary name, then
    renamed); count positives, negatives, skipped empty vectors and unlabeled ids."""
    counts = dict(positive=0, negative=0, skipped_empty=0, without_topics=0, nnz=0, max_index=0)
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

    return dict(
        n_features=len(dico),
        train=write_split(out / TRAIN_NAME, docs(files["train"]), positive),
        test=write_split(out / TEST_NAME, docs(files["test"]), positive),
    )


def prepare_vectors(files: dict, out: Path) -> dict:
    """The ``vectors`` route: LYRL2004's TF-IDF vectors, rescaled to unit length."""
    positive, known = read_ccat(files["qrels"])

    def docs(paths):
        for path in paths:
            for doc, idx, val in vector_documents(path):
                order = np.argsort(idx, kind="stable")
                yield (doc, *unit(idx[order], val[order]))

    return dict(
        n_features=VECTOR_FEATURES,
        train=write_split(out / TRAIN_NAME, docs(files["train"]), positive),
        test=write_split(out / TEST_NAME, docs(files["test"]), positive),
    )


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
        print(
            f"  {split}: {s['positive'] + s['negative']:,} documents ({s['positive']:,} "
            f"CCAT), {s['nnz']:,} non-zeros, {s['skipped_empty']} skipped (no feature)",
            flush=True,
        )
    return stats


def max_index(*paths: Path) -> int:
    """The largest 1-based feature index in svmlight files (one streaming pass)."""
    from nbsvm.io.sparse import read_svmlight

    top = 0
    for path in paths:
        for r in read_svmlight(path, index_base=1):
            if len(r.keys):
                top = max(top, int(r.keys.max()) + 1)
    return top
