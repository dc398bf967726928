"""``nbsvm quantize``: a smaller copy of a model file (:mod:`nbsvm.models.quantize`)."""

from __future__ import annotations

import typer

from nbsvm.cli._app import app
from nbsvm.cli.common import claim_outputs, cli_errors, refuse_model_name
from nbsvm.cli.options import QUIET
from nbsvm.cli.reports import echo_kv


@app.command()
def quantize(
    model: str = typer.Argument(..., metavar="MODEL", help="The model file to shrink."),
    output: str = typer.Option(
        ..., "--output", "-o", help="Where to write the smaller model (e.g. model.q.npz)."
    ),
    dtype: str = typer.Option(
        "int8",
        "--dtype",
        metavar="TYPE",
        help="How ratios and weights are stored: int8 (with one scale "
        "per output), float16 or float32 (only pruning).",
    ),
    cutoff: float = typer.Option(
        0.0,
        "--cutoff",
        metavar="NUMBER",
        help="Drop the buckets whose largest contribution to a score "
        "(ratio x weight) is below this.",
    ),
    keep: float | None = typer.Option(
        None,
        "--keep",
        metavar="SHARE",
        help="Keep only this share (0-1] of the buckets, those of the largest contributions.",
    ),
    quiet: bool = QUIET,  # as every command takes it (it shows no progress to leave out)
) -> None:
    """Write a smaller model: drop the buckets that add least, store ratios and weights as
    int8 or float16 (fastText's quantize). Every command loads it; it does not train
    further (no AdaGrad sums)."""
    from nbsvm.models.quantize import DTYPES
    from nbsvm.workflows.quantize import quantize_file

    with cli_errors():
        from nbsvm.errors import NBSVMError

        claim_outputs(reads={"the model": model}, output=output)
        refuse_model_name(output)
        if dtype not in DTYPES:
            raise NBSVMError(f"--dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
        if keep is not None and cutoff:  # both applied, without a word
            raise NBSVMError("--keep and --cutoff each choose the buckets kept: give one")
        done = quantize_file(model, output, dtype, cutoff, keep)
        echo_kv(
            {
                "stored as": done["dtype"],
                "buckets kept": f"{done['buckets_kept']:,}",
                "buckets dropped": f"{done['buckets_dropped']:,}",
                "size": f"{done['bytes_before'] / 2**20:.1f} MB -> "
                f"{done['bytes_after'] / 2**20:.1f} MB "
                f"({done['bytes_after'] / done['bytes_before']:.1%})",
                "saved": output,
            }
        )
