"""Bad text (issue 6, item 5): empty documents, punctuation only, NUL bytes, CRLF line ends, a
UTF-8 BOM, invalid UTF-8 (replaced, and the count of bytes reported) and a very long
single-line review all train and predict through the real CLI; the compiled hasher's scratch memory follows what a document produces (tokens
and n-grams), not its byte length times the n-gram order.

By hand (not in the suite, too slow for it): the same file with a 20 MB single-line review
trains and predicts too, and hashing a 20 MB review of random words with trigrams peaks at
about +340 MB (it was +2.2 GB when scratch was sized by the longest document's bytes).
"""
import random
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from nbsvm.cli import app
from nbsvm.text.hashing import Hasher

runner = CliRunner()
WORDS = ["great", "awful", "film", "plot", "dull", "loved", "boring", "fun", "cast", "story",
         "the", "a", "wonderful", "mess", "acting"]


def long_review(n_bytes: int, seed: int = 1) -> str:
    rng = random.Random(seed)
    parts, n = [], 0
    while n < n_bytes:
        w = rng.choice(WORDS)
        parts.append(w)
        n += len(w) + 1
    return " ".join(parts)


def bad_file(path, long_bytes: int = 2 * 2**20):
    """A label<TAB>text file of hostile lines, CRLF line ends, a BOM first; returns the
    number of lines."""
    rows = [
        b"pos\tgreat fun and a great cast",
        b"neg\t",                                                # empty document
        b"pos\t...!!! ,,, ??? ;;; ::: (((\"\")))",               # only punctuation
        b"neg\tawful\x00dull\x00 and \x00boring \x00",           # NUL bytes inside text
        b"pos\tloved it, wonderful",
        b"neg\tdull \xff\xfe plot \xc3\x28 and \xed\xa0\x80 bad \x80 \xf0\x9f",  # invalid UTF-8
        b"pos\t" + long_review(long_bytes).encode(),             # one very long line
        b"neg\tawful boring mess",
        b"pos\tgreat film, loved it",
        b"neg\tdull awful plot",
        b"pos\t\x00",                                            # only a NUL
        b"neg\t!",
    ]
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(rows) + b"\r\n")
    return len(rows)


#: What the CLI says about bad_file's invalid UTF-8: 2 + 1 + 3 + 1 + 2 bytes, all in one line.
REPLACED = "replaced 9 invalid UTF-8 bytes in 1 document (--strict refuses them)"


@pytest.fixture(scope="module")
def bad(tmp_path_factory):
    """:func:`bad_file` written once for the module (only read): its path and number of
    lines."""
    data = tmp_path_factory.mktemp("bad_text") / "bad.txt"
    return data, bad_file(data)


@pytest.mark.parametrize("opts", [["--ngrams", "3"], ["--ngrams", "2", "--char-ngrams", "4"]],
                         ids=["trigrams", "chars"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_bad_text_trains_and_predicts(bad, tmp_path, opts):
    data, n = bad
    model, pred = tmp_path / "m.npz", tmp_path / "pred.csv"
    r = runner.invoke(app, ["train", str(data), "-o", str(model), "--n-bits", "16",
                            "--epochs", "2", "--min-df", "1", "--quiet", *opts])
    assert r.exit_code == 0, r.output
    assert REPLACED in r.stderr
    r = runner.invoke(app, ["predict", str(data), "-m", str(model), "-o", str(pred)])
    assert r.exit_code == 0, r.output
    assert REPLACED in r.stderr
    df = pd.read_csv(pred)
    assert len(df) == n                                  # a row per input line
    assert df["line"].tolist() == list(range(1, n + 1))
    assert df["true_label"].tolist() == ["pos", "neg"] * (n // 2)  # the BOM is not in a label
    assert set(df["label"]) <= {"pos", "neg"}
    assert np.isfinite(df["score_pos"]).all()
    r = runner.invoke(app, ["predict", str(data), "-m", str(model), "--strict"])
    assert r.exit_code == 2
    assert f"{data}:6: invalid UTF-8 at byte 10 of the line (0xff)" in r.stderr, r.stderr


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_long_and_odd_documents_hash_like_the_reference():
    """The scratch arrays grow inside one batch (more tokens, more n-grams, a longer token,
    a bigger dedup set) and shrink back to a small set for short documents after a long one;
    every document still equals the plain-Python definition."""
    long = long_review(300_000, seed=2)
    texts = ["a great film", long, "dull", "." * 50_000, "", "x" * 5000 + " y", "\x00 a \x00",
             long[:1000], "great fun, loved it"]
    for hasher in (Hasher(ngrams=3, n_bits=24), Hasher(ngrams=2, n_bits=10),
                   Hasher(ngrams=1, n_bits=20, char_ngrams=3)):
        ids, offsets = hasher.batch(texts)
        for j, text in enumerate(texts):
            assert np.array_equal(ids[offsets[j]:offsets[j + 1]],
                                  hasher.reference_buckets(text)), (hasher, j)


SCRATCH = textwrap.dedent("""
    import random, resource, sys
    from nbsvm.text.hashing import Hasher
    h = Hasher(ngrams=3, n_bits=24)
    h.batch(["warm up"])
    rng = random.Random(0)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(1, 10)))
             for _ in range(50_000)]
    text = " ".join(rng.choices(words, k=int(sys.argv[1]) // 6))
    prepared = h.prepare([text])
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    ids, offsets = h.hash_prepared(*prepared)
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024, ids.size)
""")


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_scratch_memory_of_one_long_document_is_bounded(tmp_path):
    """Hashing one 5 MB single-line review of random words with trigrams raises peak memory
    by about 85 MB (the output, the normalized text, token starts, n-grams and a dedup set
    for them); with scratch sized by the document's bytes times the n-gram order it was
    about 540 MB."""
    out = subprocess.run([sys.executable, "-c", SCRATCH, str(5 * 2**20)],
                         capture_output=True, text=True, check=True, timeout=120).stdout.split()
    grown_mb, n_ids = int(out[0]), int(out[1])
    assert n_ids > 1000
    assert grown_mb < 200, f"hashing a 5 MB document grew peak memory by {grown_mb} MB"
