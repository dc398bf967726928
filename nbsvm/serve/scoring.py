"""What the server answers, as plain data: predictions with top-k and thresholds, explanations,
a model's description. No HTTP here (the same functions serve Python callers and tests).

Every prediction names what its numbers are: ``label`` (a list of labels for a multi-label
model), ``score`` (the predicted label's score: for two classes the decision value signed
toward that label), ``probability`` (the predicted label's probability, when the loss gives
probabilities), ``probabilities`` (every class's) and, with ``top_k`` or ``threshold``,
``top``: the best classes in order, each with its probability (or score).
"""
from __future__ import annotations

import numpy as np

from nbsvm.errors import NBSVMError


def _per_class_scores(model, scores: np.ndarray) -> np.ndarray:
    """``(n, K)`` scores, one column per class (two classes: ``-s, s``)."""
    scores = np.asarray(scores, dtype=np.float64).reshape(len(scores), -1)
    if scores.shape[1] == 1 and not model.multilabel:
        return np.column_stack([-scores[:, 0], scores[:, 0]])
    return scores


def predictions(model, texts: list[str], top_k: int | None = None,
                threshold: float | None = None) -> list[dict]:
    """One dict per text (see the module's docstring). ``top_k``: the k best classes (at
    most all of them); ``threshold``: only classes whose probability (score, for losses
    without probabilities) is at least this, which for a multi-label model also decides
    ``label`` (default: probability 0.5, i.e. score 0)."""
    if top_k is not None and top_k < 1:
        raise NBSVMError(f"top_k must be >= 1, got {top_k}")
    has_proba = model.has_proba()
    if threshold is not None and has_proba and not 0.0 <= threshold <= 1.0:
        raise NBSVMError(f"threshold is a probability for this model: between 0 and 1, "
                         f"got {threshold}")
    if not texts:
        return []
    classes = list(model.classes_)
    raw = model.decision_function(texts)
    scores = _per_class_scores(model, raw)
    proba = model.proba_of(np.asarray(raw)) if has_proba else None
    value = proba if proba is not None else scores      # what ranks and thresholds use
    out = []
    for i in range(len(texts)):
        if model.multilabel:
            cut = threshold if threshold is not None else (0.5 if proba is not None else 0.0)
            chosen = [k for k in range(len(classes)) if value[i, k] >= cut] \
                if threshold is not None else [k for k in range(len(classes)) if scores[i, k] > 0]
            row = {"label": [classes[k] for k in chosen]}
            best = int(np.argmax(scores[i]))
        else:
            best = int(np.argmax(scores[i]))
            row = {"label": classes[best]}
        row["score"] = float(scores[i, best])
        if proba is not None:
            row["probability"] = float(proba[i, best])
            row["probabilities"] = {c: float(proba[i, k]) for k, c in enumerate(classes)}
        else:
            row["scores"] = {c: float(scores[i, k]) for k, c in enumerate(classes)}
        if top_k is not None or threshold is not None:
            order = np.argsort(-value[i], kind="stable")
            if threshold is not None:
                order = [k for k in order if value[i, k] >= threshold]
            key = "probability" if proba is not None else "score"
            row["top"] = [{"label": classes[k], key: float(value[i, k])}
                          for k in list(order)[:top_k or len(classes)]]
        out.append(row)
    return out


def explanation(model, text: str, cls: str | None = None) -> dict:
    """``nbsvm explain --text``'s numbers (``constant + sum(contribution) == score``), the
    prediction, and ``html``: the text's words shaded by their contributions."""
    from nbsvm.evaluation.explain import explain_text, shaded_html

    found = explain_text(model, text, cls)
    found["prediction"] = predictions(model, [text])[0]
    found["html"] = shaded_html(found)
    return found


def strongest_ngrams(model, top: int = 10) -> dict:
    """Each class's ``top`` strongest n-grams: ``{class: [{"ngrams", "contribution"}]}``
    (two classes: the positive direction of each)."""
    from nbsvm.evaluation.explain import top_features

    classes = list(model.classes_)
    out = {}
    if model.n_outputs() == 1:
        frame = top_features(model, top, classes[1])
        parts = {classes[1]: frame[frame.direction == "positive"],
                 classes[0]: frame[frame.direction == "negative"]}
        for c in classes:
            part = parts[c]
            sign = 1.0 if c == classes[1] else -1.0
            out[c] = [{"ngrams": n, "contribution": sign * float(v)}
                      for n, v in zip(part.ngrams, part.contribution)]
        return out
    for c in classes:
        frame = top_features(model, top, c)
        part = frame[frame.direction == "positive"]
        out[c] = [{"ngrams": n, "contribution": float(v)}
                  for n, v in zip(part.ngrams, part.contribution)]
    return out


def describe(served) -> dict:
    """What ``GET /models`` says of one served model."""
    model = served.model
    return {"name": served.name, "path": served.path, "version": served.version,
            "loaded_at": served.loaded_at, "classes": list(model.classes_),
            "multilabel": bool(model.multilabel), "probabilities": bool(model.has_proba()),
            "ngrams": model.ngrams, "char_ngrams": model.char_ngrams,
            "n_bits": model.n_bits, "loss": model.setting("loss")}
