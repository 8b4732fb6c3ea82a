"""Output that appears whole or not at all, and checks of where output goes before any work is done.

Every file or folder rlsi writes goes through this module:

* :func:`atomic_file` — a context manager yielding a handle (text or binary, optionally gzip) on a hidden
  temporary sibling ``.NAME.tmp-XXXXXXXX``; on success the data are flushed to disk and the temporary
  file is renamed onto ``NAME`` (atomic on POSIX), on failure it is removed and ``NAME`` is untouched.
  :func:`write_text` and :func:`save_npy` are its one-call forms.
* :func:`atomic_dir` — the same for a folder (a model directory, a report): build the content in the
  yielded temporary folder; :func:`replace_dir` puts it in place.
* :func:`replace_dir` — crash safe: at every instant one complete version of the folder is visible
  under its name. On Linux the two folders are swapped in one system call (``renameat2`` with
  ``RENAME_EXCHANGE``); where that is not available the old folder is first renamed to a hidden
  ``.NAME.old-XXXXXXXX`` sibling, then the new one into place, with Ctrl-C and SIGTERM held back between
  the two renames (they take effect once both are done); a process killed (kill -9) between them leaves
  only that sibling: :func:`recover_dir` (called by every reader and writer of a model folder) moves it back.
* :func:`check_output_file` / :func:`check_output_dir` — refuse, before any work, an output path that
  cannot be written: under an existing file, in a folder without write permission, a folder where a file
  is expected (or the reverse), an existing folder that is not ours, a read-only folder to replace.

File-system errors are raised as :class:`rlsi.errors.RLSIError` with one line naming the path.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import glob
import gzip
import io as _io
import logging
import os
import re
import shutil
import signal
import socket
import stat
import threading
import uuid
from pathlib import Path

import numpy as np

from ..errors import RLSIError

__all__ = ["atomic_file", "atomic_dir", "write_text", "save_npy", "replace_dir", "recover_dir", "scratch_dir",
           "os_error_reason", "check_output_file", "check_output_dir"]

log = logging.getLogger(__name__)


# ---------------------------------------------------------------------------------------- primitives
# The file-system steps of a replacement, as module functions so that tests can inject a crash
# between any two of them.
def _rename(src, dst):
    os.replace(src, dst)


def _rmtree(path):
    _remove_tree(path)


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_renameat2 = None


def _exchange(a, b) -> bool:
    """Atomically swap the paths ``a`` and ``b`` (both must exist); False where the system cannot."""
    global _renameat2
    if _renameat2 is None:
        try:
            fn = ctypes.CDLL(None, use_errno=True).renameat2
            fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
            fn.restype = ctypes.c_int
            _renameat2 = fn
        except (OSError, AttributeError):  # not Linux, or a C library without renameat2
            _renameat2 = False
    if _renameat2 is False:
        return False
    if _renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):  # file system cannot swap
        return False
    raise OSError(err, os.strerror(err), str(b))


_HOST = re.sub(r"[^A-Za-z0-9]", "", socket.gethostname())[:32] or "host"


def _sibling(path: Path, tag: str) -> Path:
    """A hidden sibling ``.NAME.TAG-HOST-PID-RANDOM``: the writer is known, so that what a killed writer
    left behind can be recognised and removed later (see :func:`_drop_stale`)."""
    return path.parent / f".{path.name}.{tag}-{_HOST}-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _writer_is_dead(name: str) -> bool:
    m = re.search(r"-([A-Za-z0-9]*)-(\d+)-[0-9a-f]{8}$", name)
    if m is None or m.group(1) != _HOST:
        return False
    try:
        os.kill(int(m.group(2)), 0)
    except ProcessLookupError:
        return True
    except (OSError, OverflowError):
        return False
    return False


def _fsync_dir(path):
    """Make a rename inside ``path`` durable (best effort: not every system can fsync a folder)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _fsync_tree(root):
    """fsync every file of a freshly written folder, then the folder itself (before it is renamed)."""
    for dirpath, _, files in os.walk(root):
        for name in files:
            try:
                fd = os.open(os.path.join(dirpath, name), os.O_RDONLY)
            except OSError:
                continue
            try:
                os.fsync(fd)
            except OSError:
                pass
            finally:
                os.close(fd)
        _fsync_dir(dirpath)


def _remove_tree(path):
    """Remove a folder, making read-only sub-folders writable first; a leftover is logged, not raised."""
    def retry(func, p, _exc):
        try:
            os.chmod(os.path.dirname(p) or ".", stat.S_IRWXU)
            func(p)
        except OSError:
            pass

    if not os.path.lexists(path):
        return
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
        else:
            for dirpath, dirnames, _ in os.walk(path):
                for d in dirnames:  # so that their files can be deleted
                    p = os.path.join(dirpath, d)
                    if not os.path.islink(p):
                        with contextlib.suppress(OSError):
                            os.chmod(p, stat.S_IRWXU)
            with contextlib.suppress(OSError):
                os.chmod(path, stat.S_IRWXU)
            shutil.rmtree(path, onerror=retry)
    except OSError:
        pass
    if os.path.lexists(path):
        log.warning("could not remove %s; delete it by hand", path)


_SHORT_WRITE = re.compile(r"(\d+) requested and (\d+) written")


def _one_line(exc) -> str:
    """The reason of a file-system error in words: a full disk is named as such (numpy reports it as
    ``"5751 requested and 983 written"``), whatever layer raised it."""
    code = getattr(exc, "errno", None)
    if code == errno.ENOSPC:
        return "no space left on the device (the disk is full)"
    if code == getattr(errno, "EDQUOT", -1):
        return "the disk quota is exceeded"
    if code == errno.EFBIG:
        return "the file is larger than the system allows (a file size limit)"
    text = " ".join(str(getattr(exc, "strerror", None) or exc).split())
    short = _SHORT_WRITE.search(text)
    if short:
        return (f"only {short.group(2)} of {short.group(1)} bytes could be written: the disk is full, or a file "
                f"size limit was reached")
    return text


os_error_reason = _one_line


# ---------------------------------------------------------------------------------------- folders
def replace_dir(tmp, path):
    """Put the complete folder ``tmp`` in place of ``path`` (replacing an existing folder).

    Crash safe: at every instant ``path`` is either the old or the new complete folder (swap in one
    system call), or — where the system cannot swap — a kill between the two renames leaves the old
    folder as ``.NAME.old-*``, which :func:`recover_dir` puts back. On an error the old folder stays.
    """
    tmp, path = Path(tmp), Path(path)
    if not os.path.lexists(path):
        _rename(tmp, path)
        _fsync_dir(path.parent)
        _drop_stale(path)
        return
    if _exchange(tmp, path):  # path is the new folder; tmp now holds the old one
        _fsync_dir(path.parent)
        _rmtree(tmp)
        _drop_stale(path)
        return
    old = _sibling(path, "old")
    with _interruptions_deferred():  # Ctrl-C between the renames would leave the old folder hidden
        _rename(path, old)
        try:
            _rename(tmp, path)
        except BaseException:
            _rename(old, path)
            raise
    _fsync_dir(path.parent)
    _rmtree(old)
    _drop_stale(path)


_DEFERRED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@contextlib.contextmanager
def _interruptions_deferred():
    """Ctrl-C (SIGINT), SIGTERM and SIGHUP wait until the end of the block (a few system calls): their handlers
    run, or their default action is taken, once it is done. Python runs signal handlers in the main thread
    only, so a block in another thread is never interrupted by them and needs nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught, previous = [], {}
    for sig in _DEFERRED:
        try:
            previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
        except (OSError, ValueError):  # a signal this platform does not let Python handle
            continue
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        if caught:
            handler = previous.get(caught[0])
            if callable(handler):
                handler(caught[0], None)  # Python's SIGINT handler raises KeyboardInterrupt here
            elif handler in (None, signal.SIG_DFL):
                os.kill(os.getpid(), caught[0])  # the default action (terminate), now that the folder is whole


def _old_siblings(path: Path, tag="old"):
    pattern = os.path.join(glob.escape(str(path.parent)), glob.escape(f".{path.name}") + f".{tag}-*")
    found = []
    for p in glob.glob(pattern):
        try:
            found.append((os.lstat(p).st_mtime_ns, p))
        except OSError:
            continue
    return [Path(p) for _, p in sorted(found, reverse=True)]


def _drop_stale(path: Path):
    """Remove what interrupted writers left: ``.NAME.old-*`` siblings (``path`` is whole again, so they
    are superseded) and ``.NAME.tmp-*`` siblings of writers of this host that are no longer running."""
    for old in _old_siblings(path):
        _remove_tree(old)
    for tmp in _old_siblings(path, "tmp"):
        if _writer_is_dead(tmp.name):
            _remove_tree(tmp)


def scratch_dir(path, tag) -> Path:
    """A new hidden working folder ``.NAME.TAG-HOST-PID-RANDOM`` next to ``path`` (the caller removes it);
    the ones that writers of this host killed before they could remove theirs (kill -9) are removed first."""
    path = Path(path)
    for old in _old_siblings(path, tag):
        if _writer_is_dead(old.name):
            _remove_tree(old)
    folder = _sibling(path, tag)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        folder.mkdir()
    except OSError as exc:
        raise RLSIError(f"cannot write next to {path}: {_one_line(exc)}") from None
    return folder


def recover_dir(path) -> bool:
    """Undo an interrupted :func:`replace_dir`: when ``path`` is missing but a previous complete version
    survives as a hidden ``.NAME.old-*`` sibling, rename the newest one back. Returns True if it did."""
    path = Path(path)
    if os.path.lexists(path):
        return False
    for old in _old_siblings(path):
        if not os.path.isdir(old) or os.path.islink(old):
            continue
        try:
            os.rename(old, path)
        except OSError:
            continue
        log.warning("%s was missing after an interrupted save; restored the previous version from %s",
                    path, old.name)
        return True
    return False


@contextlib.contextmanager
def atomic_dir(path):
    """Yield an empty temporary folder next to ``path``; on success it replaces ``path`` (see
    :func:`replace_dir`), on any error (or interruption) it is removed and ``path`` is untouched."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = _sibling(path, "tmp")
        tmp.mkdir()
    except OSError as exc:
        raise RLSIError(f"cannot write {path}: {_one_line(exc)}") from None
    try:
        yield tmp
        _fsync_tree(tmp)
        replace_dir(tmp, path)
    except OSError as exc:
        _remove_tree(tmp)
        raise RLSIError(f"cannot write {path}: {_one_line(exc)}") from None
    except BaseException:
        _remove_tree(tmp)
        raise


# ---------------------------------------------------------------------------------------- files
@contextlib.contextmanager
def atomic_file(path, mode="w", *, encoding="utf-8", compress=None, make_parents=True):
    """Yield a handle for writing ``path`` whole or not at all.

    mode : "w" (text, ``encoding``, no newline translation) or "wb" (bytes).
    compress : gzip the content; default: when ``path`` ends in ``.gz``.
    make_parents : create missing parent folders (otherwise a missing folder is an error).
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode={mode!r}: use 'w' or 'wb'")
    path = Path(path)
    compress = path.suffix == ".gz" if compress is None else compress
    try:
        if make_parents:
            path.parent.mkdir(parents=True, exist_ok=True)
        elif not path.parent.is_dir():
            raise RLSIError(f"cannot write {path}: folder {path.parent} does not exist")
        tmp = _sibling(path, "tmp")
        raw = open(tmp, "xb")
    except OSError as exc:
        raise RLSIError(f"cannot write {path}: {_one_line(exc)}") from None
    done = False
    try:
        handle = raw
        gz = None
        if compress:
            handle = gz = gzip.GzipFile(filename="", mode="wb", fileobj=raw)
        if mode == "w":
            handle = _io.TextIOWrapper(handle, encoding=encoding, newline="")
        yield handle
        if mode == "w":
            handle.flush()
            handle.detach()  # keep the layers below open
        if gz is not None:
            gz.close()  # writes the gzip trailer into raw
        raw.flush()
        os.fsync(raw.fileno())
        raw.close()
        _rename(tmp, path)
        _fsync_dir(path.parent)
        done = True
    except OSError as exc:
        raise RLSIError(f"cannot write {path}: {_one_line(exc)}") from None
    finally:
        if not done:
            with contextlib.suppress(OSError):
                raw.close()
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def write_text(path, text, **kwargs):
    """Write ``text`` to ``path`` atomically (see :func:`atomic_file`)."""
    with atomic_file(path, "w", **kwargs) as handle:
        handle.write(text)


def save_npy(path, array, **kwargs):
    """Save one array as ``.npy`` (never pickled) atomically."""
    with atomic_file(path, "wb", compress=False, **kwargs) as handle:
        np.save(handle, np.asarray(array), allow_pickle=False)


# ---------------------------------------------------------------------------------------- early checks
def _nearest_existing(path: Path) -> Path:
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return p


def _check_creatable(path: Path, what):
    """``path`` does not exist: its nearest existing ancestor must be a writable folder."""
    anchor = _nearest_existing(path.parent if str(path.parent) else Path("."))
    if not anchor.is_dir():
        raise RLSIError(f"cannot write {what} {path}: {anchor} is not a folder")
    if not os.access(anchor, os.W_OK | os.X_OK):
        raise RLSIError(f"cannot write {what} {path}: folder {anchor} is not writable")


def check_output_file(path, *, what="output"):
    """Refuse early a file output that could not be written at the end (see the module docstring)."""
    path = Path(path)
    if os.path.lexists(path):
        if path.is_dir():
            raise RLSIError(f"{what} {path} is a folder; give a file name")
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise RLSIError(f"cannot write {what} {path}: {_one_line(exc)}") from None
        if not stat.S_ISREG(mode):
            raise RLSIError(f"{what} {path} exists and is not a regular file; give another file name")
        parent = path.parent if str(path.parent) else Path(".")
        if not os.access(parent, os.W_OK | os.X_OK):
            raise RLSIError(f"cannot write {what} {path}: folder {parent} is not writable")
        return path
    _check_creatable(path, what)
    return path


def check_output_dir(path, *, what="output", is_ours=None, kind="an rlsi folder",
                     remedy="choose another output folder"):
    """Refuse early a folder output that could not be written at the end.

    An existing ``path`` is replaced only if it is an empty folder or ``is_ours(path)`` is true, and
    only if it (and its parent) can be written. An interrupted earlier replacement is recovered first.
    """
    path = Path(path)
    recover_dir(path)
    if not os.path.lexists(path):
        _check_creatable(path, what)
        return path
    if not path.is_dir():
        raise RLSIError(f"{what} {path} exists and is not a folder; {remedy}")
    try:
        non_empty = any(os.scandir(path))
    except OSError as exc:
        raise RLSIError(f"cannot write {what} {path}: {_one_line(exc)}") from None
    if non_empty and not (is_ours is not None and is_ours(path)):
        raise RLSIError(f"{what} {path} exists and is not {kind}; {remedy}")
    if not os.access(path, os.W_OK | os.X_OK):
        raise RLSIError(f"{what} {path} is read-only: it cannot be replaced; make it writable or {remedy}")
    parent = path.resolve().parent
    if not os.access(parent, os.W_OK | os.X_OK):
        raise RLSIError(f"cannot replace {what} {path}: folder {parent} is not writable")
    return path
