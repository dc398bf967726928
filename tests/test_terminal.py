"""The terminal at 80 columns (issue 18, item 7): progress bars keep the rate and the ETA,
a wide confusion matrix becomes a list of the largest confusions, and the first run says
the kernels are compiling."""
import io

import pytest
from rich.console import Console

import nbsvm.cli as cli
from nbsvm.cli import progress
from nbsvm.cli.reports import print_confusion


@pytest.mark.parametrize("width", [80, 160])
def test_progress_lines_fit_the_terminal(monkeypatch, width):
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    monkeypatch.setattr(progress, "stderr_console", lambda: console)
    with progress.ProgressReporter() as bars:
        for epoch in (1, 2):
            for n in (5_000, 12_500):
                bars({"stage": "epoch", "epoch": epoch, "epochs": 10, "docs": n,
                      "total": 12_500, "loss": 0.0123})
    lines = [line for line in out.getvalue().replace("\r", "\n").splitlines()
             if "epoch 2/10" in line and "12,500" in line]
    assert lines and all("docs/s" in line and "…" not in line for line in lines)
    assert all(len(line.rstrip()) <= width for line in lines)


def test_confusion_matrix_fits_or_lists_the_largest():
    classes = [f"group.number.{i}" for i in range(20)]
    matrix = [[300 if i == j else (i * j) % 7 for j in range(20)] for i in range(20)]
    matrix[3][5] = 71
    narrow = Console(file=io.StringIO(), width=80)
    print_confusion(narrow, classes, matrix)
    text = narrow.file.getvalue()
    assert "20 classes do not fit in 80 columns" in text
    assert "    71  group.number.3 -> group.number.5" in text
    wide = Console(file=io.StringIO(), width=200)
    print_confusion(wide, ["neg", "pos"], [[11459, 1041], [908, 11592]])
    assert "11459" in wide.file.getvalue() and "confusion matrix (rows" in wide.file.getvalue()
    # its title on one line (as the table's title it wrapped to two classes' width:
    # 'confusion matrix (rows:' / 'true, columns:' / 'predicted)')
    assert "confusion matrix (rows: true, columns: predicted)\n" in wide.file.getvalue()


def test_first_run_says_the_kernels_compile(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    cli._note_first_compile(["nbsvm", "train", "x.txt"])
    assert "compiling nbsvm's kernels" in capsys.readouterr().err
    cli._note_first_compile(["nbsvm", "train", "x.txt", "-q"])
    cli._note_first_compile(["nbsvm", "info", "m.npz"])
    assert capsys.readouterr().err == ""
    from nbsvm.workflows.compile_ahead import cache_folders
    cache_folders()[0].mkdir()
    (cache_folders()[0] / "table._adagrad_epoch-82.py311.nbi").write_bytes(b"")
    cli._note_first_compile(["nbsvm", "train", "x.txt"])
    assert capsys.readouterr().err == ""
