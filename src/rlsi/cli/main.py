"""Entry point of the ``rlsi`` command.

Each sub-command lives in its own module under :mod:`rlsi.cli` and exposes ``register(subparsers)``,
which adds its parser and sets ``func`` (a callable taking the parsed ``argparse.Namespace`` and
returning an exit status). ``COMMAND_MODULES`` is the one list of them: ``--help`` derives from it.

Errors: an :class:`rlsi.errors.RLSIError` (bad input) is printed as one line ``rlsi: error: ...`` and
exits with status 2; nothing partial is written because every writer goes through a temporary
file or directory that is renamed into place only when complete (see :mod:`rlsi.io.atomic`). A usage
error (an unknown option, a bad value) is one line too, with the help to read (:class:`Parser`). Ctrl-C
prints ``rlsi: interrupted`` and exits with status 130 wherever it lands: in the library, in a numba
kernel (which reports it as a ``SystemError`` caused by the ``KeyboardInterrupt``) or during the imports.
Warnings (``ConvergenceWarning``, ``DeadTopicsWarning``, a logged warning) print as one line
``rlsi: warning: ...``.

Start-up. Building the parser imports no module of the library and none of numpy, SciPy, numba or
scikit-learn: every sub-command module imports what it needs inside the functions that run it, and takes
its choices from :mod:`rlsi.cli._choices`. So ``rlsi --help``, ``rlsi COMMAND --help``, ``--version`` and
usage errors answer at once, and Ctrl-C during the imports is caught here (tests/cli/test_lazy_imports.py
holds every module of :data:`COMMAND_MODULES` to this).

``-q``/``--quiet`` and ``-v``/``--verbose`` are accepted before or after the sub-command (every
sub-command's parser gets them too); a misspelled sub-command or option is answered with the close
matches (:class:`Parser`).
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import logging
import os
import re
import signal
import sys
import warnings

from .. import __version__
from ._choices import DEVICE_ALIASES, DEVICES

#: The exit status after Ctrl-C (128 + SIGINT, as a shell reports it).
INTERRUPTED = 130

# Sub-command modules, in the order --help lists them.
COMMAND_MODULES = [
    "rlsi.cli.demo",
    "rlsi.cli.fit",
    "rlsi.cli.topics",
    "rlsi.cli.explore",
    "rlsi.cli.transform",
    "rlsi.cli.search",
    "rlsi.cli.serve",
    "rlsi.cli.evaluate",
    "rlsi.cli.track",
    "rlsi.cli.stc",
    "rlsi.cli.scale",
    "rlsi.cli.check",
]


_REST = [(re.compile(r":[a-z]+:`~?([^`]+)`"), r"\1"), (re.compile(r"``([^`]+)``"), r"'\1'"),
         (re.compile(r"`([^`]+)`"), r"\1")]


def plain(text):
    """``text`` without reST markup (``code``, :mod:`x`, `x`): help is read in a terminal."""
    for pattern, repl in _REST:
        text = pattern.sub(repl, text)
    return text


class Parser(argparse.ArgumentParser):
    """An argument parser that prints help without reST markup, answers a usage error with one line that
    names the help to read, and suggests the close matches of a misspelled sub-command, option or choice
    (``--device gpu``: ``cuda``)."""

    def format_help(self):
        return plain(super().format_help())

    def error(self, message):
        choice = re.search(r"invalid choice: '?([^'\s]+)'? \(choose from (.*)\)", message)
        if choice:
            options = [c.strip().strip("'\"") for c in choice.group(2).split(",")]
            message += _did_you_mean(choice.group(1), options)
        self.exit(2, f"rlsi: error: {' '.join(message.split())} (see '{self.prog} --help')\n")

    def parse_known_args(self, args=None, namespace=None):
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and self.prog == "rlsi":  # the top parser: name the sub-command's parser and suggest
            leaf = _leaf_parser(self, namespace)
            hints = "".join(_did_you_mean(x.split("=", 1)[0], _option_strings(leaf))
                            for x in extras if x.startswith("-"))
            leaf.error(f"unrecognized arguments: {' '.join(extras)}{hints}")
        return namespace, extras


def _did_you_mean(word, candidates):
    if set(candidates) == set(DEVICES):
        meant = _device_meant(word)
        if meant:
            return f"; did you mean {meant}?"
    close = difflib.get_close_matches(word, candidates, n=3, cutoff=0.6)
    return f"; did you mean {' or '.join(close)}?" if close else ""


def _device_meant(word):
    """The device a user who typed ``word`` means (``gpu``, ``CUDA``, ``cuda:0``: ``cuda``), or None."""
    word = word.strip().lower()
    if word in DEVICES:
        return word
    if word in DEVICE_ALIASES:
        return DEVICE_ALIASES[word]
    if re.fullmatch(r"(cuda|gpu):?\d+", word):  # a card number: CuPy's current card (CUDA_VISIBLE_DEVICES)
        return "cuda (the card is chosen with CUDA_VISIBLE_DEVICES)"
    return None


def _option_strings(parser):
    return [s for a in parser._actions for s in a.option_strings if s.startswith("--")]


def _subparsers(parser):
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def _leaf_parser(parser, namespace):
    """The parser of the (nested) sub-command that ``namespace`` was parsed by."""
    for action in _subparsers(parser):
        name = getattr(namespace, action.dest, None)
        if name in action.choices:
            return _leaf_parser(action.choices[name], namespace)
    return parser


def _add_global_options(parser):
    """``-q`` and ``-v`` on ``parser`` and every nested sub-command (unless it defines its own ``-q``)."""
    subs = _subparsers(parser)
    for action in subs:
        for child in set(action.choices.values()):
            _add_global_options(child)
    if subs:
        return
    if "-q" not in parser._option_string_actions:
        parser.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                            help="no progress bars or info messages (as rlsi -q)")
    if "-v" not in parser._option_string_actions:
        parser.add_argument("-v", "--verbose", dest="sub_verbose", action="count", default=argparse.SUPPRESS,
                            help="more log output (as rlsi -v: -v info, -vv debug)")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="rlsi",
        description="Regularized Latent Semantic Indexing: sparse topic models and topic-enhanced search. "
                    "Run 'rlsi COMMAND --help' for a command's options; 'rlsi demo' for a first look.",
    )
    parser.add_argument("--version", action="version", version=f"rlsi {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output (-v: info, -vv: debug, including Dask's); also after COMMAND")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress bars or info messages; also after COMMAND")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _add_global_options(parser)
    return parser


def main(argv=None) -> int:
    """The command's exit status for ``argv`` (default: ``sys.argv[1:]``)."""
    return guarded(lambda: _main(argv))


def run(argv=None):
    """The ``rlsi`` console script and ``python -m rlsi``: exit with :func:`main`'s status. After Ctrl-C the
    process ends at once with status 130: an interruption inside code that C evaluated for an extension
    (numba's, while it is imported) leaves CPython's "unhandled Ctrl-C" mark set even though :func:`guarded`
    handled it, and CPython would then end the process by SIGINT at exit instead of with the status. Once
    the command has answered, Ctrl-C is ignored: the exit it would interrupt has nothing left to undo."""
    status = None
    try:
        status = main(argv)
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # done: a Ctrl-C during the exit changes nothing
    except KeyboardInterrupt:  # after main returned, before the line above
        if status is None:
            status = guarded(_raise_interrupt)
    if status == INTERRUPTED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(INTERRUPTED)
    sys.exit(status)


def interrupted(exc) -> bool:
    """Whether ``exc`` is a Ctrl-C: a KeyboardInterrupt, or an error raised because of one (numba reports
    an interruption inside a compiled function as a SystemError caused by it)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def guarded(call):
    """``call()``'s exit status, with Ctrl-C anywhere in it answered by one line and status 130."""
    try:
        return call()
    except BaseException as exc:  # noqa: B036 - SystemExit and the rest go on as they are
        if not interrupted(exc):
            raise
        try:
            print("rlsi: interrupted", file=sys.stderr)
        except (KeyboardInterrupt, OSError):  # a second Ctrl-C, or a closed stderr
            pass
        return INTERRUPTED


def _raise_interrupt():
    raise KeyboardInterrupt


class _WarningFormatter(logging.Formatter):
    """Log records as the command prints them: ``rlsi: warning: ...`` for warnings and errors, the
    level and the logger's name for the information and debugging lines of ``-v`` / ``-vv``."""

    def format(self, record):
        if record.levelno >= logging.WARNING:
            return f"rlsi: {record.levelname.lower()}: {' '.join(record.getMessage().split())}"
        return super().format(record)


def show_warning(message, category, filename, lineno, file=None, line=None):
    """:func:`warnings.showwarning` of the command: one line ``rlsi: warning: ...`` (no file, line or
    source line: the warning is about the command's input, not about the code that noticed it)."""
    try:
        print(f"rlsi: warning: {' '.join(str(message).split())}", file=sys.stderr if file is None else file)
    except OSError:  # stderr closed: the warning has nowhere to go
        pass


def _main(argv) -> int:
    from . import _streams

    problem = _streams.environment_problem()  # before anything imports numba
    if problem:
        print(f"rlsi: error: {problem}", file=sys.stderr)
        return 2
    from ..errors import RLSIError

    parser = build_parser()
    args = parser.parse_args(argv)
    args.verbose += getattr(args, "sub_verbose", 0)
    level = logging.WARNING if args.quiet or not args.verbose else (
        logging.INFO if args.verbose == 1 else logging.DEBUG)
    handler = logging.StreamHandler()
    handler.setFormatter(_WarningFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    try:
        with warnings.catch_warnings(), _streams.guarded_output():  # a full disk, a closed pipe, an encoding:
            warnings.showwarning = show_warning                     # one line, status 1
            status = args.func(args)
    except _streams.OutputError as exc:
        return _streams.report(exc)
    except RLSIError as exc:
        from ._output import printable

        print(f"rlsi: error: {printable(exc)}", file=sys.stderr)  # text from input files: controls escaped
        return 2
    except MemoryError as exc:  # a size no check foresaw: one line, nothing written (outputs are atomic)
        print(f"rlsi: error: out of memory ({' '.join(str(exc).split()) or 'MemoryError'}); use fewer topics "
              f"(-k), fewer documents or a machine with more memory", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    return int(status or 0)


if __name__ == "__main__":  # pragma: no cover
    run()
