"""pipelines/wang_manning.py reads each corpus with Wang & Manning's protocol: RT-2k's ten
folds by cv### number, Subj and MPQA's seeded ten folds, the 20NG pairs from bydate."""
import sys
from pathlib import Path

import pytest

from conftest import shared_datasets

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
import wang_manning as W  # noqa: E402


def _need(*parts):
    path = shared_datasets().joinpath(*parts)
    if not path.is_file():
        pytest.skip(f"{path} not found")


def test_rt2k_folds_are_the_cv_numbers():
    _need("rt_polarity_2k", "txt_sentoken.tar.gz")
    folds = W.splits("RT-2k", shared_datasets(), 0)
    assert len(folds) == 10
    for train, test in folds:          # 100 cv numbers a fold, a review of each polarity
        assert len(test[0]) == 200 and len(train[0]) == 1800
        assert test[1].count("pos") == test[1].count("neg") == 100
    tested = [t for _, (texts, _) in folds for t in texts]
    assert len(set(tested)) == 2000                     # every review tested exactly once


@pytest.mark.parametrize("name, n, counts", [("Subj", 10000, {"obj": 5000, "subj": 5000}),
                                             ("MPQA", 10606, {"pos": 3312, "neg": 7294})])
def test_sentence_corpora_have_ten_seeded_folds(name, n, counts):
    _need(name.lower(), f"{name.lower()}.tar.gz")
    folds = W.splits(name, shared_datasets(), 0)
    assert len(folds) == 10 and sum(len(test[0]) for _, test in folds) == n
    labels = [y for _, (_, ys) in folds for y in ys]
    assert {k: labels.count(k) for k in counts} == counts
    again = W.splits(name, shared_datasets(), 0)
    assert [t[1][0][:3] for t in again] == [t[1][0][:3] for t in folds]   # deterministic
    other = W.splits(name, shared_datasets(), 1)
    assert [t[1][0][:3] for t in other] != [t[1][0][:3] for t in folds]


@pytest.mark.slow  # make test-slow: the pipeline's loaders on real data; its quick run is another test
def test_newsgroup_pairs_follow_the_authors_halves_without_headers():
    """sidaw/nbsvm master.m: the pair's messages, headers stripped, two random halves."""
    _need("20newsgroups", "20news-bydate.tar.gz")
    halves = W.splits("AthR", shared_datasets(), 0)
    assert len(halves) == 2
    (train, test), (train2, test2) = halves
    assert set(train[1]) == set(test[1]) == {"alt.atheism", "talk.religion.misc"}
    # 1,427 messages as in Wang & Manning's Table 1, each tested once
    assert len(test[0]) + len(test2[0]) == 1427 and abs(len(test[0]) - len(test2[0])) <= 1
    assert sorted(test[0] + test2[0]) == sorted(train[0] + train2[0])
    raw_train, raw_test = W.newsgroups(shared_datasets(), W.PAIRS["AthR"])
    raw = raw_train[0] + raw_test[0]
    assert all(r.split("\n\n")[0].count(": ") >= 2 for r in raw)     # a header block each
    assert sorted(test[0] + test2[0]) == sorted(W.strip_headers(r) for r in raw)
    assert W.strip_headers("From: a\nSubject: b\n\nbody\n\nmore") == "body\n\nmore"
    # all 20 groups keep the bydate split and the headers
    [(train, test)] = W.splits("20NG", shared_datasets(), 0)
    assert (len(train[0]), len(test[0])) == (11314, 7532)
