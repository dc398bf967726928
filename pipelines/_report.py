"""What every reproduction script shares: the shared datasets, the opening lines (full
configuration and the command that reproduces the run), and the results files.

A pipeline calls :func:`start` first and :func:`write_results` last::

    config = start("blitzer", vars(args))          # prints config + reproduce command
    ...
    write_results("blitzer", frame, title="...", notes=[...], published=published_frame)

``results/<name>.csv`` is the tidy table (one row per method and setting);
``results/<name>.md`` holds the title, the notes and the table(s) as Markdown.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "results"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def shared_datasets() -> Path:
    """Where the shared corpora are: :func:`nbsvm.datasets.shared_root` decides it, for the
    Makefile, the pipelines and the tests alike."""
    from nbsvm.datasets import shared_root

    return shared_root()


def reproduce_command(argv: list[str] | None = None) -> str:
    """The command line that reruns this script with the same arguments, from the
    repository root."""
    argv = sys.argv if argv is None else argv
    script = Path(argv[0]).resolve()
    try:
        script = script.relative_to(ROOT)
    except ValueError:
        pass
    return shlex.join([".venv/bin/python", str(script), *argv[1:]])


def start(name: str, config: dict, argv: list[str] | None = None) -> dict:
    """Print the full configuration and the reproduce command (of ``argv``, default
    ``sys.argv``: a script's ``main(argv)`` should pass ``[__file__, *argv]``); return the
    config with the start time and the command (for :func:`write_results`)."""
    shown = {k: (str(v) if isinstance(v, Path) else v) for k, v in config.items()}
    command = reproduce_command(argv)
    print(f"== {name}: configuration", flush=True)
    for k, v in shown.items():
        print(f"  {k}: {v}")
    print(f"  reproduce: {command}", flush=True)
    return dict(shown, _started=time.perf_counter(), _command=command)


def markdown_table(frame) -> str:
    """A pandas DataFrame as a Markdown table (no extra dependency)."""
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "| " + " | ".join("---" for _ in cols) + " |"]
    for row in frame.itertuples(index=False):
        cells = []
        for v in row:
            if isinstance(v, float):
                cells.append(f"{v:.4g}" if abs(v) < 1e4 else f"{v:.0f}")
            else:
                cells.append(str(v))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_results(
    name: str,
    frame,
    title: str,
    notes: list[str] | None = None,
    extra_tables: dict | None = None,
    config: dict | None = None,
    out: Path | None = None,
) -> tuple[Path, Path]:
    """Write ``results/<name>.csv`` (the tidy ``frame``) and ``results/<name>.md`` (title,
    notes, the table, any ``extra_tables`` {heading: frame}, the configuration and the
    reproduce command). Files are written to a temporary name and renamed."""
    out = Path(out or RESULTS)
    out.mkdir(parents=True, exist_ok=True)
    csv_path, md_path = out / f"{name}.csv", out / f"{name}.md"
    parts = [f"# {title}", ""]
    for note in notes or []:
        parts += [note, ""]
    parts += [markdown_table(frame), ""]
    for heading, table in (extra_tables or {}).items():
        parts += [f"## {heading}", "", markdown_table(table), ""]
    if config is not None:
        seconds = time.perf_counter() - config["_started"] if "_started" in config else None
        shown = {k: v for k, v in config.items() if not k.startswith("_")}
        parts += [
            "## Configuration",
            "",
            "```",
            json.dumps(shown, indent=1, default=str),
            "```",
            "",
        ]
        if seconds is not None:
            parts += [f"Wall time: {seconds:.1f} s.", ""]
    command = (config or {}).get("_command") or reproduce_command()
    parts += ["Reproduce (from the repository root):", "", "```", command, "```", ""]
    # both files are complete under temporary names before either replaces the old one
    csv_tmp, md_tmp = csv_path.with_suffix(".csv.tmp"), md_path.with_suffix(".md.tmp")
    frame.to_csv(csv_tmp, index=False)
    md_tmp.write_text("\n".join(parts))
    os.replace(csv_tmp, csv_path)
    os.replace(md_tmp, md_path)
    print(
        f"wrote {csv_path.relative_to(ROOT) if csv_path.is_relative_to(ROOT) else csv_path} "
        f"and {md_path.name}",
        flush=True,
    )
    return csv_path, md_path
