"""The official RCV1-v2 files (JMLR LYRL2004 appendices) a route needs: from a local
folder or downloaded, each checked against the sha256 scikit-learn records."""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

from _fetch import sha256_of as sha256

from nbsvm.errors import NBSVMError

BASES = (
    "https://jmlr.org/papers/volume5/lewis04a/",
    "http://www.ai.mit.edu/projects/jmlr/papers/volume5/lewis04a/",
)
QRELS = "a08-topic-qrels/rcv1-v2.topics.qrels.gz"
PARTS = [f"test_pt{k}" for k in range(4)]
FOLDERS = {"tokens": "a12-token-files", "vectors": "a13-vector-files"}
# sha256 of the gzipped files as scikit-learn's fetch_rcv1 records them (its mirror)
SHA256 = {
    "lyrl2004_vectors_test_pt0.dat.gz": "ed40f7e418d10484091b059703eeb95ae3199fe042891dcec4be6696b9968374",
    "lyrl2004_vectors_test_pt1.dat.gz": "87700668ae45d45d5ca1ef6ae9bd81ab0f5ec88cc95dcef9ae7838f727a13aa6",
    "lyrl2004_vectors_test_pt2.dat.gz": "48143ac703cbe33299f7ae9f4995db49a258690f60e5debbff8995c34841c7f5",
    "lyrl2004_vectors_test_pt3.dat.gz": "dfcb0d658311481523c6e6ca0c3f5a3e1d3d12cde5d7a8ce629a9006ec7dbb39",
    "lyrl2004_vectors_train.dat.gz": "5468f656d0ba7a83afc7ad44841cf9a53048a5c083eedc005dcdb5cc768924ae",
    "rcv1-v2.topics.qrels.gz": "2a98e5e5d8b770bded93afc8930d88299474317fe14181aee1466cc754d0d1c1",
}


def official_files(kind: str) -> dict:
    """Relative URLs of the files a route needs: ``qrels``, ``train`` (Bottou's training
    set: the four official test parts) and ``test`` (the official training file)."""
    if kind not in FOLDERS:
        raise NBSVMError(f"unknown kind {kind!r}; allowed: {', '.join(FOLDERS)}")
    folder = FOLDERS[kind]
    return dict(
        qrels=QRELS,
        train=[f"{folder}/lyrl2004_{kind}_{p}.dat.gz" for p in PARTS],
        test=[f"{folder}/lyrl2004_{kind}_train.dat.gz"],
    )


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
            print(
                f"  warning: {target.name} differs from the sha256 scikit-learn records "
                "for its copy",
                flush=True,
            )
        return target
    raise NBSVMError(
        "cannot download "
        + Path(relative).name
        + " ("
        + "; ".join(reasons)
        + "). Without internet, put the official RCV1-v2 files in a folder and "
        "pass it with --source (RCV1_SOURCE=DIR for make rcv1)"
    )


def fetch(kind: str, source: Path | None, dest: Path, bases=BASES) -> dict:
    """Local paths of the files a route needs: from ``source`` (a folder holding them, no
    network) or downloaded into ``dest``."""
    files = official_files(kind)
    names = [files["qrels"], *files["train"], *files["test"]]
    if source is not None:
        source = Path(source)
        missing = [Path(n).name for n in names if not (source / Path(n).name).is_file()]
        if missing:
            raise NBSVMError(
                f"missing in the source folder: {', '.join(missing)}", path=str(source)
            )
        where = {n: source / Path(n).name for n in names}
    else:
        where = {n: download(n, dest, bases) for n in names}
    return dict(
        qrels=where[files["qrels"]],
        train=[where[n] for n in files["train"]],
        test=[where[n] for n in files["test"]],
    )
