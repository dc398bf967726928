"""`nbsvm predict` on a 2 GB input streams with flat memory (issue 6).

A tiny model is trained through the CLI, then ``nbsvm predict -`` reads 200 MB and then
2 GB of generated ``label<TAB>review`` lines from standard input (a pipe: nothing is
written to disk) and writes its CSV to a pipe that the test reads and counts. Every input
line must come out as a row, in order, and the peak resident memory of the predict process
(``ru_maxrss`` of exactly that child, from ``os.wait4``) must not grow with the input:
at 2 GB it stays within 1.25x + 50 MB of the 200 MB run's, and the resident memory
sampled every 0.25 s during the second half of the 2 GB run (the last gigabyte or so)
stays within 20 MB of the first half's maximum.

Measured here (2 cores, shared; the input is a pre-built 1 MB block of 1,039 reviews of 50
to 300 words, repeated; unigram model, 2**16 buckets), start-up included, over four runs:

======  =========  ===========  =========  ==============
input   rows       seconds      MB/s       peak RSS
======  =========  ===========  =========  ==============
200 MB    207,800    3.5 - 6.3    32 - 57         192 MB
2 GB    2,127,872  38.1 - 46.0   44 - 54    192 - 251 MB
======  =========  ===========  =========  ==============

When the 2 GB run peaks at 251 MB it gets there within its first 8 s (about 400 MB of
input) and then stays at 249-250 MB for the remaining 35 s (sampled every 2 s).
"""
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

NBSVM = Path(sys.executable).parent / "nbsvm"
pytestmark = [pytest.mark.skipif(not NBSVM.exists(), reason=f"no console script at {NBSVM}"),
              pytest.mark.soak]            # about 2 minutes on a 2-core machine: make soak

MB = 1 << 20
WORDS = ["great", "awful", "film", "plot", "dull", "loved", "boring", "fun", "cast", "story",
         "the", "a", "wonderful", "mess", "acting", "scene", "director", "music", "ending"]


def review_block() -> tuple[bytes, int]:
    """Exactly 1 MB of ``label<TAB>text`` lines (reviews of 50-300 words, the last line one
    long token) and its number of lines."""
    rng = random.Random(0)
    lines, size = [], 0
    while size < MB - 1200:
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(50, 300)))
        line = f"{'pos' if len(lines) % 2 else 'neg'}\t{text}\n".encode()
        lines.append(line)
        size += len(line)
    block = b"".join(lines)
    block += b"pos\t" + b"x" * (MB - len(block) - 5) + b"\n"
    assert len(block) == MB
    return block, len(lines) + 1


def predict_stream(model: Path, block: bytes, n_blocks: int) -> dict:
    """Run ``nbsvm predict -`` on ``n_blocks`` copies of ``block`` fed through a pipe; the
    rows it printed, the last one, its exit status, stderr, seconds and peak RSS (MB)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([str(NBSVM), "predict", "-", "-m", str(model)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out = {"rows": -1, "last": b"", "stderr": b""}       # -1: the header line

    def feed():
        try:
            for _ in range(n_blocks):
                proc.stdin.write(block)
        except BrokenPipeError:          # predict failed: its stderr says why
            pass
        finally:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass

    def count():
        tail = b""
        while chunk := proc.stdout.read(MB):
            out["rows"] += chunk.count(b"\n")
            tail = (tail + chunk)[-4096:]
        out["last"] = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]

    def errors():
        out["stderr"] = proc.stderr.read()

    done = threading.Event()
    samples = []                                       # (seconds, VmRSS in MB)

    def sample():
        while not done.wait(0.25):
            try:
                with open(f"/proc/{proc.pid}/status") as fh:
                    rss = [line for line in fh if line.startswith("VmRSS:")]
            except OSError:
                return
            if rss:
                samples.append((time.perf_counter() - t0, int(rss[0].split()[1]) / 1024))

    threads = [threading.Thread(target=f, daemon=True) for f in (feed, count, errors, sample)]
    for t in threads:
        t.start()
    try:
        _, status, usage = os.wait4(proc.pid, 0)      # the rusage of exactly this child
    finally:
        done.set()
    proc.returncode = os.waitstatus_to_exitcode(status)
    for t in threads:
        t.join(timeout=60)
    out.update(returncode=proc.returncode, seconds=time.perf_counter() - t0,
               peak_mb=usage.ru_maxrss / 1024, samples=samples)   # Linux: kilobytes
    return out


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stream")
    block, _ = review_block()
    train = tmp / "tiny.txt"
    train.write_bytes(block[:20_000].rsplit(b"\n", 1)[0] + b"\n")
    path = tmp / "tiny.npz"
    r = subprocess.run([str(NBSVM), "train", str(train), "-o", str(path), "--n-bits", "16",
                        "--ngrams", "1", "--min-df", "1", "-q"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return path


def test_predict_streams_2gb_from_stdin_in_flat_memory(model):
    block, per_block = review_block()
    runs = {}
    for n_blocks in (200, 2048):
        run = predict_stream(model, block, n_blocks)
        assert run["returncode"] == 0, run["stderr"].decode(errors="replace")[-2000:]
        assert run["rows"] == n_blocks * per_block            # a row per input line
        assert run["last"].startswith(b"<stdin>,%d,pos," % (n_blocks * per_block))
        runs[n_blocks] = run
        print(f"predict {n_blocks} MB: {run['rows']:,} rows, {run['seconds']:.1f} s, "
              f"{n_blocks / run['seconds']:.0f} MB/s, peak RSS {run['peak_mb']:.0f} MB")
    small, large = runs[200]["peak_mb"], runs[2048]["peak_mb"]
    assert large <= 1.25 * small + 50, \
        f"peak RSS grew with the input: {small:.0f} MB at 200 MB, {large:.0f} MB at 2 GB"
    # and within the 2 GB run: the second half (1 GB more input) never rises above the
    # first half's high-water mark, as it would if anything were kept per document
    rss = [mb for _, mb in runs[2048]["samples"]]
    half = len(rss) // 2
    assert half >= 10, runs[2048]["samples"]
    assert max(rss[half:]) <= max(rss[:half]) + 20, \
        f"RSS grew during the 2 GB run: {max(rss[:half]):.0f} -> {max(rss[half:]):.0f} MB"
