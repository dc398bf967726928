"""Dtypes, defaults and limits in one place."""
import numpy as np

BUCKET_DTYPE = np.int32       # bucket ids in [0, 2**n_bits), n_bits <= 31
OFFSET_DTYPE = np.int64       # document offsets into the id array
LABEL_DTYPE = np.int32        # class codes
RATIO_DTYPE = np.float32      # NB log-count ratios

MIN_BITS, MAX_BITS = 1, 31

# Defaults of the NBSVM pipeline, chosen on a 20k/5k validation split of IMDB train
# (pipelines/tune_defaults.py; results/tune_defaults*.csv), never on the test set:
# AdaGrad + log loss led every SGD setting (92.48% vs 92.08% validation accuracy), on a
# plateau where eta0 in [0.01, 0.05] and lambda in [0, 1e-3] differ by <= 0.1 point.
# min_df=2 (pipelines/tune_min_df.py): validation accuracy within 0.1 point of keeping every
# bucket (92.76% vs 92.86% for trigrams, 92.66% vs 92.46% for bigrams; one standard error is
# about 0.37 point on 5,000 reviews) with 3.4x fewer weights and 30% less training time.
DEFAULTS = dict(
    ngrams=3,
    n_bits=24,
    char_ngrams=0,
    hash_seed=0,
    alpha=1.0,
    min_df=2,
    loss="log",
    optimizer="adagrad",
    eta0=0.02,
    l2=1e-4,
    beta=1.0,
    interpolate="scores",
    epochs=10,
    seed=0,
    threads=1,
)

SHUFFLE_BUFFER_BYTES = 16 << 20  # ids held in memory while replaying the cache
SHUFFLE_BLOCK_BYTES = 256 << 10  # cache blocks shuffled as units beyond that budget
BATCH_DOCS = 512              # documents per streaming batch (small: bounded buffers)

FORMAT_VERSION = 1            # model and lexicon file format
