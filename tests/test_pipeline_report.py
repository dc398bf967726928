"""The pieces every reproduction script shares (pipelines/_report.py, pipelines/reproduce.py)."""
import sys

import pandas as pd
import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "pipelines"))
import _report  # noqa: E402
import reproduce  # noqa: E402


def test_start_prints_the_configuration_and_the_command(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(REPO / "pipelines" / "blitzer.py"), "--seed", "3"])
    config = _report.start("blitzer", {"seed": 3, "data": REPO / "data"})
    out = capsys.readouterr().out
    assert "== blitzer: configuration" in out and "  seed: 3" in out
    assert "reproduce: .venv/bin/python pipelines/blitzer.py --seed 3" in out
    assert config["seed"] == 3 and config["data"] == str(REPO / "data") and "_started" in config


def test_write_results_writes_tidy_csv_and_markdown(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["pipelines/x.py"])
    frame = pd.DataFrame({"method": ["nbsvm", "sgd"], "accuracy": [0.912345, 0.8]})
    config = _report.start("x", {"seed": 0})
    csv_path, md_path = _report.write_results(
        "x", frame, title="A table", notes=["Some note."], config=config, out=tmp_path,
        extra_tables={"Published": pd.DataFrame({"source": ["paper"], "accuracy": [0.9]})})
    assert pd.read_csv(csv_path).equals(frame)
    md = md_path.read_text()
    assert md.startswith("# A table\n\nSome note.")
    assert "| method | accuracy |\n| --- | --- |\n| nbsvm | 0.9123 |\n| sgd | 0.8 |" in md
    assert "## Published" in md and '"seed": 0' in md and "Wall time:" in md
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv", "x.md"]    # no temp files


def test_reproduce_refuses_unknown_parts(capsys):
    with pytest.raises(SystemExit) as e:
        reproduce.main(["--only", "imdb,nope"])
    assert e.value.code == 2
    assert "unknown part(s) nope; allowed: imdb, imdb_table" in capsys.readouterr().err
    assert set(reproduce.PARTS) == {"imdb", "imdb_table", "blitzer", "rcv1", "iris_ogd"}
    for args in reproduce.PARTS.values():
        assert (REPO / args[0]).name.endswith(".py")
