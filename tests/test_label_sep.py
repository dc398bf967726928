"""``label text`` lines (SST, TREC) with ``--label-sep ' '`` (issue 18, item 8): the label
ends at the first separator, the text keeps the rest, and train, eval and predict read them
as they read ``label<TAB>text``."""
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier
from nbsvm.errors import NBSVMError
from nbsvm.io import read_inputs

NBSVM = Path(sys.executable).parent / "nbsvm"


def test_trec_lines_split_at_the_first_space():
    src = io.StringIO("DESC:manner How did serfdom develop in and then leave Russia ?\n"
                      "ENTY:cremat What films featured the character Popeye Doyle ?\n")
    docs = list(read_inputs([src], label_sep=" "))
    assert [(d.label, d.text) for d in docs] == [
        ("DESC:manner", "How did serfdom develop in and then leave Russia ?"),
        ("ENTY:cremat", "What films featured the character Popeye Doyle ?")]
    with pytest.raises(NBSVMError, match="expected 'label<space>text', found no space"):
        list(read_inputs([io.StringIO("a fine\nlonely\n")], label_sep=" "))
    with pytest.raises(NBSVMError, match="at least one character"):
        list(read_inputs([io.StringIO("a fine\n")], label_sep=""))


@pytest.mark.parametrize("sep", [" ", "|"])
def test_a_header_row_of_other_separators_is_skipped_as_a_tab_ones(sep):
    # it trained as a document of class 'label' (a third class, and the multi-class defaults)
    from nbsvm.io.decoding import ReadStats
    stats = ReadStats()
    text = f"Label{sep}Text\npos{sep}great film\nneg{sep}label text\n"
    docs = list(read_inputs([io.StringIO(text)], label_sep=sep, stats=stats))
    assert [(d.label, d.line) for d in docs] == [("pos", 2), ("neg", 3)]
    assert any("skipped a header line" in n for n in stats.notes)
    # a document's first line is never taken for one, nor is a header of other columns
    for first in (f"label{sep}great film", f"label{sep}text{sep}more"):
        docs = list(read_inputs([io.StringIO(f"{first}\npos{sep}fine\n")], label_sep=sep))
        assert [d.label for d in docs] == ["label", "pos"]
    with pytest.raises(NBSVMError, match="--text-col body"):
        list(read_inputs([io.StringIO(text)], label_sep=sep, text_col="body"))


@pytest.mark.slow  # make test-slow: the reader is checked above; another real-data run covers train
def test_cli_reads_space_separated_lines_like_tab_separated(imdb_slice, tmp_path):
    docs = list(read_inputs([str(imdb_slice / "train")]))
    tab, space = tmp_path / "train.tsv", tmp_path / "train.txt"
    tab.write_text("".join(f"{d.label}\t{' '.join(d.text.split())}\n" for d in docs),
                   encoding="utf-8")
    space.write_text("".join(f"{d.label} {' '.join(d.text.split())}\n" for d in docs),
                     encoding="utf-8")
    for name, path, extra in (("tab", tab, []), ("space", space, ["--label-sep", " "])):
        r = subprocess.run([str(NBSVM), "train", str(path), "--n-bits", "18", "-o",
                            str(tmp_path / f"{name}.npz"), "-q", *extra],
                           capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
    a, b = (NBSVMClassifier.load(tmp_path / f"{k}.npz") for k in ("tab", "space"))
    test = [d.text for d in read_inputs([str(imdb_slice / "test")])][:300]
    np.testing.assert_array_equal(a.decision_function(test), b.decision_function(test))
    r = subprocess.run([str(NBSVM), "eval", str(space), "-m", str(tmp_path / "space.npz"),
                        "--label-sep", " ", "--json", "-q"], capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0 and '"accuracy"' in r.stdout, r.stderr
    r = subprocess.run([str(NBSVM), "predict", str(space), "-m", str(tmp_path / "space.npz"),
                        "--label-sep", " ", "--format", "labeled-lines", "-q"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[0].startswith("source,line,true_label,label")
