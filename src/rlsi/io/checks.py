"""Checks of loaded components, whatever their class: fitted arrays, parameters, and agreement between
the components of one model directory.

The per-array checks of :mod:`rlsi.io.safety` make every array safe to index; these make the *objects*
safe to use: a class's ``_from_state`` may rebuild attributes in its own way, so the attributes the
numerical code relies on are checked again after it (``components_`` finite, well-formed and of the
shape the estimator announces), the estimator's own parameter validation is run when it has one, and
the vectorizer, the topic model and the search index of a directory must agree on the number of terms
(otherwise every transform fails later with a message that blames the user's input).
"""

from __future__ import annotations

import inspect
import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from ..errors import ModelFormatError
from .safety import check_csr, check_float_values

__all__ = ["check_loaded", "validate_params", "term_counts", "check_components_agree", "check_role"]

# Zero-argument parameter validators, by the names the estimators of this package use (the first found
# runs). scikit-learn's own ``BaseEstimator._validate_params`` expects scikit-learn's constraint format
# and is skipped.
_VALIDATORS = ("_validate_params_all", "_validate_params", "_validate_common")


def _one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _check_matrix_attr(value, where):
    if sp.issparse(value):
        if value.format != "csr":
            raise ModelFormatError(f"{where} is a {value.format} matrix, expected CSR")
        check_csr(value.data, value.indices, value.indptr, value.shape, where)
        check_float_values(value.data, where)
    elif isinstance(value, np.ndarray):
        if value.dtype.kind != "f" or value.dtype.itemsize not in (4, 8):
            raise ModelFormatError(f"{where} has dtype {value.dtype}, expected float32 or float64")
        check_float_values(value, where)
    else:
        raise ModelFormatError(f"{where} is a {type(value).__name__}, expected a matrix")
    if value.ndim != 2:
        raise ModelFormatError(f"{where} has {value.ndim} dimensions, expected 2")


def check_loaded(obj, where):
    """Check a freshly loaded component (raises ModelFormatError naming ``where``)."""
    comps = getattr(obj, "components_", None) if "components_" in getattr(obj, "__dict__", {}) else None
    if comps is not None:
        _check_matrix_attr(comps, f"{where}: components_")
        n_topics, n_terms = comps.shape
        n_in = getattr(obj, "n_features_in_", None)
        if n_in is not None and (not isinstance(n_in, numbers.Integral) or isinstance(n_in, bool)
                                 or int(n_in) != n_terms):
            raise ModelFormatError(f"{where} is damaged: n_features_in_={str(n_in)[:20]} but components_ has "
                                   f"{n_terms} columns")
        k = getattr(obj, "n_components_", getattr(obj, "n_components", None))  # topics now (grown in a stream)
        if isinstance(k, numbers.Integral) and not isinstance(k, bool) and int(k) != n_topics:
            raise ModelFormatError(f"{where} is damaged: n_components={k} but components_ has {n_topics} rows")
    _check_group_layout(obj, where)
    if getattr(type(obj), "nonnegative", False) and comps is not None:
        data = comps.data if sp.issparse(comps) else comps
        if data.size and float(np.min(data)) < 0:
            raise ModelFormatError(f"{where} is damaged: a non-negative model ({type(obj).__name__}) has negative "
                                   f"topic weights")
    try:
        validate_params(obj)
    except Exception as exc:  # an invalid saved parameter: the file is damaged, not the user's input
        raise ModelFormatError(f"{where} is damaged: {_one_line(exc)}") from None
    inner = getattr(obj, "__dict__", {}).get("model")  # a wrapper (RidgeFolding) rebuilt its model itself
    if inner is not None and inner is not obj and "components_" in getattr(inner, "__dict__", {}):
        check_loaded(inner, f"{where} (wrapped {type(inner).__name__})")


#: The classes each well-known component name may hold (a ``model`` holds any class but these).
_ROLES = {"vectorizer": {"TfidfVectorizer", "StreamingTfidf"}, "index": {"Searcher"}, "matrix": {"CorpusMatrix"},
          "state": {"DistributedArrays"}, "doc_vectors": {"DistributedArrays"}}
_NOT_MODELS = {"TfidfVectorizer", "StreamingTfidf", "Searcher", "CorpusMatrix", "DistributedArrays",
               "TopicStatistics"}


def check_role(name, class_name, where):
    """A component's class must suit its name: the commands call a ``model``'s transform, a ``vectorizer``'s
    tokenizer, an ``index``'s search (ModelFormatError naming both otherwise)."""
    allowed = _ROLES.get(name)
    if allowed is not None and class_name not in allowed:
        raise ModelFormatError(f"{where} is damaged: a {name!r} component must be a {' or '.join(sorted(allowed))}, "
                               f"not a {class_name}")
    if name == "model" and class_name in _NOT_MODELS:
        raise ModelFormatError(f"{where} is damaged: the 'model' component is a {class_name}, not a topic model")


def _check_group_layout(obj, where):
    """A model with classes (GRLSI, GNMF, CRLSI, CNMF): unique sorted classes, and the topic groups it
    reports (``topic_groups_``, used by ``rlsi topics``) are the columns its classes own (used by
    ``transform`` and search), so that every command reads the same topics of a class."""
    state = getattr(obj, "__dict__", {})
    if "classes_" not in state or "class_topics_" not in state or not callable(getattr(obj, "_layout", None)):
        return
    classes = np.asarray(state["classes_"])
    if classes.ndim != 1:
        raise ModelFormatError(f"{where} is damaged: classes_ is not a list of labels")
    ordered = np.unique(classes)
    if len(ordered) != len(classes):
        raise ModelFormatError(f"{where} is damaged: classes_ repeats a class")
    if not (ordered == classes).all():
        raise ModelFormatError(f"{where} is damaged: classes_ is not sorted")
    counts = np.asarray(state["class_topics_"])
    if counts.dtype.kind not in "iu" or (counts.size and int(counts.min()) < 0):
        raise ModelFormatError(f"{where} is damaged: class_topics_ must be non-negative topic counts")
    groups = state.get("topic_groups_")
    if groups is None:
        return
    try:
        expected = {k: tuple(int(x) for x in v) for k, v in obj._layout().groups().items()}
        given = {k: tuple(int(x) for x in v) for k, v in dict(groups).items()}
    except (TypeError, ValueError) as exc:
        raise ModelFormatError(f"{where} is damaged: topic_groups_ is not a table of topic ranges "
                               f"({_one_line(exc)})") from None
    if given != expected:
        raise ModelFormatError(f"{where} is damaged: topic_groups_ {_short(given)} disagrees with the topics its "
                               f"classes own {_short(expected)}")


def _short(value, n=80) -> str:
    text = repr(value)
    return text if len(text) <= n else text[: n - 3] + "..."


def validate_params(obj):
    """Run the estimator's own zero-argument parameter validation, if it has one (see ``_VALIDATORS``).

    Used on loaded components and by the command line to check options before any work."""
    for name in _VALIDATORS:
        defined = getattr(type(obj), name, None)  # on the class: not through a wrapper's __getattr__
        if defined is None or not callable(defined) or defined is getattr(BaseEstimator, name, object()):
            continue
        fn = getattr(obj, name)
        try:
            required = [p for p in inspect.signature(fn).parameters.values()
                        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        except (TypeError, ValueError):
            continue
        if required:
            continue
        fn()
        return


def _n_terms(name, obj):
    """The number of term columns a component works with, or None if it has no notion of terms."""
    if name == "vectorizer" or hasattr(obj, "vocabulary_"):
        vocab = getattr(obj, "vocabulary_", None)
        return len(vocab) if vocab is not None else None
    try:
        comps = getattr(obj, "components_", None)  # also through a wrapper's __getattr__
    except Exception:  # a property of an unfitted object
        comps = None
    if comps is not None and getattr(comps, "ndim", 0) == 2:
        return int(comps.shape[1])
    n = getattr(type(obj), "n_terms_", None)
    if isinstance(n, property):
        try:
            return int(obj.n_terms_)
        except Exception:  # not indexed yet
            return None
    return None


def term_counts(components) -> dict:
    """``{name: number of terms}`` for the components that have a vocabulary, topics or a term index."""
    counts = {}
    for name, obj in components.items():
        n = _n_terms(name, obj)
        if n is not None:
            counts[name] = n
    return counts


def check_components_agree(components, where, error=ModelFormatError, damaged=True):
    """The vectorizer, the model and the index of one directory must span the same terms."""
    counts = term_counts(components)
    if len(set(counts.values())) > 1:
        listed = ", ".join(f"{name} {n}" for name, n in counts.items())
        if damaged:
            raise error(f"{where} is damaged: its components disagree on the number of terms ({listed}); "
                        f"they must come from the same fit")
        raise error(f"{where}: the components disagree on the number of terms ({listed}); save a model "
                    f"with the vectorizer it was fitted with")
