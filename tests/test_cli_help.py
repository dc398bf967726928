"""Help as a new user reads it (issue 18, item 10): ``-h`` works, the extras keep their
brackets, values read as words, every option says what it does, and a value that help
does not list is refused."""
import subprocess
import sys
from pathlib import Path

import pytest
import typer.main

from nbsvm.datasets import fixture
from nbsvm.cli import app

NBSVM = Path(sys.executable).parent / "nbsvm"
COMMANDS = sorted(typer.main.get_command(app).commands)


def _help(*args):
    r = subprocess.run([str(NBSVM), *args], capture_output=True, text=True, timeout=120,
                       env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_top_level_help_lists_the_extras_with_their_brackets():
    out = _help("-h")
    assert out == _help("--help")
    for extra in ("plot", "parquet", "dask", "serve"):
        assert f"'nbsvm[{extra}]'" in out
    assert set(COMMANDS) <= set(out.split())


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_reads_as_words(command):
    out = _help(command, "-h")
    assert out.startswith(f"Usage: nbsvm {command} ")
    for typed in ("<str>", "<int>", "<float>", "<bool>", "<list[", "range>"):
        assert typed not in out, (command, typed)
    assert max(map(len, out.splitlines())) <= 80          # wrapped at the terminal's width
    if command in ("train", "eval"):
        assert "'nbsvm[plot]'" in out                     # not eaten as markup


def test_every_option_has_help():
    missing = [f"nbsvm {name} {p.opts[0] if p.opts else p.name}"
               for name, cmd in typer.main.get_command(app).commands.items()
               for p in cmd.params if not (getattr(p, "help", None) or "").strip()]
    assert not missing, missing


@pytest.mark.parametrize("args, says", [
    (["--loss", "squared"], "unknown loss 'squared'; allowed: hinge, log, squared_hinge, "
                            "modified_huber, softmax, multiclass_hinge"),
    (["--optimizer", "adam"], "unknown optimizer 'adam'"),
    (["--weighting", "tfidf"], "unknown weighting 'tfidf'"),
    (["--interpolate", "both"], "unknown interpolation 'both'"),
])
def test_values_help_does_not_list_are_refused(tmp_path, args, says):
    data = fixture("reviews.txt")           # data/README.md
    r = subprocess.run([str(NBSVM), "train", str(data), "-o", str(tmp_path / "m.npz"), *args],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and says in r.stderr, r.stderr
    assert not (tmp_path / "m.npz").exists()


# the command lines that run no kernel: what each may import (nothing compiled, and numpy
# only where a model file is read)
NO_KERNEL = [(["--help"], "numpy"), (["train", "--help"], "numpy"), (["train"], "numpy"),
             (["predict", "--bogus"], "numpy"), (["info", "MODEL"], "numba"),
             # a value out of its range is refused while parsing (typer's min/max from
             # config.py's bounds), a missing input and an unknown learner before the
             # library is imported: 0.34 s -> 0.10 s each on this machine
             (["train", "DATA", "-o", "OUT", "--n-bits", "99"], "numpy"),
             (["train", "DATA", "-o", "OUT", "--ngrams", "17"], "numpy"),
             (["train", "DATA", "-o", "OUT", "--threads", "65"], "numpy"),
             (["train", "DATA", "-o", "OUT", "--beta", "1.5"], "numpy"),
             (["train", "NOWHERE", "-o", "OUT"], "numpy"),
             (["train", "DATA", "-o", "OUT", "--learner", "nope"], "numpy"),
             (["train", "DATA", "-o", "OUT", "--loss", "nope"], "numpy"),
             (["train", "DATA", "-o", "OUT", "--calibrate", "platt"], "numpy"),
             (["lexicon", "DATA", "-o", "OUT", "--hash-seed", "-1"], "numpy"),
             (["learn", "DATA", "-o", "OUT", "--epochs", "0"], "numpy"),
             (["tune", "DATA", "--seed", "-1"], "numpy")]


@pytest.mark.parametrize("args, never", NO_KERNEL, ids=[" ".join(a) for a, _ in NO_KERNEL])
def test_help_info_and_argument_errors_start_without_numba(args, never, tmp_path):
    # issue 37: `nbsvm --help`, `nbsvm info` and argument errors in a fraction of the 0.45 s
    # that importing numba and loading the kernels cost; the command runs in a fresh
    # interpreter, which reports the modules it imported
    model = tmp_path / "m.npz"
    if "MODEL" in args:
        from nbsvm import NBSVMClassifier
        NBSVMClassifier(n_bits=8, epochs=1).fit(["good", "bad", "fine", "awful"],
                                               ["pos", "neg", "pos", "neg"]).save(model)
    named = {"MODEL": str(model), "DATA": str(fixture("reviews.txt")),
             "NOWHERE": str(tmp_path / "nowhere.txt"), "OUT": str(tmp_path / "out.npz")}
    code = ("import sys\n"
            "from nbsvm.cli import app\n"
            "try:\n"
            f"    app({[named.get(a, a) for a in args]!r})\n"
            "except SystemExit as e:\n"
            "    print('exit', e.code, file=sys.stderr)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('numba', 'numpy', 'rich')))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env={"COLUMNS": "80", "PATH": "/usr/bin:/bin"})
    expected = "exit 0" if "--help" in args or "info" in args else "exit 2"
    assert expected in r.stderr, r.stderr
    loaded = eval(r.stdout.strip().splitlines()[-1])
    assert not [m for m in loaded if m.split(".")[0] in ("numba", never)], loaded
    if "--help" in args:  # rich (0.04-0.07 s) loads where a report or an error is printed
        assert not [m for m in loaded if m.split(".")[0] == "rich"], loaded


def test_a_command_imports_its_own_module_alone():
    """`nbsvm info` pays for info's imports, not the trainer's or the server's; the
    top-level help lists every command (issue 37: start-up)."""
    code = ("import sys\n"
            "import nbsvm.cli as cli\n"
            "cli._exit_now = lambda code: print(sorted(sys.modules), file=sys.stderr)\n"
            "sys.argv = ['nbsvm', 'info', '-h']\n"
            "cli.main()\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0 and "info [OPTIONS]" in r.stdout, r.stdout
    imported = set(eval(r.stderr.strip().splitlines()[-1]))
    assert "nbsvm.cli.info" in imported
    assert not imported & {"nbsvm.cli.train", "nbsvm.cli.serve", "nbsvm.cli.lexicon"}
    r = subprocess.run([sys.executable, "-m", "nbsvm", "-h"], capture_output=True, text=True,
                       timeout=120)
    from nbsvm.cli import COMMANDS
    assert all(f"  {name} " in r.stdout for name in COMMANDS), r.stdout


def test_info_imports_no_rich(tmp_path):
    """rich (0.05 s) loads when a command prints progress or an error, not for info's
    plain lines (issue 37: nbsvm info under 0.15 s)."""
    from nbsvm import NBSVMClassifier
    model = tmp_path / "m.npz"
    NBSVMClassifier(n_bits=8, epochs=1).fit(["good", "bad", "fine", "awful"],
                                           ["pos", "neg", "pos", "neg"]).save(model)
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "nbsvm", "info", str(model)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "buckets stored" in r.stdout, r.stderr
    assert " rich" not in r.stderr
