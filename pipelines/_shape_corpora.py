"""The corpora behind the robustness shapes, read once per process (cached): the shared
archives as (texts, labels), RT-2k and the Blitzer review bodies."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path


@cache
def corpus(name: str, part: str | None = None) -> tuple[tuple, tuple]:
    """``(texts, labels)`` of a corpus part, in archive order (20 Newsgroups as latin-1,
    as the datasets module and ``make bench`` read it)."""
    from nbsvm import datasets

    encoding = "latin-1" if name == "20newsgroups" else "utf-8"
    docs = list(datasets.documents(name, part, encoding=encoding))
    return tuple(d.text for d in docs), tuple(d.label for d in docs)


@cache
def rt2k() -> tuple[tuple, tuple, tuple]:
    """RT-2k's reviews, labels and ``cv###`` numbers."""
    from nbsvm import datasets

    texts, labels, numbers = [], [], []
    for d in datasets.documents("rt_polarity_2k"):
        texts.append(d.text)
        labels.append(d.label)
        numbers.append(int(re.search(r"/cv(\d{3})_", d.source).group(1)))
    return tuple(texts), tuple(labels), tuple(numbers)


@cache
def blitzer_bodies() -> tuple[tuple, tuple, tuple]:
    """Every labeled Blitzer review's body (``<review_text>``, no title), its domain and
    its polarity, in archive order."""
    from nbsvm import datasets
    from nbsvm.io.blitzer import LABELS, read_reviews, review_members

    texts, domains, polarity = [], [], []
    path = datasets.archive("blitzer", "sorted_data_acl_labeled.tar.gz")
    for member, fh in review_members(path):
        stem = Path(member).stem
        if stem not in LABELS:
            continue
        domain = DOMAIN_NAMES.get(Path(member).parent.name, Path(member).parent.name)
        for doc in read_reviews(fh, label=stem, fields=("review_text",), source=member):
            texts.append(doc.text)
            domains.append(domain)
            polarity.append(stem)
    return tuple(texts), tuple(domains), tuple(polarity)


DOMAIN_NAMES = {"kitchen_&_housewares": "kitchen"}
