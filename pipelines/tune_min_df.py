#!/usr/bin/env python
"""Choose ``min_df`` on a validation split of IMDB *train* (20k fit / 5k validation).

python pipelines/tune_min_df.py
"""

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from nbsvm import NBSVMClassifier  # noqa: E402
from nbsvm.evaluation.evaluate import evaluate_documents  # noqa: E402
from nbsvm.io import read_aclimdb  # noqa: E402


def main():
    docs = list(read_aclimdb(ROOT / "data" / "aclImdb" / "train"))
    val = set(np.random.default_rng(0).permutation(len(docs))[:5000].tolist())
    fit = [d for i, d in enumerate(docs) if i not in val]
    held = [d for i, d in enumerate(docs) if i in val]
    print("configuration: 20,000 fit / 5,000 validation reviews of IMDB train, seed 0")
    for min_df in (1, 2, 3):
        for ngrams in (2, 3):
            t0 = time.perf_counter()
            clf = NBSVMClassifier(ngrams=ngrams, min_df=min_df).fit_documents(iter(fit))
            secs = time.perf_counter() - t0
            rep = evaluate_documents(clf, iter(held))
            print(
                f"ngrams {ngrams} min_df {min_df}: validation accuracy {100 * rep['accuracy']:.2f}%"
                f"  columns {clf.linear_.n_features:,}  fit {secs:.1f}s",
                flush=True,
            )


if __name__ == "__main__":
    main()
