#!/usr/bin/env python
"""The obvious scikit-learn baseline for topic classification, on class folders.

``load_files`` (latin-1), ``TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)`` and
``LinearSVC()``: reads, fits, scores the test folder and prints ``accuracy: N%``.

    python pipelines/peers/sklearn_tfidf_svc.py TRAIN_FOLDER TEST_FOLDER
"""

import argparse

import numpy as np
from sklearn.datasets import load_files
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.svm import LinearSVC


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("train")
    ap.add_argument("test")
    args = ap.parse_args(argv)
    train = load_files(args.train, encoding="latin-1")
    test = load_files(args.test, encoding="latin-1")
    vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    model = LinearSVC().fit(vec.fit_transform(train.data), train.target)
    predicted = model.predict(vec.transform(test.data))
    # the same class names in both folders, so the integer targets agree
    assert train.target_names == test.target_names
    print(f"accuracy: {100.0 * np.mean(predicted == test.target):.2f}%")


if __name__ == "__main__":
    main()
