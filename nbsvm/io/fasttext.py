"""fastText's supervised format: ``__label__pos __label__books a great read`` per line.

The labels are the leading words that start with ``__label__``; the rest of the line is the
text. One label is the document's class; several make a multi-label document (the label
set ``books,pos``, for ``--multilabel``). Lines as in
:func:`~nbsvm.io.labeled_lines.read_lines` (UTF-8 or ``encoding``, invalid bytes replaced
and counted, blank lines skipped, malformed lines an error naming file and line or skipped
with ``--skip-bad-lines``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from nbsvm.io.decoding import ReadStats
from nbsvm.io.document import Document
from nbsvm.io.labeled_lines import read_text_lines
from nbsvm.io.labels import SEPARATOR, SEVERAL_LABELS, key_of

if TYPE_CHECKING:
    from nbsvm.io.document import PathOrFile

PREFIX = "__label__"


def read_fasttext(
    path_or_file: PathOrFile,
    labeled: bool = True,
    strict: bool = False,
    stats: ReadStats | None = None,
    encoding: str = "utf-8",
    several_labels: bool = True,
    label_sets: bool = False,
) -> Iterator[Document]:
    """Documents of a fastText file. ``labeled=False`` (predict): a line without a label is
    an unlabeled document, and a labelled one keeps its label as the true label.
    ``several_labels=False`` (a single-label task): a labeled line with several labels is
    malformed.

    Examples
    --------
    >>> import io
    >>> docs = read_fasttext(io.StringIO("__label__pos great fun\\n__label__b __label__a x y\\n"))
    >>> [(d.label, d.text) for d in docs]
    [('pos', 'great fun'), ('a,b', 'x y')]
    """
    if stats is None:
        stats = ReadStats()
    for doc in read_text_lines(path_or_file, strict=strict, stats=stats, encoding=encoding):
        words = doc.text.split()
        n = 0
        while n < len(words) and words[n].startswith(PREFIX):
            n += 1
        labels = [w[len(PREFIX) :] for w in words[:n]]
        if any(not label for label in labels):
            stats.bad(f"an empty label: '{PREFIX}' with no name", doc.source, doc.line)
            continue
        if not labels:
            if labeled:
                stats.bad(
                    f"expected '{PREFIX}NAME text', found no {PREFIX} at the start of "
                    "the line (--format plain-lines reads unlabeled lines)",
                    doc.source,
                    doc.line,
                )
                continue
            yield doc
            continue
        if any(SEPARATOR in label for label in labels) and (
            len(labels) > 1 or (label_sets and labeled)
        ):
            # a set's key joins its labels with ',': in a set (or a multi-label task's line,
            # ``label_sets``) 'Arts,_Crafts' would read as two; a class (a single-label
            # task's, a lexicon's) keeps it
            stats.bad(
                f"a label holds {SEPARATOR!r}, which separates the labels of a set",
                doc.source,
                doc.line,
            )
            continue
        if len(set(labels)) > 1 and labeled and not several_labels:
            stats.bad(
                f"several labels ({' '.join(words[:n])}): {SEVERAL_LABELS}", doc.source, doc.line
            )
            continue
        label = labels[0] if len(labels) == 1 else key_of(labels)
        yield Document(label, " ".join(words[n:]), doc.source, doc.line)
