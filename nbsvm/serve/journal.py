"""The journal of a served model that learns (:mod:`nbsvm.serve.learning`): JSON lines
beside the model file, appended and fsynced before a request is acknowledged.

The first line names the journal (a random id) and the model file it started from (its
SHA-256, the file kept as ``MODEL.npz.initial.npz``); then ``{"seq", "texts", "labels"}``
(and ``"weights"`` when the request gave them) per acknowledged request and ``{"applied": [first, last]}`` per batch the model took. The
model's history records the journal's id with each ``learn`` event, so that a journal is
never replayed onto another model (a file trained again to the same path, say). A torn last
line, the mark of a crash in the middle of a write, was never acknowledged: it is cut off
when the journal is opened again.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from pathlib import Path

from nbsvm.errors import NBSVMError


def journal_path(model_path: str) -> Path:
    return Path(f"{model_path}.journal.jsonl")


def initial_path(model_path: str) -> Path:
    return Path(f"{model_path}.initial.npz")


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync_folder(path: Path) -> None:
    fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _cut_torn_tail(path: Path) -> None:
    """Cut the file back to just after its last newline (a write a crash interrupted)."""
    with open(path, "rb+") as f:
        data = f.read()
        end = data.rfind(b"\n") + 1
        if end < len(data):
            f.truncate(end)
            f.flush()
            os.fsync(f.fileno())


def lock_path(model_path: str) -> Path:
    return Path(f"{model_path}.journal.lock")


def _lock(model_path: str):
    """An exclusive lock on learning into the model at ``model_path``, held while the
    returned file is open: two servers learning into one file numbered their requests
    from the same sequence and wrote over each other's checkpoints (acknowledged
    corrections lost). Where the system has no ``flock``, None."""
    try:
        import fcntl
    except ImportError:  # not POSIX
        return None
    # beside the file itself: a link to it (another name, the same file) takes this lock
    path = lock_path(os.path.realpath(model_path))
    f = open(path, "a+", encoding="utf-8")  # noqa: SIM115 (held open: the lock)
    try:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        f.seek(0)
        holder = f.read().strip() or "unknown"
        f.close()
        raise NBSVMError(
            f"another process (pid {holder}) is learning into this model: one server "
            "learns into a file at a time (stop it, or serve a copy)",
            path=model_path,
        ) from None
    f.truncate(0)
    f.write(str(os.getpid()))
    f.flush()
    return f


class Journal:
    """The journal of the model at ``model_path``, opened for appending (created, with its
    first line and the initial model kept beside it, when there is none). One process at
    a time: a second is refused while the first holds ``MODEL.npz.journal.lock``."""

    def __init__(self, model_path: str):
        self.path = journal_path(model_path)
        self._lock = _lock(model_path)
        try:
            self._open(model_path)
        except BaseException:
            self.close()
            raise

    def _open(self, model_path: str) -> None:
        if self.path.exists():
            _cut_torn_tail(self.path)
            self.header = self._header()
        else:
            _refuse_other_initial(model_path)
            _keep_initial(model_path)
            self.header = {
                "journal": uuid.uuid4().hex,
                "model": Path(model_path).name,
                "initial_sha256": file_sha256(model_path),
            }
            # its first line written whole under another name, then linked in place: a
            # crash never leaves a journal without it (which refused every later start)
            temporary = self.path.with_name(self.path.name + ".tmp")
            with open(temporary, "w", encoding="utf-8") as f:
                f.write(json.dumps(self.header) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(temporary, self.path)
            _fsync_folder(self.path)
        # unbuffered bytes: a line a full disk refused is cut back on disk, never left in a
        # buffer that a later flush or the close wrote out (a refused request learned at
        # the next start)
        self._file = open(self.path, "ab", buffering=0)  # noqa: SIM115 (held open)

    @property
    def id(self) -> str:
        return str(self.header["journal"])

    def _header(self) -> dict:
        with open(self.path, "rb") as f:
            first = f.readline()
        try:
            header = _json_line(first)
        except (ValueError, RecursionError):
            header = None
        if not isinstance(header, dict) or "journal" not in header:
            raise NBSVMError("not a journal of nbsvm serve --learn", path=str(self.path), line=1)
        return header

    def append(self, record: dict) -> None:
        """Write ``record`` as one line and fsync it; on failure (a full disk) the file is
        cut back to where it was and the error raised."""
        data = memoryview((json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8"))
        fd = self._file.fileno()
        end = os.fstat(fd).st_size
        try:
            while data:  # (a write may take part of it)
                data = data[os.write(fd, data) :]
            os.fsync(fd)
        except OSError:
            try:
                os.ftruncate(fd, end)
            except OSError:  # (what was written is a torn line: cut at the next start)
                pass
            raise

    def close(self) -> None:
        if "_file" in vars(self):
            self._file.close()
        if self._lock is not None:
            self._lock.close()  # the lock goes with it
            self._lock = None

    def read(self) -> tuple[dict[int, dict], list[tuple[int, int]]]:
        """The requests by sequence number, and the applied batches in order."""
        return read_journal(self.path)


def _json_line(line: bytes):
    """A journal line's JSON value; ValueError (UnicodeDecodeError, JSONDecodeError, an
    integer of too many digits) or RecursionError where it is none."""
    return json.loads(line.decode("utf-8"))


def read_journal(path: Path) -> tuple[dict[int, dict], list[tuple[int, int]]]:
    """The requests of the journal at ``path`` by sequence number, and its applied batches
    in order (a torn last line left out)."""
    requests: dict[int, dict] = {}
    applied: list[tuple[int, int]] = []
    with open(path, "rb") as f:
        f.readline()  # the journal's own line
        for lineno, line in enumerate(f, 2):
            try:
                record = _json_line(line)
            except (ValueError, RecursionError):  # (invalid UTF-8, nesting, huge numbers)
                if line.endswith(b"\n"):  # not a torn last line: the journal is damaged
                    raise NBSVMError(
                        "not a JSON line of UTF-8", path=str(path), line=lineno
                    ) from None
                break
            why = _not_a_record(record)
            if why:  # a damaged or edited journal: said, never replayed as far as it goes
                raise NBSVMError(f"not a journal line: {why}", path=str(path), line=lineno)
            if "applied" in record:
                first, last = record["applied"]
                applied.append((first, last))
            else:
                requests[record["seq"]] = record
    held = set(requests)
    for first, last in applied:
        missing = next((s for s in range(first, last + 1) if s not in held), None)
        if missing is not None:
            raise NBSVMError(
                f"the journal's applied batch {first}-{last} names request {missing}, which "
                "it does not hold",
                path=str(path),
            )
    return requests, applied


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _not_a_record(record: object) -> str | None:
    """What makes ``record`` neither a request (``seq``, ``texts``, ``labels`` and maybe
    ``weights``, lists of one length) nor an applied batch (``[first, last]``); None when
    it is one (a crafted line was a KeyError or a TypeError at the server's start)."""
    if not isinstance(record, dict):
        return f"a JSON {type(record).__name__}, not an object"
    if "applied" in record:
        batch = record["applied"]
        if not (isinstance(batch, list) and len(batch) == 2 and all(map(_is_int, batch))):
            return "'applied' must be [first, last], two whole numbers"
        return None if 0 <= batch[0] <= batch[1] else "'applied' must have 0 <= first <= last"
    if not (_is_int(record.get("seq")) and record["seq"] >= 0):
        return "a request needs 'seq', a whole number >= 0"
    texts, labels = record.get("texts"), record.get("labels")
    if not (isinstance(texts, list) and all(isinstance(t, str) for t in texts)):
        return "a request needs 'texts', a list of strings"
    if not (isinstance(labels, list) and len(labels) == len(texts)):
        return "a request needs 'labels', a list as long as its texts"
    weights = record.get("weights")
    if weights is not None and not (
        isinstance(weights, list)
        and len(weights) == len(texts)
        and all(isinstance(w, (int, float)) and not isinstance(w, bool) for w in weights)
    ):
        return "a request's 'weights' must be numbers, one per text"
    return None


def _refuse_other_initial(path: str) -> None:
    """A kept initial model that is not the file, with no journal beside them: the model
    another journal started from (that journal moved or deleted). Keeping this file in its
    place would lose the model as it was before it learned."""
    target = initial_path(path)
    if target.exists() and file_sha256(target) != file_sha256(path):
        raise NBSVMError(
            f"{target.name} is the model a former journal started from, and that journal "
            f"({journal_path(path).name}) is not there: move {target.name} away (the model "
            f"before it learned) to start a new journal from {Path(path).name}",
            path=str(target),
        )


def _keep_initial(path: str) -> None:
    """Keep the model file as it is beside it: a copy, synced, then renamed (a hard link
    shared the file's inode, so a copy written over the model file in place, `cp` or
    `cat >`, replaced the kept model too, and the journal could no longer rebuild it)."""
    import shutil

    target = initial_path(path)
    temporary = target.with_name(target.name + ".tmp")
    temporary.unlink(missing_ok=True)
    shutil.copyfile(path, temporary)
    with open(temporary, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(temporary, target)
