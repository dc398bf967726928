"""Every corpus the project uses, in one place: where its archives are, their sha256, how they
unpack, where they came from, and loaders of their documents.

The archives are read from the shared datasets folder (:func:`shared_root`:
``$NBSVM_SHARED_DATASETS``, else ``../shared/datasets`` beside the checkout, else
``/work/shared/datasets``), each checked against the sha256 its README gives before use
(:func:`archive`); IMDB can also come from its official download. :func:`prepare` unpacks a
corpus into ``data/`` (``nbsvm datasets get NAME``, ``make data-NAME``; ``make data`` for all),
:func:`documents` yields a text corpus's :class:`~nbsvm.io.document.Document` records
straight from its archive, and :func:`fixture` is the path of a small hand-made file in the
repository's ``data/`` folder.

>>> sorted(CORPORA)[:3]
['20newsgroups', 'blitzer', 'imdb']
>>> CORPORA["iris"].classes
'3 (Iris-setosa, Iris-versicolor, Iris-virginica)'
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from nbsvm.errors import NBSVMError

#: the checkout's root (``data/`` and the shared folder beside it are found from here)
REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "data"


@dataclass(frozen=True)
class Corpus:
    """A corpus: its shared folder, archives (file -> (bytes, sha256)), what
    :func:`prepare` makes of it under ``data/``, and what users should know."""

    name: str
    folder: str
    files: dict
    unpacks_to: str
    classes: str
    documents: str
    citation: str
    source: str
    licence: str
    url: str | None = None  # an official download of the main archive, if any


CORPORA = {
    c.name: c
    for c in [
        Corpus(
            "imdb",
            "imdb",
            {
                "aclImdb_labeled.tar.gz": (
                    28634170,
                    "3c7d06d26560475e8a57d0901ee9561546adbf9c9530f1d1cc5345e410b9463a",
                )
            },
            "aclImdb",
            "2 (pos, neg)",
            "25,000 train + 25,000 test movie reviews",
            "A. L. Maas, R. E. Daly, P. T. Pham, D. Huang, A. Y. Ng, C. Potts. Learning Word "
            "Vectors for Sentiment Analysis. ACL 2011.",
            "the labeled part of https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
            "released by the authors for research; cite the paper",
            url="https://ai.stanford.edu/~amaas/data/sentiment/aclImdb_v1.tar.gz",
        ),
        Corpus(
            "20newsgroups",
            "20newsgroups",
            {
                "20news-bydate.tar.gz": (
                    14388291,
                    "192b535d1fad91ae19363d8204f6358aac25e6ee84caf58acdd2531f81742605",
                )
            },
            "20newsgroups",
            "20 (newsgroups)",
            "11,314 train + 7,532 test messages (bydate)",
            "K. Lang. NewsWeeder: Learning to Filter Netnews. ICML 1995 (bydate split: J. Rennie).",
            "Jason Rennie's 20news-bydate, from a public GitHub copy (see its README)",
            "freely distributed for research (Usenet messages of 1993)",
        ),
        Corpus(
            "blitzer",
            "blitzer_mds",
            {
                "sorted_data_acl_labeled.tar.gz": (
                    3583107,
                    "bfceeb03dc930400d32a4a730d5245869812130b730334880e207aea5399f085",
                ),
                "processed_acl_labeled.tar.gz": (
                    5866860,
                    "e166c70e84bda1f856fd5be81e5ab43637b4864e865916bf62c3daa1b439c2b9",
                ),
            },
            "blitzer",
            "2 (positive, negative) in 4 domains",
            "4 x 2,000 Amazon reviews (books, dvd, electronics, kitchen), raw and processed",
            "J. Blitzer, M. Dredze, F. Pereira. Biographies, Bollywood, Boom-boxes and Blenders: "
            "Domain Adaptation for Sentiment Classification. ACL 2007.",
            "https://www.cs.jhu.edu/~mdredze/datasets/sentiment/ (rebuilt from public copies)",
            "released by the authors for research; cite the paper",
        ),
        Corpus(
            "rcv1",
            "rcv1",
            {
                "train2000.dat.gz": (
                    1163343,
                    "2267b43e55cf9c7556d7abefbfaebf5c3f52fe7db4033f0cf5c6ac20dbb1a12a",
                ),
                "vw_rcv1_small.tar.gz": (
                    872578,
                    "de4b36335c0e4c44775eadd096d002c7903191ca71697509f4061cffc985a7ea",
                ),
            },
            "rcv1",
            "2 (CCAT, rest)",
            "small CCAT subsets as TF-IDF svmlight rows",
            "D. D. Lewis, Y. Yang, T. Rose, F. Li. RCV1: A New Benchmark Collection for Text "
            "Categorization Research. JMLR 5, 2004.",
            "Leon Bottou's SGD benchmark preprocessing; Vowpal Wabbit's test set",
            "Reuters' research agreement for RCV1; VW files BSD-3",
        ),
        Corpus(
            "iris",
            "iris",
            {
                "iris.data.gz": (
                    840,
                    "3b4e644f8d953ba8909ea610e25b23b0834b62e4cd452649defc877515e4b1db",
                )
            },
            "iris",
            "3 (Iris-setosa, Iris-versicolor, Iris-virginica)",
            "150 flowers, 4 numbers",
            "R. A. Fisher. The Use of Multiple Measurements in Taxonomic Problems. Annals of "
            "Eugenics 7, 1936.",
            "UCI Machine Learning Repository, iris.data",
            "CC BY 4.0 (UCI)",
        ),
        Corpus(
            "subj",
            "subj",
            {
                "subj.tar.gz": (
                    515634,
                    "505a88f4b68691ad2de361a617c7c2f875c6be941c2f80054e22fb1cfb23bca9",
                )
            },
            "subj",
            "2 (objective, subjective)",
            "5,000 + 5,000 sentences",
            "B. Pang, L. Lee. A Sentimental Education: Sentiment Analysis Using Subjectivity "
            "Summarization Based on Minimum Cuts. ACL 2004.",
            "rotten_imdb v1.0, from harvardnlp/sent-conv-torch",
            "released by the authors for research; cite the paper",
        ),
        Corpus(
            "mpqa",
            "mpqa",
            {
                "mpqa.tar.gz": (
                    76687,
                    "f0699088f4d42a808af9c2c15bc9f4fc4075963de573bc0eec4bbd91c93c6d2b",
                )
            },
            "mpqa",
            "2 (pos, neg)",
            "10,606 phrases (3,312 pos, 7,294 neg)",
            "J. Wiebe, T. Wilson, C. Cardie. Annotating Expressions of Opinions and Emotions in "
            "Language. Language Resources and Evaluation 39, 2005.",
            "MPQA phrase polarity as packaged by harvardnlp/sent-conv-torch",
            "MPQA corpus terms (research use); cite the paper",
        ),
        Corpus(
            "rt_polarity_2k",
            "rt_polarity_2k",
            {
                "txt_sentoken.tar.gz": (
                    3101277,
                    "2c92e50ff5f7513285da7ab62f068655fca4928200c2349ccd1c34473e9fed55",
                )
            },
            "rt_polarity_2k",
            "2 (pos, neg)",
            "2,000 movie reviews in 10 cv### folds",
            "B. Pang, L. Lee. A Sentimental Education: Sentiment Analysis Using Subjectivity "
            "Summarization Based on Minimum Cuts. ACL 2004.",
            "polarity dataset v2.0 (txt_sentoken), from lenatech/sentiment_dataset",
            "released by the authors for research; cite the paper",
        ),
    ]
}


def corpus(name: str) -> Corpus:
    """The corpus called ``name`` (an error lists the names)."""
    found = CORPORA.get(name)
    if found is None:
        raise NBSVMError(f"unknown corpus {name!r}; the corpora are {', '.join(sorted(CORPORA))}")
    return found


def shared_root() -> Path:
    """The shared datasets folder: ``$NBSVM_SHARED_DATASETS``, else ``../shared/datasets``
    beside the checkout, else ``/work/shared/datasets`` (a clone elsewhere, as in CI); the
    first that exists (else the second, for messages)."""
    for c in (
        os.environ.get("NBSVM_SHARED_DATASETS"),
        REPO.parent / "shared" / "datasets",
        Path("/work/shared/datasets"),
    ):
        if c and Path(c).is_dir():
            return Path(c).resolve()
    return (REPO.parent / "shared" / "datasets").resolve()


class MissingCorpus(NBSVMError):
    """A corpus's archive is not in the shared folder (tests skip on it)."""


_VERIFIED: dict = {}  # (path, size, mtime) -> sha256, so a process hashes a file once


def sha256_of(path: str | os.PathLike[str]) -> str:
    path = Path(path)
    st = path.stat()
    key = (str(path), st.st_size, st.st_mtime_ns)
    if key not in _VERIFIED:
        digest = hashlib.sha256()
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                digest.update(block)
        _VERIFIED[key] = digest.hexdigest()
    return _VERIFIED[key]


def archive(name: str, file: str | None = None, verify: bool = True) -> Path:
    """The path of corpus ``name``'s archive ``file`` (default: its first) in the shared
    folder, its size and sha256 checked against the registry (the README's figures)."""
    c = corpus(name)
    file = file or next(iter(c.files))
    if file not in c.files:
        raise NBSVMError(f"{name} has no file {file!r}; its files are {', '.join(c.files)}")
    path = shared_root() / c.folder / file
    if not path.is_file():
        raise MissingCorpus(
            f"{name}: {file} not found (set NBSVM_SHARED_DATASETS to the "
            f"folder holding {c.folder}/)",
            path=str(path),
        )
    if verify:
        size, sha = c.files[file]
        if path.stat().st_size != size or sha256_of(path) != sha:
            raise NBSVMError(
                f"{name}: sha256 mismatch (expected {sha}, {size:,} bytes): the "
                "file is damaged or another version",
                path=str(path),
            )
    return path


def available(name: str) -> bool:
    """Whether every archive of ``name`` is in the shared folder (not checked)."""
    c = corpus(name)
    return all((shared_root() / c.folder / f).is_file() for f in c.files)


def _unpack(path: Path, dest: Path) -> list[Path]:
    """Unpack a ``.tar.gz`` (or copy a ``.gz`` file unpacked) into ``dest``, through a
    temporary folder; returns the files placed (relative to ``dest``)."""
    import gzip

    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=".nbsvm-unpack-", dir=dest.parent))
    try:
        if path.name.endswith((".tar.gz", ".tgz", ".tar")):
            import tarfile  # 5 ms that only unpacking pays

            with tarfile.open(path) as tar:
                tar.extractall(tmp, filter="data")
        else:
            with gzip.open(path, "rb") as src, open(tmp / path.name[:-3], "wb") as out:
                shutil.copyfileobj(src, out)
        return _move_into(tmp, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _move_into(src: Path, dest: Path) -> list[Path]:
    """Move every file under ``src`` to the same place under ``dest``, replacing a file (or
    a link: itself, not what it names) of the same name; returns their paths relative to
    ``dest``. Nothing else under ``dest`` is touched: a file of the user's beside the
    corpus's stays (whole folders were replaced, and what they held with them). A folder
    where a file goes, or the reverse, is refused."""
    placed = []
    for item in sorted(src.rglob("*")):
        rel = item.relative_to(src)
        target = dest / rel
        is_folder = item.is_dir() and not item.is_symlink()
        if target.is_symlink() or not target.exists() or target.is_dir() == is_folder:
            if is_folder:
                if target.is_symlink() and not target.is_dir():  # a link to a folder: kept
                    target.unlink()
                target.mkdir(parents=True, exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(item, target)
                placed.append(rel)
            continue
        raise NBSVMError(
            f"is in the way of the corpus's {'folder' if is_folder else 'file'} of that name: "
            "move it away (nothing of it was changed)",
            path=str(target),
        )
    return placed


def prepare(
    name: str,
    data: Path | str | None = None,
    download: bool = True,
    notify: Callable[[str], object] | None = None,
) -> Path:
    """Unpack corpus ``name`` under ``data`` (default: the checkout's ``data/``) from its
    checked archives, or for IMDB from the official download when the shared archive is
    missing; returns the folder. A corpus prepared before (its marker file names the same
    archives) is left as it is."""
    c = corpus(name)
    data = Path(data) if data is not None else FIXTURES
    if data.exists() and not data.is_dir():
        raise NBSVMError(
            "is not a folder: --data needs a folder to unpack into (it is created when missing)",
            path=str(data),
        )
    if name == "imdb":
        dest, root = data, data / "aclImdb"
    else:
        dest = root = data / c.unpacks_to
    marker = root / ".nbsvm-prepared"
    stamp = "\n".join(f"{f} {sha}" for f, (_, sha) in sorted(c.files.items()))
    say = notify or (lambda message: None)
    missing = _missing_files(marker, stamp)
    if missing is None:
        return root
    if missing:
        say(f"{root / missing} is missing or changed: unpacking {name} again")
    _refuse_foreign(root, marker)
    if not marker.exists():  # ours from now on: an unpack cut short is taken up again
        root.mkdir(parents=True, exist_ok=True)
        marker.write_text("unpacking\n", encoding="utf-8")
    placed: list[Path] = []
    if name == "imdb" and not available("imdb") and download and c.url:
        say(f"downloading {c.url}")
        placed = _download_imdb(c.url, data)
    else:
        for file in c.files:
            path = archive(name, file)
            say(f"unpacking {path} (sha256 checked)")
            placed += _unpack(path, dest)
    root.mkdir(parents=True, exist_ok=True)
    under_root = [q.relative_to(root) for q in (dest / p for p in placed) if q.is_relative_to(root)]
    _write_marker(marker, stamp, under_root)
    return root


def _refuse_foreign(root: Path, marker: Path) -> None:
    """Refuse to unpack into a folder nbsvm did not make (no marker) that holds a file:
    the user's own copy of the corpus is never replaced (empty folders are filled)."""
    if root.exists() and not root.is_dir() or root.is_symlink() and not root.exists():
        # a file, or a link to nothing (a link to a folder elsewhere is followed)
        raise NBSVMError("is in the way of the corpus's folder: move it away", path=str(root))
    if root.is_dir() and not marker.exists() and any(not p.is_dir() for p in root.rglob("*")):
        raise NBSVMError(
            "exists and was not unpacked by nbsvm (it has no .nbsvm-prepared marker): move "
            "it away or give another --data; nothing of it was changed",
            path=str(root),
        )


def _write_marker(marker: Path, stamp: str, files: list[Path]) -> None:
    """The marker of a prepared corpus: its archives' stamp, then one line per unpacked
    file (``size path``, ``files`` relative to the corpus folder), so that a later ``get``
    sees a file deleted or cut short. Written last, under a temporary name, then renamed."""
    root = marker.parent
    lines = [f"{(root / p).stat().st_size} {p.as_posix()}" for p in sorted(files)]
    tmp = marker.with_name(marker.name + ".tmp")
    tmp.write_text(stamp + "\n--\n" + "\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(marker)


def _missing_files(marker: Path, stamp: str) -> str | None:
    """None when the corpus at ``marker`` is prepared from these archives and every file
    it unpacked is there with its size (one ``stat`` each: 0.1 s for IMDB's 50,000); else
    the first file missing or changed ("" when there is no valid marker at all)."""
    try:
        text = marker.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
    head, sep, listing = text.partition("\n--\n")
    if head != stamp or not sep:
        return ""
    root = marker.parent
    for line in listing.splitlines():
        size, _, rel = line.partition(" ")
        try:
            if (root / rel).stat().st_size != int(size):
                return rel
        except (OSError, ValueError):
            return rel
    return None


def _download_imdb(url: str, data: Path) -> list[Path]:
    """The official IMDB archive, without its unlabeled reviews and .feat files, unpacked
    into a temporary folder and renamed into place (its sha256 is not the shared archive's:
    the README's figures are for the labeled repackaging; the 50,000 labeled files are
    counted instead)."""
    import urllib.request  # 45 ms of every command's start-up, for this function alone

    data.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".nbsvm-download-", dir=data))
    try:
        with open(work / "aclImdb_v1.tar.gz", "wb") as out, urllib.request.urlopen(url) as response:  # noqa: S310 (https, fixed)
            shutil.copyfileobj(response, out)
        import tarfile

        with tarfile.open(work / "aclImdb_v1.tar.gz") as tar:
            members = [
                m
                for m in tar.getmembers()
                if "/unsup/" not in m.name and not m.name.endswith(".feat")
            ]
            tar.extractall(work, members=members, filter="data")
        n = sum(1 for _ in (work / "aclImdb").glob("t*/*/*.txt"))
        if n != 50_000:
            raise NBSVMError(f"the download holds {n:,} labeled reviews, not 50,000", path=url)
        return [Path("aclImdb") / p for p in _move_into(work / "aclImdb", data / "aclImdb")]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def documents(name: str, part: str | None = None, encoding: str = "utf-8") -> Iterator:
    """A text corpus's documents as :class:`~nbsvm.io.document.Document` records, read from
    its checked archive without unpacking: ``part`` is ``train`` or ``test`` for imdb and
    20newsgroups (default: both), a domain for blitzer (default: all four); subj, mpqa and
    rt_polarity_2k have one part. rcv1 and iris hold numbers, not text: use :func:`archive`.
    """
    from nbsvm.io.blitzer import LABELS, read_reviews, review_members
    from nbsvm.io.decoding import decode_counting
    from nbsvm.io.document import Document

    c = corpus(name)
    if name in ("rcv1", "iris"):
        raise NBSVMError(
            f"{name} holds feature vectors, not text: read {archive(name)} with nbsvm learn"
        )
    parts = PARTS.get(name, ())
    if part is not None and part not in parts:
        raise NBSVMError(
            f"{name} has no part {part!r}; "
            + (f"its parts are {', '.join(parts)}" if parts else "it has one part")
        )
    if name == "blitzer":
        for member, fh in review_members(archive(name, "sorted_data_acl_labeled.tar.gz")):
            domain, stem = Path(member).parent.name, Path(member).stem
            if stem in LABELS and part in (None, domain):
                yield from read_reviews(fh, label=stem, source=member, encoding=encoding)
        return
    path = archive(name)
    import tarfile

    with tarfile.open(path) as tar:
        for entry in tar:
            if not entry.isfile():
                continue
            pieces = entry.name.split("/")
            label = _label_of(name, pieces, part)
            if label is None:
                continue
            raw = cast(IO[bytes], tar.extractfile(entry)).read()  # a file: never None
            if name in ("subj", "mpqa"):  # a sentence per line
                for i, line in enumerate(raw.split(b"\n"), 1):
                    if line.strip():
                        yield Document(
                            label, decode_counting(line, encoding)[0], f"{c.name}:{entry.name}", i
                        )
            else:
                yield Document(
                    label, decode_counting(raw, encoding)[0], f"{c.name}:{entry.name}", 1
                )


PARTS = {
    "imdb": ("train", "test"),
    "20newsgroups": ("train", "test"),
    "blitzer": ("books", "dvd", "electronics", "kitchen_&_housewares"),
}


def _label_of(name: str, pieces: list, part: str | None) -> str | None:
    """The label of an archive member (None: not a document of ``part``)."""
    if name == "imdb":  # aclImdb/{train,test}/{pos,neg}/<id>_<rating>.txt
        ok = len(pieces) == 4 and pieces[2] in ("pos", "neg") and part in (None, pieces[1])
        return pieces[2] if ok else None
    if name == "20newsgroups":  # 20news-bydate-{train,test}/<group>/<id>
        ok = len(pieces) == 3 and part in (None, pieces[0].rsplit("-", 1)[-1])
        return pieces[1] if ok else None
    if name == "subj":
        return {"subj.objective": "objective", "subj.subjective": "subjective"}.get(pieces[-1])
    if name == "mpqa":
        return {"mpqa.pos": "pos", "mpqa.neg": "neg"}.get(pieces[-1])
    if name == "rt_polarity_2k":  # txt_sentoken/{pos,neg}/cv###_#####.txt
        return pieces[1] if len(pieces) == 3 and pieces[1] in ("pos", "neg") else None
    return None


def fixture(name: str) -> Path:
    """The path of a small hand-made file in the repository's ``data/`` folder
    (``reviews.txt``, ``topics.txt``, ``tags.txt``, ``tiny.svm``; data/README.md).

    >>> from nbsvm import NBSVMClassifier
    >>> from nbsvm.io.readers import read_inputs
    >>> docs = list(read_inputs([fixture("reviews.txt")]))
    >>> len(docs), docs[0].label
    (40, 'pos')
    >>> clf = NBSVMClassifier(ngrams=2, n_bits=14, epochs=5).fit(
    ...     [d.text for d in docs], [d.label for d in docs])
    >>> clf.predict(["a wonderful, funny film", "a dull and awful mess"]).tolist()
    ['pos', 'neg']
    """
    path = FIXTURES / name
    if not path.is_file():
        raise NBSVMError("no such fixture (see data/README.md)", path=str(path))
    return path


def describe(name: str) -> dict:
    """What ``nbsvm datasets list`` shows of a corpus."""
    c = corpus(name)
    root = shared_root() / c.folder
    return {
        "name": c.name,
        "classes": c.classes,
        "documents": c.documents,
        "files": {f: {"bytes": size, "sha256": sha} for f, (size, sha) in c.files.items()},
        "MB": round(sum(size for size, _ in c.files.values()) / 2**20, 1),
        "available": available(name),
        "shared_folder": str(root),
        "citation": c.citation,
        "source": c.source,
        "licence": c.licence,
    }
