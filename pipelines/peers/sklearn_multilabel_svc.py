#!/usr/bin/env python
"""The obvious scikit-learn baseline for multi-label text: ``a,b<TAB>text`` lines,
``TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)`` and
``OneVsRestClassifier(LinearSVC())`` on ``MultiLabelBinarizer`` targets. Prints
``micro F1``, ``macro F1``, ``Hamming loss`` and ``subset accuracy`` of the test file.

    python pipelines/peers/sklearn_multilabel_svc.py TRAIN.tsv TEST.tsv
"""

import argparse

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics import accuracy_score, f1_score, hamming_loss
from sklearn.multiclass import OneVsRestClassifier
from sklearn.preprocessing import MultiLabelBinarizer
from sklearn.svm import LinearSVC


def read(path):
    labels, texts = [], []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            field, _, text = line.rstrip("\n").partition("\t")
            labels.append([v for v in field.split(",") if v])
            texts.append(text)
    return labels, texts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("train")
    ap.add_argument("test")
    args = ap.parse_args(argv)
    y_train, x_train = read(args.train)
    y_test, x_test = read(args.test)
    binarizer = MultiLabelBinarizer().fit(y_train)
    vec = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
    model = OneVsRestClassifier(LinearSVC()).fit(
        vec.fit_transform(x_train), binarizer.transform(y_train)
    )
    predicted = model.predict(vec.transform(x_test))
    known = set(binarizer.classes_)
    truth = binarizer.transform([[v for v in y if v in known] for y in y_test])
    print(f"micro F1: {f1_score(truth, predicted, average='micro'):.4f}")
    print(f"macro F1: {f1_score(truth, predicted, average='macro', zero_division=0):.4f}")
    print(f"Hamming loss: {hamming_loss(truth, predicted):.4f}")
    print(f"subset accuracy: {100 * accuracy_score(truth, predicted):.2f}%")


if __name__ == "__main__":
    main()
