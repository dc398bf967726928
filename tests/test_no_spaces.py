"""Text written without spaces, as a user meets it: IMDB reviews with every white-space
character removed, through the real CLI. The default --long-words gives each long token its
character 4-grams; without it every review is a handful of tokens seen once."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from typer.testing import CliRunner

from nbsvm.cli import app

runner = CliRunner()
WHITE = re.compile(r"\s+")


def _joined(folder: Path, out: Path) -> Path:
    """``label<TAB>review`` lines of an aclImdb part with the spaces removed."""
    lines = []
    for label in ("neg", "pos"):
        for f in sorted((folder / label).iterdir()):
            text = f.read_text(encoding="utf-8").replace("<br />", " ")
            lines.append(f"{label}\t{WHITE.sub('', text)}")
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _accuracy(train: Path, test: Path, out: Path, *options: str) -> float:
    r = runner.invoke(app, ["train", str(train), "--test", str(test), "-o", str(out),
                            "--n-bits", "20", "--json", *options])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)["accuracy"]


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_reviews_without_spaces_are_learned_from_their_character_ngrams(imdb_slice, tmp_path):
    train = _joined(imdb_slice / "train", tmp_path / "train.tsv")
    test = _joined(imdb_slice / "test", tmp_path / "test.tsv")
    default = _accuracy(train, test, tmp_path / "d.npz")
    words_only = _accuracy(train, test, tmp_path / "w.npz", "--long-words", "0",
                           "--char-ngrams", "0")
    # 2,000 training reviews: 0.87 with the 4-grams of the long tokens, 0.63 with the
    # pieces between punctuation marks as words
    assert default > 0.75 and words_only < 0.68, (default, words_only)
