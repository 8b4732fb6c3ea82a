"""Group RLSI (Wang et al., SIGIR 2012, §4): shared topics plus per-class topics, learned class by class.

Objective (Eq. 3, with footnote 4's separate λ₁ for shared and class topics)::

    Σ_p ‖Dp − U0 Hp − Up Wp‖²_F + λ₁ˢ ‖U0‖₁ + Σ_p λ₁ᶜ ‖Up‖₁ + λ₂ Σ_p ‖Vp‖²_F      (Vpᵀ = [Hpᵀ, Wpᵀ])

Algorithm 1 alternates, each step an exact block minimisation (so the objective does not increase):

* U0 (Algorithm 2): one lasso per term row with ``S0 = Σ Hp Hpᵀ`` and ``R0 = D Hᵀ − Σ Up (Wp Hpᵀ)``;
* each Up (Algorithm 3): lasso rows with ``Sp = Wp Wpᵀ`` and ``Rp = Dp Wpᵀ − U0 (Hp Wpᵀ)``;
* each Vp (Algorithm 4): the ridge projection ``(ŨpᵀŨp + λ₂I)⁻¹ Ũpᵀ Dp``.

The rows are solved by the RLSI kernels (:func:`rlsi.models.steps.update_topics` over
:class:`~rlsi.models.group_base.ResidualR` providers, :func:`~rlsi.models.steps.update_doc_vectors`);
every Gram matrix the U-steps need (``Σ Hp Hpᵀ``, ``Wp Hpᵀ``, ``Wp Wpᵀ``) is a block of the Gram
``VpVpᵀ`` that the V-step of class p returns, so no extra pass over the document vectors is made. The
per-class updates are tasks mapped by the executor (serial: one class after the other, each kernel on all
cores; threads: several classes at once).

Regularization scale: with ``lambda1_scale="per_doc"`` (default, see :mod:`rlsi.models.regularization`)
both λ₁ of Eq. 3 are scaled by the whole corpus, ``λ₁ˢ = lambda1 · N/1000`` and ``λ₁ᶜ = lambda1_class ·
N/1000``, so GRLSI's topics are about as sparse as BatchRLSI's for the same value. A class's topics are
fitted on its Np documents only: at the shared topics' λ₁ they end empty or nearly (20 Newsgroups, 20
newsgroups as classes, λ₁ = 0.05: 42 of 100 class topics empty, a median of 1 term, on the 11,314 training
posts; 19 of 100 on 3,000), and scaled by Np itself they come out ~40x denser than RLSI's (a term's row of
``Rp = Dp Wpᵀ`` sums over the documents that contain it, for a class-specific term about the same in GRLSI as
in RLSI). So ``lambda1_class=None`` takes the geometric middle, ``lambda1 · √(Np/N)`` for class p: 1 of 100
class topics empty on the training posts (a median of 85 terms), none on 3,000 (152).
``"paper"`` uses the two values as the λ₁ of Eq. 3 (``lambda1_class=None``: ``lambda1``).

With one class, ``n_shared_topics=0`` (or ``n_class_topics=0``) it is :class:`rlsi.models.BatchRLSI`;
with ``n_shared_topics=0`` it is the class-only :class:`CRLSI` (independent RLSI per class).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._params import ITERATIONS, Anything, Choice, Integer, Real
from .._validation import check_random_state
from ..errors import RLSIError
from ..io import register
from . import steps
from .executor import SerialExecutor
from .group_base import GroupModel, ResidualR
from .group_nmf import CNMF, GroupNMF  # noqa: F401  (one import place for the group models)
from .penalties import PENALTIES, SolverSettings
from .penalties import penalty as get_penalty
from .regularization import INITS, LAMBDA1_SCALES, effective_lambda1
from .rlsi_policy import TUNING, TuningValue, resolve_tuning
from .seeding import check_doc_vectors, random_doc_vectors, seed_topics

__all__ = ["GroupRLSI", "CRLSI", "GroupNMF", "CNMF", "GroupRLSIProblem"]

_SERIAL = SerialExecutor()


def _scatter_rows(U, rows, n_rows):
    """CSR (n_rows x k) with the rows of the CSR ``U`` (len(rows) x k) placed at ``rows``, zero elsewhere."""
    counts = np.zeros(n_rows, dtype=np.int64)
    counts[rows] = np.diff(U.indptr)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return sp.csr_matrix((U.data, U.indices, indptr), shape=(n_rows, U.shape[1]))


class GroupRLSIProblem:
    """GRLSI as a problem for :func:`rlsi.models.driver.alternate` (documents grouped by class).

    Xs[p] : CSR (Np x M) the documents of class p; Ws[p] : (Np x (Ks + Kc_p)) their vectors [h, w];
    U0 : CSR (M x Ks) or None; Us[p] : CSR (M x Kc_p) or None (zero: Algorithm 1, line 2).
    """

    def __init__(self, Xs, Ws, n_shared, *, lambda1_shared, lambda1_class, lambda2, topic_penalty, doc_penalty,
                 inner_max_iter, inner_tol, full_rows=TUNING.class_rows_full):
        self.Xs, self.Ws, self.Ks = Xs, Ws, int(n_shared)
        self.M = Xs[0].shape[1]
        self.Kc = [W.shape[1] - self.Ks for W in Ws]
        self.Ds = [X.T.tocsr() for X in Xs]  # terms x documents of each class
        self.D = sp.hstack(self.Ds, format="csr") if self.Ks else None
        self.lambda1_shared, self.lambda1_class, self.lambda2 = lambda1_shared, lambda1_class, lambda2
        self.topic_penalty, self.doc_penalty = topic_penalty, doc_penalty
        self._topic_pen = get_penalty(topic_penalty, param="topic_penalty")
        self.inner = SolverSettings(inner_max_iter, inner_tol)
        self.x_sqnorms = [float(np.square(X.data, dtype=np.float64).sum()) for X in Xs]
        self.Gs = [steps.gram(W) for W in Ws]
        self.crosses = [0.0] * len(Xs)
        self.U0, self.Us = None, [None] * len(Xs)
        self.dtype = Xs[0].dtype
        self.topic_grams = [None] * len(Xs)  # ŨpᵀŨp of the last V-step, reused by the objective
        self.class_terms = [np.flatnonzero(np.diff(D.indptr)) for D in self.Ds]  # terms in class p's documents
        # above this share of the M terms a class's Up-step solves every row (a row subset costs copies)
        self.full_rows = float(full_rows)

    def _empty(self, k):
        return sp.csr_matrix((self.M, k), dtype=self.dtype)

    def u_step(self, executor):
        Ks, sweeps = self.Ks, 0
        if Ks:
            S0 = sum(G[:Ks, :Ks] for G in self.Gs)
            H = np.concatenate([W[:, :Ks] for W in self.Ws])
            with_class = [p for p, k in enumerate(self.Kc) if k and self.Us[p] is not None]
            U_other = C = None
            if with_class:  # Σ_p Up (Wp Hpᵀ) as one product of the stacked class topics
                U_other = sp.hstack([self.Us[p] for p in with_class], format="csr")
                C = np.concatenate([self.Gs[p][Ks:, :Ks] for p in with_class])
            self.U0, sweeps = steps.update_topics(
                ResidualR(self.D, H, U_other, C), self._topic_pen.prepared(S0, self.lambda1_shared), self.U0,
                self.inner, n_terms=self.M, executor=executor)

        shared_rows = np.flatnonzero(np.diff(self.U0.indptr)) if (Ks and self.U0 is not None) else None

        def class_task(p):
            G, W = self.Gs[p], self.Ws[p]
            # a term outside class p's documents and outside U0's support has Rp row 0, so its Up row is 0
            # (the minimiser of u Sp uᵀ + λ‖u‖ is 0): only the other rows are solved (P·M rows in all otherwise)
            rows = self.class_terms[p] if shared_rows is None else np.union1d(self.class_terms[p], shared_rows)
            if len(rows) > self.full_rows * self.M:
                r_rows = ResidualR(self.Ds[p], W[:, Ks:], self.U0, G[:Ks, Ks:])
                return steps.update_topics(r_rows, self._topic_pen.prepared(G[Ks:, Ks:], float(self.lambda1_class[p])),
                                           self.Us[p], self.inner, n_terms=self.M, executor=_SERIAL)
            U0 = self.U0[rows] if Ks and self.U0 is not None else None
            prev = self.Us[p][rows] if self.Us[p] is not None else None
            r_rows = ResidualR(self.Ds[p][rows], W[:, Ks:], U0, G[:Ks, Ks:])
            U, sweeps = steps.update_topics(r_rows, self._topic_pen.prepared(G[Ks:, Ks:], float(self.lambda1_class[p])),
                                            prev, self.inner, n_terms=len(rows), executor=_SERIAL)
            return _scatter_rows(U.tocsr(), rows, self.M), sweeps

        active = [p for p, k in enumerate(self.Kc) if k]
        for p, (U, s) in zip(active, executor.map(class_task, active)):
            self.Us[p] = U
            sweeps += s
        nnz = (self.U0.nnz if self.U0 is not None else 0) + sum(U.nnz for U in self.Us if U is not None)
        return {"nnz": nnz, "sweeps": sweeps}

    def class_topics(self, p):
        """Ũp = [U0, Up] as CSR (M x (Ks + Kc_p))."""
        parts = []
        if self.Ks:
            parts.append(self.U0 if self.U0 is not None else self._empty(self.Ks))
        if self.Kc[p]:
            parts.append(self.Us[p] if self.Us[p] is not None else self._empty(self.Kc[p]))
        return sp.hstack(parts, format="csr") if len(parts) > 1 else parts[0].tocsr()

    def _topic_gram(self, p, G0):
        """ŨpᵀŨp from blocks: ``[[U0ᵀU0, U0ᵀUp], [UpᵀU0, UpᵀUp]]`` with U0ᵀU0 (``G0``) formed once per
        V-step for all classes, instead of a Gram of the stacked Ũp per class."""
        Up = self.Us[p] if self.Kc[p] else None
        if Up is None and self.Kc[p]:
            Up = self._empty(self.Kc[p])
        if not self.Ks:
            return steps.topic_gram(Up)
        if Up is None:
            return G0
        cross = (self.U0.T @ Up).toarray()
        return np.block([[G0, cross], [cross.T, steps.topic_gram(Up)]])

    def v_step(self, executor):
        G0 = (steps.topic_gram(self.U0 if self.U0 is not None else self._empty(self.Ks)) if self.Ks else None)

        def class_task(p):
            TG = self._topic_gram(p, G0)
            W, cross, G = steps.update_doc_vectors(self.Xs[p], self.class_topics(p), penalty=self.doc_penalty,
                                                   lam=self.lambda2, W_prev=self.Ws[p], dtype=self.dtype,
                                                   return_gram=True, executor=_SERIAL, G=TG, settings=self.inner)
            return W, cross, G, TG

        for p, (W, cross, G, TG) in enumerate(executor.map(class_task, range(len(self.Xs)))):
            self.Ws[p], self.crosses[p], self.Gs[p], self.topic_grams[p] = W, cross, G, TG
        return {}

    def objective(self):
        """Eq. (3) from the V-step's statistics: Σ_p ‖Dp − ŨpVp‖² + penalties."""
        pen = get_penalty(self.topic_penalty)
        total = 0.0
        doc_pen = get_penalty(self.doc_penalty)
        for p in range(len(self.Xs)):
            # ‖Dp − ŨpVp‖² = ‖Dp‖² − 2 tr(ŨpᵀDpVpᵀ) + tr(ŨpᵀŨp VpVpᵀ), with the Grams of the last V-step
            TG = self.topic_grams[p]
            if TG is None:
                TG = steps.topic_gram(self.class_topics(p))
            total += (self.x_sqnorms[p] - 2.0 * self.crosses[p] + float(np.sum(TG * self.Gs[p]))
                      + self.lambda2 * doc_pen.value(self.Ws[p]))
            if self.Us[p] is not None:
                total += float(self.lambda1_class[p]) * pen.value(self.Us[p])
        if self.U0 is not None:
            total += self.lambda1_shared * pen.value(self.U0)
        return total

    @property
    def doc_vectors(self):
        """Each class's V (Np x (Ks + Kc_p))."""
        return self.Ws

    def components(self):
        """All topics as CSR (K x M): shared rows, then each class's rows in class order."""
        parts = []
        if self.Ks:
            parts.append(self.U0 if self.U0 is not None else self._empty(self.Ks))
        parts += [self.Us[p] if self.Us[p] is not None else self._empty(k) for p, k in enumerate(self.Kc) if k]
        return sp.hstack(parts, format="csr").T.tocsr()


@register("GroupRLSI")
class GroupRLSI(GroupModel):
    """Group Regularized Latent Semantic Indexing (see the module docstring).

    Parameters
    ----------
    n_shared_topics : int, default 10 — Ks, topics shared by all classes.
    n_class_topics : int or dict, default 5 — Kc, topics per class; a mapping class → Kc (footnote 3).
    lambda1 : float, default 0.05 — ℓ1 weight of the shared topics (scale: ``lambda1_scale``).
    lambda1_class : float or None — ℓ1 weight of the class topics (footnote 4; None: ``lambda1 · √(Np/N)`` for
        class p, its share of the documents, with ``lambda1_scale="per_doc"``, else ``lambda1``; the module
        docstring says why).
    lambda2 : float, default 1.0 — document regularization λ₂.
    topic_penalty, doc_penalty : default "l1", "l2" — as in :class:`rlsi.models.BatchRLSI`.
    lambda1_scale : {"per_doc", "paper"}; init : {"docs", "random"} — as in BatchRLSI, per class (shared
        seed documents are drawn from all documents, class seeds from the class).
    classes : None or "kmeans:P" — None: labels come from ``fit``'s y; "kmeans:P" derives P classes.
    max_iter, tol, inner_max_iter, inner_tol, random_state, n_jobs, executor, verbose, tuning : as in BatchRLSI;
        the executor maps the per-class tasks (and the U0 step's term blocks); the tuning's ``class_rows_full``
        is the share of the vocabulary above which a class's U-step solves every term row.

    Attributes
    ----------
    components_ : CSR (K, n_features), K = Ks + Σ Kc_p; ``topic_groups_`` names the rows ("shared",
        "class:<label>"). classes_ : (P,) labels; class_topics_ : (P,) Kc_p; n_shared_topics_ : Ks.
    objective_ : (n_iter_,) Eq. (3) after each outer iteration.
    lambda1_shared_effective_ : float; lambda1_class_effective_ : (P,) — the λ₁ used in Eq. (3).
    """

    _parameter_constraints = {
        "n_shared_topics": Integer(low=0),
        "n_class_topics": Anything(),  # int or mapping: checked by resolve_class_topics
        "lambda1": Real(low=0.0),
        "lambda1_class": Real(low=0.0, none=True),
        "lambda2": Real(low=0.0),
        "topic_penalty": Choice(PENALTIES),
        "doc_penalty": Choice(PENALTIES),
        "lambda1_scale": Choice(LAMBDA1_SCALES),
        "init": Choice(INITS),
        "classes": Anything(),
        "max_iter": ITERATIONS,
        "tol": Real(low=0.0),
        "inner_max_iter": Integer(low=1),
        "inner_tol": Real(low=0.0),
        "random_state": Anything(),
        "n_jobs": Integer(none=True, not_zero=True),
        "executor": Anything(),
        "tuning": TuningValue(),
    }
    _state_scalars = GroupModel._state_scalars + ("lambda1_shared_effective_",)
    _state_arrays = GroupModel._state_arrays + ("lambda1_class_effective_",)

    def __init__(self, n_shared_topics=10, n_class_topics=5, *, lambda1=0.05, lambda1_class=None, lambda2=1.0,
                 topic_penalty="l1", doc_penalty="l2", lambda1_scale="per_doc", init="docs", classes=None,
                 max_iter=100, tol=1e-4, inner_max_iter=100, inner_tol=1e-4, random_state=None, n_jobs=None,
                 executor=None, verbose=0, tuning=None):
        self.n_shared_topics = n_shared_topics
        self.n_class_topics = n_class_topics
        self.lambda1 = lambda1
        self.lambda1_class = lambda1_class
        self.lambda2 = lambda2
        self.topic_penalty = topic_penalty
        self.doc_penalty = doc_penalty
        self.lambda1_scale = lambda1_scale
        self.init = init
        self.classes = classes
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.inner_tol = inner_tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.executor = executor
        self.verbose = verbose
        self.tuning = tuning

    @classmethod
    def _params_from_state(cls, params):
        params = dict(params)
        if isinstance(params.get("tuning"), dict):
            params["tuning"] = resolve_tuning(params["tuning"])
        return params

    @property
    def _fold_penalty(self):
        return self.doc_penalty

    def _fold_lambda(self):
        return self.lambda2

    def _start(self, X, y, executor, V_init=None):
        """The classes, the λ₁ of Eq. 3, V₀ (``V_init``: n_samples x K, the layout of :meth:`transform`,
        replaces ``init`` with a given V₀, Algorithm 1 line 3) and the problem."""
        split = self._split(X, y)
        N = X.shape[0]
        lam_s = effective_lambda1(self.lambda1, self.lambda1_scale, N)
        lam_c_value = self.lambda1 if self.lambda1_class is None else self.lambda1_class
        lam_c = np.full(split.layout.n_classes, effective_lambda1(lam_c_value, self.lambda1_scale, N))
        if self.lambda1_class is None and self.lambda1_scale == "per_doc":  # a class's share of the documents
            lam_c *= np.sqrt(np.array([Xp.shape[0] for Xp in split.Xs], dtype=np.float64) / max(N, 1))
        self.lambda1_shared_effective_ = lam_s
        self.lambda1_class_effective_ = lam_c
        Ws = self._initial_vectors(X, split, V_init)
        problem = GroupRLSIProblem(split.Xs, Ws, split.layout.n_shared, lambda1_shared=lam_s, lambda1_class=lam_c,
                                   lambda2=self.lambda2, topic_penalty=self.topic_penalty,
                                   doc_penalty=self.doc_penalty, inner_max_iter=self.inner_max_iter,
                                   inner_tol=self.inner_tol, full_rows=resolve_tuning(self.tuning).class_rows_full)
        problem.split = split
        return problem

    def _initial_vectors(self, X, split, V_init):
        """V₀ of each class, (Np x (Ks + Kc_p)): given, Gaussian (paper), or the ridge projection of the
        class documents on seed documents (Ks drawn from all documents, Kc_p from the class), as BatchRLSI
        (:mod:`rlsi.models.seeding`)."""
        layout, Xs = split.layout, split.Xs
        P, Ks = layout.n_classes, layout.n_shared
        if V_init is not None:
            V_init = check_doc_vectors(V_init, (X.shape[0], layout.n_topics), X.dtype, columns="n_topics")
            return [np.ascontiguousarray(V_init[np.ix_(split.rows(p), layout.columns(p))]) for p in range(P)]
        rng = check_random_state(self.random_state)
        if self.init == "random":
            return [random_doc_vectors(rng, Xp.shape[0], Ks + int(layout.class_topics[p]),
                                       np.square(Xp.data, dtype=np.float64).sum(), X.dtype)
                    for p, Xp in enumerate(Xs)]
        seeds0 = seed_topics(X, Ks, rng) if Ks else None
        Ws = []
        for p, Xp in enumerate(Xs):
            parts = [seeds0] if Ks else []
            if layout.class_topics[p]:
                parts.append(seed_topics(Xp, int(layout.class_topics[p]), rng))
            U = sp.hstack(parts, format="csr") if len(parts) > 1 else parts[0]
            W, _ = steps.update_doc_vectors(Xp, U, penalty=self.doc_penalty, lam=self.lambda2,
                                            settings=SolverSettings(self.inner_max_iter, self.inner_tol), dtype=X.dtype)
            Ws.append(W)
        return Ws


@register("CRLSI")
class CRLSI(GroupRLSI):
    """Class-only RLSI: ``n_shared_topics=0``, an independent RLSI per class (the paper's CRLSI)."""

    def __init__(self, n_shared_topics=0, n_class_topics=5, *, lambda1=0.05, lambda1_class=None, lambda2=1.0,
                 topic_penalty="l1", doc_penalty="l2", lambda1_scale="per_doc", init="docs", classes=None,
                 max_iter=100, tol=1e-4, inner_max_iter=100, inner_tol=1e-4, random_state=None, n_jobs=None,
                 executor=None, verbose=0, tuning=None):
        super().__init__(n_shared_topics, n_class_topics, lambda1=lambda1, lambda1_class=lambda1_class,
                         lambda2=lambda2, topic_penalty=topic_penalty, doc_penalty=doc_penalty,
                         lambda1_scale=lambda1_scale, init=init, classes=classes, max_iter=max_iter, tol=tol,
                         inner_max_iter=inner_max_iter, inner_tol=inner_tol, random_state=random_state,
                         n_jobs=n_jobs, executor=executor, verbose=verbose, tuning=tuning)

    def _validate_params(self):
        super()._validate_params()
        if self.n_shared_topics != 0:
            raise RLSIError(f"CRLSI has no shared topics (n_shared_topics={self.n_shared_topics}); use "
                            f"GroupRLSI for shared plus class topics")
