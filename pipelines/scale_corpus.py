"""The scale benchmark's corpus (make_corpus.py) and the same documents written in each
peer's input format."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import make_corpus
from _harness import PY
from _peers import fasttext_line, vw_line


def label_of(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"


def corpus(work: Path, sizes: list[int], test_docs: int, seed: int) -> dict:
    """``{size: train file}`` and the test file, generating the largest once (kept for
    later runs when its stats.json says the same size and seed)."""
    top = max(sizes)
    gen_dir = work / f"gen_{label_of(top)}_seed{seed}"
    stats_path = gen_dir / "stats.json"
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
    if stats.get("train_docs") != top or stats.get("test_docs") != test_docs:
        # its own process: a child forked from a large parent counts the parent's pages in
        # its peak RSS (ru_maxrss survives exec), and the fitted model is about 600 MB
        subprocess.run(
            [
                PY,
                str(Path(make_corpus.__file__)),
                "--docs",
                str(top),
                "--test-docs",
                str(test_docs),
                "--seed",
                str(seed),
                "--out",
                str(gen_dir),
            ],
            check=True,
        )
        stats = json.loads(stats_path.read_text())
    files = {}
    for n in sizes:
        path = gen_dir / f"train_{label_of(n)}.txt"
        if n == top:
            path = gen_dir / "train.txt"
        elif not path.exists():
            with (
                open(gen_dir / "train.txt", "rb") as src,
                open(path.with_suffix(".part"), "wb") as dst,
            ):
                for i, line in enumerate(src):
                    if i >= n:
                        break
                    dst.write(line)
            os.replace(path.with_suffix(".part"), path)
        files[n] = path
    return dict(train=files, test=gen_dir / "test.txt", stats=stats)


def peer_files(path: Path, write: bool = True) -> dict:
    """The VW and fastText copies of a ``label<TAB>tokens`` file (written once, when
    ``write``)."""
    vw, ft = path.with_suffix(".vw"), path.with_suffix(".ft")
    if write and not (vw.exists() and ft.exists()):
        with (
            open(path, encoding="utf-8") as src,
            open(vw.with_suffix(".vw.part"), "w") as f_vw,
            open(ft.with_suffix(".ft.part"), "w") as f_ft,
        ):
            for line in src:
                label, _, text = line.rstrip("\n").partition("\t")
                f_vw.write(vw_line(label, text))
                f_ft.write(fasttext_line(label, text))
        os.replace(vw.with_suffix(".vw.part"), vw)
        os.replace(ft.with_suffix(".ft.part"), ft)
    return dict(vw=vw, ft=ft)
