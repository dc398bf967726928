"""The small RCV1 CCAT files (Bottou's train2000, VW's rcv1_small) read into rows and
labels, and how their sources overlap."""

from __future__ import annotations

import io
import tarfile
import zlib
from pathlib import Path

import numpy as np

from nbsvm.data.rows import SparseRows
from nbsvm.errors import NBSVMError
from nbsvm.io.sparse import read_svmlight

N_FEATURES = 47236  # the LYRL2004 stem dictionary; the files are 1-based


TRAIN_FILE, VW_TAR = "train2000.dat.gz", "vw_rcv1_small.tar.gz"
VW_TRAIN, VW_TEST = "rcv1_small.dat", "rcv1_small_test.data"


def rows_from_records(records, n_features: int = N_FEATURES) -> tuple[SparseRows, np.ndarray]:
    """Stack svmlight records (:class:`nbsvm.io.sparse.SparseRow`) into CSR rows and a label
    array (strings, ``"1"`` / ``"-1"``)."""
    records = list(records)
    if not records:
        raise NBSVMError("no examples read")
    offsets = np.zeros(len(records) + 1, dtype=np.int64)
    np.cumsum([len(r.keys) for r in records], out=offsets[1:])
    indices = np.concatenate([r.keys for r in records]).astype(np.int64)
    if indices.size and indices.max() >= n_features:
        bad = next(r for r in records if len(r.keys) and r.keys.max() >= n_features)
        raise NBSVMError(
            f"feature index {int(bad.keys.max()) + 1} beyond the {n_features} RCV1 features",
            path=bad.source,
            line=bad.line,
        )
    values = np.concatenate([r.values for r in records])
    labels = np.array([r.labels[0] for r in records])
    unknown = sorted(set(labels.tolist()) - {"1", "-1"})
    if unknown:
        raise NBSVMError(
            f"RCV1 CCAT labels are 1 / -1, found {', '.join(unknown[:3])}", path=records[0].source
        )
    return SparseRows(indices, values, offsets, n_features), labels


def read_svmlight_file(path: Path) -> tuple[SparseRows, np.ndarray]:
    """An svmlight file (plain or ``.gz``, 1-based indices) as rows and labels."""
    if not Path(path).is_file():
        raise NBSVMError("file not found", path=str(path))
    return rows_from_records(read_svmlight(path, index_base=1))


class NamedText(io.StringIO):
    """An in-memory text file with a ``name`` (the readers put it in error messages)."""

    name = "<stream>"


def read_tar_member(tar_path: Path, member_name: str) -> tuple[SparseRows, np.ndarray]:
    """A VW-format member (``label |f idx:val ...``) of a tar archive as rows and labels
    (``read_svmlight`` skips the ``|f`` namespace marker)."""
    if not Path(tar_path).is_file():
        raise NBSVMError("file not found", path=str(tar_path))
    try:
        with tarfile.open(tar_path) as tar:
            member = next((m for m in tar.getmembers() if m.name.endswith(member_name)), None)
            if member is None:
                raise NBSVMError(f"no member {member_name!r} in the archive", path=str(tar_path))
            raw = tar.extractfile(member).read()
    except (tarfile.TarError, EOFError, OSError, zlib.error) as e:
        raise NBSVMError(
            f"cannot read the archive ({type(e).__name__}: {e})", path=str(tar_path)
        ) from None
    text = NamedText(raw.decode("utf-8", errors="replace"))
    text.name = f"{tar_path}:{member.name}"  # error messages name the member
    return rows_from_records(read_svmlight(text, index_base=1))


def concat_rows(parts: list[SparseRows]) -> SparseRows:
    """The rows of ``parts`` one after the other."""
    offsets = [np.zeros(1, dtype=np.int64)]
    for p in parts:
        offsets.append(p.offsets[1:] + offsets[-1][-1])
    return SparseRows(
        np.concatenate([p.indices for p in parts]),
        np.concatenate([p.values for p in parts]),
        np.concatenate(offsets),
        parts[0].n_features,
    )


def row_keys(X: SparseRows) -> list[bytes]:
    """A hashable key per row (its indices and values), to find identical vectors."""
    return [
        X.indices[a:b].tobytes() + X.values[a:b].tobytes()
        for a, b in zip(X.offsets[:-1], X.offsets[1:])
    ]


def overlap_counts(parts: dict[str, SparseRows], test: SparseRows) -> dict:
    """How the sources overlap: duplicate vectors inside the training set and test vectors
    that also occur in training (the dataset README: the sources are one pool)."""
    train_keys = [k for X in parts.values() for k in row_keys(X)]
    test_keys = row_keys(test)
    seen = set(train_keys)
    return dict(
        train_rows=len(train_keys),
        train_distinct=len(seen),
        test_rows=len(test_keys),
        test_in_train=sum(k in seen for k in test_keys),
    )


def load_small(root: Path) -> dict:
    """Training set train2000 + rcv1_small.dat (3,000 rows, not deduplicated) and the 500
    test rows, with their overlap counts."""
    X1, y1 = read_svmlight_file(root / TRAIN_FILE)
    X2, y2 = read_tar_member(root / VW_TAR, VW_TRAIN)
    Xt, yt = read_tar_member(root / VW_TAR, VW_TEST)
    return dict(
        X=concat_rows([X1, X2]),
        y=np.concatenate([y1, y2]),
        Xt=Xt,
        yt=yt,
        X2000=X1,
        y2000=y1,
        overlap=overlap_counts({"train2000": X1, "rcv1_small": X2}, Xt),
    )
