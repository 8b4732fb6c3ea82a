"""``rlsi select CORPUS --topics 10,20,50,100 [--lambda1 0.1,0.05] [-o OUT_DIR]``: choose K and λ1.

Vectorizes the corpus as ``rlsi fit`` does, runs :func:`rlsi.select` (a warm-started path over the grid,
scored on held-out documents and across two seeds; docs/select.md), prints the table and the recommended
point with the rule that chose it, and with ``-o`` writes ``selection.md``, ``selection.json``,
``selection.png`` and ``selection.html`` (the same in a browser: :func:`rlsi.explorer.selection_page`) into
OUT_DIR, each whole or not at all.
"""

from __future__ import annotations

import argparse
import time

from ..errors import RLSIError
from . import _bounds, _common, _output
from ._choices import READING, SELECT_LAMBDA1, SELECT_STABILITY, SELECT_TEST_SIZE, SELECT_TOPICS

#: The file whose presence marks a folder as a report of this command (it may be replaced).
MARKER = "selection.json"


def register(sub):
    p = sub.add_parser("select", help="choose the number of topics K and lambda1 from the data",
                       description="Fit a warm-started path of RLSI models over K and lambda1 on 80%% of the "
                                   "documents, score each on the held-out rest (document completion, NPMI "
                                   "coherence, terms per topic) and across two seeds (stability), and recommend "
                                   "a point: the smallest K within one standard error of the best completion "
                                   "score whose stability is high enough (docs/select.md).")
    p.add_argument("corpus", help="corpus file (.jsonl / .jsonl.gz) or folder of .txt files")
    p.add_argument("--topics", type=topic_list, default=list(SELECT_TOPICS), metavar="K,K,...",
                   help=f"numbers of topics to try (default: {','.join(map(str, SELECT_TOPICS))})")
    p.add_argument("--lambda1", type=lambda1_list, default=list(SELECT_LAMBDA1), metavar="L,L,...",
                   help=f"lambda1 values to try, per 1000 documents, fitted largest first (default: "
                        f"{','.join(f'{v:g}' for v in SELECT_LAMBDA1)})")
    p.add_argument("--lambda2", type=_common.non_negative_float, default=READING[1],
                   help=f"document regularization λ2 of every fit (default: {READING[1]:g})")
    p.add_argument("--test-size", type=share, default=SELECT_TEST_SIZE,
                   help=f"share of the documents held out for the scores (default: {SELECT_TEST_SIZE:g})")
    p.add_argument("--stability", type=share, default=SELECT_STABILITY, metavar="S",
                   help=f"least stability across seeds of a recommended point (default: {SELECT_STABILITY:g})")
    p.add_argument("--max-iter", type=_bounds.max_iter, default=100, help="outer iterations per fit (default: 100)")
    p.add_argument("--seed", type=_bounds.seed, default=0, help="random seed in [0, 2^32 - 1] (default: 0)")
    p.add_argument("--jobs", type=_common.jobs_count, default=None, help="threads (default: all cores)")
    p.add_argument("-o", "--output", metavar="OUT_DIR",
                   help="folder to write selection.md, selection.json, selection.png and selection.html into")
    _common.add_text_arguments(p)
    p.set_defaults(func=run)


def _list(text, parse, what):
    items = [t.strip() for t in text.split(",")]
    if not text.strip() or any(not t for t in items):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of {what}")
    return [parse(t) for t in items]


def topic_list(text):
    """``--topics``: comma-separated numbers of topics."""
    return _list(text, _bounds.topics, "numbers of topics")


def lambda1_list(text):
    """``--lambda1``: comma-separated positive numbers."""
    def positive(t):
        value = _common.non_negative_float(t)
        if value == 0:
            raise argparse.ArgumentTypeError(f"{t} must be > 0 (lambda1 = 0 leaves the topics dense)")
        return value

    return _list(text, positive, "lambda1 values")


def share(text):
    """A number in (0, 1)."""
    value = _common.non_negative_float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text} must lie between 0 and 1")
    return value


def run(args):
    from ..selection import select
    from ..text import read_corpus

    if args.output:
        _output.report_destination(args.output, marker=MARKER, kind="an rlsi select report", reads=[args.corpus])
    start = time.perf_counter()
    corpus = read_corpus(args.corpus, text_fields=_common.text_fields(args))
    if len(corpus) == 0:
        raise RLSIError(f"{args.corpus} holds no document")
    X = _common.make_vectorizer(args).fit_transform(_common.reading(corpus.texts, args))
    _common.check_learnable(X, X.shape[0])
    result = select(X, topics=args.topics, lambda1=args.lambda1, lambda2=args.lambda2, test_size=args.test_size,
                    stability_threshold=args.stability, random_state=args.seed, max_iter=args.max_iter,
                    n_jobs=args.jobs, verbose=0 if args.quiet else 1)
    print(result.to_markdown(), end="")
    if args.output:
        from pathlib import Path

        from ..explorer import selection_page

        page = selection_page(result)  # built first: an error leaves no file
        result.save(args.output)
        page.save(Path(args.output) / "selection.html")
        if not args.quiet:
            print(f"wrote selection.md, selection.json, selection.png and selection.html to {args.output}")
    if not args.quiet:
        print(f"{2 * len(result.rows)} fits on {X.shape[0]} documents x {X.shape[1]} terms in "
              f"{time.perf_counter() - start:.1f}s")
    return 0
