"""Entry point of the ``rlsi`` command.

Each sub-command lives in its own module under :mod:`rlsi.cli` and exposes ``register(subparsers)``,
which adds its parser and sets ``func`` (a callable taking the parsed ``argparse.Namespace`` and
returning an exit status). ``COMMAND_MODULES`` is the one list of them: ``--help`` derives from it.

Errors: an :class:`rlsi.errors.RLSIError` (bad input) is printed as one line ``rlsi: error: ...`` and
exits with status 2; nothing partial is written because every writer goes through a temporary
file or directory that is renamed into place only when complete (see :mod:`rlsi.io.atomic`). Ctrl-C
prints ``rlsi: interrupted`` and exits with status 130, also during the start-up imports (this module
imports nothing heavy before :func:`main` runs, so the interruption is caught there).
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

# Sub-command modules, in the order --help lists them.
COMMAND_MODULES = [
    "rlsi.cli.demo",
    "rlsi.cli.fit",
    "rlsi.cli.topics",
    "rlsi.cli.transform",
    "rlsi.cli.search",
    "rlsi.cli.evaluate",
    "rlsi.cli.track",
    "rlsi.cli.stc",
    "rlsi.cli.scale",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="rlsi",
        description="Regularized Latent Semantic Indexing: sparse topic models and topic-enhanced search.",
    )
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="more log output (-v: info, -vv: debug)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars or info messages")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv=None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("rlsi: interrupted", file=sys.stderr)
        return 130


def _main(argv) -> int:
    from ..errors import RLSIError

    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.WARNING if args.quiet or not args.verbose else (
        logging.INFO if args.verbose == 1 else logging.DEBUG)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    try:
        status = args.func(args)
    except RLSIError as exc:
        print(f"rlsi: error: {exc}", file=sys.stderr)
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
    sys.exit(main())
