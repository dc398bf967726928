"""The documentation runs: the CLI reference is current, and the README's marked examples work.

- ``docs/cli.md`` must equal what ``python -m nbsvm.cli.reference`` prints now (after changing
  a command, an option or a help text: ``python -m nbsvm.cli.reference > docs/cli.md``).
- In ``README.md``, a fenced block runs when the line
  just above its opening fence (blank lines skipped) is a marker comment:

  ``<!-- test -->``
      run the block: a ```` ```python ```` block is executed in a fresh namespace; in a
      ```` ```console ```` block every line starting with ``$ `` is a shell command (a
      trailing ``\\`` continues it on the next line), run in order with ``nbsvm`` on the
      PATH, each of which must exit with status 0; the other lines are shown output and
      are not compared.
  ``<!-- requires: imdb -->``
      the same, skipped when ``data/aclImdb`` is missing (paths such as
      ``data/aclImdb/train`` then work as in the repository).

  Each block runs in a temporary folder of its own, as its working directory (with a link
  ``data`` to the repository's ``data`` folder), so files it writes vanish afterwards.
  Unmarked blocks are not run: the README's API sketches (``clf.fit(texts, labels)`` with
  ``texts`` defined elsewhere) stay sketches.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md"]
IMDB = REPO / "data" / "aclImdb"
MARKER = re.compile(r"^<!--\s*(test|requires:\s*imdb)\s*-->$")
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")


def fenced_blocks(text: str):
    """``(language, markers, code, line number of the opening fence)`` of every fenced
    block; ``markers``: the marker comments just above it (blank lines skipped)."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).lower(), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        markers, k = [], start - 1
        while k >= 0 and (not lines[k].strip() or MARKER.match(lines[k].strip())):
            if lines[k].strip():
                markers.append(MARKER.match(lines[k].strip()).group(1).replace(" ", ""))
            k -= 1
        yield lang, markers, "\n".join(lines[start + 1:j]) + "\n", start + 1
        i = j + 1


def runnable_blocks():
    params = []
    for doc in DOCS:
        if not doc.exists():
            continue
        for lang, markers, code, line in fenced_blocks(doc.read_text(encoding="utf-8")):
            if not markers or lang not in ("python", "console"):
                continue
            marks = [pytest.mark.skipif(not IMDB.is_dir(), reason="needs data/aclImdb")] \
                if "requires:imdb" in markers else []
            params.append(pytest.param(lang, code, id=f"{doc.name}:{line}:{lang}",
                                       marks=marks))
    return params


def console_commands(code: str) -> list[str]:
    """The ``$ `` lines of a console block, continuation lines joined."""
    commands, current = [], None
    for line in code.splitlines():
        if current is not None:
            current += "\n" + line
        elif line.startswith("$ "):
            current = line[2:]
        else:
            continue
        if not current.endswith("\\"):
            commands.append(current)
            current = None
    if current is not None:
        commands.append(current)
    return commands


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    if (REPO / "data").is_dir():
        (tmp_path / "data").symlink_to(REPO / "data", target_is_directory=True)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("lang, code", runnable_blocks())
def test_marked_block_runs(lang, code, workdir):
    if lang == "python":
        namespace = {"__name__": "__readme__"}
        exec(compile(code, "<README block>", "exec"), namespace)
        return
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep +
               os.environ.get("PATH", ""))
    commands = console_commands(code)
    assert commands, "a marked console block without '$ ' lines"
    for command in commands:
        r = subprocess.run(["bash", "-c", command], cwd=workdir, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, f"$ {command}\nexit {r.returncode}\n{r.stdout}\n{r.stderr}"


def test_cli_reference_is_current():
    from nbsvm.cli.reference import render
    committed = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    assert render() == committed, ("docs/cli.md is stale: run "
                                   "`python -m nbsvm.cli.reference > docs/cli.md`")


def test_the_reference_module_prints_it():
    r = subprocess.run([sys.executable, "-m", "nbsvm.cli.reference"], capture_output=True,
                       text=True, timeout=300, cwd=REPO)
    assert r.returncode == 0, r.stderr
    assert r.stdout == (REPO / "docs" / "cli.md").read_text(encoding="utf-8")


def test_the_reference_covers_every_command_and_option():
    import typer.main
    from nbsvm.cli import app
    from nbsvm.cli.reference import render
    text = render()
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        assert f"\n## nbsvm {name}\n" in text
        for param in command.params:
            for opt in param.opts:
                if opt.startswith("-"):
                    assert f"`{opt}`" in text, (name, opt)


def test_the_readme_has_tested_blocks():
    """The README's quickstart and examples exercise both kinds of block (at least six)."""
    readme = DOCS[0].read_text(encoding="utf-8")
    marked = [(lang, tuple(m)) for lang, m, _, _ in fenced_blocks(readme) if m]
    assert ("python", ("test",)) in marked and ("console", ("test",)) in marked
    assert len(marked) >= 6


def test_block_parsing():
    text = ("intro\n\n<!-- test -->\n```console\n$ echo a \\\n  b\nshown output\n$ true\n```\n\n"
            "```python\nnot run\n```\n<!-- requires: imdb -->\n\n```python\nx = 1\n```\n")
    blocks = list(fenced_blocks(text))
    assert [(lang, m) for lang, m, _, _ in blocks] == \
        [("console", ["test"]), ("python", []), ("python", ["requires:imdb"])]
    assert console_commands(blocks[0][2]) == ["echo a \\\n  b", "true"]
