"""Outputs a careless user names (a helper's hunt): never an input replaced, never a
traceback, never a report lost to a plot. Each runs the real CLI."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REVIEWS = ROOT / "data" / "reviews.txt"


def nbsvm(*args, cwd, stdin=None, stdout=subprocess.PIPE):
    return subprocess.run([sys.executable, "-m", "nbsvm", *map(str, args)], cwd=cwd,
                          stdin=stdin, stdout=stdout, stderr=subprocess.PIPE, timeout=120)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("m")
    done = nbsvm("train", REVIEWS, "-o", folder / "m.npz", "--n-bits", "14", "-q", cwd=folder)
    assert done.returncode == 0, done.stderr
    return folder / "m.npz"


def test_an_output_through_a_linked_class_folder_is_refused(tmp_path, model):
    """corp/pos links to a class folder kept elsewhere: the folder reader reads its files,
    so -o corp/pos/0.txt replaced a training document (and a model written there was read
    as one by the next run)."""
    (tmp_path / "corp" / "neg").mkdir(parents=True)
    (tmp_path / "store" / "pos").mkdir(parents=True)
    (tmp_path / "store" / "pos" / "0.txt").write_text("a lovely film")
    (tmp_path / "corp" / "neg" / "0.txt").write_text("a dull film")
    (tmp_path / "corp" / "pos").symlink_to(tmp_path / "store" / "pos")
    (tmp_path / "store" / "doc.txt").write_text("a fine film")
    (tmp_path / "corp" / "neg" / "zz.txt").symlink_to(tmp_path / "store" / "doc.txt")
    for command in (["predict", "corp", "-m", model, "-o", "corp/pos/0.txt"],
                    ["predict", "corp", "-m", model, "-o", "store/pos/0.txt"],  # the target
                    ["predict", "corp", "-m", model, "-o", "store/doc.txt"],  # a linked file
                    ["train", "corp", "-o", "corp/pos/new.npz"]):
        done = nbsvm(*command, "-q", cwd=tmp_path)
        assert done.returncode == 2 and b"is an input ('corp')" in done.stderr, done.stderr
    assert (tmp_path / "store" / "pos" / "0.txt").read_text() == "a lovely film"
    assert (tmp_path / "store" / "doc.txt").read_text() == "a fine film"
    assert not (tmp_path / "store" / "pos" / "new.npz").exists()
    # a file beside the linked ones, which nothing reads, is written; so are files under
    # links the folder reader never follows (hidden, unsup), and a '..' out of a link
    (tmp_path / "results").mkdir()
    (tmp_path / "corp" / ".results").symlink_to(tmp_path / "results")
    (tmp_path / "corp" / "unsup").symlink_to(tmp_path / "results")
    for out in ("store/out.csv", "results/preds.csv", "corp/.results/../q.csv"):
        done = nbsvm("predict", "corp", "-m", model, "-o", out, "-q", cwd=tmp_path)
        assert done.returncode == 0 and (tmp_path / out).exists(), (out, done.stderr)


def test_explain_of_standard_input_never_writes_what_it_reads(tmp_path, model):
    texts = tmp_path / "texts.html"
    texts.write_text("great film\nawful movie\n")
    with open(texts, "rb") as fh:  # --html names the file standard input comes from
        done = nbsvm("explain", "-m", model, "--text", "-", "--html", texts, cwd=tmp_path,
                     stdin=fh)
    assert done.returncode == 2 and b"standard input redirected from it" in done.stderr
    assert texts.read_text() == "great film\nawful movie\n"
    appended = tmp_path / "t.txt"
    appended.write_text("great film\n")
    with open(appended, "rb") as fh, open(appended, "ab") as out:  # `< t.txt >> t.txt`
        done = nbsvm("explain", "-m", model, "--text", "-", cwd=tmp_path, stdin=fh, stdout=out)
    assert done.returncode == 2 and b"standard output" in done.stderr
    assert appended.read_text() == "great film\n"


def test_an_output_name_that_is_not_utf8_is_written(tmp_path, model):
    name = os.fsdecode(b"r\xe9sum\xe9.npz")  # (a Latin-1 name: surrogates in Python)
    done = nbsvm("train", REVIEWS, "-o", name, "--n-bits", "12", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert os.path.exists(os.path.join(os.fsencode(tmp_path), b"r\xe9sum\xe9.npz"))


@pytest.mark.parametrize("how", ["--init", "--auto"])
def test_a_plot_with_a_test_set_after_init_or_auto_is_drawn_after_the_report(
    tmp_path, model, how
):
    """--init/--auto with --test recorded no history: 'no training history to plot', exit
    2, and the report (printed after the plot) was lost."""
    pytest.importorskip("matplotlib")
    base = tmp_path / "base.npz"
    assert nbsvm("train", REVIEWS, "-o", base, "--n-bits", "14", "--keep-counts", "-q",
                 cwd=tmp_path).returncode == 0
    extra = ["--init", base] if how == "--init" else ["--auto", "--time-budget", "5"]
    done = nbsvm("train", REVIEWS, "-o", tmp_path / "a.npz", *extra, "--test", REVIEWS,
                 "--plot", tmp_path / "a.png", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert b"accuracy" in done.stdout and (tmp_path / "a.png").stat().st_size > 1000


def test_a_cache_folder_that_cannot_be_made_is_named(tmp_path):
    (tmp_path / "afile").write_text("x")
    done = nbsvm("train", REVIEWS, "-o", "m.npz", "--keep-cache", "--cache-dir", "afile/sub",
                 "-q", cwd=tmp_path)
    assert done.returncode == 2 and b"afile/sub: cannot make the cache folder" in done.stderr
    assert b"Traceback" not in done.stderr and not (tmp_path / "m.npz").exists()


@pytest.mark.parametrize("command", [
    ["predict", REVIEWS, "-m", "{model}", "-o", "pic.png"],
    ["eval", REVIEWS, "-m", "{model}", "-o", "fig.svg"],
    ["explain", "-m", "{model}", "--text", "great", "--html", "notes.txt"],
    ["train", REVIEWS, "-o", "data.ndjson"],
], ids=["predict png", "eval svg", "explain txt", "train ndjson"])
def test_an_output_named_as_another_kind_of_file_is_refused(tmp_path, model, command):
    name = command[-1]
    (tmp_path / name).write_text("the user's own file")
    done = nbsvm(*[str(model) if c == "{model}" else c for c in command], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert (tmp_path / name).read_text() == "the user's own file"


def test_control_characters_of_labels_and_ngrams_never_reach_the_terminal(tmp_path):
    data = tmp_path / "esc.txt"
    data.write_text("".join(("p\x1b[31mos" if i % 2 else "neg") + "\tgood fine great\n"
                            if i % 2 else "neg\tbad dull awful\n" for i in range(40)))
    assert nbsvm("train", data, "-o", "m.npz", "--n-bits", "14", "-q", cwd=tmp_path).returncode == 0
    for command in (["eval", data, "-m", "m.npz"],
                    ["explain", "-m", "m.npz", "--text", "great \x1b[2Jfilm"]):
        done = nbsvm(*command, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert b"\x1b" not in done.stdout and b"\\x1b" in done.stdout


def test_parquet_predictions_into_a_pipe_are_refused_before_any_work(tmp_path, model):
    pytest.importorskip("pyarrow")
    r, w = os.pipe()
    with open(w, "wb") as out:  # standard output a pipe: Parquet seeks back to its index
        done = nbsvm("predict", REVIEWS, "-m", model, "--output-format", "parquet", "-o",
                     "/dev/stdout", cwd=tmp_path, stdout=out)
    os.close(r)
    assert done.returncode == 2 and b"a pipe or a device" in done.stderr, done.stderr


def test_datasets_get_into_a_folder_it_cannot_make_is_named(tmp_path):
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "afile").write_text("x")
    for data in ("dangling", "afile/sub"):
        done = nbsvm("datasets", "get", "iris", "--data", data, cwd=tmp_path)
        assert done.returncode == 2 and b"cannot make the corpus's folder" in done.stderr
        assert b"Traceback" not in done.stderr and b"Error:" not in done.stderr
