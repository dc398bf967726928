"""Shared test settings: where the real corpora live."""
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def shared_datasets() -> Path:
    """``$NBSVM_SHARED_DATASETS``, else ``../shared/datasets`` beside the checkout, else
    ``/work/shared/datasets`` (CI clones the repository elsewhere)."""
    candidates = [os.environ.get("NBSVM_SHARED_DATASETS"), REPO.parent / "shared" / "datasets",
                  "/work/shared/datasets"]
    for c in candidates:
        if c and Path(c).is_dir():
            return Path(c).resolve()
    return (REPO.parent / "shared" / "datasets").resolve()
