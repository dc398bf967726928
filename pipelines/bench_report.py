"""The report of the IMDB trigram benchmark (pipelines/bench.py): ``results/bench.md``'s
lines, from the measured runs."""

from __future__ import annotations

import shlex
import statistics

from _harness import spread
from _report import ROOT

BASELINE = "nbsvm (threads 1, reproducible)"


def systems_lines(runs: int, table, results: dict) -> list[str]:
    """The title, how it was measured, and the table of systems."""
    lines = [
        "# IMDB trigram benchmark: nbsvm and peers, measured in one run",
        "",
        f"{runs} runs after one warm-up, in rounds (each system once per round), medians "
        "with (min-max); wall seconds for the "
        "whole job (read, tokenize, lexicon/vectorize, train 10 epochs, evaluate, save) "
        "and peak RSS from `os.wait4` of each process. Before measuring, the page-cache "
        "copies of all installed shared libraries are dropped (`settle_shared_libraries`: "
        "freshly pip-installed libraries otherwise map as large folios and inflate every "
        "process's RSS, nbsvm's by about 60 MB through llvmlite).",
        "",
        "| system | accuracy | total s | peak RSS MB | time / VW | RSS / VW |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name in table.system:
        measured = results[name]
        r = table[table.system == name].iloc[0]
        lines.append(
            f"| {name} | {r.accuracy:.2f}% | "
            f"{spread([x['seconds'] for x in measured])} | "
            f"{spread([x['peak_mb'] for x in measured], '{:.0f}')} | "
            f"{r.time_vs_vw:.2f} | {r.rss_vs_vw:.2f} |"
        )
    return lines


def stage_lines(table, results: dict, cold: list[dict]) -> list[str]:
    """nbsvm beside VW and fastText round by round, its stages, and its first run against
    warm runs."""
    warm = results[BASELINE]
    lines = [""]
    for peer in ("Vowpal", "fastText"):
        name = next((n for n in results if n.startswith(peer)), None)
        if name is None:
            continue
        paired = [a["seconds"] / b["seconds"] for a, b in zip(warm, results[name])]
        lines.append(
            f"Paired by round (the runs alternate between systems), nbsvm (threads 1) / "
            f"{peer.replace('Vowpal', 'VW')} time: "
            + ", ".join(f"{x:.2f}" for x in paired)
            + f" (median {statistics.median(paired):.2f})."
        )
        lines.append("")
    return lines + [
        "nbsvm stages (median seconds; the save runs beside the test eval): "
        + ", ".join(
            f"{k} {table.iloc[0][k]:.2f}"
            for k in ("lexicon+cache_s", "training_s", "test eval_s", "save_s")
            if k in table.columns
        ),
        "",
        f"First run after install (numba compiles its kernels): "
        f"{spread([r['seconds'] for r in cold])} s; warm runs (kernels loaded from the "
        f"on-disk cache): {spread([r['seconds'] for r in warm])} s.",
        "",
    ]


def scaling_lines(scaling: list[dict]) -> list[str]:
    if not scaling:
        return []
    lines = [
        "## Scaling: IMDB train replicated (nbsvm, threads 1, min_df 1)",
        "",
        "The training file is given 1, 2 and 4 times. `--min-df 1` because replicating "
        "a corpus multiplies every document frequency: with the default `--min-df 2` "
        "the 2x and 4x runs would keep every bucket seen once in the original (3.4x "
        "more weights, about 35 MB more) for a reason that has nothing to do with the "
        "corpus size. Whatever the setting, state is bounded by `2**n_bits`.",
        "",
        "| training documents | total s | peak RSS MB | accuracy |",
        "| --- | --- | --- | --- |",
    ]
    for s in scaling:
        lines.append(
            f"| {s['train_docs']:,} | {s['seconds_spread']} | {s['peak_mb_spread']} "
            f"| {s['accuracy']:.2f}% |"
        )
    lines.append("")
    return lines


def report_lines(runs: int, table, results: dict, cold: list[dict], scaling) -> list[str]:
    return (
        systems_lines(runs, table, results)
        + stage_lines(table, results, cold)
        + scaling_lines(scaling)
    )


def command_lines(systems: list[dict]) -> list[str]:
    """Every system's commands, paths relative to the repository."""
    lines = ["Commands:", "", "```"]
    for system in systems:
        for cmd in system["cmds"]:
            lines.append(shlex.join(cmd).replace(str(ROOT) + "/", ""))
    return lines + ["```", ""]
