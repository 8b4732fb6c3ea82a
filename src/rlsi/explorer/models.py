"""What the explorer reads from a fitted model of any kind rlsi saves.

Every topic model of rlsi has ``components_`` (topics x terms) and a folding-in ``transform``; the kinds
differ in what else they record, and this module is the one place that knows it:

* topic **groups** (``topic_groups``): one group ``topics`` for most models; GroupRLSI / GroupNMF / CRLSI /
  CNMF have ``shared`` and one ``class:<label>`` group per class (the class names are shown);
* the **objective per iteration**: ``objective_`` (batch RLSI and its Dask learner, the group models,
  batch STC / MedSTC), PLSI's log-likelihood ``loglik_``; online learners and the LSI / NMF / LDA
  baselines keep none;
* the **input** the model folds in: tf-idf, or word counts for STC / MedSTC (``input_kind``);
* what the weights are: signed (RLSI, LSI), non-negative (NMF, STC, the group NMF) or per-topic
  probabilities (LDA, PLSI: rows that sum to 1).

Topic ids are the rows of ``components_`` as the model has them: T1 is row 0, as ``rlsi topics`` prints.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ..errors import RLSIError

_OBJECTIVES = (("objective_", "objective", "lower is better"),
               ("loglik_", "log-likelihood", "higher is better"))
#: Parameters shown in the page's header when the model has them.
_SHOWN_PARAMS = ("lambda1", "lambda2", "lambda1_effective_", "lambda1_class", "topic_penalty", "doc_penalty",
                 "rho", "batch_size", "n_iter_", "n_docs_seen_", "max_iter", "lam", "gamma", "C")


def check_model(model):
    """The model's ``components_`` (RLSIError naming the object when it has none)."""
    comp = getattr(model, "components_", None)
    if comp is None:
        raise RLSIError(f"{type(model).__name__} has no topics (components_): give a fitted topic model")
    return comp


def topic_groups(model, n_topics):
    """``[{"name", "label", "start", "stop"}]``: the named groups of topics, in row order."""
    groups = None
    try:
        groups = model.topic_groups
    except (AttributeError, RLSIError):
        pass
    if not groups:
        groups = {"topics": (0, n_topics)}
    out = []
    for name, (a, b) in sorted(groups.items(), key=lambda kv: kv[1][0]):
        label = f"class {name[len('class:'):]}" if name.startswith("class:") else (
            "shared topics" if name == "shared" else "topics")
        out.append({"name": str(name), "label": label, "start": int(a), "stop": int(b)})
    return out


def objective_history(model):
    """``{"name", "note", "values"}`` of the value the fit recorded per iteration, or None."""
    for attr, name, note in _OBJECTIVES:
        values = getattr(model, attr, None)
        if values is None:
            continue
        values = np.asarray(values, dtype=np.float64).ravel()
        if values.size:
            return {"name": name, "note": note,
                    "values": [float(f"{v:.6g}") if math.isfinite(v) else None for v in values]}
    return None


def weight_kind(components):
    """``"signed"``, ``"non-negative"`` or ``"probabilities"`` (non-negative rows summing to 1)."""
    data = components.data if sp.issparse(components) else np.asarray(components)
    if data.size and data.min() < 0:
        return "signed"
    sums = np.asarray(components.sum(axis=1)).ravel()
    live = sums > 0
    if live.any() and np.allclose(sums[live], 1.0, rtol=1e-6, atol=1e-6):
        return "probabilities"
    return "non-negative"


def model_facts(model):
    """A JSON-ready description of the model for the page's header and notes."""
    comp = check_model(model)
    K, M = comp.shape
    params = {}
    for name in _SHOWN_PARAMS:
        value = getattr(model, name, None)
        if isinstance(value, (bool, np.bool_)) or value is None:
            continue
        if isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(float(value)):
            params[name] = float(f"{float(value):.6g}") if isinstance(value, (float, np.floating)) else int(value)
        elif isinstance(value, str):
            params[name] = value
    classes = getattr(model, "classes_", None)
    return {"kind": type(model).__name__, "n_topics": int(K), "n_terms": int(M),
            "weights": weight_kind(comp), "input": getattr(model, "input_kind", "tfidf"),
            "groups": topic_groups(model, K), "objective": objective_history(model), "params": params,
            "classes": [str(c) for c in classes] if classes is not None else None}


def model_input(model, vectorizer, texts):
    """The matrix ``model`` folds in for ``texts``: tf-idf, or word counts for a model whose
    ``input_kind`` is ``"counts"`` (STC, MedSTC)."""
    if vectorizer is None:
        raise RLSIError("documents given as text need the model's vectorizer (vectorizer=...), or give X")
    if getattr(model, "input_kind", "tfidf") == "counts":
        if not hasattr(vectorizer, "transform_counts"):
            raise RLSIError(f"{type(model).__name__} folds in word counts; the vectorizer has no transform_counts")
        return vectorizer.transform_counts(texts)
    return vectorizer.transform(texts)


def document_vectors(model, X, y=None):
    """``model.transform(X)`` (with the class labels ``y`` for a group model when given) as a dense array."""
    if y is not None:
        if not hasattr(model, "predict") or not getattr(model, "topic_groups_", None):
            raise RLSIError(f"labels are used by the group models; {type(model).__name__} takes none")
        V = model.transform(X, y)
    else:
        V = model.transform(X)
    return V.toarray() if sp.issparse(V) else np.asarray(V, dtype=np.float64)
