"""The documentation runs: the CLI reference is current, and the marked examples work.

- ``docs/cli.md`` must equal what ``python -m nbsvm.cli.reference`` prints now (after changing
  a command, an option or a help text: ``python -m nbsvm.cli.reference > docs/cli.md``).
- In ``README.md`` and in every page under ``docs/`` (``docs/**/*.md``, the site that
  ``make docs`` builds), a fenced block runs when the line
  just above its opening fence (blank lines skipped) is a marker comment:

  ``<!-- test -->``
      run the block: a ```` ```python ```` block is executed in a fresh namespace; in a
      ```` ```console ```` block every line starting with ``$ `` is a shell command (a
      trailing ``\\`` continues it on the next line), run in order with ``nbsvm`` on the
      PATH, each of which must exit with status 0; the other lines are shown output and
      are not compared.
  ``<!-- requires: imdb -->``
      the same, skipped when ``data/aclImdb`` is missing (paths such as
      ``data/aclImdb/train`` then work as in the repository), and marked ``slow``: a
      whole-IMDB job is a second real-data run of ``train`` (``tests/test_e2e_imdb.py``
      runs it in ``make test``), so ``make test-slow`` runs these blocks.

  Each block runs in a temporary folder of its own, as its working directory (with a link
  ``data`` to the repository's ``data`` folder), so files it writes vanish afterwards.
  Unmarked blocks are not run: the API sketches (``clf.fit(texts, labels)`` with ``texts``
  defined elsewhere) stay sketches.
- The README stays short (at most 300 lines) and keeps a tested shell and a tested Python
  quickstart; the docs pages together hold at least as many marked examples as the README
  held before its sections moved into ``docs/``; every page under ``docs/`` is in the nav of
  ``mkdocs.yml``; the README's relative links point at files that exist.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DOC_PAGES = sorted((REPO / "docs").rglob("*.md"))
DOCS = [README, *DOC_PAGES]
README_MAX_LINES = 300
# Marked blocks of README.md when it still held the whole manual (five ``test``, one
# ``requires: imdb``), counted before its sections moved into docs/: the pages there must
# together hold at least as many, so that moving an example keeps it tested.
README_MARKED_BLOCKS_BEFORE_THE_SITE = 6
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
    """Every marked block, once: a page that repeats another's block word for word (the
    README's quickstarts in the guides) runs it once, where it appears first."""
    params, seen = [], set()
    for doc in DOCS:
        if not doc.exists():
            continue
        for lang, markers, code, line in fenced_blocks(doc.read_text(encoding="utf-8")):
            if not markers or lang not in ("python", "console") or (lang, code) in seen:
                continue
            seen.add((lang, code))
            marks = [pytest.mark.skipif(not IMDB.is_dir(), reason="needs data/aclImdb"),
                     pytest.mark.slow] if "requires:imdb" in markers else []
            name = doc.relative_to(REPO).as_posix()
            if lang == "console" and name != "README.md" and not marks:
                # make test-slow: the guides' shell sessions (3-6 s each); the README's and
                # every Python block stay in the default suite
                marks = [pytest.mark.slow]
            params.append(pytest.param(lang, code, id=f"{name}:{line}:{lang}", marks=marks))
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
        exec(compile(code, "<documentation block>", "exec"), namespace)
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


def test_no_default_in_the_reference_is_white_space():
    """--label-sep's default (a TAB, its help says so; show_default=False) was shown as a
    blank between backticks: a space."""
    from nbsvm.cli.reference import render

    rows = [line for line in render().splitlines() if line.startswith("| `--")]
    assert rows and not [r for r in rows if r.split(" | ")[2].strip() in ("` `", "`\t`")]
    assert any(r.startswith("| `--label-sep` | TEXT |  |") for r in rows)


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


def marked_blocks(path: Path) -> list[tuple[str, tuple[str, ...]]]:
    """``(language, markers)`` of the runnable marked blocks of one file."""
    return [(lang, tuple(m)) for lang, m, _, _ in fenced_blocks(path.read_text(encoding="utf-8"))
            if m and lang in ("python", "console")]


def test_the_readme_has_tested_blocks():
    """The README keeps a tested shell and a tested Python quickstart, and the docs pages
    together hold at least as many marked examples as the README held before they moved."""
    marked = marked_blocks(README)
    assert ("python", ("test",)) in marked and ("console", ("test",)) in marked
    in_docs = [block for page in DOC_PAGES for block in marked_blocks(page)]
    assert len(in_docs) >= README_MARKED_BLOCKS_BEFORE_THE_SITE, \
        f"{len(in_docs)} marked blocks under docs/, fewer than {README_MARKED_BLOCKS_BEFORE_THE_SITE}"
    assert ("python", ("test",)) in in_docs and ("console", ("test",)) in in_docs


def test_readme_is_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, \
        f"README.md has {len(lines)} lines, more than {README_MAX_LINES}: move sections into docs/"


def nav_pages_from_lines(mkdocs_yml: str) -> list[str]:
    """The ``.md`` paths of the nav block of mkdocs.yml, read as text (no YAML parser)."""
    nav = mkdocs_yml[re.search(r"^nav:[ \t]*$", mkdocs_yml, re.M).end():]
    nav = re.split(r"^\S", nav, maxsplit=1, flags=re.M)[0]    # up to the next top-level key
    return re.findall(r"([\w./-]+\.md)[\"']?[ \t]*$", nav, re.M)


def nav_pages(mkdocs_yml: str) -> list[str]:
    """The pages named in mkdocs.yml's nav (paths relative to docs/)."""
    try:
        import yaml  # comes with mkdocs
    except ImportError:
        return nav_pages_from_lines(mkdocs_yml)
    pages: list[str] = []

    def walk(item):
        if isinstance(item, str):
            pages.append(item)
        elif isinstance(item, list):
            for x in item:
                walk(x)
        elif isinstance(item, dict):
            for x in item.values():
                walk(x)
    walk(yaml.safe_load(mkdocs_yml)["nav"])
    return [p for p in pages if p.endswith(".md")]


def test_docs_nav_covers_every_page():
    """Every page under docs/ is in mkdocs.yml's nav, and every nav entry exists."""
    listed = nav_pages((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    on_disk = {p.relative_to(REPO / "docs").as_posix() for p in DOC_PAGES}
    assert on_disk - set(listed) == set(), "pages missing from mkdocs.yml's nav"
    assert set(listed) - on_disk == set(), "nav entries without a page"
    assert len(listed) == len(set(listed)), "a page listed twice in the nav"


def test_nav_parsing_without_yaml():
    text = ("site_name: x\nnav:\n  - Home: index.md\n  - Guides:\n      - A: guide/a.md\n"
            "      - guide/b.md\n      - \"C: c\": 'guide/c.md'\nplugins:\n  - search\n")
    assert nav_pages_from_lines(text) == ["index.md", "guide/a.md", "guide/b.md", "guide/c.md"]
    real = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert nav_pages_from_lines(real) == nav_pages(real)


def test_readme_links_exist():
    """The README's relative links (it is read on GitHub, outside the strict site build)."""
    readme = README.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", readme):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        assert (REPO / target.split("#")[0]).exists(), f"README links to missing {target}"


def test_block_parsing():
    text = ("intro\n\n<!-- test -->\n```console\n$ echo a \\\n  b\nshown output\n$ true\n```\n\n"
            "```python\nnot run\n```\n<!-- requires: imdb -->\n\n```python\nx = 1\n```\n")
    blocks = list(fenced_blocks(text))
    assert [(lang, m) for lang, m, _, _ in blocks] == \
        [("console", ["test"]), ("python", []), ("python", ["requires:imdb"])]
    assert console_commands(blocks[0][2]) == ["echo a \\\n  b", "true"]
