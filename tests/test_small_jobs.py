"""Small jobs without numba (nbsvm/_small_jobs.py): the plain paths give the kernels' ids,
columns and scores bit for bit, and `nbsvm predict` of a few documents never imports numba."""
from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from nbsvm import NBSVMClassifier, _small_jobs
from nbsvm.data import _translate_kernels
from nbsvm.data.translate import _plain_translate
from nbsvm.learners.kernels import table, table_plain
from nbsvm.text.hashing import Hasher

DATA = Path(__file__).resolve().parents[1] / "data"


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal values with equal signs of zero (a printed -0.0 is not 0.0)."""
    return a.shape == b.shape and np.array_equal(a, b) and np.array_equal(np.signbit(a), np.signbit(b))


def _table_rows(rng, n_docs=40, n_features=60):
    S = rng.normal(size=(n_features, 3)).astype(np.float32)
    S[::7, 0] = 0.0                     # values of 0: products of -0.0 with negative weights
    S[::5, 1] = -np.abs(S[::5, 1])
    sizes = rng.integers(0, 12, size=n_docs)
    sizes[:3] = 0                       # empty rows
    offsets = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    ids = rng.integers(0, n_features, size=int(offsets[-1])).astype(np.int32)
    ids[offsets[3]:offsets[4]] = 0      # a row of zero values only
    return ids, offsets, S


@pytest.mark.parametrize("unit", [False, True])
def test_plain_scores_and_table_sums_equal_the_kernels_bit_for_bit(unit):
    rng = np.random.default_rng(3)
    for _ in range(5):
        ids, offsets, S = _table_rows(rng)
        n = len(offsets) - 1
        want = np.empty(n)
        table._scores(ids, offsets, S, 0.7, want, unit)
        assert _same_bits(table_plain.scores(ids, offsets, S, 0.7, unit), want)
        table._table_sums(ids, offsets, S, want, unit)
        assert _same_bits(table_plain.table_sums(ids, offsets, S, unit), want)


def test_plain_translate_equals_the_kernel():
    rng = np.random.default_rng(5)
    remap = np.full(200, -1, dtype=np.int32)
    kept = rng.choice(200, size=80, replace=False)
    remap[kept] = np.arange(80, dtype=np.int32)
    ids = rng.integers(0, 200, size=300).astype(np.int32)
    for offsets in (np.array([0, 10, 10, 150, 300]), np.array([20, 40, 40, 41]),
                    np.array([0]), np.array([5, 5])):
        offsets = offsets.astype(np.int64)
        got, want = _plain_translate(ids, offsets, remap), _translate_kernels._translate(
            ids, offsets, remap)
        assert np.array_equal(got[0], want[0]) and got[0].dtype == want[0].dtype
        assert np.array_equal(got[1], want[1]) and got[1].dtype == want[1].dtype
    for bad in (np.array([0, 400]), np.array([-1, 3]), np.array([0, 50, 20])):
        with pytest.raises(ValueError):
            _translate_kernels._translate(ids, bad.astype(np.int64), remap)
        with pytest.raises(ValueError):
            _plain_translate(ids, bad.astype(np.int64), remap)


@pytest.mark.parametrize("n_bits", [6, 7, 12, 16])
def test_a_rank_table_translates_as_the_map(n_bits):
    """The first epoch (and a long stream's hashers) look columns up in the map's rank
    table: the same rows as the map, for kept shares from none to all, ids at the ends of
    the table and of its 64-bucket words, columns in bucket order (a loaded model's) or in
    two parts (a trained one's: the hot buckets', then the others'); the table is numpy's
    bits and counts of them. A map in any other order has none."""
    from nbsvm.data.translate import Translator, rank_map
    rng = np.random.default_rng(n_bits)
    n = 1 << n_bits
    for share, parts in [(s, p) for s in (0.0, 0.05, 0.5, 1.0) for p in (1, 2)]:
        remap = np.full(n, -1, dtype=np.int32)
        kept = rng.random(n) < share
        hot = kept & ((rng.random(n) < 0.3) if parts == 2 else True)
        cold = kept & ~hot
        remap[hot] = np.arange(hot.sum(), dtype=np.int32)
        remap[cold] = hot.sum() + np.arange(cold.sum(), dtype=np.int32)
        if np.array_equal(remap[kept], np.arange(kept.sum())):
            hot, cold = kept, kept & False  # (one part: every column reads as hot)
        table, n_hot = rank_map(remap)
        assert n_hot == hot.sum()
        words = [np.packbits(m, bitorder="little").view(np.uint64) for m in (kept, hot, cold)]
        assert np.array_equal(table[:, 0], words[0]) and np.array_equal(table[:, 1], words[1])
        before = [np.r_[0, np.cumsum([bin(w).count("1") for w in ws.tolist()])[:-1]]
                  for ws in words[1:]]
        assert np.array_equal(table[:, 2], before[0] + (before[1] << 32))
        offsets = np.r_[0, np.cumsum(rng.integers(0, 60, 30))].astype(np.int64)
        ids = rng.integers(0, n, int(offsets[-1])).astype(np.int32)
        ids[:4] = [0, n - 1, 63, 64 % n]
        want = _translate_kernels._translate(ids, offsets, remap)
        with pytest.MonkeyPatch.context() as m:  # (maps this small go without a table)
            m.setattr("nbsvm.data.translate.RANK_MIN_BUCKETS", 64)
            through = Translator(remap, expected=n)(ids, offsets)
        for got in (_translate_kernels._rank_translate(ids, offsets, table, n_hot), through):
            assert np.array_equal(got[0], want[0]) and got[0].dtype == want[0].dtype
            assert np.array_equal(got[1], want[1]) and got[1].dtype == want[1].dtype
    for bad in (np.array([0, ids.size + 1]), np.array([-1, 3]), np.array([0, 50, 20])):
        with pytest.raises(ValueError):
            _translate_kernels._rank_translate(ids, bad.astype(np.int64), table, n_hot)
    def parts(columns):  # rank_map's count of hot columns, the map given bucket by bucket
        remap = np.full(n, -1, dtype=np.int32)
        remap[np.arange(len(columns)) * 5] = columns
        ranks = rank_map(remap)
        return None if ranks is None else ranks[1]

    # in two increasing runs, the first from 0 and the second after it: hot and the others
    assert [parts(c) for c in ([1, 0], [2, 0, 1], [0, 3, 1, 4, 2, 5], [0, 1, 2])] == [1, 2, 3, 3]
    # out of order, or with gaps (quantize drops buckets): no table
    for columns in ([0, 2], [1, 2], [2, 1, 0], [0, 3, 1, 2, 5, 4], [0, 2, 1, 4, 3]):
        assert parts(columns) is None, columns
    assert rank_map(np.full(96, -1, np.int32)) is None


def test_a_translator_takes_the_table_after_a_quarter_of_the_buckets(monkeypatch):
    """A stream's translator makes the table (30 ms for 2**24 buckets) only once the ids
    it translated reach a quarter of the buckets: a small job never pays it."""
    from nbsvm.data import translate as tr
    made = []
    monkeypatch.setattr(tr, "rank_map", lambda remap: made.append(1) or None)
    monkeypatch.setattr(tr, "RANK_MIN_BUCKETS", 1024)
    monkeypatch.setattr(_small_jobs, "PLAIN_BYTES", 0)
    remap = np.arange(1024, dtype=np.int32)
    translator = tr.Translator(remap)
    ids, offsets = np.arange(100, dtype=np.int32), np.array([0, 100], dtype=np.int64)
    translator(ids, offsets)
    translator(ids, offsets)
    assert made == []  # 200 ids of 1,024 buckets
    translator(ids, offsets)  # 300: past a quarter
    assert made == [1]
    translator(ids, offsets)
    assert made == [1]  # once


TEXTS = [
    "Great film!<br />Loved it, really.",
    "<br<br />/> twice normalized is not once",   # the replace must not run twice
    "",
    "这部电影很好看！Great film ... (ok)",
    "Ｇｒｅａｔ ﾌｨﾙﾑ… İstanbul ΣΊΣΥΦΟΣ",
    "averyveryverylongwordwithoutanyspacesatallreally and short",
    "tab\tand\u00a0nbsp\u2003em space\nnewline",
    "lone surrogate \ud800 kept",
]


@pytest.mark.parametrize("settings", [
    {},
    dict(split_scripts=True, nfkc=True, long_words=20),
    dict(ngrams=2, char_ngrams=4, char_min=2, lowercase=False),
    dict(ngrams=1, n_bits=12, seed=7, split_scripts=True),
])
def test_reference_hashing_of_prepared_bytes_equals_the_compiled_hasher(settings):
    hasher = Hasher(**settings)
    buf, starts = hasher.prepare(TEXTS)
    ids, offsets = hasher._reference_prepared(buf, starts)
    from nbsvm.text._ngram_ids import _hash_docs  # noqa: F401  (the compiled path below)
    assert "numba" in sys.modules                 # so hash_prepared takes the kernel
    want_ids, want_offsets = hasher.hash_prepared(buf, starts)
    assert np.array_equal(offsets, want_offsets) and np.array_equal(ids, want_ids)
    assert ids.dtype == want_ids.dtype and offsets.dtype == want_offsets.dtype


def test_the_budget_is_spent_once_and_numba_ends_it():
    assert not _small_jobs.plain(1)                # numba is loaded in this process
    code = ("import sys\n"
            "from nbsvm import _small_jobs as s\n"
            "assert s.plain(s.PLAIN_BYTES - 10) and s.plain(10) and not s.plain(1)\n"
            "import numba\n"
            "s._spent = 0\n"
            "assert not s.plain(1)\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "ok", out.stderr


def test_a_small_job_on_a_small_map_stays_without_numba():
    """A stream through a map of 2**12 buckets passes a quarter of them within a hundred
    documents: its translator made the rank table there, which loaded numba, and the rest
    of the job ran the kernels (nbsvm predict of 40 documents: 0.4 -> 0.9 s, a reviewer's
    finding). No table for a map that fits the caches, nor before numba is loaded."""
    code = ("import sys, numpy as np\n"
            "from nbsvm import Hasher\n"
            "from nbsvm.data.batches import hash_batches\n"
            "from nbsvm.data.translate import Translator\n"
            "from nbsvm.io.document import Document\n"
            "h = Hasher(ngrams=2, n_bits=12)\n"
            "docs = [Document('a', f'word{i} and more words here {i % 7}', 'x', i + 1)\n"
            "        for i in range(200)]\n"
            "remap = np.arange(1 << 12, dtype=np.int32)\n"
            "n = sum(len(b.ids) for b in hash_batches(docs, h, remap=remap))\n"
            "t = Translator(np.arange(1 << 20, dtype=np.int32), expected=1 << 20)\n"
            "t(np.arange(5, dtype=np.int32), np.array([0, 5]))\n"
            "print(n > 1024, 'numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["True", "False"], out.stderr


def _rows(path: Path, n: int) -> list[list[str]]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return [row[1:] for row in rows[: n + 1]]       # the source column names the input file


def _predict(model: Path, text: Path, out: Path) -> str:
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "nbsvm", "predict", "-q",
                        "-m", str(model), str(text), "-o", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return r.stderr


@pytest.fixture(scope="module")
def imdb_lines(imdb_slice, tmp_path_factory):
    """Training texts and labels, and 600 test reviews as one line each."""
    def read(folder):
        return [p.read_text(encoding="utf-8").replace("\n", " ")
                for p in sorted(folder.iterdir())[:300]]
    texts = read(imdb_slice / "train" / "pos") + read(imdb_slice / "train" / "neg")
    labels = ["pos"] * 300 + ["neg"] * 300
    test = read(imdb_slice / "test" / "pos") + read(imdb_slice / "test" / "neg")
    return texts, labels, test


@pytest.mark.parametrize("kind", ["binary", "binary-weights", "multiclass", "multilabel"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_predict_of_a_few_documents_never_imports_numba_and_writes_the_same_rows(
        kind, imdb_lines, tmp_path):
    """Ten documents: no numba (nor, with -q, rich's progress bars) in the process; the same ten in front of 1,200 more (past the
    budget: the kernels from the first batch): the same rows, byte for byte."""
    if kind.startswith("binary"):
        texts, labels, test = imdb_lines
        extra = dict(beta=0.5, interpolate="weights", norm="l2") if kind.endswith("s") else {}
        clf = NBSVMClassifier(n_bits=18, epochs=2, **extra).fit(texts, labels)
    else:
        name = "topics.txt" if kind == "multiclass" else "tags.txt"
        pairs = [line.split("\t", 1) for line in (DATA / name).read_text().splitlines()]
        texts = [t for _, t in pairs]
        labels = [lab if kind == "multiclass" else lab.split(",") for lab, _ in pairs]
        clf = NBSVMClassifier(n_bits=16, beta=0.8, multilabel=kind == "multilabel")
        clf.fit(texts, labels)
        test = texts[:5] + imdb_lines[2]
    clf.save(tmp_path / "m.npz")
    few, many = tmp_path / "few.txt", tmp_path / "many.txt"
    few.write_text("\n".join(test[:10]) + "\n", encoding="utf-8")
    many.write_text("\n".join(test * 2) + "\n", encoding="utf-8")
    assert many.stat().st_size > _small_jobs.PLAIN_BYTES
    imported = _predict(tmp_path / "m.npz", few, tmp_path / "few.csv")
    assert "numba" not in imported
    assert "rich.progress" not in imported  # -q: no bar drawn, none imported (0.06 s)
    assert "numba" in _predict(tmp_path / "m.npz", many, tmp_path / "many.csv")
    assert _rows(tmp_path / "few.csv", 10) == _rows(tmp_path / "many.csv", 10)


def test_the_budget_counts_the_keys_a_model_makes_not_only_bytes():
    """A model of 16-grams and character 1-32-grams made a 250 KB document cost 4.7 s and
    977 MB in plain Python (0.7 s with the kernels): its bytes count as the keys they make."""
    assert Hasher().plain_cost(1000) == 1000
    assert Hasher(ngrams=2).plain_cost(1000) == 1000
    heavy = Hasher(ngrams=16, char_ngrams=32, char_min=1)
    assert heavy.plain_cost(20_000) > _small_jobs.PLAIN_BYTES
    assert 5 < Hasher(ngrams=5, char_ngrams=6, char_min=2).plain_cost(1000) / 1000 < 15
