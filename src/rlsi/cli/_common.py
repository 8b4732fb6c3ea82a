"""Helpers shared by the sub-commands: argument groups, model directories, output checks and files.

Every command checks its inputs and where its output goes before any work (:mod:`rlsi.cli._output`), and
writes through :mod:`rlsi.io.atomic` (whole or not at all).
"""

from __future__ import annotations

import argparse

import numpy as np

from .. import io
from ..errors import RLSIError
from ..models.batch import REPRESENTATIONS, TOPIC_SWEEPS
from ..models.regularization import DEFAULT_LAMBDA1, DEFAULT_LAMBDA2, INITS, LAMBDA1_SCALES
from ..models.penalties import PENALTIES
from . import _bounds


def positive_int(text):
    return _bounds.integer(text, 1)


def non_negative_int(text):
    return _bounds.integer(text, 0)


def jobs_count(text):
    value = _bounds.integer(text, -_bounds.MAX_INTEGER, reason="no machine has that many cores")
    if value == 0:
        raise argparse.ArgumentTypeError("0 threads: use -1 (all cores) or a positive count")
    return value


def non_negative_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not np.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"{text} must be a finite number >= 0")
    return value


def add_text_arguments(parser):
    """Options of the text pipeline (``rlsi.text.TfidfVectorizer``)."""
    g = parser.add_argument_group("text")
    g.add_argument("--text-fields", default="title,text",
                   help="comma-separated JSON fields joined into the document text (default: title,text)")
    g.add_argument("--stem", action="store_true", help="stem terms with the Snowball English stemmer")
    g.add_argument("--min-df", type=positive_int, default=1,
                   help="drop terms found in fewer documents (default: 1, keep the whole vocabulary)")
    g.add_argument("--no-stop-words", action="store_true", help="keep English stop words")
    g.add_argument("--no-norm", action="store_true",
                   help="keep the paper's raw tf-idf weights (default: each document scaled to unit length)")
    g.add_argument("--dtype", choices=["float64", "float32"], default="float64",
                   help="floating type of the matrices (float32 halves memory)")


def make_vectorizer(args):
    from ..text import TfidfVectorizer

    return TfidfVectorizer(stop_words=None if args.no_stop_words else "english",
                           stemmer="english" if args.stem else None, min_df=args.min_df,
                           norm=None if args.no_norm else "l2",
                           dtype=np.dtype(args.dtype).type)


def text_fields(args):
    fields = tuple(f.strip() for f in args.text_fields.split(",") if f.strip())
    if not fields:
        raise RLSIError("--text-fields names no field")
    return fields


def add_model_arguments(parser):
    """Options of the RLSI objective shared by batch and online learning."""
    g = parser.add_argument_group("model")
    g.add_argument("-k", "--topics", type=_bounds.topics, default=20, help="number of topics K (default: 20)")
    g.add_argument("--lambda1", type=non_negative_float, default=None,
                   help=f"topic regularization λ1 (default: {DEFAULT_LAMBDA1:g} per 1000 documents, 0.05 for the group "
                        "models; larger is sparser; see --lambda1-scale)")
    g.add_argument("--lambda2", type=non_negative_float, default=None,
                   help=f"document regularization λ2 (default: {DEFAULT_LAMBDA2:g}, topics and document vectors "
                        "a classifier can use; 1 for the group models and in the paper: sparser topics, smaller "
                        "vectors)")
    g.add_argument("--lambda1-scale", choices=list(LAMBDA1_SCALES), default="per_doc",
                   help="per_doc: λ1 is per 1000 documents (size-independent, default); "
                        "paper: λ1 of Eq. (1) as in the TOIS paper (its λ1=0.5 suits ~30k documents)")
    g.add_argument("--topic-penalty", choices=list(PENALTIES), default="l1", help="penalty on topics U")
    g.add_argument("--doc-penalty", choices=list(PENALTIES), default="l2", help="penalty on documents V")
    g.add_argument("--seed", type=_bounds.seed, default=0, help="random seed in [0, 2^32 - 1] (default: 0)")
    g.add_argument("--jobs", type=jobs_count, default=None, help="threads (default: all cores)")


def add_batch_arguments(parser):
    g = parser.add_argument_group("batch learning")
    g.add_argument("--max-iter", type=_bounds.max_iter, default=100, help="outer iterations (default: 100)")
    g.add_argument("--tol", type=non_negative_float, default=1e-4,
                   help="stop when the objective improves by less than this share (default: 1e-4)")
    g.add_argument("--init", choices=list(INITS), default="docs", help="initialization (default: docs)")
    g.add_argument("--terms-per-topic", type=positive_int, default=None, metavar="N",
                   help="ask for sparsity instead of λ1: search the λ1 that gives about N terms per topic "
                        "(the λ1 found is printed; --lambda1 is then ignored)")
    g.add_argument("--topic-representation", choices=list(REPRESENTATIONS), default="auto",
                   help="how the fit holds the topics: auto (sparse, dense above 5%% non-zero; default), "
                        "sparse or dense; the result is the same")
    # no stored default: batch and online fits take the learner's own (TOPIC_SWEEPS) when it is absent
    g.add_argument("--topic-sweeps", type=topic_sweeps, default=argparse.SUPPRESS, metavar="N|exact",
                   help=f"coordinate-descent sweeps per term row in each U-step after the first (default: "
                        f"{TOPIC_SWEEPS}, an inexact U-step that still lowers the objective); 'exact' solves "
                        "every U-step to tolerance, as the paper's Algorithms 1 and 4")


def add_device_arguments(parser):
    """``--device``: where BatchRLSI / OnlineRLSI run (:mod:`rlsi.gpu`; docs/gpu.md)."""
    from ..gpu.backend import DEVICES

    g = parser.add_argument_group("device")
    g.add_argument("--device", choices=list(DEVICES), default=None, metavar="DEVICE",
                   help="where --model rlsi runs, batch or --online: cpu (the host, default), cuda (a CUDA card "
                        "with CuPy, float32; pip install \"rlsi[gpu]\"), cuda:float64, or numpy (the device "
                        "code path on numpy: tests); with --resume the saved model's device unless given. "
                        f"Choices: {', '.join(DEVICES)}")


def device_from_args(args):
    """The ``device`` of the estimator: ``--device``, or the host."""
    return getattr(args, "device", None) or "cpu"


def topic_sweeps(text):
    """``--topic-sweeps``: a positive number of sweeps, or ``exact`` (None: every U-step solved)."""
    if text.strip().lower() == "exact":
        return None
    try:
        return positive_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"{text!r} is neither a positive integer nor 'exact'") from None


def batch_model_from_args(args, quiet):
    from ..models import BatchRLSI

    params = dict(n_components=args.topics, lambda1_scale=args.lambda1_scale,
                  topic_penalty=args.topic_penalty, doc_penalty=args.doc_penalty, max_iter=args.max_iter,
                  tol=args.tol, init=args.init, random_state=args.seed, n_jobs=args.jobs,
                  target_terms_per_topic=getattr(args, "terms_per_topic", None),
                  topic_representation=getattr(args, "topic_representation", "auto"),
                  topic_sweeps=getattr(args, "topic_sweeps", TOPIC_SWEEPS), device=device_from_args(args),
                  verbose=0 if quiet else 1, **regularization_from_args(args))
    return checked(BatchRLSI(**params))


def regularization_from_args(args):
    """``lambda1`` and ``lambda2`` where given on the command line (absent: the learner's own default)."""
    return {name: getattr(args, name) for name in ("lambda1", "lambda2") if getattr(args, name, None) is not None}


def checked(model):
    """The estimator after its own parameter validation (so that options fail before any work)."""
    from ..io.checks import validate_params

    validate_params(model)
    return model


def load_model_dir(path):
    """Return ``(model, vectorizer, bundle)`` from a directory written by ``rlsi fit``."""
    bundle = io.load(path)
    if "model" not in bundle:
        raise RLSIError(f"{path} holds no topic model (components: {sorted(bundle)})")
    return bundle["model"], bundle.get("vectorizer"), bundle


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` whole or not at all (:func:`rlsi.io.atomic.write_text`)."""
    io.write_text(path, text)


def save_npy_atomic(path, array):
    """Save ``array`` as ``.npy`` whole or not at all (:func:`rlsi.io.atomic.save_npy`)."""
    io.save_npy(path, array)


def check_learnable(X, n_docs):
    """Refuse a tf-idf matrix without any non-zero weight (every term in every document: idf 0)."""
    if X.nnz == 0:
        raise RLSIError(f"nothing to learn: no term has a non-zero tf-idf weight in the {n_docs} document(s) "
                        f"(a term found in every document has idf 0); give more, and different, documents")
