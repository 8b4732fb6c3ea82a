"""Online-learning options shared by ``rlsi fit --online`` and ``rlsi track``.

``add_online_arguments(parser)`` adds the options of :class:`rlsi.models.OnlineRLSI` that the model
group of :func:`rlsi.cli._common.add_model_arguments` does not have (mini-batch size η, re-scaling ρ,
embedded iterations ξ, passes, shuffling, dead-topic re-seeding); ``online_model_from_args(args)`` builds
the estimator from both groups and ``fit_online_from_args(args, X)`` fits it on a matrix with a progress
bar in documents per second (silent with ``--quiet``).

``load_resumable(model_dir)`` and ``resume_online(model, stream, texts)`` continue a saved online model
on more documents (``rlsi fit --resume``).

Attributes read from ``args``: ``topics``, ``lambda1`` (None: the estimator's default), ``lambda2``,
``lambda1_scale``, ``topic_penalty``, ``doc_penalty``, ``seed``, ``jobs``, ``quiet``, ``device`` (if present) and the
ones added here.
"""

from __future__ import annotations

import logging

from ..errors import RLSIError
from ._bounds import batch_size, n_inner, n_passes
from ._common import device_from_args, non_negative_float, positive_int

log = logging.getLogger(__name__)

#: OnlineRLSI's own defaults (a test holds them equal)
ONLINE_DEFAULTS = {"batch_size": 256, "rho": 0.0, "n_inner": 5, "n_passes": 1}


def add_online_arguments(parser, *, defaults=None):
    """Add ``--batch-size --rho --n-inner --n-passes --shuffle --reseed-dead --birth --max-topics`` to a parser or
    group.

    ``defaults`` overrides :data:`ONLINE_DEFAULTS` (``rlsi track`` uses the paper's tracking setting)."""
    d = dict(ONLINE_DEFAULTS, **(defaults or {}))
    parser.add_argument("--batch-size", type=batch_size, default=d["batch_size"],
                        help=f"online: mini-batch size η (default: {d['batch_size']})")
    parser.add_argument("--rho", type=non_negative_float, default=d["rho"],
                        help=f"online: re-scaling ρ, forgetting of old documents; 0 keeps every document "
                             f"(default: {d['rho']:g}; the paper tracks topics with 1)")
    parser.add_argument("--n-inner", type=n_inner, default=d["n_inner"],
                        help=f"online: embedded iterations ξ per mini-batch (default: {d['n_inner']})")
    parser.add_argument("--n-passes", type=n_passes, default=d["n_passes"],
                        help=f"online: passes over the corpus (default: {d['n_passes']})")
    parser.add_argument("--shuffle", action="store_true",
                        help="online: visit documents in random order (default: the corpus order)")
    parser.add_argument("--reseed-dead", action="store_true",
                        help="online: give an all-zero topic a new start from the worst-explained "
                             "document of a mini-batch (Mairal et al. 2010, §3.4.3)")
    parser.add_argument("--birth", action="store_true",
                        help="online: add a topic when mini-batches bring a theme no topic explains (documents with "
                             "large, coherent residuals in 2 consecutive mini-batches); new topics take the next "
                             "ids, up to --max-topics")
    parser.add_argument("--max-topics", type=positive_int, default=None,
                        help="online, with --birth: the most topics births may reach (default: twice --topics)")


def online_model_from_args(args, *, quiet=None, topic_init=None):
    """An unfitted :class:`OnlineRLSI` from the parsed options."""
    from ..models.online import OnlineRLSI

    quiet = bool(getattr(args, "quiet", False)) if quiet is None else quiet
    if getattr(args, "max_topics", None) is not None and not getattr(args, "birth", False):
        raise RLSIError("--max-topics applies with --birth (the topics births may reach)")
    params = dict(n_components=args.topics, lambda1_scale=args.lambda1_scale,
                  topic_penalty=args.topic_penalty, doc_penalty=args.doc_penalty,
                  rho=args.rho, batch_size=args.batch_size, n_inner=args.n_inner,
                  n_passes=getattr(args, "n_passes", 1), shuffle=bool(getattr(args, "shuffle", False)),
                  reseed_dead=bool(getattr(args, "reseed_dead", False)), topic_init=topic_init,
                  birth=bool(getattr(args, "birth", False)) or None, max_components=getattr(args, "max_topics", None),
                  random_state=args.seed, n_jobs=args.jobs, device=device_from_args(args),
                  verbose=0 if quiet else 1)
    if hasattr(args, "topic_sweeps"):  # given on the command line (``rlsi fit --online --topic-sweeps 3``)
        params["topic_sweeps"] = args.topic_sweeps
    from ._common import checked, regularization_from_args, seed_params

    params.update(regularization_from_args(args), **seed_params(args))
    return checked(OnlineRLSI(**params))


def fit_online_from_args(args, X, *, model=None, **fit_params):
    """Fit :class:`OnlineRLSI` (``model``, or one from the options) on the documents x terms matrix X, in
    memory or memory-mapped (mini-batches are sliced from it one at a time); progress bar in docs/s unless
    quiet."""
    if X.shape[0] == 0:
        raise RLSIError("no document to learn from")
    model = online_model_from_args(args) if model is None else model
    model.fit(X, **fit_params)
    log.info("online fit: %d documents seen in %d mini-batches, λ1 at the end %.4g",
             model.n_docs_seen_, model.n_batches_, model.lambda1_effective_)
    return model


def load_resumable(path):
    """``(model, stream)``: the :class:`OnlineRLSI` of a model directory and a
    :class:`~rlsi.text.stream.StreamingTfidf` that continues its vectorizer.

    A saved ``StreamingTfidf`` (``rlsi track``, or an earlier resume) goes on as it is; a plain
    ``TfidfVectorizer`` (``rlsi fit --online``) becomes a stream with its idf frozen (``idf="fixed"``: its
    documents are the warm-up sample, a new term gets the idf of a term seen in one of them).
    """
    from .. import io
    from ..models.online import OnlineRLSI
    from ..models.streaming import StreamStatistics
    from ..models.stats_checks import check_statistics
    from ..text.stream import StreamingTfidf

    bundle = io.load(path)
    model, vectorizer = bundle.get("model"), bundle.get("vectorizer")
    if not isinstance(model, OnlineRLSI):
        found = "no model" if model is None else f"a {type(model).__name__}"
        raise RLSIError(f"--resume {path}: it holds {found}; only an online model (written by `rlsi fit "
                        f"--online` or `rlsi track`) can be resumed")
    if vectorizer is None:
        raise RLSIError(f"--resume {path}: it holds no vectorizer, so new documents cannot be vectorized")
    if StreamStatistics.present(model):  # what the stream goes on from: finite, S symmetric PSD
        check_statistics(model.stats_, f"--resume {path}", full=True)
    if isinstance(vectorizer, StreamingTfidf):
        return model, vectorizer
    return model, StreamingTfidf.from_vectorizer(vectorizer, idf="fixed")


def resume_online(model, stream, texts, *, quiet=False):
    """Stream ``texts`` once, in order, in mini-batches of ``model.batch_size`` through ``stream`` and
    ``model.partial_fit`` (new terms become new columns of both). Returns the model."""
    texts = list(texts)
    if not texts:
        raise RLSIError("no document to learn from")
    bar = None
    if not quiet:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(texts), desc="OnlineRLSI", unit="doc", unit_scale=True, smoothing=0.1)
    size = int(model.batch_size)
    try:
        for a in range(0, len(texts), size):
            model.partial_fit(stream.partial_fit_transform(texts[a: a + size]))
            if bar is not None:
                bar.update(min(size, len(texts) - a))
    finally:
        if bar is not None:
            bar.close()
    log.info("resumed: %d documents seen in %d mini-batches, λ1 at the end %.4g",
             model.n_docs_seen_, model.n_batches_, model.lambda1_effective_)
    return model
