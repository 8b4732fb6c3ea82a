"""Group NMF (Wang et al., SIGIR 2012, §5): non-negative shared plus per-class topics, Algorithm 5.

Objective (Eq. 9): ``Σ_p ‖Dp − U0 Hp − Up Wp‖²_F`` with U0, Up, Vp ≥ 0. Multiplicative updates
(Algorithm 5; ∘ and the fraction entry-wise)::

    U0 ← U0 ∘ Σ Dp Hpᵀ / (U0 Σ Hp Hpᵀ + Σ Up Wp Hpᵀ)
    Up ← Up ∘ Dp Wpᵀ / (Up Wp Wpᵀ + U0 Hp Wpᵀ)
    Vp ← Vp ∘ Ũpᵀ Dp / (Ũpᵀ Ũp Vp)

each of which does not increase the objective (Proposition 1; Lee & Seung for Vp). The Gram blocks
``Σ HpHpᵀ``, ``WpHpᵀ``, ``WpWpᵀ`` are blocks of ``VpVpᵀ`` kept from the V-step, as in GRLSI. A zero
denominator is replaced by float32's eps, as scikit-learn's ``mu`` solver does, so with one class this is
exactly scikit-learn's ``NMF(solver="mu")`` on ``Xᵀ`` (topics first, then documents).

Initialization (Algorithm 5, lines 1–4): with ``a = sqrt(mean(X) / K)`` (K all topics) and the
generator of ``random_state``: ``U0 = a·|N(0,1)|`` (M x Ks), then per class in class order
``Up = a·|N(0,1)|`` (M x Kc_p) and ``Vpᵀ = a·|N(0,1)|`` (Np x (Ks + Kc_p)) — scikit-learn's "random" scale.

Folding-in (Eq. 10): non-negative least squares ``min_{v≥0} ‖d − Ũp v‖²`` by coordinate descent (the
``"nonneg_l2"`` penalty with λ = 0), i.e. the exact minimiser, not a run of multiplicative updates. The
vectors of the last update are only close to it, so ``fit_transform`` folds the training documents in again
on their classes' final topics: ``fit_transform(X, y)`` equals ``transform(X, y)``, and reconstructs the
training documents no worse than the updates' vectors (``objective_[-1]``).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._params import ITERATIONS, Anything, Integer, Real
from .._validation import check_random_state
from ..errors import RLSIError
from ..io import register
from ..kernels.blas_rows import cross_rows
from ..kernels.products import csr_dense_rows
from . import steps
from .group_base import GroupModel

__all__ = ["GroupNMF", "CNMF", "GroupNMFProblem"]

EPSILON = np.finfo(np.float32).eps


def _ratio(num, den):
    """``num / den`` in place of num, a zero denominator read as eps (scikit-learn's rule)."""
    den[den == 0] = EPSILON
    num /= den
    return num


class GroupNMFProblem:
    """GNMF as a problem for :func:`rlsi.models.driver.alternate`.

    Xs[p] : CSR (Np x M); U0 : (M x Ks) or None; Us[p] : (M x Kc_p) or None; Vs[p] : (Np x (Ks + Kc_p)).
    """

    def __init__(self, Xs, U0, Us, Vs, n_shared):
        self.Xs, self.U0, self.Us, self.Vs, self.Ks = Xs, U0, Us, Vs, int(n_shared)
        self.M = Xs[0].shape[1]
        self.dtype = Vs[0].dtype
        self.Ds = [X.T.tocsr() for X in Xs]
        self.D = sp.hstack(self.Ds, format="csr") if self.Ks else None
        self.x_sqnorms = [float(np.square(X.data, dtype=np.float64).sum()) for X in Xs]
        self.Gs = [steps.gram(V) for V in Vs]
        self.TGs = [None] * len(Xs)
        self.crosses = [0.0] * len(Xs)

    def _g(self, p, rows, cols):
        return self.Gs[p][rows, cols].astype(self.dtype, copy=False)

    def u_step(self, executor):
        Ks = self.Ks
        if Ks:
            H = np.concatenate([V[:, :Ks] for V in self.Vs])
            num = csr_dense_rows(self.D, 0, self.M, H, dtype=self.dtype)
            den = self.U0 @ sum(self._g(p, slice(0, Ks), slice(0, Ks)) for p in range(len(self.Vs)))
            for p, U in enumerate(self.Us):
                if U is not None:
                    den += U @ self._g(p, slice(Ks, None), slice(0, Ks))
            self.U0 = self.U0 * _ratio(num, den)

        def class_task(p):
            U, V = self.Us[p], self.Vs[p]
            num = csr_dense_rows(self.Ds[p], 0, self.M, np.ascontiguousarray(V[:, Ks:]), dtype=self.dtype)
            den = U @ self._g(p, slice(Ks, None), slice(Ks, None))
            if Ks:
                den += self.U0 @ self._g(p, slice(0, Ks), slice(Ks, None))
            return U * _ratio(num, den)

        active = [p for p, U in enumerate(self.Us) if U is not None]
        for p, U in zip(active, executor.map(class_task, active)):
            self.Us[p] = U
        return {}

    def _topic_gram(self, p, G0):
        """ŨpᵀŨp from blocks ``[[U0ᵀU0, U0ᵀUp], [UpᵀU0, UpᵀUp]]``, U0ᵀU0 (``G0``) formed once per V-step for
        all classes (as GRLSI does): M·(Ks·Kc + Kc²) per class instead of M·(Ks + Kc)² on a stacked copy."""
        U0, Up = self.U0, self.Us[p]
        if U0 is None:
            return steps.gram(Up)
        if Up is None:
            return G0
        cross = cross_rows(U0, Up)
        return np.block([[G0, cross], [cross.T, steps.gram(Up)]])

    def _projection(self, p):
        """``Φp = Dpᵀ Ũp`` (Np x (Ks + Kc_p)): one product with the stacked ``[U0, Up]`` (M x (Ks + Kc_p), a
        copy per class). Two products ``[Xp U0, Xp Up]`` would spare the copy but read every entry of Xp twice:
        measured 1.5x the product time at Ks = 10, Kc = 3 (50 classes, 100k x 60k)."""
        X = self.Xs[p]
        parts = [U for U in (self.U0, self.Us[p]) if U is not None]
        U = np.ascontiguousarray(np.hstack(parts)) if len(parts) > 1 else parts[0]
        return csr_dense_rows(X, 0, X.shape[0], U, dtype=self.dtype)

    def v_step(self, executor):
        G0 = steps.gram(self.U0) if self.U0 is not None else None

        def class_task(p):
            V = self.Vs[p]
            Phi = self._projection(p)  # (ŨpᵀDp)ᵀ
            TG = self._topic_gram(p, G0)
            V = V * _ratio(Phi.copy(), V @ TG.astype(self.dtype))
            return V, float(np.einsum("ij,ij->", Phi, V, dtype=np.float64)), steps.gram(V), TG

        for p, (V, cross, G, TG) in enumerate(executor.map(class_task, range(len(self.Xs)))):
            self.Vs[p], self.crosses[p], self.Gs[p], self.TGs[p] = V, cross, G, TG
        return {}

    def objective(self):
        """Eq. (9): Σ_p ‖Dp‖² − 2 tr(Ũpᵀ Dp Vpᵀ) + tr(ŨpᵀŨp Vp Vpᵀ)."""
        return float(sum(xs - 2.0 * c + np.sum(TG * G)
                         for xs, c, TG, G in zip(self.x_sqnorms, self.crosses, self.TGs, self.Gs)))

    @property
    def doc_vectors(self):
        """Each class's Vpᵀ (Np x (Ks + Kc_p))."""
        return self.Vs

    def components(self):
        """All topics as a dense C-ordered array (K x M): shared rows, then each class's rows."""
        parts = ([self.U0] if self.Ks else []) + [U for U in self.Us if U is not None]
        return np.ascontiguousarray(np.hstack(parts).T)


@register("GroupNMF")
class GroupNMF(GroupModel):
    """Group non-negative matrix factorisation (see the module docstring).

    Parameters
    ----------
    n_shared_topics : int, default 10 — Ks; n_class_topics : int or dict, default 5 — Kc (per class).
    classes : None or "kmeans:P" — labels from ``fit``'s y, or P classes derived by clustering.
    max_iter : int, default 200 — multiplicative-update iterations; tol : float, default 1e-4 — stop when
        the objective decreases by less than ``tol`` (relative).
    inner_max_iter, inner_tol : the coordinate descent of the NNLS folding-in.
    random_state, n_jobs, executor, verbose : as in :class:`GroupRLSI`.

    Attributes: components_ (K, n_features) dense non-negative; topic_groups_, classes_, class_topics_,
    n_shared_topics_, objective_ (Eq. 9 per iteration), n_iter_.
    """

    input_kind = "tfidf"
    nonnegative = True
    _fold_penalty = "nonneg_l2"
    _refold_training = True
    _parameter_constraints = {
        "n_shared_topics": Integer(low=0),
        "n_class_topics": Anything(),
        "classes": Anything(),
        "max_iter": ITERATIONS,
        "tol": Real(low=0.0),
        "inner_max_iter": Integer(low=1),
        "inner_tol": Real(low=0.0),
        "random_state": Anything(),
        "n_jobs": Integer(none=True, not_zero=True),
        "executor": Anything(),
    }

    def __init__(self, n_shared_topics=10, n_class_topics=5, *, classes=None, max_iter=200, tol=1e-4,
                 inner_max_iter=200, inner_tol=1e-6, random_state=None, n_jobs=None, executor=None, verbose=0):
        self.n_shared_topics = n_shared_topics
        self.n_class_topics = n_class_topics
        self.classes = classes
        self.max_iter = max_iter
        self.tol = tol
        self.inner_max_iter = inner_max_iter
        self.inner_tol = inner_tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.executor = executor
        self.verbose = verbose

    def _check_fit_input(self, X, y):
        X = self._check_X(X, reset=True)
        if X.nnz and X.data.min() < 0:
            # scikit-learn's wording for a non-negative model (as rlsi's NMF baseline)
            raise RLSIError(f"Negative values in data passed to {type(self).__name__}, which needs a "
                            f"non-negative matrix (tf-idf or counts, not centred data)")
        return X, y

    def _start(self, X, y, executor):
        """The classes and the random start of Algorithm 5 (module docstring)."""
        split = self._split(X, y)
        layout = split.layout
        N, M = X.shape
        rng = check_random_state(self.random_state)
        a = np.sqrt(float(X.sum()) / (N * M) / layout.n_topics)
        dtype = X.dtype
        Ks = layout.n_shared
        U0 = (a * np.abs(rng.standard_normal((M, Ks)))).astype(dtype) if Ks else None
        Us, Vs = [], []
        for p, Xp in enumerate(split.Xs):
            kc = int(layout.class_topics[p])
            Us.append((a * np.abs(rng.standard_normal((M, kc)))).astype(dtype) if kc else None)
            Vs.append((a * np.abs(rng.standard_normal((Xp.shape[0], Ks + kc)))).astype(dtype))
        problem = GroupNMFProblem(split.Xs, U0, Us, Vs, Ks)
        problem.split = split
        return problem


@register("CNMF")
class CNMF(GroupNMF):
    """Class-only NMF: ``n_shared_topics=0``, an independent NMF per class (the paper's CNMF)."""

    def __init__(self, n_shared_topics=0, n_class_topics=5, *, classes=None, max_iter=200, tol=1e-4,
                 inner_max_iter=200, inner_tol=1e-6, random_state=None, n_jobs=None, executor=None, verbose=0):
        super().__init__(n_shared_topics, n_class_topics, classes=classes, max_iter=max_iter, tol=tol,
                         inner_max_iter=inner_max_iter, inner_tol=inner_tol, random_state=random_state,
                         n_jobs=n_jobs, executor=executor, verbose=verbose)

    def _validate_params(self):
        super()._validate_params()
        if self.n_shared_topics != 0:
            raise RLSIError(f"CNMF has no shared topics (n_shared_topics={self.n_shared_topics}); use GroupNMF "
                            f"for shared plus class topics")
