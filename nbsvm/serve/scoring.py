"""What the server answers, as plain data: predictions with top-k and thresholds, explanations,
a model's description. No HTTP here (the same functions serve Python callers and tests).

Every prediction names what its numbers are: ``label`` (a list of labels for a multi-label
model), ``score`` (the predicted label's score: for two classes the decision value signed
toward that label), ``probability`` (the predicted label's probability, when the loss gives
probabilities), ``probabilities`` (every class's) and, with ``top_k`` or ``threshold``,
``top``: the best classes in order, each with its probability (or score).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from nbsvm.models.nbsvm import NBSVMClassifier
    from nbsvm.serve.registry import Served


def predictions(
    model: NBSVMClassifier,
    texts: list[str],
    top_k: int | None = None,
    threshold: float | None = None,
) -> list[dict]:
    """One dict per text (see the module's docstring). ``top_k``: the k best classes (at
    most all of them); ``threshold``: only classes whose probability (score, for losses
    without probabilities) is at least this, which for a multi-label model also decides
    ``label`` (default: score 0, probability 0.5)."""
    if not texts:
        model.top_k_of(np.zeros((0, model.n_outputs())), top_k, threshold)  # checks both
        return []
    classes = list(model.class_names_)
    raw = np.asarray(model.decision_function(texts)).reshape(len(texts), -1)
    values, kind = model.class_values(raw)  # probabilities, or one score per class
    scores = _scores_per_class(model, raw)
    ranked = None
    if top_k is not None or threshold is not None:
        ranked = model.top_k_of(raw, top_k, threshold)
    # the labels as predict gives them (a calibrated model's: its most probable classes)
    code_of = {c: k for k, c in enumerate(classes)}
    labels = model.labels_of(raw) if not model.multilabel else None
    mask = model.label_mask(raw) if model.multilabel else None
    # multi-label: the best label as top-k and explain name it (a tie of probabilities goes
    # to the higher score, not to the first class)
    firsts = model.top_k_of(raw, 1)[0][:, 0] if model.multilabel else None
    out = []
    for i in range(len(texts)):
        row: dict[str, Any]
        if mask is not None:  # multi-label (label_mask always gives an array)
            chosen = (
                [k for k in range(len(classes)) if values[i, k] >= threshold]
                if threshold is not None
                else [k for k in range(len(classes)) if mask[i, k]]
            )
            row = {"label": [classes[k] for k in chosen]}
            best = int(cast("np.ndarray", firsts)[i])
        else:
            assert labels is not None  # one label per document: labels_of gave them
            row = {"label": labels[i]}
            best = code_of[labels[i]]
        row["score"] = float(scores[i, best])
        if kind == "probability":
            row["probability"] = float(values[i, best])
            row["probabilities"] = {c: float(values[i, k]) for k, c in enumerate(classes)}
        else:
            row["scores"] = {c: float(scores[i, k]) for k, c in enumerate(classes)}
        if ranked is not None:
            positions, best_values, _ = ranked
            row["top"] = [
                {"label": classes[j], kind: float(v)}
                for j, v in zip(positions[i], best_values[i])
                if j >= 0
            ]
        out.append(row)
    return out


def _scores_per_class(model, raw: np.ndarray) -> np.ndarray:
    """``(n, K)`` scores, one column per class (two classes: ``-s, s``)."""
    if raw.shape[1] == 1 and not model.multilabel:
        return np.column_stack([-raw[:, 0], raw[:, 0]])
    return raw


def explanation(model: NBSVMClassifier, text: str, cls: str | None = None) -> dict:
    """``nbsvm explain --text``'s numbers (``constant + sum(contribution) == score``), the
    prediction, and ``html``: the text's words shaded by their contributions."""
    from nbsvm.evaluation.explain import explain_text, shaded_html

    found = explain_text(model, text, cls)
    found["prediction"] = predictions(model, [text])[0]
    found["html"] = shaded_html(found)
    return found


def strongest_ngrams(model: NBSVMClassifier, top: int = 10) -> dict:
    """Each class's ``top`` strongest n-grams: ``{class: [{"ngrams", "contribution"}]}``
    (two classes: the positive direction of each)."""
    from nbsvm.evaluation.explain import top_feature_rows

    classes = list(model.class_names_)
    if model.binary_task():  # one output: its negative direction is classes[0]'s
        rows = top_feature_rows(model, top, classes[1])
        return {
            c: [
                {"ngrams": r["ngrams"], "contribution": sign * r["contribution"]}
                for r in rows
                if r["direction"] == direction
            ]
            for c, direction, sign in (
                (classes[0], "negative", -1.0),
                (classes[1], "positive", 1.0),
            )
        }
    return {
        c: [
            {"ngrams": r["ngrams"], "contribution": r["contribution"]}
            for r in top_feature_rows(model, top, c)
            if r["direction"] == "positive"
        ]
        for c in classes
    }


def describe(served: Served) -> dict:
    """What ``GET /models`` says of one served model: its name, never its path (an answer
    over HTTP must not show where the server's files are)."""
    model = served.model
    return {
        "name": served.name,
        "version": served.version,
        "loaded_at": served.loaded_at,
        "classes": list(model.class_names_),
        "multilabel": bool(model.multilabel),
        "probabilities": bool(model.has_proba()),
        "ngrams": model.ngrams,
        "char_ngrams": model.hasher_.char_ngrams,
        "n_bits": model.n_bits,
        "loss": model.setting("loss"),
    }
