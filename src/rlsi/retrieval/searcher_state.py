"""The saved form of a searcher's index: what :meth:`Searcher.save` writes as the ``index`` component and how
a saved one is read back, every field checked as untrusted input (a damaged or crafted folder ends in one
:class:`~rlsi.errors.ModelFormatError` line, never in a searcher that fails later)."""

from __future__ import annotations

import math

import numpy as np

from .._validation import check_choice, check_number
from ..errors import ModelFormatError, RLSIError
from .combine import NORMALIZERS
from .group_topic import ClassTopicMatcher
from .term import BM25, VSM
from .topic import TopicMatcher

__all__ = ["STATE_VERSION", "PARAM_NAMES", "TERM_MODELS", "searcher_state", "searcher_from_state",
           "params_from_state"]

STATE_VERSION = 1

#: Term-matching models a searcher can use.
TERM_MODELS = {"bm25": "Okapi BM25 on raw counts (k1, b)", "vsm": "cosine of tf-idf vectors"}


def searcher_state(searcher):
    """The saved state of a :class:`~rlsi.retrieval.searcher.Searcher`'s index, ``(meta, arrays)``: doc ids,
    term index and topic vectors (the model and vectorizer are saved alongside as their own components)."""
    if getattr(searcher, "doc_ids_", None) is None:
        raise RLSIError("the searcher has no index to save: call index(documents) first")
    t_meta, t_arrays = searcher.term_index_._to_state()
    arrays = {"doc_ids": searcher.doc_ids_}
    arrays.update({f"term_{k}": v for k, v in t_arrays.items()})
    meta = {"version": STATE_VERSION, "params": searcher.get_params(), "term": t_meta,
            "n_docs": int(len(searcher.doc_ids_)), "topic": None}
    if searcher.topic_index_ is not None:
        p_meta, p_arrays = searcher.topic_index_._to_state()
        meta["topic"] = p_meta
        arrays.update({f"topic_{k}": v for k, v in p_arrays.items()})
        meta["model_class"] = type(searcher.model).__name__ if searcher.model is not None else None
    return meta, arrays

def searcher_from_state(cls, meta, arrays):
    """A searcher of class ``cls`` rebuilt from :func:`searcher_state` output, checked as untrusted input."""
    if not isinstance(meta, dict) or meta.get("version") != STATE_VERSION:
        version = meta.get("version") if isinstance(meta, dict) else None
        raise ModelFormatError(f"Searcher state version {version!r} is not supported "
                               f"(expected {STATE_VERSION})")
    try:
        params = params_from_state(meta.get("params"))
    except (RLSIError, TypeError) as exc:
        raise ModelFormatError(f"damaged Searcher state: {' '.join(str(exc).split())}") from None
    s = cls(None, None, **params)
    term_meta = meta.get("term")
    term_cls = {"BM25": BM25, "VSM": VSM}.get(term_meta.get("class") if isinstance(term_meta, dict) else None)
    if term_cls is None or term_cls is not {"bm25": BM25, "vsm": VSM}[s.term_model]:
        raise ModelFormatError(f"the index's term model {str(term_meta)[:40]!r} does not match "
                               f"term_model={s.term_model!r}")
    s.term_index_ = term_cls._from_state(
        term_meta, {k[len("term_"):]: v for k, v in arrays.items() if k.startswith("term_")})
    ids = arrays.get("doc_ids")
    if not isinstance(ids, np.ndarray) or ids.ndim != 1 or ids.dtype.kind != "U":
        raise ModelFormatError("damaged Searcher state: doc_ids is not a 1-D array of text")
    s.doc_ids_ = ids.astype(str)
    n = meta.get("n_docs")
    if isinstance(n, bool) or not isinstance(n, int) or len(s.doc_ids_) != n or s.term_index_.n_docs_ != n:
        raise ModelFormatError(f"index sizes disagree: {len(s.doc_ids_)} ids, {s.term_index_.n_docs_} "
                               f"term rows, {str(n)[:20]} documents expected")
    if len(set(s.doc_ids_.tolist())) != n:
        raise ModelFormatError("damaged Searcher state: duplicate document ids")
    s.topic_index_ = None
    topic_meta = meta.get("topic")
    if topic_meta is not None:
        V = arrays.get("topic_doc_vectors")
        matcher = {"TopicMatcher": TopicMatcher, "ClassTopicMatcher": ClassTopicMatcher}.get(
            topic_meta.get("class") if isinstance(topic_meta, dict) else None)
        if (matcher is None or topic_meta.get("dtype") not in ("float64", "float32")
                or not isinstance(V, np.ndarray) or V.ndim != 2 or V.dtype.kind != "f" or V.shape[0] != n):
            raise ModelFormatError(f"damaged Searcher state: the topic index is not a float array of "
                                   f"{n} document vectors")
        s.topic_index_ = matcher._from_state(
            topic_meta, {k[len("topic_"):]: v for k, v in arrays.items() if k.startswith("topic_")})
        if s.topic_index_.n_docs_ != n:
            raise ModelFormatError(f"index has {s.topic_index_.n_docs_} topic vectors for {n} documents")
    s._doc_order_ = None
    return s


PARAM_NAMES = ("alpha", "term_model", "k1", "b", "topic_norm", "term_norm", "fold_lambda2", "dtype")


def params_from_state(params):
    """Constructor parameters of a saved searcher, each checked (RLSIError on a bad one)."""
    if not isinstance(params, dict) or set(params) != set(PARAM_NAMES):
        raise RLSIError(f"parameters {sorted(params) if isinstance(params, dict) else params!r} are not "
                        f"{list(PARAM_NAMES)}")
    params = dict(params)
    check_number("alpha", params["alpha"], low=0.0, high=1.0)
    check_choice("term_model", params["term_model"], TERM_MODELS)
    check_number("k1", params["k1"], low=0.0)
    check_number("b", params["b"], low=0.0, high=1.0)
    check_choice("topic_norm", params["topic_norm"], NORMALIZERS)
    check_choice("term_norm", params["term_norm"], NORMALIZERS)
    fold = params["fold_lambda2"]
    if fold == "inf":
        params["fold_lambda2"] = math.inf
    elif fold is not None:
        check_number("fold_lambda2", fold, low=0.0)
    if params["dtype"] not in ("float64", "float32"):
        raise RLSIError(f"dtype={str(params['dtype'])[:20]!r} must be 'float64' or 'float32'")
    params["dtype"] = np.dtype(params["dtype"]).type
    return params
