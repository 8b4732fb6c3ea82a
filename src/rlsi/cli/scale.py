"""Commands for corpora larger than memory: ``rlsi synth``, ``rlsi ingest``, and ``rlsi fit --matrix``.

* ``rlsi synth --docs N --terms M --tokens T [--topics K] [--seed S] [--dtype float32] -o DIR`` — a
  synthetic topic-structured corpus (:mod:`rlsi.datasets.synthetic`) streamed into a matrix directory.
* ``rlsi ingest CORPUS.jsonl[.gz] ... -o DIR`` — vocabulary and tf-idf matrix of JSON-lines corpora, in
  one streaming pass and a pass over a token cache (:mod:`rlsi.text.ingest`), with the text options of ``rlsi fit``.
* ``rlsi fit --matrix DIR -o MODEL_DIR`` — batch RLSI on a matrix directory, memory-mapped; the model is
  saved with the directory's vectorizer (when it has one), as ``rlsi fit CORPUS`` saves it, so
  ``rlsi topics`` / ``rlsi search`` work on it. ``--online`` streams the rows instead through
  :class:`rlsi.models.OnlineRLSI` in mini-batches of ``--batch-size`` rows (each read from the map on its
  turn: the matrix is never copied whole), with a progress bar in documents/s. ``--memory-limit``
  (default: the memory available) refuses, before any work, a fit whose estimated peak
  (:mod:`rlsi.models.memory`) exceeds it; it does not size blocks (see that module for why).
* ``rlsi search MODEL_DIR --matrix DIR --save-index`` (in :mod:`rlsi.cli.search`) — the search index of
  the matrix directory (BM25 on the raw counts ``synth``/``ingest`` store, + topic vectors), built block
  by block and memory-mapped by later searches; ``--candidates N`` for fast queries.
"""

from __future__ import annotations

import argparse
import logging
import time
from pathlib import Path

import numpy as np

from ..errors import RLSIError
from . import _bounds, _common, _output

log = logging.getLogger(__name__)


def _size(text):
    from ..models.memory import parse_bytes

    try:
        return parse_bytes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _share_or_count(text):
    """``max_df``: a float in (0, 1] is a share of the documents, an integer a document count."""
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not 0.0 < value <= 1.0:
            raise argparse.ArgumentTypeError(f"{text} must be a share in (0, 1] or a document count")
        return value
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be >= 1")
    return value


def register(sub):
    p = sub.add_parser("synth", help="write a synthetic corpus as a matrix directory (streamed)",
                       description="Generate a synthetic topic-structured Zipfian tf-idf corpus (the model of "
                                   "rlsi.datasets.synthetic; the same matrix for the same seed) chunk by chunk "
                                   "into a matrix directory for 'rlsi fit --matrix'.")
    p.add_argument("--docs", type=_bounds.size, required=True, help="number of documents N")
    p.add_argument("--terms", type=_bounds.size, required=True, help="vocabulary size M")
    p.add_argument("--tokens", type=float, default=150.0, help="mean tokens per document (default 150)")
    p.add_argument("--topics", type=_bounds.size, default=200, help="planted topics (default 200)")
    p.add_argument("--topic-vocab", type=_bounds.size, default=4000,
                   help="terms in each planted topic's slice (default 4000)")
    p.add_argument("--seed", type=_bounds.seed, default=0, help="random seed in [0, 2^32 - 1] (default 0)")
    p.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                   help="floating type of the weights (float32 halves the matrix)")
    p.add_argument("--norm", choices=["none", "l2"], default="none",
                   help="none: the paper's tf-idf weights (default); l2: unit rows, as 'rlsi fit' vectorizes")
    p.add_argument("-o", "--output", required=True, help="matrix directory to write")
    p.set_defaults(func=run_synth)

    p = sub.add_parser("ingest", help="build the vocabulary and tf-idf matrix of a large corpus (streamed)",
                       description="Read JSON-lines corpora (gzip'ed or not) once, without holding their text "
                                   "(vocabulary first, token columns cached on disk, then the matrix), and "
                                   "write a matrix directory with the "
                                   "vectorizer for 'rlsi fit --matrix'. Same matrix as 'rlsi fit' builds in "
                                   "memory from the same options.")
    p.add_argument("corpus", nargs="+", help="corpus files (.jsonl / .jsonl.gz), read in order")
    p.add_argument("-o", "--output", required=True, help="matrix directory to write")
    _common.add_text_arguments(p)
    g = p.add_argument_group("vocabulary")
    g.add_argument("--max-df", type=_share_or_count, default=1.0,
                   help="drop terms in more documents: a share in (0, 1] or a count (default 1.0: keep)")
    g.add_argument("--max-features", type=_common.positive_int, default=None,
                   help="keep only the most frequent terms (after --min-df/--max-df)")
    g.add_argument("--batch-docs", type=_common.positive_int, default=None,
                   help="documents tokenized together (default 10000)")
    p.set_defaults(func=run_ingest)


def add_matrix_arguments(parser):
    """``--matrix`` and ``--memory-limit`` of ``rlsi fit``."""
    g = parser.add_argument_group("large corpora")
    g.add_argument("--matrix", metavar="DIR",
                   help="fit on the matrix directory DIR (written by 'rlsi synth' or 'rlsi ingest'), "
                        "memory-mapped, instead of a corpus")
    g.add_argument("--memory-limit", type=_size, default=None, metavar="SIZE",
                   help="refuse a fit (batch, or --online on --matrix) whose estimated peak memory exceeds "
                        "SIZE (e.g. 20G; default: the memory available now)")


def _peak_rss():
    from ..models.memory import peak_rss

    return peak_rss()


def run_synth(args):
    from ..datasets.synthetic import write_corpus
    from ..models.memory import format_bytes

    quiet = getattr(args, "quiet", False)
    _output.matrix_destination(args.output)
    info = write_corpus(args.output, args.docs, args.terms, args.tokens, n_topics=args.topics,
                        topic_vocab=args.topic_vocab, dtype=np.dtype(args.dtype),
                        norm=None if args.norm == "none" else "l2", seed=args.seed, verbose=not quiet)
    if not quiet:
        n = info["n_docs"]
        print(f"wrote {n} documents x {info['n_terms']} terms, {info['n_tokens'] / n:.1f} tokens/doc, "
              f"nnz {info['nnz']} ({args.dtype}) to {args.output} in {info['seconds']:.1f}s "
              f"({n / max(info['seconds'], 1e-9):.0f} documents/s, peak RSS {format_bytes(_peak_rss())})")
    return 0


def run_ingest(args):
    from ..models.memory import format_bytes
    from ..text.ingest import BATCH_DOCS, ingest

    quiet = getattr(args, "quiet", False)
    vec = _common.make_vectorizer(args)
    vec.set_params(max_df=args.max_df, max_features=args.max_features)
    start = time.perf_counter()
    ingest(args.corpus, args.output, vectorizer=vec, text_fields=_common.text_fields(args),
           batch_docs=args.batch_docs or BATCH_DOCS, verbose=not quiet)
    if not quiet:
        elapsed = time.perf_counter() - start
        n = vec.n_docs_
        print(f"ingested {n} documents, {len(vec.feature_names_)} terms, to {args.output} in {elapsed:.1f}s "
              f"({n / max(elapsed, 1e-9):.0f} documents/s over both passes, peak RSS {format_bytes(_peak_rss())})")
    return 0


def preflight(args, model, X):
    """Refuse (RLSIError) a batch fit whose estimated peak exceeds ``--memory-limit`` or the memory
    available; log the estimate otherwise."""
    from ..models.memory import available_memory, current_rss, estimate_for, format_bytes

    # X is resident already (built in memory, or memory-mapped and read through by load_matrix's checks) and
    # is a component of the estimate: not in the baseline too
    base = max(0, current_rss() - (X.data.nbytes + X.indices.nbytes + X.indptr.nbytes))
    estimate = estimate_for(model, X, baseline=base)
    limit = getattr(args, "memory_limit", None)
    what = "--memory-limit"
    if limit is None:
        avail = available_memory()
        if avail is None:
            log.info("memory estimate of the fit: %s (available memory unknown: not checked)", estimate.describe())
            return estimate
        limit, what = avail + base, "memory available"
    if estimate.peak > limit:
        fewer = "fewer topics (-k), a smaller --batch-size" if estimate.phase == "mini-batch" else \
            "fewer topics (-k), a float32 matrix (rlsi synth or ingest --dtype float32)"
        raise RLSIError(f"this fit needs {estimate.describe()}, more than the {format_bytes(limit)} of {what}; "
                        f"use {fewer}, or a machine with more memory")
    log.info("memory estimate of the fit: %s (limit %s)", estimate.describe(), format_bytes(limit))
    return estimate


def fit_matrix(args, output):
    """``rlsi fit --matrix DIR -o MODEL_DIR`` (called by :func:`rlsi.cli.fit.run`)."""
    from ..io.matrix import load_matrix
    from ._online import fit_online_from_args
    from .learners import check_modes, fit_modes, get_learner, learners, report_fit

    if not args.matrix:
        raise RLSIError("give a corpus file, or a matrix directory with --matrix DIR")
    if args.corpus:
        raise RLSIError("give either a CORPUS or --matrix DIR, not both")
    if Path(args.matrix).exists() and not Path(args.matrix).is_dir():
        raise RLSIError(f"--matrix {args.matrix}: a file, not a matrix directory (one written by 'rlsi synth' or "
                        "'rlsi ingest'); to fit on a corpus file, give it as CORPUS without --matrix")
    learner = get_learner(getattr(args, "model", "rlsi"))
    if args.resume or getattr(args, "backend", "local") != "local" or "matrix" not in learner.modes:
        able = " / ".join(n for n, lrn in learners("fit").items() if "matrix" in lrn.modes)
        raise RLSIError(f"--matrix fits --model {able} (batch, or --online) on this machine: drop --resume / "
                        "--model / --backend")
    check_modes(learner, fit_modes(args))
    model = learner.build(args)
    start = time.perf_counter()
    matrix = load_matrix(args.matrix, verify=True)  # every checksum: the fit reads every page anyway
    X = matrix.X
    log.info("matrix %s: %d documents x %d terms (%d non-zeros, %s), memory-mapped", args.matrix, X.shape[0],
             X.shape[1], X.nnz, X.dtype)
    _common.check_learnable(X, X.shape[0])
    if learner.preflight:
        preflight(args, model, X)
    if args.online:
        # OnlineRLSI.fit slices one mini-batch of rows at a time (X[a:b]): the map is read in order, never
        # copied whole; the bar counts documents/s
        model = fit_online_from_args(args, X, model=model)
    else:
        model.fit(X)
    components = {"model": model}
    if matrix.vectorizer is not None:
        components["vectorizer"] = matrix.vectorizer
    else:
        log.warning("%s has no vectorizer (a synthetic corpus): the model is saved without one, so "
                    "'rlsi topics' and 'rlsi search' cannot name its terms", args.matrix)
    return report_fit(learner, output, components, X.shape[0], X.shape[1], start, quiet=args.quiet)
