"""Where results go (issue 17, items 1-4), through the real CLI on real special files:
devices and FIFOs are written through and never replaced, a write error fails the command,
links keep being links, modes follow the umask or the replaced file, every output path is
checked before any input is read, and a closed pipe ends a filter quietly."""
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from nbsvm import NBSVMClassifier, NBSVMError
from testhelpers import run_cli

NBSVM = Path(sys.executable).parent / "nbsvm"
TRAIN = "".join(f"{'pos' if i % 2 else 'neg'}\t{'great fun' if i % 2 else 'awful dull'} "
                f"film number {i}\n" for i in range(40))
TEXTS = "a great film\nawful and dull\nneither here nor there\n"


def run(*args, umask=None, timeout=120, **kw):
    """The installed command in a child process: for what needs one (the child's umask,
    its own standard output, a pipe into head); the rest runs the CLI in this process
    (:func:`testhelpers.run_cli`)."""
    pre = (lambda: os.umask(umask)) if umask is not None else None
    return subprocess.run([str(NBSVM), *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, preexec_fn=pre, **kw)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("outputs")
    (d / "train.txt").write_text(TRAIN)
    (d / "texts.txt").write_text(TEXTS)
    r = run("train", d / "train.txt", "-o", d / "m.npz", "--n-bits", "12", "--epochs", "2",
            "-q")
    assert r.returncode == 0, r.stderr
    expected = run("predict", d / "texts.txt", "-m", d / "m.npz", "-q")
    assert expected.returncode == 0, expected.stderr
    return d, expected.stdout


def _char_device(path: Path) -> bool:
    return stat.S_ISCHR(os.stat(path).st_mode)


# ---- item 1: devices, FIFOs and links are written through, never replaced --------------

@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_dev_full_fails_and_stays_a_device(files):
    d, _ = files
    for args in (["predict", d / "texts.txt", "-m", d / "m.npz", "-o", "/dev/full"],
                 ["train", d / "train.txt", "-o", "/dev/full", "--n-bits", "12"],
                 ["eval", d / "train.txt", "-m", d / "m.npz", "-o", "/dev/full"]):
        r = run_cli(*args, "-q")                # the CLI in this process: a file it writes
        assert r.returncode == 2, (args, r.stderr)
        assert "/dev/full: cannot write: No space left on device" in r.stderr
        assert "nbsvm-tmp" not in r.stderr and "Traceback" not in r.stderr
        assert _char_device("/dev/full")


def test_a_device_made_with_mknod_is_written_through(files):
    d, _ = files
    node = d / "null-device"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))      # /dev/null's numbers
    except PermissionError:
        pytest.skip("mknod needs root")
    r = run_cli("predict", d / "texts.txt", "-m", d / "m.npz", "-o", node)
    assert r.returncode == 0, r.stderr
    assert _char_device(node) and os.stat(node).st_rdev == os.makedev(1, 3)
    r = run_cli("train", d / "train.txt", "-o", node, "--n-bits", "12", "-q")
    assert r.returncode == 0, r.stderr
    assert _char_device(node)


def _read_fifo(path: Path, into: list):
    with open(path, "rb") as fh:
        into.append(fh.read())


def test_fifo_with_a_reader_gets_the_output(files):
    d, expected = files
    fifo = d / "predictions.fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=_read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    r = run_cli("predict", d / "texts.txt", "-m", d / "m.npz", "-o", fifo, "-q")
    reader.join(timeout=60)
    assert r.returncode == 0, r.stderr
    assert got and got[0].decode() == expected
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)

    # a model through a FIFO: a complete .npz that loads and predicts as the file does
    got.clear()
    reader = threading.Thread(target=_read_fifo, args=(fifo, got), daemon=True)
    reader.start()
    r = run_cli("train", d / "train.txt", "-o", fifo, "--n-bits", "12", "--epochs", "2", "-q")
    reader.join(timeout=60)
    assert r.returncode == 0, r.stderr
    copy = d / "from-fifo.npz"
    copy.write_bytes(got[0])
    texts = TEXTS.splitlines()
    assert (NBSVMClassifier.load(copy).decision_function(texts)
            == NBSVMClassifier.load(d / "m.npz").decision_function(texts)).all()
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_symlink_to_a_file_stays_a_link(files):
    d, expected = files
    target = d / "real.csv"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = d / "link.csv"
    link.symlink_to(target.name)
    r = run_cli("predict", d / "texts.txt", "-m", d / "m.npz", "-o", link, "-q")
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == target.name
    assert target.read_text() == expected
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_symlink_to_stdout_and_dev_stdout_write_to_stdout(files):
    d, expected = files
    link = d / "out-link"
    link.symlink_to("/proc/self/fd/1")
    for out in (link, "/dev/stdout", "-"):
        r = run("predict", d / "texts.txt", "-m", d / "m.npz", "-o", out, "-q")
        assert r.returncode == 0, r.stderr
        assert r.stdout == expected, out
    assert link.is_symlink() and os.readlink(link) == "/proc/self/fd/1"


# ---- item 2: modes --------------------------------------------------------------------

@pytest.mark.slow  # make test-slow: each output's atomic write is checked elsewhere
def test_new_outputs_follow_the_umask(files, tmp_path):
    d, _ = files
    outs = {"model": tmp_path / "m.npz", "csv": tmp_path / "p.csv",
            "report": tmp_path / "r.csv", "html": tmp_path / "e.html",
            "plot": tmp_path / "curve.png"}
    runs = [("train", d / "train.txt", "-o", outs["model"], "--n-bits", "12", "--epochs", "2",
             "--plot", outs["plot"], "-q"),
            ("predict", d / "texts.txt", "-m", d / "m.npz", "-o", outs["csv"], "-q"),
            ("eval", d / "train.txt", "-m", d / "m.npz", "-o", outs["report"], "-q"),
            ("explain", "-m", d / "m.npz", "--text", "a great film", "--html", outs["html"],
             "--json")]
    for args in runs:
        r = run(*args, umask=0o022)
        assert r.returncode == 0, (args, r.stderr)
    for name, path in outs.items():
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644, (name, oct(os.stat(path).st_mode))
    # another umask, another mode
    for umask, mode in ((0o077, 0o600), (0o002, 0o664)):
        out = tmp_path / f"p{umask:o}.csv"
        r = run("predict", d / "texts.txt", "-m", d / "m.npz", "-o", out, "-q", umask=umask)
        assert r.returncode == 0, r.stderr
        assert stat.S_IMODE(os.stat(out).st_mode) == mode, oct(os.stat(out).st_mode)


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_a_replaced_file_keeps_its_mode(files, tmp_path):
    d, _ = files
    model = tmp_path / "m.npz"
    model.write_bytes(b"old")
    os.chmod(model, 0o604)
    r = run("train", d / "train.txt", "-o", model, "--n-bits", "12", "-q", umask=0o077)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(os.stat(model).st_mode) == 0o604
    assert NBSVMClassifier.load(model).classes_ == ["neg", "pos"]


# ---- item 3: every output checked before any input is read ------------------------------

@pytest.fixture
def unreadable_input(tmp_path):
    """A FIFO nobody writes to: a command that opened it would wait forever."""
    fifo = tmp_path / "never.fifo"
    os.mkfifo(fifo)
    return fifo


def test_a_bad_output_fails_before_the_input_is_opened(unreadable_input):
    # the installed command, on an input that would hang it if it were opened
    r = run("train", unreadable_input, "-o", "/proc/m.npz", "-q", timeout=30)
    assert r.returncode == 2, r.stderr
    assert r.stderr == ("error: /proc/m.npz: cannot write (--output): no file can be created "
                        "in '/proc' (No such file or directory)\n")


@pytest.mark.parametrize("case", ["proc", "folder", "missing folder", "plot", "checkpoint",
                                  "predict", "eval report", "eval plot", "lexicon",
                                  "trailing slash"])
def test_outputs_are_checked_before_reading(files, tmp_path, monkeypatch, case):
    # the typer app in this process, with every reader replaced by one that fails the test
    import nbsvm.io.readers as readers
    from typer.testing import CliRunner
    from nbsvm.cli import app

    def no_reading(*args, **kwargs):
        raise AssertionError("an input was read before the outputs were checked")

    monkeypatch.setattr(readers, "read_inputs", no_reading)
    d, _ = files
    folder = tmp_path / "a_folder"
    folder.mkdir()
    missing = tmp_path / "nonexistent" / "dir"
    src = d / "train.txt"
    cases = {
        "proc": (["train", src, "-o", "/proc/m.npz"], "/proc/m.npz: cannot write (--output)"),
        "folder": (["train", src, "-o", folder], f"{folder}: is a folder; give --output"),
        "missing folder": (["train", src, "-o", missing / "m.npz"],
                           f"the folder '{missing}' does not exist"),
        "plot": (["train", src, "-o", tmp_path / "m.npz", "--plot", missing / "x.png"],
                 "cannot write (--plot)"),
        "checkpoint": (["train", src, "-o", tmp_path / "m.npz", "--checkpoint-every", "1"],
                       f"{tmp_path / 'm.checkpoint.npz'}: is a folder"),
        "predict": (["predict", src, "-m", d / "m.npz", "-o", missing / "p.csv"],
                    "cannot write (--output)"),
        "eval report": (["eval", src, "-m", d / "m.npz", "-o", folder], "is a folder"),
        "eval plot": (["eval", src, "-m", d / "m.npz", "--plot", missing / "x.png"],
                      "cannot write (--plot)"),
        "lexicon": (["lexicon", src, "-o", missing / "lex.npz"], "cannot write (--output)"),
        # Path() dropped the slash: a file named 'models' was written
        "trailing slash": (["train", src, "-o", f"{tmp_path / 'models'}/"],
                           "models/: names a folder; give --output a file name"),
    }
    (tmp_path / "m.checkpoint.npz").mkdir()     # where the checkpoints would go
    args, message = cases[case]
    r = CliRunner().invoke(app, [str(a) for a in args] + ["-q"])
    assert r.exit_code == 2, (r.stdout, r.stderr)
    assert message in r.stderr
    assert r.stderr.count("\n") == 1, r.stderr           # one line
    assert "nbsvm-tmp" not in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "nonexistent").exists()        # no folder was created


def test_a_name_that_says_folder_is_never_a_file(files, tmp_path):
    """-o nd/. wrote a file named nd; the Python API's save('newmodels/') a file named
    newmodels (Path() drops the slash and the dot)."""
    d, _ = files
    r = run_cli("train", d / "train.txt", "-o", f"{tmp_path / 'nd'}/.", "--n-bits", "12", "-q")
    assert r.returncode == 2 and "nd/.: names a folder; give --output a file name" in r.stderr
    model = NBSVMClassifier.load(d / "m.npz")
    for name in (f"{tmp_path / 'newmodels'}/", f"{tmp_path / 'newmodels'}/."):
        with pytest.raises(NBSVMError, match="names a folder; give a file name inside it"):
            model.save(name)
    assert sorted(tmp_path.iterdir()) == []


def test_the_longest_legal_names_are_written(files, tmp_path):
    """A name of 234-255 bytes is legal, but the temporary name beside it was longer than
    the folder takes: 'no file can be created (File name too long)'."""
    d, _ = files
    for name in ("a" * 251 + ".npz", "好" * 83 + ".npz"):  # 255 and 253 bytes
        r = run_cli("train", d / "train.txt", "-o", tmp_path / name, "--n-bits", "12", "-q")
        assert r.returncode == 0, r.stderr
        assert NBSVMClassifier.load(tmp_path / name).n_docs_ == 40
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["a" * 251 + ".npz", "好" * 83 + ".npz"])  # no temporary left


# ---- item 4: a closed pipe is a normal end ----------------------------------------------

def test_predict_into_head_ends_quietly(files, tmp_path):
    d, expected = files
    many = tmp_path / "many.txt"
    many.write_text(TEXTS * 20000)                         # far more than a pipe buffer
    r = subprocess.run(f"'{NBSVM}' predict '{many}' -m '{d / 'm.npz'}' | head -1; "
                       "echo \"status ${PIPESTATUS[0]}\"", shell=True, executable="/bin/bash",
                       capture_output=True, text=True, timeout=120)
    assert r.stdout.splitlines() == [expected.splitlines()[0], "status 141"]
    assert "error" not in r.stderr.lower() and "BrokenPipe" not in r.stderr


def _closed_stdout(*args):
    """The command with a standard output nobody reads (the reader closed before it starts:
    every write fails, as after ``| head -1`` has ended)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([str(NBSVM), *map(str, args)], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)


def test_a_report_into_a_closed_pipe_still_writes_its_files(files, tmp_path):
    """explain's and eval's reports are printed by rich, whose console ended the process
    with status 1 and no message when the reader went away, deleting the HTML page being
    written and never making eval's plot (a helper's hunt): the files are written, and the
    command ends as predict does, killed by SIGPIPE (141 in a shell)."""
    d, _ = files
    page = tmp_path / "w.html"
    r = _closed_stdout("explain", "-m", d / "m.npz", "--text", "a great film", "--html", page)
    assert r.returncode == -13 and r.stderr == "" and "great" in page.read_text()
    r = _closed_stdout("explain", "-m", d / "m.npz", "--top", "50")
    assert r.returncode == -13 and r.stderr == ""
    pytest.importorskip("matplotlib")
    plot, table = tmp_path / "ev.png", tmp_path / "ev.csv"
    r = _closed_stdout("eval", "-m", d / "m.npz", d / "train.txt", "-q", "-o", table,
                       "--plot", plot)
    assert r.returncode == -13 and r.stderr == "", r.stderr
    assert plot.stat().st_size > 0 and table.stat().st_size > 0


def test_an_output_is_synced_and_so_is_its_rename(tmp_path, monkeypatch):
    """The file was fsynced before its rename, the folder not after: a power loss could
    leave the old name."""
    from nbsvm.io.outputs import atomic_path
    synced = []
    real = os.fsync

    def fsync(fd):
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    with atomic_path(tmp_path / "out.csv") as tmp:
        tmp.write_text("a,b\n")
    assert synced == [False, True] and (tmp_path / "out.csv").read_text() == "a,b\n"
