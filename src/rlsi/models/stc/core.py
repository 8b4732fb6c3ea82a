"""What the STC learners share: parameters, count input, coding a corpus, the dictionary step, folding-in.

Shapes: X (n_docs x n_terms) CSR of word counts (``TfidfVectorizer.transform_counts``); ``components_`` =
β (K x n_terms), every row on the probability simplex; document codes θ (n_docs x K), non-negative; word
codes (nnz(X) x K), row p the code of the p-th stored entry of X (same order as ``X.data``).

Dictionary step, two choices (``dictionary_step``):

* ``"mm"`` (default): the majorise–minimise step for problem (10). With the word codes fixed, Jensen's
  inequality on ``−w log(Σ_k s_k β_kn + ε)`` gives a surrogate ``Σ_kn A_kn b_kn − T_kn log b_kn`` (A_kn =
  Σ_d s_dnk the code mass, T_kn = β_kn Σ_d s_dnk w_dn/(s_dnᵀβ_n + ε) the count-weighted responsibilities)
  that touches ℓ at β and lies above it; its exact minimiser on the simplex is ``T_kn / (A_kn + ν_k)``
  (:func:`simplex.mm_rows`). So every step decreases ℓ(S, ·) — no step size, no line search — and it
  follows the curvature: the loss' Hessian is ≈ T/β², which spans many orders of magnitude across a
  topic, and a single Euclidean step size cannot serve it (docs/stc.md). The
  online step blends ``β ← (1 − α_t) β + α_t β̂`` with β̂ the step on the mini-batch (convex: stays on the
  simplex and, with α = 1, is the batch step).
* ``"lbfgs"``: the released code's solver, up to 20 projected L-BFGS steps on ℓ(S, ·) per iteration
  (:mod:`rlsi.models.stc.dictionary`; batch STC with ``keep_word_codes=True``; online, on each
  mini-batch's codes and terms, blended like the majorise–minimise step: :mod:`rlsi.models.stc.online`).
* ``"projected"``: the paper's projected gradient, Eq. (12): ``β ← Π_P(β − α G / n)``, G the gradient of
  the log-Poisson loss summed over the n coded documents, Π_P the row-wise Euclidean projection on the
  simplex (:func:`simplex.project_simplex_rows`, sort-based, O(M log M)); ``normalize_gradient`` scales
  each topic's gradient to unit ℓ1 norm first.

Unlike the RLSI core there is no closed-form topic update: the loss is not quadratic in β.

Scales against the released MedSTC/STC code (footnote 4; read for comparison, not copied): it writes
``λ‖θ‖² + γ Σ_n ‖s_n − θ‖²`` (no halves) and uses ε = 1e-3, β⁰ uniform and word codes started at 1/K. So its
γ and λ are half of ours: ``gamma=2γ, lam=2λ`` is the same objective. Its settings file also swaps the
printed λ and ρ (λ = 0.1, ρ = 0.01): :mod:`rlsi.models.stc.settings` holds both as named presets; the
classes' defaults are the ``table2`` preset, the released values with what reproduces Table 2
(docs/stc.md compares them on 20 Newsgroups).
ε: the paper prints no value, so the default is the released code's 1e-3. ε enters the Poisson mean
``s_nᵀβ_n + ε`` of the loss (coding and the dictionary statistics) and of the held-out perplexity, Eq. (19); it sets the coding threshold (a word gets
a code on topic k only if ``β_kn ≳ ρε/w``) and the cost of a held-out term without code mass, so the
perplexity moves with it: online STC on 20 Newsgroups 16,089 (ε = 1e-4) → 4,458 (ε = 1e-3), accuracy
+0.4 to +0.5 points.
"""

from __future__ import annotations

import functools
import logging

import numpy as np
import scipy.sparse as sp

from ..._params import COMPONENTS, Anything, Boolean, Choice, Integer, Real
from ..._validation import check_matrix
from ...errors import RLSIError
from ...kernels.threads import numba_threads
from ..base import TopicModel, check_fitted
from . import kernels, simplex

log = logging.getLogger("rlsi.models.stc")

PRIORS = {"normal": kernels.NORMAL, "laplace": kernels.LAPLACE}
DICTIONARY_STEPS = ("mm", "projected", "lbfgs")
# iterations of MedSTC's per-document θ solver (kernels._theta_hinge), which stops earlier on its duality
# gap; 50 iterations left θ far from the minimiser at Δ = 3600
HINGE_MAX_ITER = 1000
#: runs of documents whose dictionary statistics kernels.code_corpus sums separately (fewer for fewer
#: documents): a fixed number, so that G and B are the same sums in the same order on any thread count
GRAD_CHUNKS = 16


def check_counts(X, *, name="X"):
    """X as float64 CSR of non-negative counts (sorted, no duplicates); one-line RLSIError otherwise."""
    X = check_matrix(X, name=name, dtype=np.float64)
    X = sp.csr_matrix(X, dtype=np.float64, copy=False)
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    if X.data.size and X.data.min() < 0:
        raise RLSIError(f"Negative values in data passed to STC ({name} has negative entries): STC models "
                        f"word counts; pass raw counts (TfidfVectorizer.transform_counts)")
    if np.any(X.data == 0):
        X = X.copy()
        X.eliminate_zeros()
    return X


def check_training_counts(X):
    X = check_counts(X)
    if X.nnz == 0:
        raise RLSIError("X holds no word counts (all zero); give documents with at least one known word")
    return X


# default batch variational EM passes of the LDA start (dictionary_init="lda", parameter lda_passes); 10 passes
# on 20 Newsgroups: about 80 s CPU
LDA_INIT_PASSES = 10


def lda_dictionary(X, n_components, random_state, passes=LDA_INIT_PASSES):
    """β⁰ for ``dictionary_init="lda"``: the topics of scikit-learn's batch variational LDA on the counts X
    (``passes`` passes, its default priors 1/K), each row normalised onto the simplex (K x n_terms).

    Outside the paper (which gives no start; the released code starts from uniform topics). Why: at the
    paper's *printed* λ = γ = 0.01, ρ = 0.1 the tie to θ is negligible (γθ ≪ ρ), so the STC iterations keep
    the word-to-topic partition of their start (a topic's support only shrinks) and the start decides the
    optimum reached: on 20 Newsgroups three batch iterations from LDA's topics reach a lower objective (4)
    than from random documents (5.30M vs 5.41M) and codes that classify at 62.6 % instead of 46.4 %. At the
    released code's values (:mod:`rlsi.models.stc.settings`) the tie dominates, and for unsupervised STC this
    start still helps: 70.7 % instead of 59.7 % (batch, 4 projected iterations) and 71.4 % instead of 61.9 %
    (online, batch 32), the ``table2`` preset's STC rows (docs/stc.md)."""
    from sklearn.decomposition import LatentDirichletAllocation

    if isinstance(random_state, np.random.Generator):  # scikit-learn takes an int or a RandomState
        random_state = int(random_state.integers(2 ** 31 - 1))
    lda = LatentDirichletAllocation(n_components, learning_method="batch", max_iter=passes,
                                    random_state=random_state).fit(X)
    B = np.asarray(lda.components_, dtype=np.float64)
    return B / B.sum(axis=1, keepdims=True)


def with_threads(method):
    """Run ``method`` with the model's ``n_jobs`` numba threads (its public entry points: fit, partial_fit,
    word_codes, which transform, predict and score go through)."""
    @functools.wraps(method)
    def run(self, *args, **kwargs):
        with numba_threads(getattr(self, "n_jobs", None)):
            return method(self, *args, **kwargs)
    return run


class STCBase(TopicModel):
    """Shared parameters and machinery of the STC learners (see the module docstring).

    Parameters (§3; the defaults are the ``table2`` preset's, :mod:`rlsi.models.stc.settings`: the released
    code's values, which reproduce Table 2; the paper's printed ones are the ``printed`` preset)
    ----------
    n_components : int, default 60 — K.
    lam : float, default 0.2 — λ, prior on θ ((λ/2)‖θ‖², or λ‖θ‖₁ with ``prior="laplace"``; the paper prints
        0.01, the released code runs 0.1 in its convention, 0.2 in this one).
    gamma : float, default 0.2 — γ, ties word codes to the document code ((γ/2)‖s − θ‖²; the released code's
        γ is half of this one, see the module docstring).
    rho : float, default 0.01 — ρ, ℓ1 on word codes (their sparsity; the paper prints 0.1).
    eps : float, default 1e-3 — ε of Eq. (1), keeps the Poisson mean positive (the released code's value;
        the paper prints none — see the module docstring).
    prior : "normal" (Eq. 8) or "laplace" (Eq. 9).
    collapsed : bool, default False — collapsed STC (§4.2.1; θ marginalised, normal prior only).
    max_sweeps : int, default 21 — coordinate sweeps per document and coding pass.
    tol : float, default 1e-4 — a document stops when max|Δθ| ≤ tol·max θ.
    dictionary_step : "mm", "projected" or "lbfgs" — the multiplicative majorise–minimise step, the
        paper's projected gradient or the released code's L-BFGS solver (module docstring); the default is
        "projected" for STC, "lbfgs" for MedSTC (their Table 2 rows).
    normalize_gradient : bool, default True — ``"projected"`` only: scale each topic's gradient to unit
        ℓ1 norm before the step (see :meth:`_dictionary_step`); False is Eq. (12) with the raw mean gradient.
    random_state : int, None or Generator — β initialisation (and document order online).
    n_jobs : None or int — numba threads of the coding and dictionary kernels (None: all cores; -1 all,
        -2 all but one); the numbers do not depend on it.
    """

    input_kind = "counts"
    nonnegative = True
    _parameter_constraints = {
        "n_components": COMPONENTS, "lam": Real(low=0.0), "gamma": Real(low=0.0, low_open=True),
        "rho": Real(low=0.0), "eps": Real(low=0.0, low_open=True), "prior": Choice(PRIORS),
        "collapsed": Boolean(), "max_sweeps": Integer(low=1), "tol": Real(low=0.0),
        "random_state": Anything(), "verbose": Integer(low=0), "normalize_gradient": Boolean(),
        "dictionary_step": Choice(DICTIONARY_STEPS), "n_jobs": Integer(none=True, not_zero=True),
    }
    _state_scalars = ("n_features_in_", "n_iter_")

    def _validate_params(self):
        super()._validate_params()
        if self.collapsed and self.prior != "normal":
            raise RLSIError("collapsed=True marginalises θ under the normal prior; use prior='normal'")
        if self.dictionary_step == "lbfgs" and not getattr(self, "keep_word_codes", True):
            raise RLSIError("dictionary_step='lbfgs' evaluates the loss on the stored word codes: batch STC needs "
                            "keep_word_codes=True (the online learners keep each mini-batch's codes)")

    # ------------------------------------------------------------------ initialisation
    def _init_beta(self, n_features, X=None, y=None):
        if getattr(self, "dictionary_init", "documents") == "uniform":  # the released code's start, 1/M
            return np.full((self.n_components, n_features), 1.0 / n_features)
        if getattr(self, "dictionary_init", "documents") == "lda" and X is not None and X.shape[0] > 0:
            return lda_dictionary(X, self.n_components, self.random_state,
                                  passes=getattr(self, "lda_passes", LDA_INIT_PASSES))
        return self._document_beta(n_features, X, y)

    def _document_beta(self, n_features, X=None, y=None):
        """β⁰: each topic the normalised counts of a few random documents (90 %) plus uniform noise
        (10 %). A near-uniform β makes every word code pick the first topic in coordinate order (with
        equal β_kn the first coordinate explains the count and the others stay at zero), so the
        topics must differ from the start; random documents are the usual dictionary-learning seed.

        ``y`` (label indices, MedSTC with ``dictionary_init="class"``): the topics are dealt to the classes
        in turn (topic k to class ``k mod L``) and each class' documents are split at random into disjoint
        parts, one per topic of the class; a topic is seeded with the counts of its part — class-conditional
        word distributions, a supervised start outside the paper (see medstc.py)."""
        rng = np.random.default_rng(self.random_state)
        K = self.n_components
        noise = rng.random((K, n_features)) + 0.1
        noise /= noise.sum(axis=1, keepdims=True)
        if X is None or X.shape[0] == 0:
            return noise
        per = max(1, min(10, X.shape[0] // K))
        B = np.zeros((K, n_features))
        if y is not None:
            labels = np.unique(y)
            parts = {}
            for ci, c in enumerate(labels):
                ks = np.arange(ci, K, len(labels))
                for k, rows in zip(ks, np.array_split(rng.permutation(np.flatnonzero(y == c)), len(ks))):
                    parts[k] = rows
        for k in range(K):
            if y is None:
                rows = rng.choice(X.shape[0], size=per, replace=X.shape[0] < per)
            else:
                rows = parts.get(k, np.zeros(0, dtype=np.int64))  # a topic beyond the classes: noise only
            B[k] = np.asarray(X[rows].sum(axis=0)).ravel()
        sums = B.sum(axis=1, keepdims=True)
        B = np.divide(B, sums, out=np.array(noise), where=sums > 0)
        return 0.9 * B + 0.1 * noise

    # ------------------------------------------------------------------ coding
    def _code(self, X, beta, theta, *, S=None, warm=False, want_grad=True, eta=None, y=None, c=0.0,
              delta=0.0, linear_hinge=False):
        """Code the documents of X with β fixed; θ (n, K) updated in place.

        Returns ``(G, B, f, sweeps, zeros, cols)``: the gradient and the statistic B of
        :func:`kernels.code_corpus`, restricted to the terms ``cols`` of X (K x len(cols); zero elsewhere),
        per-document objectives, sweeps and zero word-code counts."""
        K, M = beta.shape
        betaT = np.ascontiguousarray(beta.T)
        use_S = S is not None
        if S is None:
            S = np.empty((0, K))
        if eta is None:
            eta = np.zeros((0, K))
            y = np.zeros(0, dtype=np.int64)
        threads = kernels.n_threads()
        # with the gradient, a fixed number of runs (the same sums on any thread count), `threads` at a time
        n_chunks = max(1, min(GRAD_CHUNKS if want_grad else threads * 4, X.shape[0]))
        cols = np.unique(X.indices) if want_grad else np.zeros(0, dtype=np.int64)
        col_map = np.full(M if want_grad else 0, -1, dtype=np.int64)
        col_map[cols] = np.arange(len(cols))
        # the field types fix the numba signature: keep float, int and bool as they are
        cfg = kernels.Coding(float(self.eps), float(self.lam), float(self.gamma), float(self.rho), PRIORS[self.prior],
                             bool(self.collapsed), int(self.max_sweeps), float(self.tol), kernels.START_SCALED,
                             bool(warm), use_S)
        hinge = kernels.Hinge(np.ascontiguousarray(eta, dtype=np.float64), y.astype(np.int64), float(delta),
                              float(c), HINGE_MAX_ITER, bool(linear_hinge))
        runs = kernels.Runs(bool(want_grad), col_map, len(cols), n_chunks, threads)
        csr = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data)
        G, B, f, sweeps, zeros = kernels.code_corpus(csr, betaT, theta, S, cfg, hinge, runs)
        return G, B, f, sweeps, zeros, cols

    def _dictionary_step(self, beta, G, B, n_docs, alpha, cols=None):
        """One dictionary step from the statistics of ``_code`` on the columns ``cols`` (all when None).

        ``"mm"``: ``(1 − α) β + α β̂``, β̂ the multiplicative step (module docstring; terms outside
        ``cols`` carry no code mass, so β̂ is 0 there). ``"projected"``: Eq. (12), ``Π_P(β − α G / n_docs)``;
        with ``normalize_gradient`` each topic's gradient is first divided by its ℓ1 norm. A new array;
        never NaN: G and B are finite since ε > 0."""
        if self.dictionary_step == "mm":
            beta = np.asarray(beta, dtype=np.float64)
            sub = beta if cols is None else beta[:, cols]
            new_sub = simplex.mm_rows(np.ascontiguousarray(sub), G + B, B)
            if cols is None:
                new = new_sub
            else:
                new = np.zeros_like(beta)
                new[:, cols] = new_sub
            # a topic with no code mass in these documents is left as it was (mm_rows copies the row;
            # outside ``cols`` it must be copied too)
            idle = ~np.any(sub * B > 0, axis=1)
            new[idle] = beta[idle]
            return new if alpha == 1.0 else (1.0 - alpha) * beta + alpha * new
        if self.normalize_gradient:
            # The raw gradient's size follows the code magnitudes (s ~ w/β, β ~ 1/M), so a raw α_t
            # would need retuning per corpus and batch size (the paper tunes τ0). Scaled by the ℓ1 norm
            # of each row, α is the most probability mass a topic can move in one step — the direction
            # is Eq. (12)'s, only its length is set by α.
            norms = np.abs(G).sum(axis=1, keepdims=True)
            D = np.divide(G, norms, out=np.zeros_like(G), where=norms > 0)
        else:
            D = G / max(n_docs, 1)
        V = np.array(beta, dtype=np.float64)
        if cols is None:
            V -= alpha * D
        else:
            V[:, cols] -= alpha * D
        return simplex.project_simplex_rows(V)

    # ------------------------------------------------------------------ folding-in
    def _fold_in(self, X):
        """Document codes θ (n_samples x K) with β frozen (a document with no known word gets θ = 0)."""
        return self.word_codes(X, return_word_codes=False)

    @with_threads
    def word_codes(self, X, return_word_codes=True):
        """``(θ, S)``: document codes (n x K) and word codes (nnz(X) x K, rows in the order of the CSR's
        stored entries) of the given documents; ``return_word_codes=False`` gives θ only. The word codes
        are materialised for these documents only — pass small batches for a large corpus."""
        check_fitted(self)
        X = check_counts(self._check_X(X, reset=False))
        theta = np.zeros((X.shape[0], self.n_components))
        S = np.zeros((X.nnz, self.n_components)) if return_word_codes else None
        self._code(X, np.asarray(self.components_, dtype=np.float64), theta, S=S, want_grad=False,
                   **self._coding_extras(X))
        return (theta, S) if return_word_codes else theta

    def _coding_extras(self, X):
        return {}

    def word_code_sparsity(self, X):
        """Fraction of zero entries of the word codes of X (Figure 4(c)'s measure), without keeping them."""
        check_fitted(self)
        X = check_counts(self._check_X(X, reset=False))
        theta = np.zeros((X.shape[0], self.n_components))
        _, _, _, _, zeros, _ = self._code(X, np.asarray(self.components_, dtype=np.float64), theta,
                                       want_grad=False, **self._coding_extras(X))
        return float(zeros.sum() / max(X.nnz * self.n_components, 1))

    def top_words(self, feature_names, n_words=10):
        """The ``n_words`` highest-weight terms of every topic: list of K lists of str."""
        check_fitted(self)
        names = np.asarray(feature_names)
        B = np.asarray(self.components_)
        return [list(names[np.argsort(-row, kind="stable")[:n_words]]) for row in B]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True  # word counts: negative entries are refused (check_counts)
        return tags

    def _after_load(self):
        super()._after_load()
        B = np.asarray(self.components_)
        if B.min() < 0 or not np.allclose(B.sum(axis=1), 1.0, atol=1e-6):
            raise RLSIError("STC components are not on the probability simplex (rows must be >= 0, sum 1)")
