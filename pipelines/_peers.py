"""The peers' inputs (Vowpal Wabbit, fastText, scikit-learn): IMDB written once as raw,
tokenized, VW and fastText files, and the peers' accuracy read back."""

from __future__ import annotations

from pathlib import Path


def vw_line(label: str, tokens: str) -> str:
    """A two-class VW example (``:`` and ``|`` are VW's syntax: they become ``;`` and ``/``)."""
    clean = tokens.replace("|", "/").replace(":", ";")
    return f"{1 if label == 'pos' else -1} | {clean}\n"


def fasttext_line(label: str, tokens: str) -> str:
    return f"__label__{label} {tokens}\n"


def prepare(data: Path, out: Path) -> dict:
    """label<TAB>text (raw, for nbsvm), label<TAB>tokens (sklearn) and VW files."""
    from nbsvm.io.folders import read_aclimdb
    from nbsvm.text.tokenize import tokenize

    out.mkdir(parents=True, exist_ok=True)
    files = {}
    for split in ("train", "test"):
        raw, tok, vw = out / f"{split}.txt", out / f"{split}.tok", out / f"{split}.vw"
        ft = out / f"{split}.ft"
        if not (raw.exists() and tok.exists() and vw.exists() and ft.exists()):
            with (
                open(raw, "w") as f_raw,
                open(tok, "w") as f_tok,
                open(vw, "w") as f_vw,
                open(ft, "w") as f_ft,
            ):
                for doc in read_aclimdb(data / split):
                    text = doc.text.replace("\t", " ").replace("\n", " ").replace("\r", " ")
                    tokens = " ".join(tokenize(text))
                    f_raw.write(f"{doc.label}\t{text}\n")
                    f_tok.write(f"{doc.label}\t{tokens}\n")
                    f_vw.write(vw_line(doc.label, tokens))
                    f_ft.write(fasttext_line(doc.label, tokens))
        files[split] = dict(raw=raw, tok=tok, vw=vw, ft=ft)
    return files


def vw_accuracy(pred_path: Path, test_vw: Path) -> float:
    preds = [float(line.split()[0]) for line in open(pred_path)]
    labels = [line.split(" ", 1)[0] == "1" for line in open(test_vw)]
    return 100.0 * sum((p > 0) == y for p, y in zip(preds, labels)) / len(labels)


# ---- the commands: one builder a system, shared by every benchmark that runs it ----------

PEERS = Path(__file__).resolve().parent / "peers"
VW_NAME = "Vowpal Wabbit (--ngram 3 -b 26 logistic, 10 passes)"
FASTTEXT_NAME = "fastText (wordNgrams 2, dim 10, epoch 10, lr 0.5, 2 threads)"


def nbsvm_train(train, test, model, *options: str) -> list[str]:
    """``nbsvm train TRAIN... --test TEST -o MODEL OPTIONS... -q`` (``train``: one path or
    a list of them)."""
    from _harness import NBSVM

    trains = [str(t) for t in train] if isinstance(train, (list, tuple)) else [str(train)]
    return [NBSVM, "train", *trains, "--test", str(test), "-o", str(model), *options, "-q"]


def peer_script(name: str, *args) -> list[str]:
    """``python pipelines/peers/NAME.py ARGS...``."""
    from _harness import PY

    return [PY, str(PEERS / f"{name}.py"), *(str(a) for a in args)]


def vw_commands(train_vw: Path, test_vw: Path, work: Path, cache: bool = False) -> list[list[str]]:
    """Vowpal Wabbit's two processes: trigrams over 2**26 buckets, logistic loss, 10 passes
    (over ``work/vw.cache`` when ``cache``) into ``work/vw.model``, then a test pass into
    ``work/vw.pred``."""
    from _harness import PY

    vw = [PY, "-m", "vowpalwabbit"]
    cache_file = ["--cache_file", str(work / "vw.cache")] if cache else []
    train = [
        *vw,
        *["-d", str(train_vw), "--ngram", "3", "-b", "26", "--loss_function", "logistic"],
        *["--passes", "10", "-c", "-k", *cache_file, "--holdout_off"],
        *["-f", str(work / "vw.model"), "--quiet"],
    ]
    test = [
        *vw,
        *["-d", str(test_vw), "-t", "-i", str(work / "vw.model")],
        *["-p", str(work / "vw.pred"), "--quiet"],
    ]
    return [train, test]
