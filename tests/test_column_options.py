"""--text-col and --label-col on input without columns: refused, not ignored. Ignored, they
trained on other text than the user chose (``--text-col 3`` on ``label<TAB>id<TAB>text``
lines made the id a word of every document)."""
import subprocess
import sys
from pathlib import Path

import pytest

from nbsvm.errors import NBSVMError
from nbsvm.io import read_inputs
from nbsvm.io.labeled_lines import read_lines

NBSVM = Path(sys.executable).parent / "nbsvm"
LINES = "pos\t17\tgreat fun movie\nneg\t18\tawful boring\npos\t19\tloved it\nneg\t20\thated it\n"


def _read(path, **kw):
    return [(d.label, d.text) for d in read_inputs([str(path)], **kw)]


def test_columns_of_labeled_lines_without_a_header_are_refused(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text(LINES)
    assert _read(path)[0] == ("pos", "17\tgreat fun movie")  # the default reading is kept
    with pytest.raises(NBSVMError, match=r"d\.txt:1: --text-col 3 chooses columns .* --format tsv"):
        _read(path, text_col="3")
    with pytest.raises(NBSVMError, match="--label-col 1 --text-col 3 choose columns"):
        _read(path, text_col="3", label_col="1")
    # read as the table it is, the same options choose the text without the id
    assert _read(path, fmt="tsv", text_col="3", label_col="1")[0] == ("pos", "great fun movie")


def test_a_header_naming_the_columns_given_is_read_and_skipped(tmp_path):
    path = tmp_path / "h.txt"
    path.write_text("lab\tbody\npos\tgreat\nneg\tawful\n")
    assert _read(path, text_col="body", label_col="lab") == [("pos", "great"), ("neg", "awful")]
    named_other = tmp_path / "h2.txt"
    named_other.write_text("label\ttext\npos\tgreat\nneg\tawful\n")
    with pytest.raises(NBSVMError, match="header names the columns 'label' and 'text'"):
        _read(named_other, text_col="body")
    assert _read(named_other) == [("pos", "great"), ("neg", "awful")]


@pytest.mark.parametrize("fmt, text", [("plain-lines", "just text\n"),
                                       ("fasttext", "__label__pos great\n")])
def test_formats_without_columns_refuse_them(tmp_path, fmt, text):
    path = tmp_path / "f.txt"
    path.write_text(text)
    with pytest.raises(NBSVMError, match=f"read as {fmt} input, which has no columns"):
        _read(path, fmt=fmt, text_col="review")
    assert len(_read(path, fmt=fmt)) == 1


def test_unlabeled_lines_refuse_a_text_column(tmp_path):
    path = tmp_path / "u.txt"
    path.write_text("great fun\nawful\n")
    with pytest.raises(NBSVMError, match="read as labeled lines"):  # predict's reading
        list(read_inputs([str(path)], labeled=False, known_labels=["pos"], text_col="2"))
    with pytest.raises(NBSVMError, match="read as plain lines"):
        list(read_lines(str(path), labeled=False, text_col="2"))


def test_the_cli_says_how_to_read_the_file_as_a_table(tmp_path):
    path = tmp_path / "d.txt"
    path.write_text(LINES)
    model = tmp_path / "m.npz"
    out = subprocess.run([str(NBSVM), "train", str(path), "--text-col", "3", "-o", str(model)],
                         capture_output=True, text=True)
    assert out.returncode != 0 and "--format tsv" in out.stderr, out.stderr
    assert not model.exists()
