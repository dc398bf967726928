"""Every benchmark and reproduction script stays runnable (issue 37): a changed signature or
a moved name fails this suite, not the next benchmark run. Each script imports; the kernel
benchmarks run once on shapes a few hundred times smaller than their own."""
import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

PIPELINES = Path(__file__).resolve().parents[1] / "pipelines"
sys.path.insert(0, str(PIPELINES))
SCRIPTS = sorted(p.stem for p in PIPELINES.glob("*.py"))


@pytest.mark.parametrize("name", SCRIPTS)
def test_every_pipeline_script_imports_and_has_its_entry_point(name):
    module = importlib.import_module(name)
    text = (PIPELINES / f"{name}.py").read_text()
    if 'if __name__ == "__main__":' in text:  # a script, not a helper module
        assert callable(getattr(module, "main", None)), f"{name}.py runs but has no main()"


def test_bench_kernels_times_the_production_kernel_and_its_reference(capsys):
    import bench_kernels
    bench_kernels.main(["--runs", "1", "--scale", "0.002"])
    out = capsys.readouterr().out
    for row in ("no prefetch, 12-byte rows", "prefetch, 12-byte rows (used)",
                "prefetch, 16-byte rows (padded)"):
        assert out.count(row) == 2, out             # both shapes


def test_the_bare_epoch_of_make_scale_runs_the_production_kernel():
    import scale_systems
    got = scale_systems.bare_epoch(runs=1, n_docs=20, n_columns=4096)
    assert np.isfinite(got["bare_epoch_ns_per_nnz"]) and got["bare_epoch_nnz_per_s"] > 0


def test_make_limits_measures_every_stage_on_a_slice_of_imdb(imdb_slice, tmp_path):
    import limits
    limits.main(["--data", str(imdb_slice), "--docs", "300", "--runs", "1", "--out", str(tmp_path)])
    table = (tmp_path / "limits.csv").read_text()
    for stage in ("read", "tokenize", "hash", "epoch", "score", "save"):
        assert f"\n{stage}," in table, table
    # every row but the tokenizer's (a bound alone) has nbsvm's figure and its fraction
    assert all(line.count(",,") == 0 for line in table.splitlines()[1:] if "tokenize" not in line)


@pytest.mark.slow  # a second run of a bench script (make test-slow; make_limits' stays)
def test_predict_bench_runs_every_system_on_a_slice_of_imdb(imdb_slice, tmp_path):
    # the peers are the bench extra (make bench installs them); a plain make test skips
    pytest.importorskip("fasttext")
    pytest.importorskip("vowpalwabbit")
    import predict_bench
    predict_bench.main(["--data", str(imdb_slice), "--runs", "1", "--work", str(tmp_path / "w"),
                        "--out", str(tmp_path)])
    table = (tmp_path / "predict_bench.md").read_text()
    for name in ("nbsvm predict", "fastText predict", "Vowpal Wabbit -t"):
        row = next(line for line in table.splitlines() if line.startswith(f"| {name}"))
        accuracy = float(row.split("|")[2].strip().rstrip("%"))
        assert 60 < accuracy <= 100, row             # 1000 test reviews, trained on 2000


@pytest.mark.slow  # a second run of a bench script (make test-slow; make_limits' stays)
def test_thread_scaling_script_trains_at_every_thread_count(imdb_slice, tmp_path):
    import threads
    threads.main(["--train", str(imdb_slice / "train"), "--test", str(imdb_slice / "test"),
                  "--threads", "1,2", "--runs", "1", "--work", str(tmp_path / "w"),
                  "--out", str(tmp_path)])
    rows = (tmp_path / "threads.csv").read_text().splitlines()
    assert rows[0].startswith("threads,wall_s,hashing_s,epochs_s,epochs_speedup")
    assert [r.split(",")[0] for r in rows[1:]] == ["1", "2"]
    assert all(60 < float(r.split(",")[-1]) <= 100 for r in rows[1:])  # accuracy, 2000 reviews


@pytest.mark.slow  # a second run of a bench script (make test-slow; make_limits' stays)
def test_serve_bench_loads_fuzzes_and_learns_on_a_small_imdb_model(imdb_slice, tmp_path):
    # the load comes from wrk (.ci/run installs it; make serve-bench says how otherwise)
    import shutil
    if shutil.which("wrk") is None:
        pytest.skip("no wrk (apt-get install wrk)")
    pytest.importorskip("fastapi")
    import subprocess
    model = tmp_path / "imdb.npz"
    nbsvm = Path(sys.executable).parent / "nbsvm"
    subprocess.run([str(nbsvm), "train", str(imdb_slice / "train"), "--n-bits", "18",
                    "-o", str(model), "-q"], check=True)
    import serve_bench
    serve_bench.main(["--model", str(model), "--texts", "128", "--predict-texts", "200",
                      "--seconds", "1", "--fuzz", "60", "--clients", "8",
                      "--predict-runs", "1", "--out", str(tmp_path / "out")])
    rows = (tmp_path / "out" / "serve_bench.csv").read_text().splitlines()
    header = rows[0].split(",")
    table = [dict(zip(header, r.split(","))) for r in rows[1:]]
    assert {(r["request"], r["clients"], r["learning"]) for r in table} >= {
        ("single text", "8", "off"), ("batch of 64", "8", "off"), ("single text", "8", "on")}
    assert all(r["errors"] == "0" and float(r["requests_per_s"]) > 0 for r in table)
    notes = (tmp_path / "out" / "serve_bench.md").read_text()
    assert "5xx or dropped: 0" in notes and "alive after: True" in notes
    assert "Learned" in notes and "failed 0" in notes


def test_bench_report_pairs_nbsvm_with_each_peer_round_by_round():
    import bench_report
    import pandas as pd
    results = {
        bench_report.BASELINE: [{"seconds": 2.0}, {"seconds": 3.0}, {"seconds": 2.0}],
        "Vowpal Wabbit (...)": [{"seconds": 8.0}, {"seconds": 6.0}, {"seconds": 5.0}],
        "fastText (...)": [{"seconds": 4.0}, {"seconds": 4.0}, {"seconds": 5.0}],
    }
    table = pd.DataFrame([{"system": bench_report.BASELINE, "training_s": 1.0}])
    lines = "\n".join(bench_report.stage_lines(table, results, [{"seconds": 9.0}]))
    assert "nbsvm (threads 1) / VW time: 0.25, 0.50, 0.40 (median 0.40)." in lines
    assert "nbsvm (threads 1) / fastText time: 0.50, 0.75, 0.40 (median 0.50)." in lines


@pytest.mark.parametrize("name, flag", [("iris_ogd", "--shuffles"), ("bench_dask", "--runs"),
                                        ("bench_dask", "--shards"), ("bench", "--runs")])
def test_counts_below_one_are_argument_errors(name, flag, capsys):
    """--shuffles 0 ended in an IndexError traceback, --runs 0 took the median of nothing."""
    import _harness
    module = importlib.import_module(name)
    with pytest.raises(SystemExit) as stop:
        module.main([flag, "0"])
    assert stop.value.code == 2 and "expected at least 1, got 0" in capsys.readouterr().err
    assert _harness.positive("3") == 3


def test_make_startup_times_each_small_command_as_a_whole_process(imdb_slice, tmp_path):
    import startup
    startup.main(["--data", str(imdb_slice), "--runs", "1", "--warm-up", "0",
                  "--out", str(tmp_path)])
    rows = (tmp_path / "startup.csv").read_text().splitlines()
    assert rows[0] == "command,median s,min s,max s,target s,met", rows[0]
    names = [r.split(",")[0] for r in rows[1:]]
    assert names[2:] == ["help", "version", "info", "argument error", "predict 10 docs",
                         "train 200 docs", "eval 200 docs"], names
    assert all(0 < float(r.split(",")[1]) < 60 for r in rows[1:]), rows


def test_layout_bound_times_every_layout_on_a_small_table(tmp_path):
    import layout_bound
    corpus = Path(__file__).resolve().parents[1] / "data" / "reviews.txt"
    layout_bound.main(["--corpus", str(corpus), "--docs", "40", "--n-bits", "14", "--runs", "1",
                       "--out", str(tmp_path)])
    table = (tmp_path / "layout_bound.csv").read_text()
    for layout in ("bucket order", "hot first (2^16)", "sorted by documents"):
        assert f"\n{layout}," in table, table
