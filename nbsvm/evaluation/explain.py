"""Explanations of a hashed model: which n-grams move a score, and by how much.

:func:`top_features` lists the strongest buckets of a class with their n-gram names
(:mod:`nbsvm.evaluation.bucket_names`); :func:`explain_text` splits one text's score n-gram
by n-gram (:mod:`nbsvm.evaluation.contributions`); :func:`to_html` shades its words by their
contributions.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING

import numpy as np

from nbsvm.errors import NBSVMError, shown
from nbsvm.evaluation.contributions import _unit_row, contribution_row
from nbsvm.io.decoding import valid_unicode
from nbsvm.memory import check_fit_memory
from nbsvm.text.hashing import _encode, bucket_of
from nbsvm.text.scripts import SPLIT_RE

if TYPE_CHECKING:
    import pandas as pd

    from nbsvm.models.nbsvm import NBSVMClassifier


@functools.cache
def _split_token() -> re.Pattern[str]:
    """One split character and its marks (compiled on first use: 10-30 ms)."""
    return re.compile(SPLIT_RE)


class Explanation(dict):
    """One text's score split into its n-grams' contributions (:func:`explain_text`):
    ``{"class", "score", "constant", "ngrams": [...]}``. In Jupyter it shows the text
    shaded by contribution; :meth:`frame` is the n-grams as a DataFrame."""

    def frame(self) -> pd.DataFrame:
        """One row per n-gram: ``ngram, kind, bucket, contribution, note``."""
        import pandas as pd

        return pd.DataFrame(
            self["ngrams"], columns=["ngram", "kind", "bucket", "contribution", "note"]
        )

    def _repr_html_(self) -> str:
        return shaded_html(self)


def _output_of(clf, cls) -> int:
    """The output index for class ``cls`` (binary models have one output: the positive
    class ``classes_[1]``; asking for ``classes_[0]`` flips the sign)."""
    if cls is None:
        return 0
    if str(cls) not in clf.class_names_:
        raise NBSVMError(f"unknown class {shown(cls)}; the model has {clf.class_names_}")
    k = clf.class_names_.index(str(cls))
    return 0 if clf.n_outputs() == 1 else k


def _names(mapping: dict, bucket: int) -> str:
    found = mapping.get(bucket)
    if not found:
        return f"<bucket {bucket}>"
    return " | ".join(s for s, _ in found)


def top_features_by_class(clf: NBSVMClassifier, top: int = 30) -> pd.DataFrame:
    """Every class's ``top`` strongest buckets toward it (one output per class: a
    multi-class or multi-label model), as :func:`top_features` rows of direction
    ``positive``, class by class."""
    import pandas as pd

    frames = [top_features(clf, top, c) for c in clf.class_names_]
    frames = [f[f.direction == "positive"] for f in frames]
    return pd.concat(frames, ignore_index=True)


def _extreme(row: np.ndarray, top: int, largest: bool) -> np.ndarray:
    """The columns of the ``top`` largest (or smallest) values of ``row`` in order, as a
    stable sort of the whole row orders them (largest: ties by falling column), found by a
    partition: a model of many classes ranks each class's row."""
    values = -row if largest else row
    if top < values.size:
        cut = np.partition(values, top - 1)[top - 1]
        candidates = np.flatnonzero(values <= cut)  # every tie of the last one too
    else:
        candidates = np.arange(values.size)
    if largest:
        candidates = candidates[::-1]
    return candidates[np.argsort(values[candidates], kind="stable")][:top]


#: the columns of :func:`top_features`, the keys of each of :func:`top_feature_rows`
TOP_FEATURE_COLUMNS = [
    "class", "direction", "rank", "ngrams", "bucket", "ratio", "weight", "contribution",
]  # fmt: skip


def top_features(clf: NBSVMClassifier, top: int = 30, cls: object | None = None) -> pd.DataFrame:
    """The ``top`` strongest buckets of each sign for class ``cls`` as a DataFrame:
    ``class, direction, rank, ngrams, bucket, ratio, weight, contribution`` (``class``: the
    class a positive contribution points to)."""
    import pandas as pd

    return pd.DataFrame(top_feature_rows(clf, top, cls), columns=TOP_FEATURE_COLUMNS)


def top_feature_rows(clf: NBSVMClassifier, top: int = 30, cls: object | None = None) -> list[dict]:
    """The rows of :func:`top_features` as dicts, the positive direction's first (without
    pandas: ``nbsvm serve`` names its models' strongest n-grams at every load, and pandas
    alone took 0.6 s of its start)."""
    if not (isinstance(top, int) and top >= 1):
        raise NBSVMError(f"top must be an integer >= 1, got {top!r}")
    k = _output_of(clf, cls)
    sign = (
        -1.0 if (clf.binary_task() and cls is not None and str(cls) == clf.class_names_[0]) else 1.0
    )
    row = sign * contribution_row(clf, k)[0]
    toward = str(cls) if cls is not None else clf.class_names_[-1 if clf.binary_task() else 0]
    learner = clf.linear_
    backend_w = (
        clf.backend_.output_weights(k, learner.tables)[1]
        if clf.backend_learner is not None
        else None
    )
    buckets = clf.column_buckets()
    mapping = getattr(clf, "ngram_map_", None) or {}
    rows = []
    strongest = (("positive", _extreme(row, top, True)), ("negative", _extreme(row, top, False)))
    for direction, cols in strongest:
        for rank, c in enumerate(cols, 1):
            if row[c] == 0 or (row[c] > 0) != (direction == "positive"):
                break  # no more features of this sign (a zero one has none)
            b = int(buckets[c])
            rows.append(
                {
                    "class": toward,
                    "direction": direction,
                    "rank": rank,
                    "ngrams": _names(mapping, b),
                    "bucket": b,
                    "ratio": float(learner.S_[k, c, 0]),
                    "weight": float(
                        learner.S_[k, c, 1] * learner.scale_of(k)
                        if backend_w is None
                        else backend_w[c]
                    ),
                    "contribution": float(row[c]),
                }
            )
    return rows


#: Memory an explanation takes per character of its text, its printing included (measured:
#: 440 bytes in a table, 720 as JSON, for lines of random words).
EXPLAIN_BYTES_PER_CHAR = 800


def explain_text(clf: NBSVMClassifier, text: str, cls: object | None = None) -> Explanation:
    """Split ``text``'s score for class ``cls`` (default: the predicted class) n-gram by
    n-gram: ``{"class", "score", "constant", "ngrams": [{"ngram", "kind", "bucket",
    "contribution", "note"}]}``. Each bucket counts once (features are binarized): its
    first n-gram carries the contribution, repeats and other n-grams in the same bucket add
    0 (``note`` says which); ``constant + sum(contribution) == score``."""
    clf.check_fitted()
    if not isinstance(text, str):  # (a list of texts, None: 'no attribute encode')
        raise TypeError(f"explain_text explains one text (a str), got {type(text).__name__}")
    # one record per n-gram: a 2.4 MB line took 1.7 GB; refused beyond what is available
    check_fit_memory(
        len(text) * EXPLAIN_BYTES_PER_CHAR,
        what=f"explaining a text of {len(text):,} characters",
        advice="explain a part of it",
    )
    text = valid_unicode(text)  # lone surrogates as U+FFFD, as decision_function reads them
    scores = np.atleast_1d(clf.decision_function([text])[0])
    if cls is None and clf.multilabel:  # the best label, as predict's top-k and serve name it
        # (the most probable, ties to the higher score: each label's own calibration can
        # rank them otherwise than their scores, and the highest score was explained
        # beside another label's probability)
        cls = clf.class_names_[int(clf.top_k_of(scores[None, :], 1)[0][0, 0])]
    elif cls is None:
        cls = clf.labels_of(clf.decision_function([text]))[0]
    k = _output_of(clf, cls)
    sign = -1.0 if clf.binary_task() and str(cls) == clf.class_names_[0] else 1.0
    C_k, const_k = contribution_row(clf, k)
    hasher = clf.hasher_
    words, chars = hasher.keys(text)
    seed2 = (hasher.seed + 1) & 0xFFFFFFFF
    # keys as their UTF-8 bytes (lone surrogates passed through, as the hasher does)
    keyed = [(w, "word", bucket_of(_encode(w), hasher.n_bits, hasher.seed)) for w in words] + [
        (c, "char", bucket_of(_encode(c), hasher.n_bits, seed2)) for c in chars
    ]
    row = C_k
    if clf.unit_rows():
        row = _unit_row(clf, k, [b for _, _, b in keyed])
    first: dict[int, str] = {}
    rows = []
    for key, kind, b in keyed:
        col = int(clf.column_of_[b]) if clf.column_of_ is not None else b
        if col < 0:
            rows.append(
                dict(ngram=key, kind=kind, bucket=b, contribution=0.0, note="not in the model")
            )
        elif b in first:
            note = "repeat" if first[b] == key else f"shares its bucket with {first[b]!r}"
            rows.append(dict(ngram=key, kind=kind, bucket=b, contribution=0.0, note=note))
        else:
            first[b] = key
            rows.append(
                dict(ngram=key, kind=kind, bucket=b, contribution=float(sign * row[col]), note="")
            )
    return Explanation(
        {
            "class": str(cls),
            "score": float(sign * scores[k]),
            "constant": float(sign * const_k),
            "ngrams": rows,
        }
    )


def word_gaps(words: list[str]) -> list[str]:
    """What goes before each of the ``words`` (unigrams) to show them as text: nothing
    before the first, and between two characters of a script written without spaces (a
    token each with ``split_scripts``: ``好``, ``看``, ``！``) nothing either, so that
    ``这部电影很好看！`` reads as it was written; a space everywhere else.

    Examples
    --------
    >>> word_gaps(["great", "film", "很", "好", "看", "！", "ok"])
    ['', ' ', ' ', '', '', '', ' ']
    """
    token = _split_token()
    split = [token.fullmatch(w) is not None for w in words]
    return ["" if i == 0 or (split[i - 1] and split[i]) else " " for i in range(len(words))]


def shaded_html(explanation: dict) -> str:
    """The body of :func:`to_html`: the score, the unigrams each shaded by its contribution
    (green raises the score, red lowers it; spaced as :func:`word_gaps` says) and a table of
    the strongest n-grams (an HTML fragment; every text escaped)."""
    rows = explanation["ngrams"]
    words = [r for r in rows if r["kind"] == "word" and " " not in r["ngram"]]
    scale = max([abs(r["contribution"]) for r in rows] + [1e-12])

    def shade(v):
        a = min(1.0, abs(v) / scale)
        color = (0, 160, 0) if v > 0 else (200, 0, 0)
        return f"rgba({color[0]},{color[1]},{color[2]},{a:.2f})"

    spans = "".join(
        # (each word's direction isolated: a right-to-left override in one word turned
        # every word after it around; a table cell is a paragraph of its own already)
        f'{gap}<span title="{r["contribution"]:+.4f}" style="unicode-bidi:isolate;background:'
        f'{shade(r["contribution"])}">{_shown(r["ngram"])}</span>'
        for gap, r in zip(word_gaps([r["ngram"] for r in words]), words)
    )
    strongest = sorted(
        (r for r in rows if r["contribution"]), key=lambda r: -abs(r["contribution"])
    )
    table = "".join(
        f"<tr><td>{_shown(r['ngram'])}</td><td>{r['contribution']:+.4f}</td></tr>"
        for r in strongest[:30]
    )
    return (
        f"<p>class <b><bdi>{_shown(explanation['class'])}</bdi></b>: score "
        f"{explanation['score']:+.4f} = {explanation['constant']:+.4f} (constant) + "
        f"the n-grams' contributions</p><p class='shaded' style='line-height:1.8'>{spans}</p>"
        f"<table><tr><th>n-gram</th><th>contribution</th></tr>{table}</table>"
    )


#: Control characters a page shows as U+FFFD (C0 and C1, DEL: what HTML calls controls;
#: tab and line ends aside).
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _shown(text: str) -> str:
    """``text`` escaped for the page, its control characters as U+FFFD."""
    import html

    return html.escape(_CONTROLS.sub(chr(0xFFFD), text))


#: The page around :func:`shaded_html` sections (``<hr>`` between them), for a page
#: written section by section.
HTML_HEAD = (
    "<!DOCTYPE html><html><head><meta charset='utf-8'><title>nbsvm explain</title></head><body>"
)
HTML_TAIL = "</body></html>"


def to_html(explanation: dict | list[Explanation] | list[dict]) -> str:
    """An explanation (or a list of them, one section each) as a standalone HTML page
    (:func:`shaded_html`)."""
    items = explanation if isinstance(explanation, list) else [explanation]
    return HTML_HEAD + "<hr>".join(shaded_html(e) for e in items) + HTML_TAIL
