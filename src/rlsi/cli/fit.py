"""``rlsi fit CORPUS -o MODEL_DIR``: vectorize a corpus and fit a topic model, then save both."""

from __future__ import annotations

import logging
import time

from .. import io
from ..quality import avg_compactness
from ..text import read_corpus
from . import _common

log = logging.getLogger(__name__)


def register(sub):
    p = sub.add_parser("fit", help="fit a topic model on a corpus and save it",
                       description="Fit RLSI on a corpus (JSON lines, gzip or not, or a folder of .txt "
                                   "files) and save the model and its vectorizer to MODEL_DIR.")
    p.add_argument("corpus", help="corpus file (.jsonl / .jsonl.gz) or folder of .txt files")
    p.add_argument("-o", "--output", required=True, help="model directory to write")
    _common.add_model_arguments(p)
    _common.add_batch_arguments(p)
    _common.add_text_arguments(p)
    from .group import add_group_arguments  # --model grlsi|gnmf|crlsi|cnmf (rlsi.cli.group)
    add_group_arguments(p)
    online = p.add_argument_group("online learning")
    online.add_argument("--online", action="store_true", help="stream the corpus through OnlineRLSI")
    try:
        from ._online import add_online_arguments
    except ImportError:  # pragma: no cover - online learner not installed
        add_online_arguments = None
    if add_online_arguments is not None:
        add_online_arguments(online)
    p.set_defaults(func=run)


def run(args):
    _common.check_output_dir(args.output)
    start = time.perf_counter()
    corpus = read_corpus(args.corpus, text_fields=_common.text_fields(args))
    vectorizer = _common.make_vectorizer(args)
    X = vectorizer.fit_transform(corpus.texts)
    log.info("vectorized %d documents x %d terms (%d non-zeros)", X.shape[0], X.shape[1], X.nnz)
    if args.online:
        from ._online import fit_online_from_args

        model = fit_online_from_args(args, X)
    elif args.model != "rlsi":
        from .group import fit_group_from_args

        model = fit_group_from_args(args, corpus, X)
    else:
        model = _common.batch_model_from_args(args, args.quiet).fit(X)
    io.save(args.output, model=model, vectorizer=vectorizer)
    elapsed = time.perf_counter() - start
    if not args.quiet:
        dead = len(model.dead_topics())
        print(f"fitted {type(model).__name__}: {X.shape[0]} documents, {X.shape[1]} terms, "
              f"K={model.components_.shape[0]}, {getattr(model, 'n_iter_', '?')} iterations, "
              f"AvgComp={avg_compactness(model.components_):.4f}, {dead} empty topic(s), {elapsed:.1f}s")
        print(f"saved to {args.output}")
    return 0
