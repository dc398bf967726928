#!/usr/bin/env python
"""A million reviews and more on one machine: nbsvm beside Vowpal Wabbit and fastText.

The corpus is generated (``pipelines/make_corpus.py``: class-conditional bigram models of
IMDB train, real lengths, a vocabulary that keeps growing by the Heaps curve fitted on
IMDB). The largest size is generated once; a smaller size is the first N lines of it, and
every size is scored on the same test documents that follow the training ones.

At each size, one after the other, on the same files, each system is its own process, timed
from start to exit, with its peak RSS from ``os.wait4``:

- **nbsvm**: ``nbsvm train --test`` with the defaults: trigrams, 2**24 buckets, 10 epochs,
  and 2 threads, as fastText gets.
- **Vowpal Wabbit**: ``--ngram 3 -b 26``, logistic loss, 10 passes over its cache file,
  then a test pass.
- **fastText**: the settings chosen on IMDB's training split (``wordNgrams 2, dim 10,
  epoch 10, lr 0.5``), 2 threads.

The peers read files converted beforehand to their own formats. The conversion is not timed.
Every system sees the same tokens.

It also makes **a memory-capped run**. nbsvm trains at the smallest size once with no limit,
then again inside a cgroup (v1 memory controller) whose limit is several times smaller than
its feature cache. The two models are compared array by array, bit for bit, with one thread.

Finally it measures **the machine's limits** beside the stages nbsvm reports:

- a plain read of the largest training file, cold (its pages dropped first) and warm;
- a bare AdaGrad epoch of nbsvm's kernel over 2**24 columns in memory
  (``bench_kernels.py``'s 1M-reviews shape), beside the n-grams/s of nbsvm's epochs.

Results go to ``results/scale.md`` and ``results/scale.csv``.

    python pipelines/scale.py                       # 1M and 4M documents
    python pipelines/scale.py --sizes 100000 --cap-mb 0     # a quick look, no cgroup
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import (NBSVM, PY, ROOT, accuracy_of, fasttext_line, run_measured, stage,  # noqa: E402
                   vw_accuracy, vw_line)  # (importing bench settles the shared libraries)
from _report import start, write_results  # noqa: E402
import make_corpus  # noqa: E402

CGROUP = Path("/sys/fs/cgroup/memory/nbsvm-scale-cap")
FASTTEXT = ROOT / "pipelines" / "peers" / "fasttext_text.py"


def label_of(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1000}k"


def corpus(work: Path, sizes: list[int], test_docs: int, seed: int) -> dict:
    """``{size: train file}`` and the test file, generating the largest once (kept for
    later runs when its stats.json says the same size and seed)."""
    top = max(sizes)
    gen_dir = work / f"gen_{label_of(top)}_seed{seed}"
    stats_path = gen_dir / "stats.json"
    stats = json.loads(stats_path.read_text()) if stats_path.exists() else {}
    if stats.get("train_docs") != top or stats.get("test_docs") != test_docs:
        # its own process: a child forked from a large parent counts the parent's pages in
        # its peak RSS (ru_maxrss survives exec), and the fitted model is about 600 MB
        subprocess.run([PY, str(Path(make_corpus.__file__)), "--docs", str(top), "--test-docs",
                        str(test_docs), "--seed", str(seed), "--out", str(gen_dir)], check=True)
        stats = json.loads(stats_path.read_text())
    files = {}
    for n in sizes:
        path = gen_dir / f"train_{label_of(n)}.txt"
        if n == top:
            path = gen_dir / "train.txt"
        elif not path.exists():
            with open(gen_dir / "train.txt", "rb") as src, open(path.with_suffix(".part"), "wb") as dst:
                for i, line in enumerate(src):
                    if i >= n:
                        break
                    dst.write(line)
            os.replace(path.with_suffix(".part"), path)
        files[n] = path
    return dict(train=files, test=gen_dir / "test.txt", stats=stats)


def peer_files(path: Path, write: bool = True) -> dict:
    """The VW and fastText copies of a ``label<TAB>tokens`` file (written once, when
    ``write``)."""
    vw, ft = path.with_suffix(".vw"), path.with_suffix(".ft")
    if write and not (vw.exists() and ft.exists()):
        with open(path, encoding="utf-8") as src, open(vw.with_suffix(".vw.part"), "w") as f_vw, \
                open(ft.with_suffix(".ft.part"), "w") as f_ft:
            for line in src:
                label, _, text = line.rstrip("\n").partition("\t")
                f_vw.write(vw_line(label, text))
                f_ft.write(fasttext_line(label, text))
        os.replace(vw.with_suffix(".vw.part"), vw)
        os.replace(ft.with_suffix(".ft.part"), ft)
    return dict(vw=vw, ft=ft)


def systems(train: Path, test: Path, work: Path, threads: int) -> list[dict]:
    tr, te = peer_files(train, write=False), peer_files(test, write=False)
    convert = lambda: (peer_files(train), peer_files(test))      # noqa: E731
    vw_model, vw_pred = work / "vw.model", work / "vw.pred"
    return [
        dict(name=f"nbsvm (threads {threads})",
             cmds=[[NBSVM, "train", str(train), "--test", str(test), "-o",
                    str(work / "nbsvm.npz"), "--threads", str(threads), "--cache-dir",
                    str(work), "-q"]]),
        dict(name="Vowpal Wabbit (--ngram 3 -b 26 logistic, 10 passes)",
             cmds=[[PY, "-m", "vowpalwabbit", "-d", str(tr["vw"]), "--ngram", "3", "-b", "26",
                    "--loss_function", "logistic", "--passes", "10", "-c", "-k",
                    "--cache_file", str(work / "vw.cache"), "--holdout_off", "-f",
                    str(vw_model), "--quiet"],
                   [PY, "-m", "vowpalwabbit", "-d", str(te["vw"]), "-t", "-i", str(vw_model),
                    "-p", str(vw_pred), "--quiet"]],
             accuracy=lambda r: vw_accuracy(vw_pred, te["vw"]), prepare=convert,
             cleanup=[work / "vw.cache", vw_model, vw_pred]),
        dict(name="fastText (wordNgrams 2, dim 10, epoch 10, lr 0.5, 2 threads)",
             cmds=[[PY, str(FASTTEXT), str(tr["ft"]), str(te["ft"]), "--thread", "2"]],
             prepare=convert),
    ]


def run_system(system: dict) -> dict:
    if "prepare" in system:             # the peer's input format, not timed
        system["prepare"]()
    r = run_measured(system["cmds"])
    r["accuracy"] = accuracy_of(system, r)
    for path in system.get("cleanup", []):
        Path(path).unlink(missing_ok=True)
    return r


# ---- the memory-capped run ----------------------------------------------------------------

def cgroup_available() -> str | None:
    """None when a memory cgroup can be made here, else why not."""
    parent = CGROUP.parent
    if not (parent / "memory.limit_in_bytes").exists():
        return f"no cgroup v1 memory controller at {parent}"
    try:
        CGROUP.mkdir(exist_ok=True)
        (CGROUP / "memory.limit_in_bytes").write_text(str(1 << 40))
    except OSError as e:
        return f"cannot make {CGROUP}: {e}"
    return None


def run_capped(cmd: list[str], limit_mb: int) -> dict:
    """``cmd`` inside the cgroup limited to ``limit_mb`` (page cache counted, no swap on
    this machine); its time, peak RSS, and the cgroup's peak charge and failcnt (how many
    times the limit made the kernel reclaim)."""
    (CGROUP / "memory.limit_in_bytes").write_text(str(limit_mb << 20))
    for name in ("memory.max_usage_in_bytes", "memory.failcnt"):
        (CGROUP / name).write_text("0")
    procs = str(CGROUP / "cgroup.procs")

    def enter():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            preexec_fn=enter)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    return dict(exit=code, seconds=seconds, peak_mb=usage.ru_maxrss / 1024, output=out,
                cgroup_peak_mb=int((CGROUP / "memory.max_usage_in_bytes").read_text()) / 2**20,
                failcnt=int((CGROUP / "memory.failcnt").read_text()))


def same_model(a: Path, b: Path) -> tuple[bool, int]:
    """Whether two model files hold the same arrays bit for bit, and how many arrays."""
    with np.load(a) as x, np.load(b) as y:
        if sorted(x.files) != sorted(y.files):
            return False, len(x.files)
        return all(x[k].dtype == y[k].dtype and x[k].shape == y[k].shape and
                   x[k].tobytes() == y[k].tobytes() for k in x.files), len(x.files)




def capped(train: Path, test: Path, work: Path, limit_mb: int) -> dict:
    why = cgroup_available()
    if why:
        return dict(blocked=why)
    cmd = lambda out: [NBSVM, "train", str(train), "--test", str(test), "-o", str(out),
                       "--threads", "1", "--cache-dir", str(work), "-q"]
    free = run_measured([cmd(work / "uncapped.npz")])
    cap = run_capped(cmd(work / "capped.npz"), limit_mb)
    CGROUP.rmdir()
    if cap["exit"] != 0:
        return dict(limit_mb=limit_mb, exit=cap["exit"], output=cap["output"][-2000:])
    equal, n_arrays = same_model(work / "uncapped.npz", work / "capped.npz")
    return dict(limit_mb=limit_mb, cache_mb=stage(free["output"], "feature cache MB"),
                uncapped_s=free["seconds"], uncapped_peak_mb=free["peak_mb"],
                capped_s=cap["seconds"], capped_peak_rss_mb=cap["peak_mb"],
                cgroup_peak_mb=cap["cgroup_peak_mb"], failcnt=cap["failcnt"],
                same_model=equal, arrays=n_arrays,
                capped_training_s=stage(cap["output"], "training seconds"))


# ---- the machine's limits -----------------------------------------------------------------

def plain_read(path: Path) -> dict:
    """Bytes/s of reading ``path`` in 16 MB blocks: cold (its cached pages dropped first;
    the disk) and warm (from the page cache)."""
    out = {}
    for kind in ("cold", "warm"):
        fd = os.open(path, os.O_RDONLY)
        if kind == "cold":
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        t0 = time.perf_counter()
        n = 0
        while True:
            block = os.read(fd, 16 << 20)
            if not block:
                break
            n += len(block)
        os.close(fd)
        out[f"read_{kind}_mb_s"] = n / 2**20 / (time.perf_counter() - t0)
    return out


def bare_epoch(runs: int = 5, seed: int = 0) -> dict:
    """Non-zeros per second of one AdaGrad epoch of the production kernel over 2**24
    columns in memory, nothing else (no cache reads, no translation, one thread): the
    ceiling of nbsvm's epochs on this machine. Median of ``runs``."""
    import statistics

    import numpy as np
    from bench_kernels import imdb_like, time_epochs

    from nbsvm.learners.kernels.table import _adagrad_epoch

    rng = np.random.default_rng(seed)
    ids, offsets, codes, n_columns = imdb_like(rng, n_docs=10_000, n_columns=1 << 24,
                                               per_doc=680)
    state = np.zeros((n_columns, 3), np.float32)
    state[:, 0] = rng.normal(0, 1, n_columns)
    order = rng.permutation(len(codes)).astype(np.int64)
    seconds = statistics.median(time_epochs(_adagrad_epoch, ids, offsets, codes, state,
                                            order, runs))
    return {"bare_epoch_ns_per_nnz": 1e9 * seconds / len(ids),
            "bare_epoch_nnz_per_s": len(ids) / seconds}


def run_all(args, sizes, data, work, config) -> None:
    """Every system at every size, the plain read; ``results/scale.md``."""
    wanted = {"nbsvm": "nbsvm", "vw": "Vowpal", "fasttext": "fastText"}
    keep = [wanted[s] for s in args.systems.split(",") if s]
    rows = []
    if "nbsvm" in keep:     # numba compiles what its on-disk cache lacks outside the timing
        subprocess.run([NBSVM, "train", str(data["test"]), "--test", str(data["test"]), "-o",
                        str(work / "warmup.npz"), "-q"], check=True, stdout=subprocess.DEVNULL)
    for n in sizes:
        train = data["train"][n]
        for system in systems(train, data["test"], work, args.threads):
            if not any(system["name"].startswith(k) for k in keep):
                continue
            if not system["name"].startswith("nbsvm") and 0 < args.peers_max_docs < n:
                continue
            print(f"\n== {label_of(n)}: {system['name']}")
            for cmd in system["cmds"]:
                print("   $ " + shlex.join(cmd), flush=True)
            r = run_system(system)
            row = dict(train_docs=n, system=system["name"], accuracy=r["accuracy"],
                       seconds=r["seconds"], docs_per_s=n / r["seconds"],
                       peak_mb=r["peak_mb"])
            for label in ("lexicon+cache seconds", "training seconds", "test eval seconds",
                          "save seconds", "eval seconds", "feature cache MB",
                          "feature cache n-grams"):
                v = stage(r["output"], label)
                if v is not None:
                    row[label.replace(" seconds", "_s").replace(" ", "_")] = v
            if "feature_cache_n-grams" in row:       # 10 epochs over the hashed n-grams
                row["epoch_ngrams_per_s"] = 10 * row["feature_cache_n-grams"] / row["training_s"]
                row["hashing_docs_per_s"] = n / row["lexicon+cache_s"]
            rows.append(row)
            # kept as it goes: an interrupted run (hours at 4M) keeps the rows it finished
            pd.DataFrame(rows).to_csv(work / f"{args.name}_rows.csv", index=False)
            print(f"   {r['seconds']:.1f} s, {n / r['seconds']:,.0f} documents/s, "
                  f"{r['peak_mb']:.0f} MB, accuracy {r['accuracy']:.2f}%", flush=True)
    frame = pd.DataFrame(rows)
    limits = plain_read(data["train"][max(sizes)])
    limits.update(bare_epoch())
    print(f"plain read of {data['train'][max(sizes)].name}: " +
          ", ".join(f"{k} {v:,.1f}" for k, v in limits.items()), flush=True)
    lines = [f"Corpus: {json.dumps({k: data['stats'][k] for k in ('train_docs', 'train_tokens', 'train_distinct_words', 'heaps_curve_at_train_tokens', 'generate_seconds')})}",
             f"Plain read of the largest training file, and a bare epoch over 2**24 columns: " +
             ", ".join(f"{k} {v:,.1f}" for k, v in limits.items())]
    write_results(args.name, frame, title="A million reviews and more: nbsvm, Vowpal Wabbit "
                  "and fastText on generated corpora", config=config, notes=lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000000,4000000", help="training documents")
    ap.add_argument("--test-docs", type=int, default=25_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2,
                    help="nbsvm's threads (fastText's: 2; the capped run: 1)")
    ap.add_argument("--cap-mb", type=int, default=512,
                    help="memory limit of the capped run at the smallest size (0: skip it); "
                         "1M documents fill a 2.6 GB feature cache")
    ap.add_argument("--systems", default="nbsvm,vw,fasttext")
    ap.add_argument("--peers-max-docs", type=int, default=0,
                    help="run the peers only at sizes up to this (0: at every size)")
    ap.add_argument("--cap-only", action="store_true",
                    help="only the memory-capped run (results/scale_cap.md)")
    ap.add_argument("--name", default="scale",
                    help="results/NAME.md (another name keeps an earlier run's table)")
    ap.add_argument("--work", default=str(ROOT / "results" / "tmp" / "scale"))
    args = ap.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    config = start("scale", vars(args), [__file__, *(argv if argv is not None else sys.argv[1:])])
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    data = corpus(work, sizes, args.test_docs, args.seed)
    if not args.cap_only:
        run_all(args, sizes, data, work, config)
    if args.cap_mb:
        print(f"\n== memory-capped run at {label_of(sizes[0])}: limit {args.cap_mb} MB",
              flush=True)
        cap = capped(data["train"][sizes[0]], data["test"], work, args.cap_mb)
        shown = {k: v for k, v in cap.items() if k != "output"}
        print("   " + json.dumps(shown), flush=True)
        if cap.get("exit"):
            print(cap["output"], flush=True)
        write_results(f"{args.name}_cap", pd.DataFrame([shown]), title="nbsvm in a memory cgroup "
                      "smaller than its feature cache", config=config,
                      notes=[f"{label_of(sizes[0])} generated documents, nbsvm train --threads "
                             f"1 without a limit, then in a cgroup v1 memory controller "
                             f"limited to {args.cap_mb} MB (page cache counted, no swap); "
                             "same_model: the two model files' arrays equal bit for bit."])


if __name__ == "__main__":
    main()
