"""Helpers shared by the sub-commands: argument groups, model directories, output checks and files.

Every command checks its inputs and where its output goes before any work (:mod:`rlsi.cli._output`), and
writes through :mod:`rlsi.io.atomic` (whole or not at all). Like every module of :mod:`rlsi.cli` it imports
the library only inside the functions that run a command (:mod:`rlsi.cli._choices`).
"""

from __future__ import annotations

import argparse
import math

from ..errors import RLSIError
from ._choices import (DEVICES, FEATURES, INITS, LAMBDA1_SCALES, PENALTIES, READING, REPRESENTATIONS,
                       TOPIC_SWEEPS)
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
    if not math.isfinite(value) or value < 0:
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
    import numpy as np

    from ..text import TfidfVectorizer

    return TfidfVectorizer(stop_words=None if args.no_stop_words else "english",
                           stemmer="english" if args.stem else None, min_df=args.min_df,
                           norm=None if args.no_norm else "l2",
                           dtype=np.dtype(args.dtype).type)


def reading(texts, args, desc="vectorizing"):
    """``texts`` with a progress bar in documents/s while a vectorizer reads them (unless ``-q``)."""
    from .._progress import progress_iter

    return progress_iter(texts, desc, verbose=not getattr(args, "quiet", False))


def text_fields(args):
    fields = tuple(f.strip() for f in args.text_fields.split(",") if f.strip())
    if not fields:
        raise RLSIError("--text-fields names no field")
    return fields


def add_model_arguments(parser):
    """Options of the RLSI objective shared by batch and online learning."""
    g = parser.add_argument_group("model")
    g.add_argument("-k", "--topics", type=_bounds.topics, default=20, help="number of topics K (default: 20)")
    g.add_argument("--lambda1", type=non_negative_float, default=READING[0],
                   help=f"topic regularization λ1 (default: {READING[0]:g} per 1000 documents, topics of tens to "
                        "hundreds of terms to read; larger is sparser; see --lambda1-scale)")
    g.add_argument("--lambda2", type=non_negative_float, default=READING[1],
                   help=f"document regularization λ2 (default: {READING[1]:g}, as in the paper; for document "
                        f"vectors made to be features, as the Python estimators' defaults: --lambda1 "
                        f"{FEATURES[0]:g} --lambda2 {FEATURES[1]:g})")
    g.add_argument("--lambda1-scale", choices=LAMBDA1_SCALES, default="per_doc",
                   help="per_doc: λ1 is per 1000 documents (size-independent, default); "
                        "paper: λ1 of Eq. (1) as in the TOIS paper (its λ1=0.5 suits ~30k documents)")
    g.add_argument("--topic-penalty", choices=PENALTIES, default="l1", help="penalty on topics U")
    g.add_argument("--doc-penalty", choices=PENALTIES, default="l2", help="penalty on documents V")
    g.add_argument("--seed", type=_bounds.seed, default=0, help="random seed in [0, 2^32 - 1] (default: 0)")
    g.add_argument("--jobs", type=jobs_count, default=None, help="threads (default: all cores)")
    g.add_argument("--seed-terms", type=seed_terms_file, default=None, metavar="FILE.json",
                   help="seed words (guided topics): a JSON list of term lists, or an object name -> term list "
                        "(the names label the topics); topic i starts on group i's words, whose l1 penalty in it "
                        "is lighter (docs/learners.md)")
    g.add_argument("--seed-strength", type=float, default=None, metavar="S",
                   help="with --seed-terms: the seed pairs' lambda1 is multiplied by 1 - S, S in [0, 1) "
                        "(default: 0.5)")


def seed_terms_file(path):
    """``--seed-terms FILE.json``: the JSON value of the file (a list of term lists or an object name -> terms;
    the learner checks and maps it: :mod:`rlsi.models.seeds`)."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise argparse.ArgumentTypeError(f"{path} is not JSON ({exc})") from None


def seed_params(args):
    """``seed_terms`` and ``seed_strength`` of the command line (only those given)."""
    params = {}
    if getattr(args, "seed_terms", None) is not None:
        params["seed_terms"] = args.seed_terms
    if getattr(args, "seed_strength", None) is not None:
        params["seed_strength"] = args.seed_strength
    return params


def fit_vocabulary(model, vectorizer):
    """The keywords of ``model.fit`` that name X's columns (``feature_names``), for a model with seed words."""
    if getattr(model, "seed_terms", None) is None or vectorizer is None:
        return {}
    return {"feature_names": vectorizer.get_feature_names_out()}


def add_batch_arguments(parser):
    g = parser.add_argument_group("batch learning")
    g.add_argument("--max-iter", type=_bounds.max_iter, default=100, help="outer iterations (default: 100)")
    g.add_argument("--tol", type=non_negative_float, default=1e-4,
                   help="stop when the objective improves by less than this share (default: 1e-4)")
    g.add_argument("--init", choices=INITS, default="docs", help="initialization (default: docs)")
    g.add_argument("--terms-per-topic", type=positive_int, default=None, metavar="N",
                   help="ask for sparsity instead of λ1: search the λ1 that gives about N terms per topic "
                        "(the λ1 found is printed; --lambda1 is then ignored)")
    g.add_argument("--topic-representation", choices=REPRESENTATIONS, default="auto",
                   help="how the fit holds the topics: auto (sparse, dense above 5%% non-zero; default), "
                        "sparse or dense; the result is the same")
    # no stored default: batch and online fits take the learner's own (TOPIC_SWEEPS) when it is absent
    g.add_argument("--topic-sweeps", type=topic_sweeps, default=argparse.SUPPRESS, metavar="N|exact",
                   help=f"coordinate-descent sweeps per term row in each U-step after the first (default: "
                        f"{TOPIC_SWEEPS}, an inexact U-step that still lowers the objective); 'exact' solves "
                        "every U-step to tolerance, as the paper's Algorithms 1 and 4")


def add_device_arguments(parser):
    """``--device``: where BatchRLSI / OnlineRLSI run (:mod:`rlsi.gpu`; docs/gpu.md)."""
    g = parser.add_argument_group("device")
    g.add_argument("--device", choices=DEVICES, default=None, metavar="DEVICE",
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
    from ..models.batch import BatchRLSI

    params = dict(n_components=args.topics, lambda1_scale=args.lambda1_scale,
                  topic_penalty=args.topic_penalty, doc_penalty=args.doc_penalty, max_iter=args.max_iter,
                  tol=args.tol, init=args.init, random_state=args.seed, n_jobs=args.jobs,
                  target_terms_per_topic=getattr(args, "terms_per_topic", None),
                  topic_representation=getattr(args, "topic_representation", "auto"),
                  topic_sweeps=getattr(args, "topic_sweeps", TOPIC_SWEEPS), device=device_from_args(args),
                  verbose=0 if quiet else 1, **regularization_from_args(args), **seed_params(args))
    return checked(BatchRLSI(**params))


def regularization_from_args(args):
    """``lambda1`` and ``lambda2`` of the command line (their defaults: :data:`rlsi.cli._choices.READING`)."""
    return {name: getattr(args, name) for name in ("lambda1", "lambda2") if getattr(args, name, None) is not None}


def checked(model):
    """The estimator after its own parameter validation (so that options fail before any work)."""
    from ..io.checks import validate_params

    validate_params(model)
    return model


def load_model_dir(path):
    """Return ``(model, vectorizer, bundle)`` from a directory written by ``rlsi fit``."""
    from .. import io

    bundle = io.load(path)
    if "model" not in bundle:
        raise RLSIError(f"{path} holds no topic model (components: {sorted(bundle)})")
    return bundle["model"], bundle.get("vectorizer"), bundle


def write_text_atomic(path, text):
    """Write ``text`` to ``path`` whole or not at all (:func:`rlsi.io.atomic.write_text`)."""
    from .. import io

    io.write_text(path, text)


def save_npy_atomic(path, array):
    """Save ``array`` as ``.npy`` whole or not at all (:func:`rlsi.io.atomic.save_npy`)."""
    from .. import io

    io.save_npy(path, array)


def check_learnable(X, n_docs):
    """Refuse a tf-idf matrix without any non-zero weight (every term in every document: idf 0)."""
    if X.nnz == 0:
        raise RLSIError(f"nothing to learn: no term has a non-zero tf-idf weight in the {n_docs} document(s) "
                        f"(a term found in every document has idf 0); give more, and different, documents")
