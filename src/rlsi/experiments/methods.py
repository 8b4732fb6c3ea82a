"""The topic-modelling methods of the comparison and their parameter grids."""

from __future__ import annotations

from dataclasses import dataclass

from .._validation import check_choice
from ..errors import RLSIError
from ..models import BASELINES, BatchRLSI
from .defaults import DEFAULT_K_GRID, DEFAULT_LAMBDA1_GRID

__all__ = ["MethodSpec", "METHODS", "make_methods", "DEFAULT_GROUP_CLASSES", "DEFAULT_SHARED_SHARE"]


@dataclass
class MethodSpec:
    """A topic-modelling method: a display ``label``, a ``factory(**params) -> model`` and a grid
    (a list of parameter dicts, one per setting; see :func:`make_methods`)."""

    name: str
    label: str
    factory: object
    grid: list

    def __post_init__(self):
        if not self.grid:
            raise RLSIError(f"method {self.name!r} has an empty parameter grid")


def _rlsi_factory(topic_penalty, doc_penalty):
    def make(n_components, lambda1, lambda2=1.0, random_state=0, max_iter=100, n_jobs=None):
        # exact U-steps (topic_sweeps=None): the protocol's figures are measured with them, and the
        # default's inexact U-steps take other paths to other local optima
        return BatchRLSI(n_components, lambda1=lambda1, lambda2=lambda2, topic_penalty=topic_penalty,
                         doc_penalty=doc_penalty, max_iter=max_iter, random_state=random_state, n_jobs=n_jobs,
                         topic_sweeps=None)
    return make


#: Classes derived by k-means for the group methods (``classes="kmeans:P"``) unless a setting gives
#: ``n_classes``: about 130 documents per class on Cranfield, MED and CISI (1,033–1,460 documents), the
#: ratio of the paper's Web-I (29,999 documents in 226 classes).
DEFAULT_GROUP_CLASSES = 8
#: Share of the K topics of a class that GRLSI / GNMF make shared (Ks = round(share · K), Kc = K − Ks).
DEFAULT_SHARED_SHARE = 0.5


def _group_factory(name):
    """Group methods: ``n_components`` is K = Ks + Kc, the topics one class (and a query scored against
    its documents, §7.3) is represented with, as RLSI's K; CRLSI / CNMF have Kc = K and no shared topic.
    GRLSI / GNMF split K by ``shared_share`` (Ks = round(share · K)), or, with ``n_class_topics`` given,
    Kc = n_class_topics and Ks = K − Kc."""
    def make(n_components, lambda1=None, n_classes=DEFAULT_GROUP_CLASSES, shared_share=DEFAULT_SHARED_SHARE,
             n_class_topics=None, random_state=0, max_iter=None, n_jobs=None):
        from ..models.group import CNMF, CRLSI, GroupNMF, GroupRLSI

        K = int(n_components)
        if name in ("crlsi", "cnmf"):
            ks = 0
        elif n_class_topics is not None:
            ks = max(1, K - int(n_class_topics))
        else:
            ks = min(K - 1, max(1, int(round(shared_share * K))))
        common = dict(classes=f"kmeans:{int(n_classes)}", random_state=random_state, n_jobs=n_jobs)
        if max_iter is not None:
            common["max_iter"] = max_iter
        if name in ("grlsi", "crlsi"):
            cls = GroupRLSI if name == "grlsi" else CRLSI
            lam = 0.05 if lambda1 is None else lambda1  # one λ1 for shared and class topics: the protocol's
            return cls(ks, K - ks, lambda1=lam, lambda1_class=lam, **common)  # (benchmarks/results/group_ranking*)
        return (GroupNMF if name == "gnmf" else CNMF)(ks, K - ks, **common)
    return make


def _baseline_factory(name):
    def make(n_components, random_state=0, **params):
        return BASELINES[name](n_components, random_state=random_state, **params)
    return make


#: name -> (label, factory, uses λ₁). "rlsi" is RLSI (Uℓ1-Vℓ2); the other variants follow §8.2.1.
METHODS = {
    "rlsi": ("RLSI", _rlsi_factory("l1", "l2"), True),
    "rlsi-l2l1": ("RLSI (Ul2-Vl1)", _rlsi_factory("l2", "l1"), True),
    "rlsi-l1l1": ("RLSI (Ul1-Vl1)", _rlsi_factory("l1", "l1"), True),
    "rlsi-l2l2": ("RLSI (Ul2-Vl2)", _rlsi_factory("l2", "l2"), True),
    "lsi": ("LSI", _baseline_factory("lsi"), False),
    "plsi": ("PLSI", _baseline_factory("plsi"), False),
    "lda": ("LDA", _baseline_factory("lda"), False),
    "nmf": ("NMF", _baseline_factory("nmf"), False),
    # group models (SIGIR 2012 §7.3) on k-means classes; scored by the query-takes-the-document's-class rule
    "grlsi": ("GRLSI", _group_factory("grlsi"), True),
    "crlsi": ("CRLSI", _group_factory("crlsi"), True),
    "gnmf": ("GNMF", _group_factory("gnmf"), False),
    "cnmf": ("CNMF", _group_factory("cnmf"), False),
}


def make_methods(names, *, k_grid=DEFAULT_K_GRID, lambda1_grid=DEFAULT_LAMBDA1_GRID, fold_grid=None,
                 random_state=0, extra=None):
    """:class:`MethodSpec` list for method names (keys of :data:`METHODS`, a list or a comma-separated
    string), with the K and λ₁ grids.

    ``fold_grid``: optional folding-in λ values for the RLSI variants (``None`` = the model's own ridge
    with its λ₂, ``inf`` = projection; see :class:`~rlsi.retrieval.topic.RidgeFolding`), a grid dimension.
    ``extra``: optional ``{name: {param: value}}`` added to every setting of that method (for the group
    methods e.g. ``{"grlsi": {"n_classes": 16}}``: the number P of k-means classes).
    """
    if isinstance(names, str):
        names = [n for n in names.split(",") if n.strip()]
    specs = []
    for name in names:
        name = name.strip().lower()
        check_choice("method", name, METHODS)
        label, factory, uses_lambda = METHODS[name]
        base = {"random_state": random_state, **((extra or {}).get(name, {}))}
        if uses_lambda:
            folds = [None] if fold_grid is None else list(fold_grid)
            grid = [{"n_components": int(k), "lambda1": float(l1), **base,
                     **({} if fold_grid is None else {"fold_lambda2": f})}
                    for k in k_grid for l1 in lambda1_grid for f in folds]
        else:
            grid = [{"n_components": int(k), **base} for k in k_grid]
        specs.append(MethodSpec(name, label, factory, grid))
    return specs
