"""``make scale``'s helpers (issue 15): the peers' copies of a corpus and the bit-for-bit
model comparison of the memory-capped run."""
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "pipelines"))
import scale_capped  # noqa: E402
import scale_corpus  # noqa: E402


def test_peer_files_hold_the_same_tokens_in_each_format(tmp_path):
    src = tmp_path / "train.txt"
    src.write_text("pos\tgreat film : a | b\nneg\tbad .\n")
    files = scale_corpus.peer_files(src, write=False)
    assert not files["vw"].exists()             # only named until a peer runs
    files = scale_corpus.peer_files(src)
    # VW: ':' and '|' are its syntax, so they become ';' and '/'
    assert files["vw"].read_text() == "1 | great film ; a / b\n-1 | bad .\n"
    assert files["ft"].read_text() == "__label__pos great film : a | b\n__label__neg bad .\n"


def test_same_model_is_bit_for_bit(tmp_path):
    a = {"coef": np.array([0.1, 0.2], dtype=np.float32), "bias": np.array([1.0])}
    np.savez(tmp_path / "a.npz", **a)
    np.savez(tmp_path / "b.npz", **a)
    b = dict(a, coef=np.nextafter(a["coef"], np.float32(1)))    # one ulp apart
    np.savez(tmp_path / "c.npz", **b)
    assert scale_capped.same_model(tmp_path / "a.npz", tmp_path / "b.npz") == (True, 2)
    assert scale_capped.same_model(tmp_path / "a.npz", tmp_path / "c.npz") == (False, 2)
    np.savez(tmp_path / "d.npz", coef=a["coef"])
    assert scale_capped.same_model(tmp_path / "a.npz", tmp_path / "d.npz")[0] is False
