"""Where results go: every output path checked before any input is read, regular files
replaced atomically, devices and pipes written through.

A model, a prediction table, a report or a plot is written to a temporary name in the
folder of the file and renamed over it when complete, so a failed or interrupted run never
leaves half a file. That protects *files* only: a character device (``/dev/null``,
``/dev/full``), a FIFO with a reader, or ``/dev/stdout`` (a link to ``/proc/self/fd/1``) is
opened and written through, never replaced, and a write error there (``ENOSPC`` on
``/dev/full``) fails the command; where ``/dev/stdout`` (``/dev/fd/N``) is a regular file
(``> log``, ``>> log``) the output is written through the descriptor once complete, never
renamed over that file. A symbolic link to a regular file keeps being a link: the file it
points to is the one replaced. An output that standard input is redirected from (``- <
out``) is refused, as every output that is an input is.

New files get the mode the umask gives (``0o666 & ~umask``, as ``open`` would); a replaced
file keeps its mode. No folder is ever created: a missing one is the user's typo.
"""

from __future__ import annotations

import errno
import glob
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from nbsvm.errors import NBSVMError

#: The errors of writing that are the output's fault (a full disk, a read-only file
#: system, a device that refuses): reported as ``cannot write PATH: reason``.
WRITE_ERRNOS = {
    errno.ENOSPC,
    errno.EDQUOT,
    errno.EIO,
    errno.EFBIG,
    errno.EROFS,
    errno.EACCES,
    errno.EPERM,
    errno.ENXIO,
    errno.ENOENT,
    errno.ENOTDIR,
    errno.EISDIR,
    errno.EINVAL,
    errno.ETXTBSY,
    errno.EBADF,  # -o /dev/fd/3 of a descriptor opened for reading
}


def current_umask() -> int:
    """The process's umask, read without changing it where Linux says it (``/proc``)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)  # elsewhere: set and restore (not thread-safe, but brief)
    os.umask(mask)
    return mask


def _stat(path: Path):
    """``os.stat`` following links, or None when nothing (or a dangling link) is there."""
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise NBSVMError(
            "cannot write: a part of the path is a file, not a folder", path=str(path)
        ) from None
    except OSError as e:
        raise NBSVMError(f"cannot write: {e.strerror or e}", path=str(path)) from None


def _is_special(st) -> bool:
    """A device, FIFO or socket: written through, never replaced."""
    return st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)


#: The paths of this process's own descriptors: /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N.
_DESCRIPTOR_PATH = re.compile(r"/(?:dev|proc/(self|thread-self|\d+))/fd/(\d+)")


def descriptor_of(path: str | os.PathLike[str]) -> int | None:
    """The descriptor of this process that ``path`` names (``/dev/stdout``, ``/dev/stderr``,
    ``/dev/fd/N``, ``/proc/self/fd/N``), or None."""
    text = os.path.normpath(os.path.abspath(path))
    if text in ("/dev/stdout", "/dev/stderr"):
        return 1 if text == "/dev/stdout" else 2
    match = _DESCRIPTOR_PATH.fullmatch(text)
    if match is None or match.group(1) not in (None, "self", "thread-self", str(os.getpid())):
        return None
    return int(match.group(2))


def _file_to_replace(path: Path) -> Path:
    """The regular file a write to ``path`` replaces: ``path``, or what a link points to."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def check_output(path: str | os.PathLike[str] | None, option: str = "--output") -> None:
    """Raise :class:`NBSVMError` naming ``path`` unless it can be written: call it before
    reading any input, so that a typo costs nothing.

    Refused: an empty name, a folder, a file in a folder that does not exist (folders are
    never created), a folder where no file can be created (``/proc``, a read-only file
    system, no permission; tested by creating and removing a temporary file there), a
    device or FIFO that is not writable.
    """
    if path is None:
        return
    if str(path) == "":
        raise NBSVMError(f"{option} needs a file name")
    _refuse_folder_name(path, f" {option}")
    path = Path(path)
    st = _stat(path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise NBSVMError(f"is a folder; give {option} a file name inside it", path=str(path))
    # (a folder was refused above: a descriptor that exists is written through)
    if _is_special(st) or (descriptor_of(path) is not None and st is not None):
        if not os.access(path, os.W_OK):
            raise NBSVMError(f"cannot write ({option}): permission denied", path=str(path))
        return
    fd, probe, _ = _temporary_beside(path, ".nbsvm-probe", option)
    os.close(fd)
    os.unlink(probe)


def _refuse_folder_name(path: str | os.PathLike[str], option: str = "") -> None:
    """Refuse a name that says it is a folder (``models/``, ``models/.``): Path() drops the
    slash and the dot, and a file named ``models`` was written."""
    text = str(path)
    if text.endswith(("/", os.sep)) or os.path.basename(text) in (".", ".."):
        raise NBSVMError(f"names a folder; give{option} a file name inside it", path=text)


def _identity(path):
    """``(device, inode)`` of what ``path`` names after following links, or None (missing,
    unreadable, standard input)."""
    if path is None or str(path) in ("", "-"):
        return None
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def _inside(path: Path, folder: Path) -> bool:
    """Whether the file ``path`` would replace (links followed) lies inside ``folder``."""
    try:
        Path(os.path.realpath(path)).relative_to(os.path.realpath(folder))
        return True
    except ValueError:
        return False


def _read_by_folder(path: Path, folder: Path) -> bool:
    """Whether the file ``path`` is one the folder reader reads in ``folder``: inside it
    (:func:`_inside`), or inside a folder linked within it, or a file linked within it
    (``corp/pos -> ../store/pos``: ``-o corp/pos/0.txt`` or ``-o store/pos/0.txt`` replaced
    a document read through the link). The links are looked for where the reader goes:
    class folders, their files, and one level more (aclImdb's ``train/pos``), not hidden
    entries or ``unsup``."""
    if _inside(path, folder):
        return True
    real = os.path.realpath(path)
    level = [str(folder)]
    for _ in range(3):
        deeper = []
        for where in level:
            try:
                entries = list(os.scandir(where))
            except OSError:
                continue
            for entry in entries:
                if entry.name.startswith(".") or entry.name == "unsup":
                    continue  # (never read: hidden, aclImdb's unlabeled reviews)
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if real == target or _inside(Path(real), Path(target)):
                        return True
                if entry.is_dir():
                    deeper.append(entry.path)
        level = deeper
    return False


def check_not_read(path: str | os.PathLike[str] | None, option: str, reads: dict) -> None:
    """Refuse an output that is a file the command reads: same device and inode as an
    input, model, lexicon or checkpoint (links followed, so a link to an input is caught),
    or a file inside an input folder; a new output, a read of the same name (it would read
    what the command wrote: ``learn -o m.npz --test m.npz``). ``reads``: ``what -> path or
    list of paths`` (None and ``-`` are skipped). Called before anything is read, so
    nothing is lost."""
    if path is None or str(path) in ("", "-"):
        return
    out = _identity(path)
    new = out is None  # a new file: only a read of the same name would read it
    if not new and not os.path.isfile(path):
        return  # a device is written through
    for what, paths in reads.items():
        listed = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths or ())
        if not new and any(str(p) == "-" for p in listed) and _identity("/dev/stdin") == out:
            # '-' read from the output itself (< in.txt): writing it destroys the input
            raise NBSVMError(
                f"{option} is {what} ('-', standard input redirected from it) of this "
                "command: writing it would replace what is read; choose another file",
                path=str(path),
            )
        for read in _expanded(listed):
            if new:
                same = os.path.realpath(read) == os.path.realpath(path)
            else:
                same = _identity(read) == out
            if same or (os.path.isdir(read) and _read_by_folder(Path(path), Path(read))):
                harm = "it would then be read" if new else "writing it would replace what is read"
                raise NBSVMError(
                    f"{option} is {what} ({str(read)!r}) of this command: {harm}; "
                    "choose another file",
                    path=str(path),
                )


def _expanded(reads: Iterable) -> list:
    """The paths read: each given one, and the files a glob pattern matches (Dask's
    inputs, expanded later by the workflow: ``-o in.tsv`` of ``'in*.tsv'`` replaced an
    input); ``file://`` URLs as their paths; None, ``-`` and other URLs left out."""
    out = []
    for read in reads:
        if isinstance(read, str) and read.startswith("file://"):
            read = read[len("file://") :]  # a local file all the same
        if read is None or str(read) in ("", "-") or "://" in str(read):
            continue
        out.append(read)
        if any(c in str(read) for c in "*?[") and not os.path.exists(read):
            out.extend(sorted(glob.glob(str(read))))
    return out


def _temporary_beside(path: Path, suffix: str, option: str | None = None):
    """``(fd, name, target)``: a new temporary file in the folder of the regular file that
    a write to ``path`` replaces (``target``: ``path``, or what a link points to); an
    error naming ``path`` when the folder is missing or takes no new file."""
    target = _file_to_replace(path)
    folder = target.parent
    what = f"cannot write ({option})" if option else "cannot write"
    if not folder.is_dir():
        raise NBSVMError(
            f"{what}: the folder {str(folder)!r} does not exist (nbsvm creates no folders)",
            path=str(path),
        )
    # the name cut so that the temporary one fits the longest name the folder takes (a
    # legal name of 234-255 bytes was refused as 'File name too long')
    # (as the file system's bytes: a name that is not UTF-8 holds surrogates, which
    # str.encode refused with a traceback)
    room = _name_max(folder) - len(os.fsencode(suffix)) - 8 - 2  # mkstemp's 8 random letters
    prefix = "." + os.fsdecode(os.fsencode(target.name)[: max(room, 1)]) + "."
    try:
        fd, name = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    except OSError as e:
        raise NBSVMError(
            f"{what}: no file can be created in {str(folder)!r} ({e.strerror or e})", path=str(path)
        ) from None
    return fd, name, target


def _name_max(folder: Path) -> int:
    """The longest file name (bytes) ``folder`` takes: 255 where the system cannot say."""
    try:
        return int(os.pathconf(folder, "PC_NAME_MAX"))
    except (AttributeError, OSError, ValueError):
        return 255


def _write_error(e: OSError, path: Path, tmp=None) -> NBSVMError | None:
    """The user-facing error for an OSError raised while writing ``path`` (None: not one
    of writing's errors, an error about another file, or a closed pipe, which the CLI
    ends on quietly)."""
    if isinstance(e, BrokenPipeError) or e.errno not in WRITE_ERRNOS:
        return None
    if e.filename is not None and str(e.filename) not in (str(path), str(tmp)):
        return None  # e.g. an input that could not be read
    return NBSVMError(f"cannot write: {e.strerror or e}", path=str(path))


def _sync_folder(path: str | os.PathLike[str]) -> None:
    """fsync the folder holding ``path`` (where the file system allows opening one)."""
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems refuse to sync a folder: the rename stands all the same
    finally:
        os.close(fd)


@contextmanager
def atomic_path(
    path: str | os.PathLike[str],
    suffix: str = "",
    before_replace: Callable[[], None] | None = None,
) -> Iterator[Path]:
    """Yield the path to write the output ``path`` to.

    A regular file (or a new one): a temporary name in the same folder, synced, given the
    mode of the file it replaces (new: the umask's) and renamed over it on success; on any
    exception (KeyboardInterrupt included) the temporary file is removed and ``path`` is
    left as it was. A device, FIFO or socket (also through a link, e.g. ``/dev/stdout``):
    ``path`` itself, written through. Errors of writing raise :class:`NBSVMError` naming
    ``path`` (never the temporary name). ``before_replace``: called once the output is
    written and synced, before it reaches ``path`` (before anything is written through a
    device); what it raises leaves ``path`` as it was.
    """
    _refuse_folder_name(path)  # (the Python API's save('models/') too)
    path = Path(path)
    st = _stat(path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise NBSVMError("is a folder; give a file name inside it", path=str(path))
    gate = before_replace or (lambda: None)
    descriptor = descriptor_of(path)
    if descriptor is not None and st is not None and not _is_special(st):
        with _written_through(descriptor, path, suffix, gate) as tmp:
            yield tmp
        return
    if _is_special(st):
        gate()  # written through as it is made: nothing before the gate opens
        try:
            yield path
        except OSError as e:
            err = _write_error(e, path)
            if err is None:
                raise
            raise err from None
        return
    mode = stat.S_IMODE(st.st_mode) if st is not None else 0o666 & ~current_umask()
    fd, tmp, target = _temporary_beside(path, ".nbsvm-tmp" + suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        gate()
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        _sync_folder(target)  # the rename itself survives a power loss
    except BaseException as e:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(e, OSError):
            err = _write_error(e, path, tmp)
            if err is not None:
                raise err from None
        raise


@contextmanager
def _written_through(
    descriptor: int, path: Path, suffix: str, gate: Callable[[], None]
) -> Iterator[Path]:
    """``-o /dev/stdout`` (or ``/dev/fd/N``) where the descriptor is a regular file (``>
    log``, ``>> log``): the output is made in a temporary file and then written through the
    descriptor, at its offset and with its flags (appended after ``>>``, after what the
    shell wrote before). Renamed over the file, as a path of its own would be, it had
    replaced the log: what was appended before and what the shell wrote after were lost."""
    fd, tmp = tempfile.mkstemp(prefix=".nbsvm-through.", suffix=suffix)
    os.close(fd)
    try:
        yield Path(tmp)
        gate()
        for stream in (sys.__stdout__, sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()  # what was printed before comes first
        with open(tmp, "rb") as src, os.fdopen(os.dup(descriptor), "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
    except OSError as e:
        err = _write_error(e, path, tmp)
        if err is None:
            raise
        raise err from None
    finally:
        os.unlink(tmp)
