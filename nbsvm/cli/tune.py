"""``nbsvm tune``: grid search on a validation split or k folds of the training data."""

from __future__ import annotations

import json
import shlex
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import (
    Hashing,
    Reading,
    cli_errors,
    escape,
    files_given_again,
    prepare_reading,
    stdout_console,
)
from nbsvm.cli.options import (
    CHAR_NGRAMS_TRAIN,
    HASHING,
    INPUTS,
    QUIET,
    READING,
    hashing_options,
    reading_flags,
    reading_options,
    train_flags,
)
from nbsvm.cli.progress import ProgressReporter
from nbsvm.config import DEFAULT_GRID, DEFAULTS
from nbsvm.errors import NBSVMError

#: grid names as on the command line (``lambda``) -> parameter names (``lam``)
ALIASES = {"lambda": "lam"}
HEADERS = {
    "lam": "lambda",
    "accuracy": "accuracy %",
    "accuracy_std": "+-",
    "log_loss": "log loss",
    "train_seconds": "train s",
    "eta0_chosen": "eta0 chosen",
}


def _cell(col: str, v) -> str:
    if col in ("accuracy", "accuracy_std") and isinstance(v, float):
        return f"{100 * v:.2f}"
    if isinstance(v, float):
        return "" if v != v else f"{v:.3g}"
    return escape(str(v))


def _value(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


#: The share of the documents ``tune`` holds out without --valid or --folds.
VALID_FRACTION = 0.2


def parse_grid(specs: list[str]) -> dict:
    """``["lambda=1e-4,1e-5", "beta=1,0.9"]`` -> ``{"lam": [1e-4, 1e-5], "beta": [1, 0.9]}``."""
    from nbsvm.workflows.tune import TUNABLE

    grid = {}
    for spec in specs:
        name, sep, values = spec.partition("=")
        name = ALIASES.get(name.strip().replace("-", "_"), name.strip().replace("-", "_"))
        if not sep or not values.strip():
            raise NBSVMError(
                f"bad --grid {spec!r}: expected NAME=V1,V2,... (e.g. lambda=1e-4,1e-5)"
            )
        if name not in TUNABLE:
            raise NBSVMError(
                f"cannot tune {name!r}; tunable: "
                f"{', '.join('lambda' if t == 'lam' else t for t in TUNABLE)}"
            )
        if name in grid:  # the second replaced the first without a word
            said = "lambda" if name == "lam" else name
            raise NBSVMError(
                f"--grid gives {said!r} twice: give its values once ({said}=V1,V2,...)"
            )
        grid[name] = [_value(v.strip()) for v in values.split(",") if v.strip()]
    return grid


def command_line(inputs: Iterable[str], params: dict, reading: Sequence[str] = ()) -> str:
    """The ``nbsvm train`` command that trains the chosen settings on all the data, reading
    it as ``reading`` (:func:`~nbsvm.cli.options.reading_flags`) says."""
    return shlex.join(
        ["nbsvm", "train", *inputs, *reading, *train_flags(params), "-o", "model.npz"]
    )


@app.command("tune")
@reading_options()
@hashing_options(char_ngrams=CHAR_NGRAMS_TRAIN)  # train's default: the same features
def tune_command(
    inputs: list[str] = INPUTS,
    grid: list[str] | None = typer.Option(
        None,
        "--grid",
        help="NAME=V1,V2,... to search (repeat; names: ngrams, loss, optimizer, "
        "lambda, eta0 (numbers or auto), alpha, min_df, epochs, beta, "
        "interpolate; the value 'default' is what train uses without the option, for "
        "the task and the data). Default: "
        + "; ".join(
            f"{'lambda' if k == 'lam' else k}={','.join(map(str, v))}"
            for k, v in DEFAULT_GRID.items()
        )
        + ".",
    ),
    valid: float | None = typer.Option(
        None,
        "--valid",
        help="Fraction of the documents held out for validation (seeded; default 0.2).",
    ),
    folds: int = typer.Option(0, "--folds", help="k-fold cross-validation instead (k >= 2)."),
    hashing: Hashing = HASHING,
    epochs: int | None = typer.Option(
        None,
        "--epochs",
        min=1,
        help="Passes over the data (default: 10 with two classes, 5 with more).",
    ),
    seed: int = typer.Option(
        DEFAULTS["seed"], "--seed", min=0, help="Seeds the split and the epochs."
    ),
    cache_dir: str | None = typer.Option(
        None, "--cache-dir", help="Folder for the temporary caches."
    ),
    output: str | None = typer.Option(
        None, "--output", "-o", help="Write the ranked table as CSV."
    ),
    top: int = typer.Option(10, "--top", min=1, help="Rows of the table to print."),
    select: str = typer.Option(
        "1se",
        "--select",
        help="1se: keep the defaults (if the grid holds them) "
        "unless the best gains more than one standard error over "
        "them, paired over the folds or five blocks of the "
        "validation split; best: the highest validation "
        "accuracy.",
    ),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    reading: Reading = READING,
    quiet: bool = QUIET,
) -> None:
    """Search settings on held-out parts of the training data, hashing it once for all
    candidates; print a ranked table and the `nbsvm train` command of the best."""
    from nbsvm.io.npzfile import atomic_path

    with cli_errors():
        if folds and valid is not None:  # --folds replaced the split without a word
            raise NBSVMError("give --valid (a held-out split) or --folds (k folds), not both")
        valid = VALID_FRACTION if valid is None else valid
        suffix = Path(output).suffix.lower() if output else ""
        named = suffix[1:].isalnum() and not suffix[1:].isdigit()
        if named and suffix not in (".csv", ".txt"):
            # a CSV table was written under any name (.parquet, .json, .bz2; best.npz over
            # a model); a dot in a name (grid_C0.5, runs/2026.11.27) names no format
            raise NBSVMError(f"tune writes its table as CSV: name it .csv, not {output!r}")
        read_as = reading_flags(reading)  # as given: the printed command reads the same
        reading = prepare_reading(reading, {"an input": inputs}, output=output)
        for first, _, _ in files_given_again(inputs)[:1]:
            # its copies would fall on both sides of the splits: the scores flattered
            raise NBSVMError(
                f"{first} is given twice: copies of its documents would be trained on and "
                "scored in the same split, and every score would be too high; give it once"
            )
        options = dict(locals())  # every option by name (--text-col resolved), for the steps
        search = parse_grid(grid) if grid else dict(DEFAULT_GRID)
        base = _base_settings(**options)
        if not (quiet or json_out):
            typer.echo(
                "settings: "
                + json.dumps(
                    dict(base, grid=search, valid=None if folds else valid, folds=folds or None)
                )
            )
        t0 = time.perf_counter()
        result = _search(search, base, **options)
        if output:
            with atomic_path(output) as tmp:
                result.table.to_csv(tmp, index=False)
        assert result.chosen is not None  # tune() always chooses (the best, or the reference)
        best, chosen = dict(result.best), dict(result.chosen)
        cmd = _train_command(inputs, base, search, result, chosen, read_as)
        if json_out:
            typer.echo(json.dumps(_json_result(result, best, chosen, cmd), indent=2))
            return
        _print_table(result, folds, top)
        typer.echo(
            f"trainings: {result.n_trainings} for {len(result.table)} candidates "
            f"(prediction-only settings share a model; data hashed once)"
        )
        typer.echo(f"seconds: {time.perf_counter() - t0:.2f}")
        typer.echo(f"best on validation: {json.dumps(best)}")
        typer.echo(f"chosen: {json.dumps(chosen)} ({result.reason})")
        typer.echo(f"command: {cmd}")


def _train_command(inputs, base: dict, search: dict, result, chosen: dict, read_as) -> str:
    """The ``nbsvm train`` command that trains what tune scored for ``chosen``."""
    from nbsvm.workflows.tune import model_params

    fixed = {  # (a setting also in the grid is the choice's: --epochs 3 beside
        # --grid epochs=default,5 printed --epochs 3 for a 'default' that trained 10)
        k: v
        for k, v in base.items()
        if k != "seed"
        and k not in search
        and v is not None
        # --epochs as given: train's default follows the classes (10 with two, 5 with
        # more), so --epochs 10 left out trained 5 on three classes
        and (k == "epochs" or v != DEFAULTS.get(k))
    }
    # the character n-grams every candidate was hashed with: train's default (auto)
    # decides them again, from its own --ngrams (1..1 word n-grams gave 4 where tune,
    # deciding for the grid's trigrams, hashed none)
    hashed = (result.settings or {}).get("char_ngrams", base["char_ngrams"])
    if hashed is not None:
        fixed["char_ngrams"] = hashed
    settings = {k: v for k, v in model_params(chosen).items() if v is not None}
    return command_line(inputs, dict(fixed, **settings, seed=base["seed"]), read_as)


def _base_settings(*, hashing, epochs, seed, **_) -> dict:
    """The settings every candidate shares: hashing, epochs and seed."""
    return dict(hashing.settings(), epochs=epochs, seed=seed)


def _search(
    search: dict,
    base: dict,
    *,
    inputs,
    reading,
    valid,
    folds,
    seed,
    cache_dir,
    select,
    quiet,
    json_out,
    **_,
):
    """The result of :func:`nbsvm.workflows.tune.tune` on the inputs, with progress bars."""
    from nbsvm.workflows.tune import tune

    with ProgressReporter(quiet or json_out) as progress:
        return tune(
            reading.documents(inputs, hint=False),  # (tune has no --skip-bad-lines)
            search,
            base,
            valid_fraction=valid,
            folds=folds,
            seed=seed,
            workdir=cache_dir,
            select=select,
            callback=progress,
        )


def _json_result(result, best: dict, chosen: dict, cmd: str) -> dict:
    """``--json``: the choice, the command that trains it, and the ranked table."""
    return {
        "best": best,
        "chosen": chosen,
        "reason": result.reason,
        "standard_error": result.standard_error,
        "command": cmd,
        "seconds": result.seconds,
        "trainings": result.n_trainings,
        "split": result.split,
        "settings": result.settings,  # as hashed: char_ngrams read from the data
        "table": json.loads(result.table.to_json(orient="records")),
    }


def _print_table(result, folds: int, top: int) -> None:
    """The ``top`` rows of the ranked table, without the columns that say nothing."""
    from rich.table import Table

    table = result.table
    console = stdout_console()
    shown = Table(
        title=f"{len(table)} candidates, {result.split}, ranked by validation accuracy",
        title_justify="left",
    )
    cols = [
        c
        for c in table.columns
        if not (c == "accuracy_std" and not folds) and not table[c].isna().all()
    ]
    for col in cols:
        shown.add_column(HEADERS.get(col, col), justify="right")
    for _, row in table.head(top).iterrows():
        shown.add_row(*[_cell(col, row[col]) for col in cols])
    console.print(shown)
