#!/usr/bin/env python
"""Peer for ``pipelines/predict_bench.py``: fastText's prediction, as its users run it.

``train TRAIN.ft MODEL.bin``: train supervised with the settings chosen on IMDB's training
split (``pipelines/tune_fasttext.py``) and save the model. ``predict MODEL.bin TEST.ft
OUT``: load the model, predict the label of every line (``__label__`` words dropped; the
tokens nbsvm's tokenizer made) and write one label a line to ``OUT``, then print the
accuracy against the lines' labels. fastText's prediction runs in one thread.
"""

import sys

from fasttext_text import DEFAULTS


def main():
    import fasttext

    mode, *args = sys.argv[1:]
    if mode == "train":
        train, model = args
        fasttext.train_supervised(input=train, thread=2, seed=0, verbose=0, **DEFAULTS).save_model(
            model
        )
        return
    model_path, test, out = args
    model = fasttext.load_model(model_path)
    truth, lines = [], []
    with open(test, encoding="utf-8") as f:
        for line in f:
            words = line.split()
            truth.append(next((w for w in words if w.startswith("__label__")), None))
            lines.append(" ".join(w for w in words if not w.startswith("__label__")))
    labels, _ = model.predict(lines)
    with open(out, "w", encoding="utf-8") as f:
        f.writelines(f"{got[0]}\n" for got in labels)
    right = sum(got[0] == want for got, want in zip(labels, truth))
    print(f"accuracy: {100.0 * right / len(truth):.2f}%")


if __name__ == "__main__":
    main()
