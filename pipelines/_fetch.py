"""Fetching and checking downloaded files, shared by the pipelines that download their data."""

from __future__ import annotations

import hashlib
import os
import urllib.request
from pathlib import Path

from nbsvm.errors import NBSVMError


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(url: str, dest: Path, option: str) -> None:
    """Fetch ``url`` into ``dest`` (written under a temporary name, then renamed); on
    failure, say which ``option`` takes a copy obtained otherwise."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    print(f"downloading {url} -> {dest}", flush=True)
    try:
        urllib.request.urlretrieve(url, tmp)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise NBSVMError(
            f"download of {url} failed ({e}); put the archive there by hand or pass {option}",
            path=str(dest),
        ) from None
    os.replace(tmp, dest)
