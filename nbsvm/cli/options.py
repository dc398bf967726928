"""The command-line options several commands share (inputs, reading, Dask, output,
checkpoints), defined once so that their names and help read the same everywhere."""

import typer

from nbsvm.config import DEFAULTS
from nbsvm.io.readers import FORMAT_HELP
from nbsvm.io.tables import COLUMN_SEPARATOR

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
    help="Skip malformed lines (no TAB, empty label, a row with too many "
    "fields) and report how many, naming the first few; default: "
    "stop at the first, naming file and line.",
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
QUIET = typer.Option(False, "--quiet", "-q", help="No progress bars.")
JSON = typer.Option(False, "--json", help="Print the report as JSON only (no progress bars).")
STRICT = typer.Option(
    False, "--strict", help="Refuse invalid UTF-8 (default: replace it and report how many bytes)."
)


CHECKPOINT_EVERY = typer.Option(
    0,
    "--checkpoint-every",
    min=0,
    help="Save the training state every N epochs next to the model "
    "(MODEL.checkpoint.npz; 0: never).",
)
RESUME = typer.Option(
    False,
    "--resume",
    help="Continue from MODEL.checkpoint.npz if it exists (same data and "
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
    "phrases), else none.",
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
