"""The command-line options several commands share (inputs, reading, Dask, output,
checkpoints), defined once so that their names and help read the same everywhere; the
options that say how text is read and hashed and where a command runs come as groups
(:func:`reading_options`, :func:`hashing_options`, :func:`dask_options`)."""

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import typer

from nbsvm.cli.common import Dask, Hashing, Reading
from nbsvm.config import DEFAULTS, MAX_BITS, MAX_HASH_SEED, MAX_LONG_WORDS, MIN_BITS
from nbsvm.errors import NBSVMError
from nbsvm.io.formats import COLUMN_SEPARATOR, FORMAT_HELP

INPUTS = typer.Argument(
    ...,
    metavar="INPUT",
    help="aclImdb-style split folders, label<TAB>text files or .csv files "
    "('-': standard input). Labels are stripped of surrounding "
    "spaces; two labels differing only in case are an error.",
    show_default=False,
)
FORMAT = typer.Option("auto", "--format", help=f"Input format: {FORMAT_HELP}.")
TEXT_COL = typer.Option(
    ["text"],
    "--text-col",
    help="Text column (field) of CSV/TSV, JSON lines or Parquet input; "
    "repeat it to join several (e.g. title and body, joined with "
    f"{COLUMN_SEPARATOR.strip()!r}). Numbers (from 1) read a CSV "
    "without a header row: --text-col 2 --text-col 3 --label-col 1.",
)
LABEL_SEP = typer.Option(
    "\t",
    "--label-sep",
    metavar="SEP",
    show_default=False,
    help="What ends the label of a line file's line (default: TAB). "
    "--label-sep ' ' reads 'label text' lines (SST, TREC's "
    "COARSE:fine).",
)
ENCODING = typer.Option(
    "utf-8",
    "--encoding",
    help="Text encoding of the inputs: utf-8 (invalid bytes replaced and "
    "counted, or refused with --strict), latin-1 for old corpora such "
    "as 20 Newsgroups, or any other ASCII-compatible codec.",
)
SKIP_BAD = typer.Option(
    False,
    "--skip-bad-lines",
    help="Skip malformed lines (no TAB, empty label, a row with too many or too few "
    "fields) and report how many, naming the first few; default: "
    "stop at the first, naming file and line.",
)
WEIGHT_COL = typer.Option(
    None,
    "--weight-col",
    metavar="COLUMN",
    help="The column (CSV/TSV, Parquet) or field (JSON lines) of each training "
    "document's weight, a number >= 0: a document of weight k counts k times in the NB "
    "counts, and its learning steps are k times as large (scikit-learn's sample_weight; "
    "built-in learner only). --min-df counts documents of weight > 0, each once.",
)
LABEL_COL = typer.Option(
    "label",
    "--label-col",
    help="Label column (field) of CSV/TSV, JSON lines or Parquet input, or its number (from 1) in a CSV without a header row.",
)
SCHEDULER = typer.Option(
    None,
    "--scheduler",
    help="Run on the Dask cluster at this address (tcp://host:8786); "
    "inputs are shards (files or globs) each worker reads itself. "
    "Needs pip install 'nbsvm[dask]'.",
)
DASK_LOCAL = typer.Option(
    None, "--dask-local", min=1, help="Run on a local Dask cluster of N worker processes."
)
QUIET = typer.Option(
    False, "--quiet", "-q", help="No progress bars or progress notes (warnings still print)."
)
ALPHA_HELP = "NB smoothing (default: 1 with two classes, 0.5 with more and multi-label)."
JSON = typer.Option(False, "--json", help="Print the report as JSON only (no progress bars).")
MAX_MEMORY = typer.Option(
    None,
    "--max-memory",
    help="Refuse to start when training would need more (e.g. 2G); always refused "
    "beyond the memory available.",
)
STRICT = typer.Option(
    False, "--strict", help="Refuse invalid UTF-8 (default: replace it and report how many bytes)."
)


CHECKPOINT_EVERY = typer.Option(
    0,
    "--checkpoint-every",
    min=0,
    help="Save the training state every N epochs next to the model "
    "(-o m.npz: m.checkpoint.npz; 0: never).",
)
RESUME = typer.Option(
    False,
    "--resume",
    help="Continue from the checkpoint next to the model if it exists (-o m.npz: "
    "m.checkpoint.npz; same data and "
    "settings; --epochs may grow).",
)
CHAR_NGRAMS = typer.Option(
    "0",
    "--char-ngrams",
    metavar="N|LO-HI",
    help="Character n-grams of each word framed as <word>: of length N, "
    "or of every length LO..HI (2-5, as fastText's -minn 2 -maxn "
    "5); 0: none.",
)
CHAR_NGRAMS_TRAIN = typer.Option(
    "auto",
    "--char-ngrams",
    metavar="auto|N|LO-HI",
    help="Character n-grams of each word framed as <word>: of "
    "length N, or of every length LO..HI (2-5, as "
    "fastText's -minn 2 -maxn 5); 0: none. auto: 4 when "
    "the first 2,000 training documents' median is under "
    "100 distinct word n-grams (sentences, titles, "
    "phrases) or the corpus has fewer than 2,000 "
    "documents, else none.",
)
KEEP_CASE = typer.Option(
    False,
    "--keep-case",
    help="Keep the text's case (Good and good are different words); the default lowercases.",
)
SPLIT_SCRIPTS = typer.Option(
    DEFAULTS["split_scripts"],
    "--split-scripts/--no-split-scripts",
    help="Make every character of the scripts written without "
    "spaces (Chinese, Japanese, Thai, Lao, Khmer, Myanmar...) "
    "and each fullwidth or CJK punctuation mark a token of its "
    "own, so that word n-grams over them are character n-grams; "
    "Latin words and Korean stay words. --no-split-scripts: "
    "split on white space and . \" , ( ) ! ? ; : only, as "
    "models saved before the option.",
)
LONG_WORDS = typer.Option(
    DEFAULTS["long_words"],
    "--long-words",
    metavar="N",
    min=0,
    max=MAX_LONG_WORDS,
    help="A word of more than N characters also gives its character "
    "4-grams (without --char-ngrams): text written without spaces, "
    "where a word is a whole phrase. 0: off, as models saved "
    "before the option.",
)
NFKC = typer.Option(
    DEFAULTS["nfkc"],
    "--nfkc",
    help="Unicode NFKC normalization before tokenizing: fullwidth letters "
    "and digits (Ｇｏｏｄ１) read as ASCII, halfwidth katakana as "
    "katakana, … as ...",
)


def one_of(what: str, names: Sequence[str]) -> Callable[[Any], Any]:
    """A typer callback that refuses a value outside ``names`` (config.py's, which the
    library checks too) while the options are parsed, before the library is imported: a
    wrong name is an argument error in a tenth of a second."""

    def check(value: Any) -> Any:
        if value is not None and value not in names:
            raise typer.BadParameter(f"unknown {what} {value!r}; allowed: {', '.join(names)}")
        return value

    return check


# a bound given as typer's min/max is checked while parsing, before the library is imported
# (an argument error in a tenth of a second); the library checks the same bound (config.py)
N_BITS = typer.Option(
    DEFAULTS["n_bits"], "--n-bits", min=MIN_BITS, max=MAX_BITS, help="2**N hash buckets."
)
HASH_SEED = typer.Option(
    DEFAULTS["hash_seed"], "--hash-seed", min=0, max=MAX_HASH_SEED, help="MurmurHash3 seed."
)


#: the place of a group of options in a command's signature: ``reading: Reading = READING``,
#: ``hashing: Hashing = HASHING``, ``dask: Dask = DASK`` (see :func:`option_group`)
READING: Any = None
HASHING: Any = None
DASK: Any = None

Command = TypeVar("Command", bound=Callable[..., Any])


def option_group(
    param: str, make: Callable[..., Any], group: dict[str, tuple[Any, Any]]
) -> Callable[[Command], Command]:
    """A decorator that puts the options of ``group`` (``parameter name -> (type, typer
    option)``) in a typer command's signature where its parameter ``param`` stands, and
    calls the command with them as one value, ``make(**their values)``, under that name."""

    def decorate(command: Command) -> Command:
        signature = inspect.signature(command, eval_str=True)
        params: list[inspect.Parameter] = []
        for p in signature.parameters.values():
            if p.name != param:
                params.append(p)
                continue
            params += [
                inspect.Parameter(name, p.kind, default=option, annotation=annotation)
                for name, (annotation, option) in group.items()
            ]

        @functools.wraps(command)
        def with_group(**kwargs: Any) -> Any:
            value = make(**{name: kwargs.pop(name) for name in group})
            return command(**{param: value}, **kwargs)

        # typer reads the parameters from the signature, their types from the annotations
        with_group.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
        with_group.__annotations__ = {
            p.name: p.annotation for p in params if p.annotation is not p.empty
        }
        if signature.return_annotation is not signature.empty:
            with_group.__annotations__["return"] = signature.return_annotation
        return with_group  # type: ignore[return-value]

    return decorate


def reading_options(label_col: Any = LABEL_COL) -> Callable[[Command], Command]:
    """The options that say how a command reads text (``--format``, ``--text-col``,
    ``--label-col``, ``--strict``, ``--encoding``, ``--label-sep``), handed to it as one
    :class:`~nbsvm.cli.common.Reading`, ``reading`` (``text_col`` as given: resolve it
    with :func:`~nbsvm.cli.common.prepare_reading`). ``label_col``: the ``--label-col``
    option of a command that says it differently."""
    return option_group("reading", Reading, reading_spec(label_col))


def reading_spec(label_col: Any = LABEL_COL) -> dict[str, tuple[Any, Any]]:
    """Each :class:`~nbsvm.cli.common.Reading` field: its type and its option."""
    return {
        "fmt": (str, FORMAT),
        "text_col": (list[str], TEXT_COL),
        "label_col": (str | None, label_col),
        "strict": (bool, STRICT),
        "encoding": (str, ENCODING),
        "label_sep": (str, LABEL_SEP),
    }


def reading_flags(reading: Reading, label_col: Any = LABEL_COL) -> list[str]:
    """The options that read as ``reading`` does (as given, before
    :func:`~nbsvm.cli.common.prepare_reading`), those at their defaults left out: what a
    printed command needs to read the same documents."""
    out: list[str] = []
    for name, (_, option) in reading_spec(label_col).items():
        value, flag = getattr(reading, name), option.param_decls[0]
        if value == option.default or value is None:
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [flag, str(v)]
        else:
            out += [flag, str(value)]
    return out


# the reading options of text alone (tables and labelled lines): sparse features have none
TEXT_READING = ("--text-col", "--label-col", "--label-sep")


def refuse_text_reading(given: list[str], model: str) -> None:
    """Refuse the text-reading options among ``given`` (:func:`reading_flags` of the
    command, before :func:`~nbsvm.cli.common.prepare_reading`) for an `nbsvm learn`
    ``model``, which reads sparse features: they were ignored."""
    text = [flag for flag in dict.fromkeys(given) if flag in TEXT_READING]
    if text:
        raise NBSVMError(
            f"{', '.join(text)}: options for reading text, for models of `nbsvm train`; "
            "this is an `nbsvm learn` model, which reads sparse features",
            path=model,
        )


#: NBSVMClassifier parameters whose option is not --NAME-WITH-DASHES
_PARAM_FLAGS = {"lam": "--lambda"}


def train_flags(params: dict[str, Any]) -> list[str]:
    """``nbsvm train`` options that give ``params`` (NBSVMClassifier parameters; ``char_min``
    goes with ``char_ngrams``, ``lowercase`` False is --keep-case)."""
    out: list[str] = []
    for k, v in params.items():
        flag = _PARAM_FLAGS.get(k, "--" + k.replace("_", "-"))
        if k == "char_min" or (k == "lowercase" and v):
            continue
        if k == "lowercase":
            out.append("--keep-case")
        elif k == "char_ngrams" and params.get("char_min"):
            out += [flag, f"{params['char_min']}-{v}"]
        elif v is True:
            out.append(flag)
        elif v is False:
            if k == "split_scripts":  # the one on-by-default switch
                out.append("--no-split-scripts")
        else:
            out += [flag, f"{v:g}" if isinstance(v, float) else str(v)]
    return out


def hashing_options(char_ngrams: Any = CHAR_NGRAMS) -> Callable[[Command], Command]:
    """The options that say how a command hashes text (``--n-bits``, ``--char-ngrams``,
    ``--keep-case``, ``--split-scripts``, ``--nfkc``, ``--long-words``, ``--hash-seed``),
    handed to it as one :class:`~nbsvm.cli.common.Hashing`, ``hashing``. ``char_ngrams``:
    the ``--char-ngrams`` option of a command that says it differently."""
    return option_group("hashing", Hashing, hashing_spec(char_ngrams))


def hashing_spec(char_ngrams: Any = CHAR_NGRAMS) -> dict[str, tuple[type, Any]]:
    """Each :class:`~nbsvm.cli.common.Hashing` field: its type and its option."""
    return {
        "n_bits": (int, N_BITS),
        "char_ngrams": (str, char_ngrams),
        "keep_case": (bool, KEEP_CASE),
        "split_scripts": (bool, SPLIT_SCRIPTS),
        "nfkc": (bool, NFKC),
        "long_words": (int, LONG_WORDS),
        "hash_seed": (int, HASH_SEED),
    }


def dask_options() -> Callable[[Command], Command]:
    """``--scheduler`` and ``--dask-local``, handed to a command as one
    :class:`~nbsvm.cli.common.Dask`, ``dask``."""
    return option_group(
        "dask", Dask, {"scheduler": (str | None, SCHEDULER), "dask_local": (int | None, DASK_LOCAL)}
    )
