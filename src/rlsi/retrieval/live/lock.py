"""One writer at a time: an exclusive lock on ``write.lock`` in the index folder.

:class:`WriterLock` takes an ``flock`` on the file (non-blocking): a second writer — another process, or
a second :class:`~rlsi.retrieval.live.LiveIndex` opened on the same folder in this process — is refused
at once with one line naming the holder's process id, never left to corrupt the index. The kernel
releases the lock when its holder exits, ``kill -9`` included, so a killed writer never leaves the index
locked. Readers take no lock: they read committed generations only.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import RLSIError

__all__ = ["WriterLock", "IndexLockedError"]

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None


class IndexLockedError(RLSIError):
    """Another writer holds the index."""


class WriterLock:
    """The writer lock of the index folder ``path`` (see the module docstring)."""

    def __init__(self, path, name):
        self.path = Path(path) / name
        self._fd = None

    @property
    def held(self):
        return self._fd is not None

    def acquire(self):
        """Take the lock or raise :class:`IndexLockedError` (one line with the holder's pid)."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RLSIError(f"cannot open {self.path} to write the index: {exc.strerror or exc}") from None
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
                os.close(fd)
                raise IndexLockedError(f"{self.path.parent} is being written by another writer (process {holder}): "
                                       f"one writer at a time; try again when it has finished") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        self._fd = fd

    def release(self):
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
