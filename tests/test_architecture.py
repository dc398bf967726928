"""The shape the redesign gave the code, checked on every run (docs/design.md): the layer
contracts are import-linter's (``make lint``); here, what no linter we use counts: function
bodies of at most 60 lines outside numba kernels (nbsvm/ and pipelines/), every public
function of nbsvm/ typed, every pipeline script under 300 lines."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
LONGEST_BODY = 60
LONGEST_SCRIPT = 300


def _sources(root: Path, *folders: str) -> list[Path]:
    return sorted(p for folder in folders for p in (root / folder).rglob("*.py"))


@functools.cache
def _tree(path: Path) -> ast.Module:
    """The parsed source (parsed once for every check of this file: 1.3 s for all)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _compiled(f: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any("jit" in ast.unparse(d) for d in f.decorator_list)


def _body_lines(f: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Lines from the first statement after the docstring to the end."""
    body = f.body
    has_doc = isinstance(body[0], ast.Expr) and isinstance(
        getattr(body[0], "value", None), ast.Constant
    )
    first = body[1] if has_doc and len(body) > 1 else body[0]
    return f.end_lineno - first.lineno + 1


def long_functions(root: Path, *folders: str) -> list[str]:
    out = []
    for path in _sources(root, *folders):
        for f in ast.walk(_tree(path)):
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _compiled(f):
                if _body_lines(f) > LONGEST_BODY:
                    out.append(f"{path.relative_to(root)}:{f.lineno} {f.name} ({_body_lines(f)})")
    return out


def untyped_public_functions(root: Path, folder: str) -> list[str]:
    """Public functions and methods (not in a private class, not compiled) missing a
    return annotation or a parameter annotation (``self`` and ``cls`` aside)."""
    out = []

    def visit(node: ast.AST, path: Path, private: bool) -> None:
        for n in ast.iter_child_nodes(node):
            if isinstance(n, ast.ClassDef):
                visit(n, path, private or n.name.startswith("_"))
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if private or n.name.startswith("_") or _compiled(n):
                    continue
                a = n.args
                params = [p for p in a.posonlyargs + a.args + a.kwonlyargs if p.arg not in ("self", "cls")]
                params += [p for p in (a.vararg, a.kwarg) if p is not None]
                if n.returns is None or any(p.annotation is None for p in params):
                    out.append(f"{path.relative_to(root)}:{n.lineno} {n.name}")

    for path in _sources(root, folder):
        visit(_tree(path), path, False)
    return out


def test_no_function_body_over_60_lines():
    assert long_functions(REPO, "nbsvm", "pipelines") == []


def test_every_public_function_is_typed():
    assert untyped_public_functions(REPO, "nbsvm") == []


def test_every_pipeline_script_under_300_lines():
    long = [f"{p.relative_to(REPO)} ({n})" for p in _sources(REPO, "pipelines")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) >= LONGEST_SCRIPT]
    assert long == []


@pytest.mark.parametrize("source, counted", [
    ("def f(x):\n    return x\n", ["f"]),
    ("def f(x: int) -> int:\n    return x\n", []),
    ("def _f(x):\n    return x\n", []),
    ("class _C:\n    def f(self, x):\n        pass\n", []),
    ("class C:\n    def f(self, x: int):\n        pass\n", ["f"]),
    ("class C:\n    def f(self, *a: int, **k: int) -> None:\n        pass\n", []),
])
def test_the_typing_check_counts_what_it_says(tmp_path, source, counted):
    """The check itself, on hand-written sources: it can fail."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(source)
    assert [s.split(" ")[1] for s in untyped_public_functions(tmp_path, "pkg")] == counted


def test_the_length_check_counts_body_lines(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(61))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(f'def f():\n    """doc"""\n{body}\n\n'
                                           f'def g():\n{body[:-len("    x60 = 60")]}\n')
    assert [s.split(" ")[1] for s in long_functions(tmp_path, "pkg")] == ["f"]
