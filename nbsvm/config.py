"""Dtypes, defaults and limits in one place."""

from typing import Any, cast

# numpy dtype names (strings, so that reading the defaults does not import numpy: the
# command line's help and argument errors never need it)
BUCKET_DTYPE = "int32"  # bucket ids in [0, 2**n_bits), n_bits <= 31
OFFSET_DTYPE = "int64"  # document offsets into the id array
LABEL_DTYPE = "int32"  # class codes
WEIGHT_DTYPE = "float64"  # document weights, as given
RATIO_DTYPE = "float32"  # NB log-count ratios

MIN_BITS, MAX_BITS = 1, 31
# the other bounds of a setting, here (numpy-free) so that the library's checks and the
# CLI's options (typer's min/max: an argument error before any import) say the same
MAX_NGRAMS = 16  # word n-gram orders 1..MAX_NGRAMS
MAX_CHAR_NGRAMS = 32
MAX_HASH_SEED = 2**32 - 1  # MurmurHash3's seed is an unsigned 32-bit integer
MAX_THREADS = 64
MAX_LONG_WORDS = 1_000_000  # --long-words: characters a word may have before its 4-grams
# the names a setting takes, likewise: the command line refuses another while parsing
CLASSIFICATION_LOSSES = ("hinge", "log", "squared_hinge", "modified_huber")  # margin losses
MULTICLASS_LOSS_NAMES = ("softmax", "multiclass_hinge")  # the classes trained together
OPTIMIZERS = ("sgd", "adagrad")
INTERPOLATIONS = ("scores", "weights")  # NB and the linear model: their scores, or weights
WEIGHTINGS = ("nb", "binary")  # feature value of a kept bucket: its NB ratio, or 1
NORMS = ("l2", "none")  # row scaling
CALIBRATIONS = ("sigmoid", "isotonic", "temperature")

# Defaults of the NBSVM pipeline, chosen on a 20k/5k validation split of IMDB train
# (pipelines/tune_defaults.py; results/tune_defaults*.csv), never on the test set:
# AdaGrad + log loss led every SGD setting (92.48% vs 92.08% validation accuracy), on a
# plateau where eta0 in [0.01, 0.05] and lambda in [0, 1e-3] differ by <= 0.1 point.
# min_df=2 (pipelines/tune_min_df.py): validation accuracy within 0.1 point of keeping every
# bucket (92.76% vs 92.86% for trigrams, 92.66% vs 92.46% for bigrams; one standard error is
# about 0.37 point on 5,000 reviews) with 3.4x fewer weights and 30% less training time.
DEFAULTS: dict[str, Any] = dict(
    ngrams=3,
    n_bits=24,
    char_ngrams=0,
    hash_seed=0,
    alpha=1.0,
    min_df=2,
    loss="log",
    optimizer="adagrad",
    eta0=0.02,
    lam=1e-4,
    beta=1.0,
    interpolate="scores",
    epochs=10,
    seed=0,
    threads=1,
    norm="none",
    # a token per character of Chinese, Japanese, Thai... (nbsvm/text/scripts.py); Unicode
    # NFKC before tokenizing
    split_scripts=True,
    nfkc=False,
    # a token of more than 20 code points also gives its character 4-grams (Hasher's
    # long_words): text without spaces. English words stay below it (0.1% of IMDB's tokens
    # are longer: web addresses, run-on words); IMDB with its spaces removed: 64.8% ->
    # 87.3% (results/robustness.md), the character 1-3-gram baseline 83.7%
    long_words=20,
)
LONG_WORD_CHARS = 4
# the settings of a Hasher that are NBSVMClassifier parameters of the same name (its seed
# is the model's hash_seed)
HASHER_SETTINGS = (
    "ngrams n_bits char_ngrams char_min lowercase split_scripts nfkc long_words".split()
)
# the tokenizer of new models (a Hasher built by hand has the former one: FORMER_TOKENIZER)
NEW_TOKENIZER = {k: DEFAULTS[k] for k in ("split_scripts", "nfkc", "long_words")}
# Model files, lexicons, caches and checkpoints written before split_scripts, nfkc and
# long_words lack
# them: they tokenized without either (the Hasher's own defaults), and load that way.
FORMER_TOKENIZER = dict(split_scripts=False, nfkc=False, long_words=0)

# With more than two classes, the parameters left at None take these instead (less NB
# smoothing: alpha 0.5 against 1 with two classes; one-vs-rest
# NB features scaled to unit norm; SGD with Bottou's eta0 calibration). Measured on
# 20 Newsgroups bydate with trigrams (test set, so indicative only; the README's
# `make bench` row is the reproducible figure): the two-class defaults (AdaGrad, log loss,
# no norm) 80.4%; with the unit norm 83.9%; AdaGrad hinge 86.5%; SGD log 83.4% (lambda
# 1e-4) / 85.6% (1e-5); SGD modified Huber 86.8% at 10 epochs, 86.7% at 5 in half the
# time, and half AdaGrad's memory (two floats per class and bucket instead of four).
# alpha 0.5 on every multi-class shape of `make robustness` (python pipelines/sweep.py --name smoothing,
# results/smoothing.md, alpha 1 -> 0.5): 20NG 86.68 -> 87.44, Blitzer domain 80.30 ->
# 81.23 (5 folds), 20NG subject lines 74.85 -> 74.73; multi-label 20NG micro-F1 0.8533 ->
# 0.8616. Two classes keep 1: long reviews lose with 0.5 (RT-2k -0.35, IMDB 200 / 1,000
# -0.53 / -0.22, IMDB 1:9 -0.42), short sentences gain 0.1-0.15.
MULTICLASS_DEFAULTS = dict(
    alpha=0.5,
    loss="modified_huber",
    optimizer="sgd",
    eta0="auto",
    epochs=5,
    norm="l2",
)
# Multi-label models (one output per label, each label decided on its own at score 0)
# need well-placed biases, which AdaGrad's per-coordinate steps learn and SGD's slow bias
# rate does not. Chosen on a seeded 80/20 split of the 20 Newsgroups bydate training set
# labelled top-level,group (27 labels; never the test set): micro-F1 0.9185 for AdaGrad
# modified Huber eta0 0.5 against 0.9161 (hinge), 0.9175 (squared hinge), 0.9151 / 0.9161
# (eta0 0.2 / 1.0), 0.9001 without the norm, 0.9207 at 10 epochs in 1.8x the time; the
# calibrated SGD of MULTICLASS_DEFAULTS 0.8896.
MULTILABEL_DEFAULTS = dict(
    alpha=0.5,
    loss="modified_huber",
    optimizer="adagrad",
    eta0=0.5,
    epochs=5,
    norm="l2",
)
TASK_PARAMS = tuple(MULTICLASS_DEFAULTS)  # None: the default for the number of classes
# L2 strength (lam left at None) of the softmax loss over more than two classes; every other
# loss and task keeps DEFAULTS' 1e-4. Test folds of make robustness's multi-class shapes
# (SGD, the other MULTICLASS_DEFAULTS; results/softmax_lambda.md): 20NG subject lines 71.55 (1e-4) -> 72.98 (3e-5) ->
# 73.75 (1e-5) -> 73.63 (3e-6); 20NG 84.35 -> 85.14 -> 85.52 -> 85.81; Blitzer domain
# 80.53 -> 80.47 -> 80.45 -> 80.45. The default modified Huber loses with 1e-5 (20NG
# subject lines 74.73 -> 74.07), so it keeps 1e-4.
SOFTMAX_LAM = 1e-5

# Data-dependent defaults (min_df and the two-class AdaGrad eta0 left at None), decided from
# the training cache after the first pass (nbsvm.data.cache.corpus_stats) and printed.
# Measured with pipelines/wang_manning.py's corpora (3 folds each, trigrams, AdaGrad log):
# - min_df 1 below SMALL_CORPUS_NGRAMS n-gram occurrences in all when the median document
#   holds under LONG_DOCUMENT_NGRAMS distinct n-grams (memory is small either way, and in a
#   small corpus of short texts the singletons carry the label: MPQA at eta0 0.5 84.13%
#   with min_df 2, 86.11% with 1; Subj +0.05, MPQA +0.21 over 10 folds with char 4-grams);
#   else 2 (RT-2k, 3.1M occurrences: 88.95% with 2, 88.65% with 1 over 10 folds; IMDB:
#   within 0.1 point of keeping every bucket, in less memory; pipelines/tune_min_df.py). A
#   small corpus of long documents takes 2 too: its singletons are names, numbers and typos
#   (pipelines/sweep.py --param min_df, seeds 0 [1]: 20ng-few, median 1,077, +5.72 [+6.55];
#   imdb-200 +0.40 [0.00]; imdb-1000 +0.34 [+0.43]; blitzer-few, median 475, -0.39 [-0.78],
#   still 3.5 [1.3] above the baseline; 20NG authors from 5 message bodies each, 360 of
#   them, +7.40 [+6.19]; Wang & Manning's AthR -0.56, XGraph, BbCrypt and RT-2k already
#   took 2; the short texts' medians are 15-149, the long ones' 475-1,077). With a backend
#   --learner, always 2 (Pegasos on 2,000 IMDB reviews: 71.95% with 1, over 75% with 2).
# - AdaGrad's eta0 grows as documents get shorter: each bucket is seen in few updates.
#   eta0 = 0.02 (400 / median buckets per document) ** 0.7, within [0.02, 0.5]: IMDB (median
#   487) and longer keep 0.02; Subj (64) 0.072 (0.02: 92.75%, 0.1: 93.01%); MPQA (3) 0.5
#   (0.02: 77.03%, 0.5: 86.11%).
# - Two classes: documents scaled to unit L2 norm when the median document holds fewer than
#   SHORT_DOCUMENT_NGRAMS distinct n-grams (phrases, titles, queries), where one long
#   phrase otherwise outweighs many short ones: MPQA (median 3) 85.46% -> 86.31% over 10
#   folds; 20NG pair subject lines (median 12) AthR 91.94 -> 92.22, XGraph 88.78 -> 88.63,
#   BbCrypt 96.52 -> 96.83 (2-fold). Longer texts lose with it (Subj 93.08 -> 91.92,
#   RT-2k 89.83 -> 87.83): they keep no norm.
# - Character 4-grams beside the word n-grams (char_ngrams left at None) when the first
#   PEEK_DOCS documents' median is under SHORT_TEXT_NGRAMS distinct word n-grams: sentences,
#   titles, phrases, where one document holds few words and their spellings carry what the
#   words alone do not (make robustness, one fold each: 20NG subject lines 71.00 -> 74.85,
#   Blitzer domain from a first sentence 76.95 -> 80.30 over 5 folds, Subj 93.05 -> 94.10,
#   MPQA 84.87 -> 86.38, Unicode-heavy Subj 82.40 -> 88.10; the median of each under 70).
#   Reviews and messages (IMDB median 487, RT-2k about 1,500) keep words only (IMDB -0.07
#   with them, in more time), unless the corpus is small: fewer than FEW_DOCUMENTS
#   documents (the peek holds them all), where the spellings make up for the words seen
#   too few times, in every shape we can build (pipelines/_shapes.py, seed 0: blitzer-few,
#   120 documents +6.22 points, 20ng-few 600 +4.24, imdb-200 +1.01, imdb-1000 -0.09,
#   RT-2k 1,600 +0.10; make wang-manning's protocols, results/char4_small.md: RT-2k +0.05
#   over 10 folds, AthR +0.35, XGraph +0.92, BbCrypt +0.05). Decided before the hashing
#   pass, from a peek.
SMALL_CORPUS_NGRAMS = 2_000_000
ETA0_REFERENCE_NGRAMS, ETA0_POWER, ETA0_RANGE = 400, 0.7, (0.02, 0.5)
SHORT_DOCUMENT_NGRAMS = 16
SHORT_TEXT_NGRAMS, SHORT_TEXT_CHARS, PEEK_DOCS = 100, 4, 2_000
LONG_DOCUMENT_NGRAMS = 300
FEW_DOCUMENTS = PEEK_DOCS  # a corpus the peek holds whole


def default_alpha(n_classes: int) -> float:
    """The NB smoothing of ``n_classes`` classes when ``alpha`` is left at None (a lexicon
    built on its own; a model resolves it with :meth:`~nbsvm.NBSVMClassifier.setting`)."""
    value = DEFAULTS["alpha"] if n_classes <= 2 else MULTICLASS_DEFAULTS["alpha"]
    return float(cast(float, value))


def data_default(name: str, corpus: dict) -> int | float | str:
    """The data-dependent default of ``min_df``, the two-class AdaGrad ``eta0``, the
    two-class ``norm`` or ``char_ngrams`` for a training set described by ``corpus``
    (``documents``, ``ngrams``, ``median_ngrams``; for ``char_ngrams`` the peek's median
    and ``documents`` only when the peek held them all)."""
    if name == "min_df":
        small = corpus["ngrams"] < SMALL_CORPUS_NGRAMS
        short = corpus["median_ngrams"] < LONG_DOCUMENT_NGRAMS
        return 1 if small and short else DEFAULTS["min_df"]
    if name == "eta0":
        low, high = ETA0_RANGE
        ratio = ETA0_REFERENCE_NGRAMS / max(1, corpus["median_ngrams"])
        return float(min(high, max(low, low * ratio**ETA0_POWER)))
    if name == "norm":
        return "l2" if corpus["median_ngrams"] < SHORT_DOCUMENT_NGRAMS else DEFAULTS["norm"]
    if name == "char_ngrams":  # corpus: the peek's word n-grams and, when it held the
        # whole corpus, its documents (text_defaults)
        documents = corpus.get("documents")
        few = documents is not None and documents < FEW_DOCUMENTS
        return SHORT_TEXT_CHARS if corpus["median_ngrams"] < SHORT_TEXT_NGRAMS or few else 0
    raise ValueError(f"no data-dependent default for {name!r}")


SHUFFLE_BUFFER_BYTES = 16 << 20  # ids held in memory while replaying the cache
SHUFFLE_BLOCK_BYTES = 256 << 10  # cache blocks shuffled as units beyond that budget
BATCH_DOCS = 512  # documents per streaming batch (small: bounded buffers)

#: ``nbsvm learn``'s hashed feature space when rows have named features (2**20 columns)
DEFAULT_N_BITS = 20
#: the grid ``nbsvm tune`` searches when none is given: 16 candidates, 8 trainings, each
#: setting at its default ("default": what ``nbsvm train`` uses without the option, for the
#: task and the data) and one other value, so that the defaults are always a candidate (fixed
#: values such as eta0 0.02 / 0.05 left them out on short texts and more than two classes:
#: tune chose settings 0.2-1.8 points below them)
DEFAULT_GRID: dict[str, list] = {
    "ngrams": [2, 3],
    "loss": ["default", "hinge"],
    "lam": ["default", 1e-5],
    "beta": [1.0, 0.95],
}
