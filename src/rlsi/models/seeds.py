"""Seed words (guided topics): chosen (term, topic) pairs under a lighter ℓ1 penalty, and first topics drawn
from them.

``seed_terms`` gives groups of terms (a list of term lists, or a mapping name → terms); topic i (in order) is
seeded by group i, and a mapping's names become the topics' labels (``topic_names_``: one per topic, None for a
topic without a name — all of them for a list of groups, and a topic born in a stream). The topic penalty of
Eq. (1) becomes a weighted ℓ1 norm, lighter on the seeded pairs::

    P_w(U) = Σ_mk w_mk |u_mk|,    w_mk = 1 − seed_strength  for a term m of group k,  1 otherwise

so a seed term enters its topic once its correlation with the topic's documents passes (1 − seed_strength)·λ₁/2
instead of λ₁/2 (with the default 0.5: half the threshold). On 20 Newsgroups the strength matters little:
0.25, 0.5 and 0.9 put 7.6, 7.6 and 7.4 of the seeded topics' top-10 terms in their group's vocabulary, at
document AUC 0.756, 0.752 and 0.740 (benchmarks/results/seeds.md). The U-step separates by term rows: a row without
a seeded pair is the unweighted lasso and is solved as always (so a fit without seeds is the same code, bit for
bit); the few seeded rows are solved after it with their weights (:meth:`SeedTerms.solve`) by a change of
variables ``v_k = w_k u_k``, which turns the weighted lasso into the plain one of the same kernel
(:func:`rlsi.kernels.lasso.lasso_rows`) with ``S' = S ⊘ (w wᵀ)`` and ``r' = r ⊘ w`` (one K x K scaling per seeded
row). :mod:`rlsi.oracle.seeds` is the weighted step in plain numpy, as printed (the tests compare the two).

First topics. A seeded topic starts as the unit vector with equal weights on its group's terms (instead of a
random document): the first document vectors are the documents' projections on it, so the first U-step already
sees the documents that use the seed words (the same on every placement: the words, not the documents). The other
topics start as ``init`` says.

Where it applies. ℓ1 topics (``topic_penalty`` "l1" or "nonneg_l1"): ℓ2 topics give every term a weight in every
topic, so a lighter penalty on a few pairs selects nothing (refused with an error). Placements: the local one and
the device one (the seeded rows solved on the host: R's seeded rows and the topics' rows move, a few K-vectors per
iteration), for batch and online RLSI; the Dask placement refuses seeds.

Terms. Strings are looked up in ``feature_names`` (given to ``fit``, or to a stream's first ``partial_fit``: the
vectorizer's ``get_feature_names_out()``, or its term → column mapping; a stream resolves them once, at its first
mini-batch), integers are column ids. Terms not in the vocabulary are named in one :class:`SeedTermsWarning`; a
group with none of its terms in it is an error.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp

from .._warnings import user_stacklevel
from ..errors import RLSIError
from ..kernels.lasso import lasso_rows

__all__ = ["DEFAULT_SEED_STRENGTH", "SeedStrength", "SeedTerms", "SeedTermsValue", "SeedTermsWarning",
           "resolve_seed_terms", "seed_names"]

#: How much lighter the seeded pairs' ℓ1 penalty is (their λ₁ times 1 − seed_strength): measured on 20 Newsgroups
#: (benchmarks/results/seeds.md).
DEFAULT_SEED_STRENGTH = 0.5


class SeedTermsWarning(UserWarning):
    """Seed terms that are not in the vocabulary (all of them named in one warning)."""


def _groups(seed_terms):
    """``(names, groups)``: the names (a tuple, or None for a list of groups) and the groups as lists."""
    if isinstance(seed_terms, Mapping):
        return tuple(str(k) for k in seed_terms), [list(v) for v in seed_terms.values()]
    return None, [list(g) for g in seed_terms]


def seed_names(seed_terms):
    """The groups' names of a mapping ``seed_terms`` (None for a list, or None)."""
    return None if seed_terms is None else _groups(seed_terms)[0]


def _is_term(t):
    return isinstance(t, str) or (isinstance(t, numbers.Integral) and not isinstance(t, bool))


class SeedTermsValue:
    """The parameter constraint of ``seed_terms``: None, a list of term lists or a mapping name → term list, each
    term a string or a column id, no group empty."""

    def check(self, name, value):
        if value is None:
            return
        if isinstance(value, Mapping):
            if not all(isinstance(k, str) and k for k in value):
                raise RLSIError(f"{name}: every group name must be a non-empty string")
            labels, groups = [repr(k) for k in value], list(value.values())
        elif isinstance(value, (list, tuple)):
            labels, groups = [f"#{i}" for i in range(len(value))], list(value)
        else:
            raise RLSIError(f"{name} must be a list of term lists or a mapping name -> terms, got "
                            f"{type(value).__name__}")
        if not groups:
            raise RLSIError(f"{name} has no group; give at least one list of terms, or None")
        for label, group in zip(labels, groups):
            if not isinstance(group, (list, tuple)):
                raise RLSIError(f"{name}: group {label} must be a list of terms (strings or column ids), got "
                                f"{type(group).__name__}")
            if not group:
                raise RLSIError(f"{name}: group {label} is empty; give it at least one term")
            bad = [t for t in group if not _is_term(t)]
            if bad:
                raise RLSIError(f"{name}: group {label} holds {bad[0]!r}; terms are strings or column ids")


class SeedStrength:
    """The parameter constraint of ``seed_strength``: a number in [0, 1) (the seeded pairs' λ₁ is multiplied by
    1 − seed_strength, which must stay positive)."""

    def check(self, name, value):
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not 0.0 <= float(value) < 1.0:
            raise RLSIError(f"{name}={value!r} must be a number in [0, 1): the seeded pairs' λ1 is multiplied by "
                            f"1 - {name}")


def _lookup(feature_names):
    """term → column of ``feature_names`` (a sequence of terms, a mapping term → column, or a fitted vectorizer)."""
    if feature_names is None:
        return None
    if hasattr(feature_names, "get_feature_names_out"):
        feature_names = feature_names.get_feature_names_out()
    if isinstance(feature_names, Mapping):
        return {str(t): int(i) for t, i in feature_names.items()}
    return {str(t): i for i, t in enumerate(feature_names)}


@dataclass(frozen=True, eq=False)
class SeedTerms:
    """Seed groups resolved to column ids: ``groups[k]`` the terms (int64, sorted) of topic k, for the first
    ``len(groups)`` topics of ``n_components``; ``strength`` the seed strength (the module docstring)."""

    groups: tuple
    n_components: int
    strength: float
    names: tuple | None = None

    @property
    def rows(self):
        """The term rows holding a seeded pair (int64, sorted)."""
        return np.unique(np.concatenate(self.groups)).astype(np.int64)

    def weights(self):
        """The penalty weights of :attr:`rows` (len(rows) x K, float64): 1 − strength on the seeded pairs, else 1."""
        rows = self.rows
        w = np.ones((len(rows), self.n_components))
        for k, group in enumerate(self.groups):
            w[np.searchsorted(rows, group), k] = 1.0 - self.strength
        return w

    def labels(self):
        """The topics' labels (``topic_names_``, K of them): the group names for the seeded topics, None for the
        others (every one None when the groups are a list, without names)."""
        names = list(self.names) if self.names is not None else [None] * len(self.groups)
        return names + [None] * (self.n_components - len(names))

    def grown(self, n_components):
        """The same seeds on ``n_components`` topics (a topic born in a stream is unseeded: weight 1 everywhere)."""
        return replace(self, n_components=int(n_components))

    # ------------------------------------------------------------------ the start
    def indicator(self, M):
        """The seed words of each group as columns (M x G CSR, float64, 1 on a group's terms)."""
        cols = np.concatenate([np.full(len(g), k) for k, g in enumerate(self.groups)])
        rows = np.concatenate(self.groups)
        return sp.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(M, len(self.groups)))

    def first_topics(self, U0):
        """The first topics ``U0`` (M x K CSR, scipy or a device's) with the seeded ones replaced by the unit
        vectors with equal weights on their groups' terms. (Measured on 20 Newsgroups against the centroid of the
        documents that hold the words, ``Xᵀ X e_g``: 37 of 50 top terms in the groups' vocabularies against 22,
        for a document AUC 0.74-0.77 against 0.79-0.81; the words alone keep the topic on them, the centroid
        drifts to the documents' common words: benchmarks/results/seeds.md.)"""
        host = U0 if sp.issparse(U0) else U0.get()
        M = host.shape[0]
        seeded = self.indicator(M)
        seeded = seeded @ sp.diags(1.0 / np.sqrt(np.asarray(seeded.sum(axis=0)).ravel()))
        out = sp.hstack([seeded, sp.csr_matrix(host)[:, len(self.groups):]], format="csr").astype(host.dtype)
        return out if sp.issparse(U0) else type(U0)(out)

    def restart(self, U, topics):
        """U (M x K scipy CSR) with the seeded ``topics`` (dead: all-zero columns, indices below ``len(groups)``)
        back on their words, as :meth:`first_topics` starts them: a seeded topic whose words the stream has not
        brought yet waits on them (``reseed_dead``) instead of taking another theme's documents under its name."""
        topics = np.asarray(topics, dtype=np.int64)
        M, K = U.shape
        words = self.indicator(M).tocsc()[:, topics]
        words = words @ sp.diags(1.0 / np.sqrt(np.asarray(words.sum(axis=0)).ravel()))
        place = sp.csr_matrix((np.ones(len(topics)), (np.arange(len(topics)), topics)), shape=(len(topics), K))
        out = (U + (words @ place).astype(U.dtype)).tocsr()
        out.eliminate_zeros()
        return out

    # ------------------------------------------------------------------ the U-step's seeded rows
    def solve(self, R, S, lam, U0, settings, *, positive=False):
        """The seeded rows of a U-step: ``min_u uᵀSu − 2rᵀu + λ Σ_k w_k|u_k|`` for each row r of R (len(rows) x K,
        the rows :attr:`rows` of ``R = D W``) with its weights (:meth:`weights`), warm-started from U0 (same shape,
        or None). ``settings``: the step's :class:`rlsi.models.penalties.SolverSettings` (its work budget is not
        applied: a few rows). Returns U (len(rows) x K, float64)."""
        R = np.asarray(R, dtype=np.float64)
        S = np.asarray(S, dtype=np.float64)
        W = self.weights()
        out = np.zeros_like(R)
        for i in range(len(R)):
            w = W[i]
            v0 = None if U0 is None else (np.asarray(U0[i], dtype=np.float64) * w)[None]
            v, _ = lasso_rows((R[i] / w)[None], S / np.outer(w, w), v0, lam, max_iter=settings.max_iter,
                              tol=settings.tol, positive=positive)
            out[i] = v[0] / w
        return out

    def put_rows(self, U, values):
        """U (M x K, CSR or ndarray) with its rows :attr:`rows` set to ``values`` (len(rows) x K)."""
        rows = self.rows
        if isinstance(U, np.ndarray):
            U[rows] = values.astype(U.dtype, copy=False)
            return U
        U = sp.csr_matrix(U)
        mask = np.ones(U.shape[0])
        mask[rows] = 0.0
        new = sp.csr_matrix((values.ravel(), (np.repeat(rows, U.shape[1]), np.tile(np.arange(U.shape[1]), len(rows)))),
                            shape=U.shape)
        out = (sp.diags(mask) @ U + new).tocsr().astype(U.dtype)
        out.eliminate_zeros()
        out.sort_indices()
        return out

    def rows_of(self, U):
        """The rows :attr:`rows` of U (M x K, CSR or ndarray) as a dense float64 array."""
        part = U[self.rows]
        return np.asarray(part.toarray() if sp.issparse(part) else part, dtype=np.float64)

    def discount(self, U_rows):
        """``Σ_seeded (1 − w_mk)|u_mk|`` of the seeded rows ``U_rows`` (len(rows) x K): what the weighted penalty
        takes off the plain ℓ1 norm, ``P_w(U) = ‖U‖₁ − discount``."""
        return float(np.sum((1.0 - self.weights()) * np.abs(U_rows)))

    def step(self, U, R_rows, S, lam, settings, U_prev, *, positive=False):
        """U (M x K, CSR or ndarray) after a U-step with its seeded rows solved with their weights (R_rows: the
        rows :attr:`rows` of R; U_prev: the previous topics, the warm start, or None)."""
        U0 = None if U_prev is None else self.rows_of(U_prev)
        return self.put_rows(U, self.solve(R_rows, S, lam, U0, settings, positive=positive))


def resolve_seed_terms(seed_terms, n_components, n_features, feature_names=None, *, strength=DEFAULT_SEED_STRENGTH,
                       topic_penalty="l1"):
    """The :class:`SeedTerms` of ``seed_terms`` for a fit of ``n_components`` topics on ``n_features`` columns, or
    None. Strings are looked up in ``feature_names``; terms not found are named in one :class:`SeedTermsWarning`;
    errors: more groups than topics, a group with no term found, term strings without ``feature_names``, ℓ2
    topics."""
    if seed_terms is None:
        return None
    SeedTermsValue().check("seed_terms", seed_terms)
    names, groups = _groups(seed_terms)
    if topic_penalty not in ("l1", "nonneg_l1"):
        raise RLSIError(f"seed_terms needs l1 topics (topic_penalty 'l1' or 'nonneg_l1'); topic_penalty="
                        f"{topic_penalty!r} gives every term a weight in every topic, so a lighter penalty on a few "
                        f"(term, topic) pairs selects nothing")
    if len(groups) > n_components:
        raise RLSIError(f"seed_terms has {len(groups)} groups but n_components={n_components}; give at most one "
                        f"group per topic")
    lookup = _lookup(feature_names)
    if lookup is None and any(isinstance(t, str) for g in groups for t in g):
        raise RLSIError("seed_terms names terms but fit was given no feature_names; pass "
                        "fit(X, feature_names=vectorizer.get_feature_names_out()) or give column ids")
    missing, resolved = [], []
    for i, group in enumerate(groups):
        ids = []
        for t in group:
            col = lookup.get(t) if isinstance(t, str) else int(t)
            if col is None or not 0 <= col < n_features:
                missing.append(t)
            else:
                ids.append(col)
        if not ids:
            label = repr(names[i]) if names else f"#{i}"
            raise RLSIError(f"seed_terms group {label} has no term in the vocabulary ({', '.join(map(repr, group))})")
        resolved.append(np.unique(np.asarray(ids, dtype=np.int64)))
    if missing:
        warnings.warn(f"{len(missing)} seed term(s) not in the vocabulary, left out: "
                      f"{', '.join(map(repr, missing))}", SeedTermsWarning, stacklevel=user_stacklevel())
    return SeedTerms(tuple(resolved), int(n_components), float(strength), names)


#: The placements whose batch fits solve the seeded rows (their problems take ``spec.seeds``).
SEEDED_PLACEMENTS = ("local", "device")


def seeds_of(model, n_features, feature_names, placement=None):
    """The :class:`SeedTerms` of ``model``'s ``seed_terms`` and ``seed_strength`` for a fit on ``n_features``
    columns (None without seed words); sets the fitted ``seed_terms_`` (the groups' column ids) and
    ``topic_names_`` (the labels: one per topic, None for a topic without a name), or removes them.
    ``placement``: the fit's, checked to take seeds."""
    for name in ("seed_terms_", "topic_names_"):
        model.__dict__.pop(name, None)
    seeds = resolve_seed_terms(model.seed_terms, model.n_components, n_features, feature_names,
                               strength=model.seed_strength, topic_penalty=model.topic_penalty)
    if seeds is None:
        return None
    if placement is not None and placement.name not in SEEDED_PLACEMENTS:
        raise RLSIError(f"seed_terms is not available on the {placement.name} placement; fit on "
                        f"{' or '.join(SEEDED_PLACEMENTS)}")
    model.seed_terms_ = [[int(i) for i in g] for g in seeds.groups]
    model.topic_names_ = seeds.labels()
    return seeds


def saved_seeds(model):
    """The :class:`SeedTerms` of a fitted (or loaded) ``model``'s ``seed_terms_``, or None."""
    groups = getattr(model, "seed_terms_", None)
    if groups is None:
        return None
    return SeedTerms(tuple(np.asarray(g, dtype=np.int64) for g in groups), _topics_now(model),
                     float(model.seed_strength), seed_names(model.seed_terms))


def _topics_now(model):
    """The model's topics now: ``n_components_`` of a stream that topics were born in, else ``n_components``."""
    return int(getattr(model, "n_components_", model.n_components))


def check_saved(model):
    """Check a loaded model's ``seed_terms_`` and ``topic_names_`` (untrusted input): RLSIError if damaged."""
    K, M = _topics_now(model), int(model.n_features_in_)
    groups = getattr(model, "seed_terms_", None)
    if groups is not None and (not isinstance(groups, list) or len(groups) > K or not all(
            isinstance(g, list) and g and all(isinstance(i, int) and not isinstance(i, bool) and 0 <= i < M
                                              for i in g) for g in groups)):
        raise RLSIError(f"seed_terms_ is not a list of at most {K} non-empty lists of column ids below {M}")
    names = getattr(model, "topic_names_", None)
    if names is not None and (not isinstance(names, list) or len(names) != K
                              or not all(n is None or isinstance(n, str) for n in names)):
        raise RLSIError(f"topic_names_ is not a list of {K} labels (strings or null)")
