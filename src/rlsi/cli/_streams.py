"""Where a command's output can fail, and the environment numba reads, both turned into one line.

* :func:`guarded_output` — while a command runs, standard output is a thin proxy whose write and flush
  failures become :class:`OutputError`: a closed pipe (``rlsi topics M | head``: status 1, nothing more
  said, the convention of Unix tools), a full disk or another write error (``rlsi topics M > /dev/full``),
  and text the output encoding cannot hold (an id ``é`` under ``PYTHONIOENCODING=ascii``) end in one line
  ``rlsi: error: cannot write the output: ...`` with status 1 (:func:`report`), never in a traceback at the
  interpreter's exit. Output written to a file (``-o``) goes through :mod:`rlsi.io.atomic`, not here.
* :func:`environment_problem` — numba reads ``NUMBA_NUM_THREADS``, ``NUMBA_DISABLE_JIT``,
  ``NUMBA_THREADING_LAYER`` and ``NUMBA_OPT`` when it is imported and answers a bad value with a traceback
  (``NUMBA_NUM_THREADS=0``), a warning that prints one (``=abc``), or kernels that cannot run
  (``NUMBA_DISABLE_JIT=1``: rlsi's kernels use numba intrinsics that have no pure-Python form). The command
  checks them first and names the variable.

This module imports nothing heavy (``rlsi --help`` stays fast).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys

__all__ = ["OutputError", "guarded_output", "report", "environment_problem", "NUMBA_LAYERS"]

#: numba's threading layers (``NUMBA_THREADING_LAYER``).
NUMBA_LAYERS = ("default", "safe", "threadsafe", "forksafe", "omp", "tbb", "workqueue")


class OutputError(Exception):
    """Standard output could not be written: ``reason`` in words, ``quiet`` for a closed pipe."""

    def __init__(self, reason, quiet=False):
        super().__init__(reason)
        self.reason = reason
        self.quiet = quiet


def _reason(exc) -> OutputError:
    if isinstance(exc, UnicodeEncodeError):
        shown = exc.object[exc.start:exc.end] if isinstance(exc.object, str) else "?"
        return OutputError(f"the output encoding {exc.encoding} cannot hold {shown!r}: set PYTHONIOENCODING=utf-8 "
                           f"(or a UTF-8 locale), or write to a file")
    if getattr(exc, "errno", None) == errno.EPIPE or isinstance(exc, BrokenPipeError):
        return OutputError("the reader of the output went away", quiet=True)
    from ..io.atomic import os_error_reason

    return OutputError(os_error_reason(exc))


class _Guarded:
    """Standard output whose ``write`` and ``flush`` raise :class:`OutputError` (everything else delegated)."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text):
        try:
            return self._stream.write(text)
        except (OSError, UnicodeEncodeError) as exc:
            raise _reason(exc) from None

    def flush(self):
        try:
            return self._stream.flush()
        except (OSError, UnicodeEncodeError) as exc:
            raise _reason(exc) from None

    def __getattr__(self, name):
        return getattr(self._stream, name)


@contextlib.contextmanager
def guarded_output():
    """Standard output as :class:`_Guarded` inside the block (flushed at its end, so that a failure is seen
    here and not at the interpreter's exit); the original stream afterwards."""
    original = sys.stdout
    if original is None:  # no standard output at all (pythonw): nothing to guard
        yield
        return
    sys.stdout = _Guarded(original)
    try:
        yield
        sys.stdout.flush()
    finally:
        sys.stdout = original


def report(exc: OutputError) -> int:
    """Say why the output failed (one line on stderr; nothing for a closed pipe), make the interpreter's last
    flush of standard output harmless, and return the status (1)."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # what is still buffered goes nowhere at exit
    if not exc.quiet:
        with contextlib.suppress(OSError, ValueError):
            print(f"rlsi: error: cannot write the output: {exc.reason}", file=sys.stderr)
    return 1


def environment_problem(environ=None):
    """The first of numba's environment variables whose value numba cannot use, in one line, or None."""
    env = os.environ if environ is None else environ
    threads = env.get("NUMBA_NUM_THREADS")
    if threads is not None and not (threads.strip().isdigit() and int(threads) >= 1):
        return (f"NUMBA_NUM_THREADS={threads[:20]!r} is not a positive number of threads: set it to 1 or more, "
                f"or unset it (numba then uses every core)")
    jit = env.get("NUMBA_DISABLE_JIT")
    if jit is not None and jit.strip() not in ("", "0"):
        return (f"NUMBA_DISABLE_JIT={jit[:20]!r}: rlsi's kernels run only compiled (they use numba intrinsics "
                f"that have no pure-Python form); unset NUMBA_DISABLE_JIT or set it to 0")
    layer = env.get("NUMBA_THREADING_LAYER")
    if layer is not None and layer.strip().lower() not in NUMBA_LAYERS:
        return (f"NUMBA_THREADING_LAYER={layer[:20]!r} is not a numba threading layer: use one of "
                f"{', '.join(NUMBA_LAYERS)}, or unset it")
    opt = env.get("NUMBA_OPT")
    if opt is not None and opt.strip().lower() not in ("0", "1", "2", "3", "max"):
        return f"NUMBA_OPT={opt[:20]!r} is not a numba optimisation level: use 0, 1, 2, 3 or max, or unset it"
    return None
