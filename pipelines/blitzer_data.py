"""Blitzer et al.'s multi-domain sentiment archives: where they are, their members read
into hashed examples per domain, and the deterministic splits and folds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from _fetch import download, sha256_of
from _report import ROOT

from nbsvm.data.rowencoder import RowEncoder
from nbsvm.data.rows import SparseRows
from nbsvm.errors import NBSVMError
from nbsvm.io import Document, read_blitzer, read_reviews, review_members
from nbsvm.text.hashing import Hasher

DOMAINS = ("books", "dvd", "electronics", "kitchen")
LABELS = ("negative", "positive")  # sorted: the second is the positive class
ALL = "all"
ROUTES = ("raw", "processed")


@dataclass(frozen=True)
class Archive:
    """Where a route's reviews come from: the packaged file (with its checksum), its top
    folder, each domain's folder name in it, and the official download."""

    file: str
    sha256: str
    top: str
    url: str
    folders: dict


OFFICIAL = "https://www.cs.jhu.edu/~mdredze/datasets/sentiment/"
ARCHIVES = {
    "raw": Archive(
        "sorted_data_acl_labeled.tar.gz",
        "bfceeb03dc930400d32a4a730d5245869812130b730334880e207aea5399f085",
        "sorted_data_acl",
        OFFICIAL + "domain_sentiment_data.tar.gz",
        {
            "books": "books",
            "dvd": "dvd",
            "electronics": "electronics",
            "kitchen": "kitchen_&_housewares",
        },
    ),
    "processed": Archive(
        "processed_acl_labeled.tar.gz",
        "e166c70e84bda1f856fd5be81e5ab43637b4864e865916bf62c3daa1b439c2b9",
        "processed_acl",
        OFFICIAL + "processed_acl.tar.gz",
        {d: d for d in DOMAINS},
    ),
}


@dataclass
class Examples:
    """Labeled examples of one route in file order: hashed rows (binary n-gram buckets on
    the raw route, feature counts on the processed one) and, on the raw route, the texts."""

    labels: np.ndarray
    rows: SparseRows
    texts: list | None = None

    def __len__(self) -> int:
        return len(self.labels)

    def take(self, index) -> Examples:
        index = np.asarray(index, dtype=np.int64)
        texts = None if self.texts is None else [self.texts[i] for i in index]
        return Examples(self.labels[index], self.rows.take(index), texts)


def concat(parts: list[Examples]) -> Examples:
    """The examples of ``parts`` one after the other (the "all domains" training set)."""
    lengths = [p.rows.offsets[-1] for p in parts]
    shifts = np.cumsum([0] + lengths[:-1])
    offsets = np.concatenate([[0]] + [p.rows.offsets[1:] + s for p, s in zip(parts, shifts)])
    rows = SparseRows(
        np.concatenate([p.rows.indices for p in parts]),
        np.concatenate([p.rows.values for p in parts]),
        offsets.astype(np.int64),
        parts[0].rows.n_features,
    )
    texts = None if parts[0].texts is None else [t for p in parts for t in p.texts]
    return Examples(np.concatenate([p.labels for p in parts]), rows, texts)


def member_key(name: str, archive: Archive) -> tuple[str, str] | None:
    """``(domain, label)`` of a member ``.../<top>/<domain folder>/<label>.review``, else
    None (e.g. ``unlabeled.review`` of the official archives)."""
    parts = name.split("/")
    if len(parts) < 3 or parts[-3] != archive.top or not parts[-1].endswith(".review"):
        return None
    label = parts[-1][: -len(".review")]
    domain = next((d for d, folder in archive.folders.items() if folder == parts[-2]), None)
    return (domain, label) if domain and label in LABELS else None


def read_archive(path: Path, route: str) -> dict:
    """``{(domain, label): [records in file order]}`` of one archive, members streamed:
    :class:`~nbsvm.io.Document` on the raw route, :class:`~nbsvm.io.SparseRow` on the
    processed one."""
    archive = ARCHIVES[route]
    found = {}
    for name, fh in review_members(path):
        key = member_key(name, archive)
        if key is not None:
            reader = read_reviews(fh, label=key[1]) if route == "raw" else read_blitzer(fh)
            found[key] = list(reader)
    missing = [
        f"{archive.top}/{archive.folders[d]}/{label}.review"
        for d in DOMAINS
        for label in LABELS
        if (d, label) not in found
    ]
    if missing:
        raise NBSVMError(f"the archive has no member {', '.join(missing)}", path=str(path))
    return found


def check_counts(found: dict, need: int, path: Path) -> None:
    """Every domain needs more than ``need`` reviews of each label (some left to test)."""
    for (domain, label), records in found.items():
        if len(records) <= need:
            raise NBSVMError(
                f"{domain}/{label}.review has {len(records)} reviews; the split "
                f"needs more than {need} (--train-per-class)",
                path=str(path),
            )
        wrong = next((r for r in records if _label_of(r) != label), None)
        if wrong is not None:
            raise NBSVMError(
                f"review labeled {_label_of(wrong)!r} in {label}.review",
                path=wrong.source,
                line=wrong.line,
            )


def _label_of(record) -> str:
    return record.label if isinstance(record, Document) else record.labels[0]


def binary_rows(ids: np.ndarray, offsets: np.ndarray, n_bits: int) -> SparseRows:
    """CSR rows with value 1 at each distinct bucket (the hasher's output)."""
    return SparseRows(
        ids.astype(np.int64), np.ones(len(ids)), offsets.astype(np.int64), 1 << n_bits
    )


def raw_examples(docs: list[Document], hasher: Hasher) -> Examples:
    """Texts plus their binary hashed unigram+bigram rows."""
    texts = [d.text for d in docs]
    return Examples(
        np.array([d.label for d in docs]), binary_rows(*hasher.batch(texts), hasher.n_bits), texts
    )


def processed_examples(records: list, encoder: RowEncoder) -> Examples:
    """Hashed ``processed_acl`` counts (colliding feature names add up)."""
    indices, values, offsets = encoder.encode(records)
    return Examples(
        np.array([r.labels[0] for r in records]),
        SparseRows(indices, values, offsets, encoder.n_features),
    )


def load_route(path: Path, route: str, n_bits: int, ngrams: int, need: int) -> dict:
    """``{domain: Examples}``, positive reviews then negative ones, each in file order."""
    found = read_archive(path, route)
    check_counts(found, need, path)
    hasher, encoder = Hasher(ngrams=ngrams, n_bits=n_bits), RowEncoder("blitzer", n_bits)
    out = {}
    for domain in DOMAINS:
        records = found[(domain, "positive")] + found[(domain, "negative")]
        out[domain] = (
            raw_examples(records, hasher)
            if route == "raw"
            else processed_examples(records, encoder)
        )
    return out


def locate_archive(route: str, given: Path | None, shared: Path) -> Path:
    """The archive of a route: ``given``, else the shared packaged file (sha256 checked),
    else the official download in ``data/``."""
    if given is not None:
        if not given.is_file():
            raise NBSVMError("no such archive", path=str(given))
        return given
    spec = ARCHIVES[route]
    packaged = shared / "blitzer_mds" / spec.file
    if packaged.is_file():
        if sha256_of(packaged) != spec.sha256:
            raise NBSVMError(f"sha256 mismatch (expected {spec.sha256})", path=str(packaged))
        return packaged
    local = ROOT / "data" / spec.url.rsplit("/", 1)[1]
    if not local.is_file():
        print(f"{packaged} is missing: using the official archive", flush=True)
        download(spec.url, local, f"--{route}-archive")
    return local


def first_per_class(labels: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(train, test)`` positions: the first ``n`` examples of every class in file order
    train, the rest test (both sorted).

    Examples
    --------
    >>> first_per_class(np.array(["p", "p", "p", "n", "n", "n"]), 2)
    (array([0, 1, 3, 4]), array([2, 5]))
    """
    train = np.concatenate([np.flatnonzero(labels == c)[:n] for c in np.unique(labels)])
    train = np.sort(train)
    return train, np.setdiff1d(np.arange(len(labels)), train)


def stratified_folds(labels: np.ndarray, k: int, seed: int) -> np.ndarray:
    """Fold (0..k-1) of every example: each class in a seeded random order, dealt to the
    folds in turn, so every fold gets ``n_c / k`` (+-1) of every class ``c``.

    Examples
    --------
    >>> stratified_folds(np.array(["a"] * 4 + ["b"] * 4), 2, seed=0).tolist()
    [1, 0, 0, 1, 1, 0, 1, 0]
    """
    if not 2 <= k <= min(np.unique(labels, return_counts=True)[1]):
        raise NBSVMError(f"{k} folds need 2 <= k <= the smallest class size")
    rng = np.random.default_rng(seed)
    folds = np.empty(len(labels), dtype=np.int64)
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        folds[members] = np.arange(len(members)) % k
    return folds


def validation_split(labels: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """``(fit, validation)`` positions inside a training part: one stratified quarter
    validates (400 of 1,600)."""
    folds = stratified_folds(labels, 4, seed)
    return np.flatnonzero(folds != 0), np.flatnonzero(folds == 0)
