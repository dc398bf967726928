"""Each CSV/TSV row's line is its line in the file, as ``wc -l`` counts, whatever comes
before it: quoted texts of several lines, blank and white-space lines, rows skipped as
malformed (``--skip-bad-lines``), CRLF line ends, compression. pandas numbers what it
skips by its own count (no quoted line breaks, but blank lines) and the rows it yields not
at all: ``predict`` wrote a row's prediction under the line of the malformed row before
it, and the reports named other lines than the malformed ones."""
import csv
import gzip
import io
import random
import re
import warnings

import pandas as pd
import pytest

from nbsvm.errors import NBSVMError
from nbsvm.io.decoding import ReadStats
from nbsvm.io.table_lines import RowScanner
from nbsvm.io.tables import read_table


def _table(rnd: random.Random, sep: str, end: str):
    """A random table written as csv.writer writes it, with blank, white-space and
    malformed lines between its rows: ``(text, [(label, text, line)], [bad lines])``."""
    words = ["good", "bad", 'say "hi"', "a, b", "two\nlines", " ", "''", "three\n\nlines"]
    if sep == ",":  # (a TAB in a TSV field is malformed: TSV has no quoting)
        words.append("x\ty")
    out, docs, bad, line = io.StringIO(), [], [], 1
    writer = csv.writer(out, delimiter=sep, lineterminator=end)
    writer.writerow(["label", "text"])
    for i in range(rnd.randint(1, 25)):
        kind = rnd.random()
        if kind < 0.15:
            out.write(rnd.choice(["", "  ", "\t " if sep == "," else " "]) + end)
            line += 1
            continue
        if kind < 0.25 and len(bad) < 5:  # a field too many: malformed
            line += 1
            bad.append(line)
            word = rnd.choice(words)
            writer.writerow([f"l{i}", word, "extra"])
            line += word.count("\n")
            continue
        label, text = f"l{i % 3}", " ".join(rnd.choice(words) for _ in range(rnd.randint(1, 3)))
        line += 1
        docs.append((label, text, line))
        writer.writerow([label, text])
        line += text.count("\n")
    return out.getvalue(), docs, bad


@pytest.mark.parametrize("sep", [",", "\t"])
@pytest.mark.parametrize("end", ["\n", "\r\n"])
@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_every_row_is_named_by_its_own_line(tmp_path, sep, end):
    rnd = random.Random(f"{sep}{end}")
    suffix = "csv" if sep == "," else "tsv"
    for k in range(40):
        text, docs, bad = _table(rnd, sep, end)
        raw = text.encode()
        physical = raw.replace(b"\r\n", b"\n").split(b"\n")
        path = tmp_path / f"t{k}.{suffix}"
        path.write_bytes(raw)
        packed = tmp_path / f"t{k}.{suffix}.gz"
        packed.write_bytes(gzip.compress(raw))
        for source in (path, packed, io.BytesIO(raw)):
            stats = ReadStats(skip_bad=True)
            got = [(d.label, d.text, d.line) for d in read_table(source, sep=sep, stats=stats)]
            want = [(label, t.replace("\r\n", "\n"), n) for label, t, n in docs]
            assert got == want, (raw, source)
            assert [int(e.split(": ", 1)[0].rsplit(":", 1)[1]) for e in stats.bad_examples] \
                == bad, (raw, stats.bad_examples)
            for label, _, n in docs:  # the line the file has there starts that row
                assert physical[n - 1].decode().startswith(label), (raw, n)
        if bad:  # without --skip-bad-lines: the error names the first one's line
            with pytest.raises(NBSVMError, match=rf":{bad[0]}: malformed row"):
                list(read_table(path, sep=sep))


@pytest.mark.slow  # over 1.5 s (make test keeps the quick tests and a real-data run of each command; CI runs both)
def test_the_scanner_counts_as_pandas_on_any_bytes():
    # random tables of quotes, separators, blank and white-space lines, fed in random
    # pieces: the records pandas yields are the scanner's (its numbers of blank lines and
    # of the rows it skips, each yielded row's quoted line breaks)
    rnd = random.Random(0)
    alphabet = [b"a", b"b", b",", b"\t", b'"', b'""', b"\n", b"\n\n", b" ", b"a\rb"]
    compared = 0
    for _ in range(3000):
        sep = rnd.choice([",", "\t"])
        data = b"h" + sep.encode() + b"t\n" + b"".join(
            rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                frame = pd.read_csv(io.BytesIO(data), sep=sep, dtype=str, header=None,
                                    keep_default_na=False, on_bad_lines="warn",
                                    lineterminator="\n")
        except pd.errors.ParserError:  # an unclosed quote at the end
            continue
        skipped = {int(n) for w in caught for n in re.findall(r"Skipping line (\d+)",
                                                               str(w.message))}
        scanner = RowScanner(sep.encode())
        i = 0
        while i < len(data):
            step = rnd.randint(1, 6)
            scanner.feed(data[i:i + step])
            i += step
        scanner.close()
        notes = dict(scanner.notes)
        blanks = {n for n, b in notes.items() if b < 0}
        assert not blanks & skipped, data
        number = 0
        for row in frame.itertuples(index=False):
            number += 1
            while number in blanks or number in skipped:
                number += 1
            assert notes.get(number, 0) == sum(str(f).count("\n") for f in row), data
        compared += 1
    assert compared > 2000


def test_a_short_row_after_crlf_that_starts_late_is_still_found(tmp_path):
    # CRLF only after the first bytes read: the rows' fields, read again to find short
    # ones, were read as if pandas had seen LF, and the counts drifted apart unseen
    from nbsvm.io.tables import HEAD_BYTES
    lf = "pos,a good film that I liked\nneg,a bad film that I hated\n"
    rows = ("label,text\n" + lf * (HEAD_BYTES // len(lf) + 1)).encode()
    first = rows.count(b"\n") + 1
    rows += b"\r\nneg,bad plot\r\npos,the film was great\r\nbut too long\r\nneg,ok\r\n"
    path = tmp_path / "late.csv"
    path.write_bytes(rows)
    with pytest.raises(NBSVMError, match=rf"late.csv:{first + 3}: too few fields"):
        list(read_table(path))
