"""Supervised max-margin STC (MedSTC, §4.2.2, Eq. 16) and its online version.

Document codes feed a linear multi-class SVM (Crammer & Singer) with the loss
``Δ(y, y′) = delta · 1(y ≠ y′)``; codes, dictionary and classifier are trained jointly::

    min  f(Θ, S, β) + C Σ_d max_y [Δ(y_d, y) + (η_y − η_{y_d})ᵀθ_d] + ½‖η‖²

(Eq. 16 writes ``C·R`` with R the mean over the D documents; our ``C`` is the weight of each document's
hinge, i.e. Eq. 16's C divided by D, so that it does not change meaning with the corpus size.)

* Coding step (θ, S with β, η fixed): word codes as in STC; θ solves its small hinge problem to its
  minimiser (:func:`rlsi.models.stc.kernels._theta_hinge`: accelerated dual ascent stopped on the duality
  gap; a plain 50-step ascent stops far from it at Δ = 3600). Test documents are coded without labels (plain STC).
* β step: as STC (the hinge does not involve β).
* η step: batch — the Crammer–Singer SVM on the θ of the training documents, solved by liblinear
  (``LinearSVC(multi_class="crammer_singer", C=C/delta)`` on θ gives η/delta: dividing the objective by
  delta² turns Δ into the unit margin); online — one Pegasos step per mini-batch [32] on
  ``½‖η‖² + C Σ hinge`` with step ``1/t`` (t mini-batches seen): ``η ← (1 − 1/t) η − (C N/(n_b t)) Σ ∂hinge``
  (the batch's subgradients scaled to the corpus weight of one batch, N the training documents), then
  Pegasos' projection on the ball ``‖η‖ ≤ √(2 C N delta)`` that holds the minimiser (at η = 0 the objective
  is C N delta).

``svm_codes`` (online): which codes the Pegasos step sees. ``"joint"`` (default, Eq. 16 read literally): the
codes of the coding step, hinge-shifted toward ``η_{y_d} − η_ŷ``. On mini-batches this feeds back: the shift
follows η, the shifted codes are separated by the η that shifted them, and the step reinforces whatever η
the first few mini-batches gave (16 documents each) — on 20 Newsgroups online MedSTC then classifies no
better than unsupervised online STC (docs/stc.md). ``"label_free"`` (a variant outside the paper, label-free
in the sense of ``refit_classifier``): each mini-batch is first coded without labels under the current β —
the codes ``predict`` sees — the Pegasos step is taken on those, and the batch is then coded with the new η's
hinge for the dictionary step (twice the coding work). The SVM then tracks the classifier of the codes
the dictionary produces, and the hinge shift pulls the training documents toward its classes.

``hinge="linearized"``: the θ-update of the released MedSTC code (footnote 4; Jun Zhu's C++ code, read for
comparison, not copied): the hinge is linearised at the loss-augmented label ŷ of the document's label-free
code and applied in full, ``θ = max(0, m + (C/A)(η_{y_d} − η_ŷ))`` whenever ŷ ≠ y_d — it keeps pulling
after the margin is met, so it shifts training codes much further than the exact minimiser (default
``"exact"``; the released preset, :mod:`rlsi.models.stc.settings`, uses it).

``dictionary_init="class"`` (outside the paper, labelled as such): β⁰ from class-conditional counts — the
topics are dealt to the classes in turn and each topic starts as the word distribution of a random part of
one class' training documents (:meth:`STCBase._init_beta`). Why: at the paper's ρ = 0.1 the document tie is
too weak to move word codes (θ ≈ 0.1–2 while a code needs γθ_k ≈ ρ), so the hinge-shifted training codes
barely reach the dictionary and the learned topics stay unsupervised word clusters; STC coding with
class-conditional topics is discriminative (77 % with a linear SVM on a 3,000-document subset against 44 %
with the learned ones). Default ``"documents"``: the unsupervised start of STC.

``predict``, ``score`` (accuracy), ``decision_function`` (n x L: ``θ ηᵀ``) follow scikit-learn's
classifier conventions; ``classes_`` holds the labels.

``refit_classifier=True`` (default): after the joint fit, η is fit once more — the same SVM (batch) — on
the codes of the training documents inferred **without** labels, i.e. the codes ``predict`` sees. Why:
the η of Eq. (16) is trained on hinge-shifted training codes, and test codes carry no hinge; on
20 Newsgroups that η classified even the *training* documents' label-free codes at 22–33 % (subset of
3,000 documents), far below a plain SVM on the same codes (42 %). ``False`` keeps the joint η. Only
``fit`` refits (it has the training set); ``OnlineMedSTC.partial_fit`` keeps the online η.

``refit_C`` chooses the refit SVM: ``"cv"`` (default) — one-vs-rest linear SVMs (liblinear, no intercept)
on the l2-normalised label-free training codes, C from {0.01, 0.1, 1, 10, 100} by 3-fold stratified
cross-validation on those codes (the training split only: the protocol of
``benchmarks/bench_stc.svm_on_codes``); a positive float — the same SVM at that C; ``"joint"`` — Eq. (16)'s
Crammer–Singer SVM at its weight ``C/delta`` (the only choice before). Why: at the paper's ``C`` per document
and ℓ = 3600 the joint weight is ``1/3600 ≈ 2.8e-4`` on codes of norm ≈ 1, orders of magnitude below what
cross-validation picks, and that SVM classified the same codes 3–4 points worse than a tuned one
(docs/stc.md). The C used is ``refit_C_``. With fewer than 3 training documents in some
class there is no CV (C = C/delta). The joint fit's η steps keep Eq. (16)'s SVM.
"""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import LinearSVC
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import column_or_1d

from ..._params import LDA_PASSES, Anything, Boolean, Choice, Real
from ...errors import RLSIError
from ...io import register
from ..base import check_fitted
from .batch import SparseTopicalCoding
from .core import check_training_counts
from .online import OnlineSTC

HINGES = ("exact", "linearized")
SVM_CODES = ("joint", "label_free")
REFIT_C_GRID = (0.01, 0.1, 1.0, 10.0, 100.0)
REFIT_C_FOLDS = 3
INITS = ("documents", "class", "lda", "uniform")


def encode_labels(y, n_samples, classes=None):
    """(classes, codes): labels as indices into ``classes`` (sorted unique labels unless given)."""
    if y is None:
        raise RLSIError("MedSTC requires y to be passed, but the target y is None: pass one label per document")
    try:
        y = np.asarray(y)
    except ValueError:  # ragged lists: several labels for some documents
        y = None
    if y is None or (y.dtype.kind == "O" and not all(isinstance(v, (str, int, float, np.generic)) or v is None
                                                     for v in y.reshape(-1))):
        raise RLSIError("y must hold one label per document (a string or a number); a document has a list or "
                        "another object: MedSTC fits one class per document, pick one label for each")
    if y.ndim == 2 and y.shape[1] == 1:
        y = column_or_1d(y, warn=True)  # scikit-learn's convention: a column vector is warned about, then used
    if y.ndim != 1 or y.shape[0] != n_samples:
        raise RLSIError(f"y has shape {y.shape}; expected one label per document ({n_samples},)")
    if y.dtype.kind == "O" and any(v is None for v in y):
        raise RLSIError("y has missing labels (None); drop the unlabelled documents or label them")
    if y.dtype.kind == "f" and np.isnan(y).any():
        raise RLSIError("y has missing labels (NaN); drop the unlabelled documents or label them")
    if type_of_target(y) == "continuous":
        raise RLSIError("Unknown label type: continuous y; MedSTC is a classifier: pass class labels, not "
                        "real-valued targets")
    if classes is None:
        classes = np.unique(y)
    else:
        classes = np.asarray(classes)
    if classes.shape[0] < 2:
        raise RLSIError(f"y has one class ({classes[0]!r}); a classifier needs at least two classes")
    codes = np.searchsorted(classes, y)
    codes = np.clip(codes, 0, len(classes) - 1)
    if not np.all(classes[codes] == y):
        raise RLSIError("y has labels that are not in classes; give every class in classes=")
    return classes, codes.astype(np.int64)


class _MaxMarginMixin(ClassifierMixin):
    _state_arrays = ("components_", "coef_", "classes_")

    def _scores(self, X):
        check_fitted(self, "coef_")
        return self.transform(X) @ self.coef_.T

    def decision_function(self, X):
        """Scores θ ηᵀ (n_samples x n_classes), θ the document codes (no labels used); with two classes
        scikit-learn's binary form, the score of ``classes_[1]`` minus that of ``classes_[0]`` (n_samples,)."""
        scores = self._scores(X)
        return scores[:, 1] - scores[:, 0] if scores.shape[1] == 2 else scores

    def predict(self, X):
        """The class of the highest score (n_samples,)."""
        scores = self._scores(X)
        return self.classes_[np.argmax(scores, axis=1)]

    def _hinge(self, theta, codes):
        """Σ_d max_y [Δ(y_d, y) + (η_y − η_{y_d})ᵀθ_d] and the most violating labels."""
        scores = theta @ self.coef_.T
        aug = scores + self.delta
        aug[np.arange(len(codes)), codes] -= self.delta
        yhat = np.argmax(aug, axis=1)
        loss = aug[np.arange(len(codes)), yhat] - scores[np.arange(len(codes)), codes]
        return float(loss.sum()), yhat

    def _validate_params(self):
        super()._validate_params()
        v = self.refit_C
        if isinstance(v, str):
            if v not in ("cv", "joint"):
                raise RLSIError(f"refit_C={v!r} is not allowed; use 'cv', 'joint' or a positive number")
        elif isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) \
                or not np.isfinite(v) or v <= 0:
            raise RLSIError(f"refit_C={v!r} is not allowed; use 'cv', 'joint' or a positive number")

    def _refit(self, X, codes):
        """``refit_classifier``: η by an SVM on the label-free codes of the training documents (``refit_C``;
        the C used is ``refit_C_``)."""
        if self.refit_classifier:
            theta = self.transform(X)
            if self.refit_C == "joint":
                self.refit_C_ = self.C / self.delta
                self.coef_ = self._svm(theta, codes)
            else:
                self.refit_C_ = self._select_refit_C(theta, codes) if self.refit_C == "cv" else float(self.refit_C)
                self.coef_ = self._refit_svm(theta, codes, self.refit_C_)
        return self

    def _select_refit_C(self, theta, codes):
        """The value of REFIT_C_GRID with the best mean accuracy of :meth:`_refit_svm` over stratified folds
        of the training codes (the smallest such C on a tie: the most regularised); C/delta (the joint
        weight) when some class has fewer documents than folds."""
        counts = np.bincount(codes, minlength=len(self.classes_))
        if counts[counts > 0].min() < REFIT_C_FOLDS:
            return self.C / self.delta
        seed = self.random_state if isinstance(self.random_state, (int, np.integer)) else None
        folds = list(StratifiedKFold(REFIT_C_FOLDS, shuffle=True, random_state=seed).split(theta, codes))
        best, best_acc = None, -1.0
        for c in REFIT_C_GRID:
            acc = np.mean([np.mean(np.argmax(theta[te] @ self._refit_svm(theta[tr], codes[tr], c).T, axis=1)
                                   == codes[te]) for tr, te in folds])
            if acc > best_acc:
                best, best_acc = c, acc
        return best

    def _refit_svm(self, theta, codes, svm_C):
        """η (L x K) of one-vs-rest linear SVMs (liblinear, C = ``svm_C``, no intercept) on the l2-normalised
        codes — the protocol of ``benchmarks/bench_stc.svm_on_codes``. Normalising a row scales its scores
        θηᵀ by a positive number, so ``predict`` (the argmax on raw θ) is that of the SVM. Why not the
        Crammer–Singer form of Eq. (16): liblinear's solver for it took minutes per fit at C ≥ 10 on 11k
        documents, and the selection fits 16 SVMs."""
        seed = self.random_state if isinstance(self.random_state, (int, np.integer)) else None
        norms = np.linalg.norm(theta, axis=1, keepdims=True)
        U = np.divide(theta, norms, out=np.zeros_like(theta), where=norms > 0)
        svm = LinearSVC(C=svm_C, fit_intercept=False, max_iter=5000, tol=1e-4, random_state=seed)
        return self._fit_eta(svm, U, codes)

    def _svm(self, theta, codes, svm_C=None):
        """η (L x K) of the Crammer–Singer SVM on θ: liblinear's C is ``svm_C`` (default Eq. (16)'s
        ``C/delta``: its objective divided by delta² with the margin scaled to 1), η = delta × its weights."""
        # liblinear shuffles the documents: seed it, or two fits with the same random_state differ
        seed = self.random_state if isinstance(self.random_state, (int, np.integer)) else None
        svm = LinearSVC(C=self.C / self.delta if svm_C is None else svm_C, multi_class="crammer_singer",
                        fit_intercept=False, max_iter=2000, tol=1e-4, random_state=seed)
        return self._fit_eta(svm, theta, codes)

    def _fit_eta(self, svm, features, codes):
        """η (L x K): ``svm`` (a linear SVM without intercept) fit on ``features`` (n x K) and ``codes`` (n,
        class indices) with its convergence warnings silenced, its weights placed at the rows of the classes
        it saw (zero rows for the others; a two-class SVM's single row w gives −w and w), times delta."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            svm.fit(features, codes)
        coef = np.zeros((len(self.classes_), self.n_components))
        coef[svm.classes_] = svm.coef_ if len(svm.classes_) > 2 else np.vstack([-svm.coef_, svm.coef_])
        return self.delta * coef

    def _after_load(self):
        super()._after_load()
        self.coef_ = np.asarray(self.coef_, dtype=np.float64)
        if self.coef_.shape != (len(self.classes_), self.n_components):
            raise RLSIError(f"MedSTC coef has shape {self.coef_.shape}, expected "
                            f"{(len(self.classes_), self.n_components)}")
        refit_C = getattr(self, "refit_C_", None)
        if refit_C is not None and not (isinstance(refit_C, (int, float)) and not isinstance(refit_C, bool)
                                        and np.isfinite(refit_C) and refit_C > 0):
            raise RLSIError(f"MedSTC refit_C_ is {refit_C!r}; expected a positive number")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "classifier"
        # a K-topic code of real-valued low-dimensional features (scikit-learn's blobs) keeps only each
        # sample's direction on the simplex and the SVM has no intercept: training accuracy on such data is
        # not a measure of this model (it is of word counts)
        tags.classifier_tags.poor_score = True
        return tags


@register("MedSTC")
class MedSTC(_MaxMarginMixin, SparseTopicalCoding):
    """Batch MedSTC. Parameters of :class:`SparseTopicalCoding` plus

    The defaults are the ``table2`` preset's (:mod:`rlsi.models.stc.settings`): the released code's values
    and solver from random documents, 10 iterations (81.2 % on 20 Newsgroups, paper 81.6 %; the paper's
    printed values, ``stc_params("printed", MedSTC)``, give 47.2 %). Unlike batch STC it starts from random
    documents (``dictionary_init="documents"``) and takes the L-BFGS dictionary step.

    C : float, default 0.5 — weight of each training document's hinge loss.
    delta : float, default 3600.0 — ℓ of ``Δ(y, y′) = ℓ·1(y ≠ y′)`` (§5.2).
    refit_classifier : bool, default True — refit η on the label-free training codes (module docstring).
    refit_C : "cv" (default), "joint" or float — the C of that refit (module docstring).
    hinge : "linearized" (default) or "exact" — the θ-update (module docstring).
    dictionary_init : "documents" (default), "class" or "lda" — β⁰ (module docstring and
        :class:`SparseTopicalCoding`; "class" and "lda" are outside the paper).
    lda_passes : int, default 10 — batch passes of the LDA fit of ``dictionary_init="lda"``.

    Attributes: ``coef_`` η (L x K), ``classes_``, and those of STC.
    """

    _parameter_constraints = {"C": Real(low=0.0, low_open=True), "delta": Real(low=0.0, low_open=True),
                              "refit_classifier": Boolean(), "hinge": Choice(HINGES),
                              "dictionary_init": Choice(INITS), "refit_C": Anything(),
                              "lda_passes": LDA_PASSES}
    _state_scalars = SparseTopicalCoding._state_scalars + ("refit_C_",)

    def __init__(self, n_components=60, *, lam=0.2, gamma=0.2, rho=0.01, eps=1e-3, prior="normal",
                 collapsed=False, max_sweeps=21, tol=1e-4, dictionary_step="lbfgs", normalize_gradient=True,
                 max_iter=10, step_size=None, keep_word_codes=True, fit_tol=0.0, C=0.5, delta=3600.0,
                 refit_classifier=True, hinge="linearized", dictionary_init="documents", refit_C="cv", lda_passes=10,
                 random_state=0, n_jobs=None, verbose=0):
        super().__init__(n_components, lam=lam, gamma=gamma, rho=rho, eps=eps, prior=prior,
                         collapsed=collapsed, max_sweeps=max_sweeps, tol=tol,
                         dictionary_step=dictionary_step, normalize_gradient=normalize_gradient,
                         max_iter=max_iter, step_size=step_size,
                         keep_word_codes=keep_word_codes, fit_tol=fit_tol, random_state=random_state,
                         n_jobs=n_jobs, verbose=verbose)
        self.C = C
        self.delta = delta
        self.refit_classifier = refit_classifier
        self.hinge = hinge
        self.dictionary_init = dictionary_init
        self.refit_C = refit_C
        self.lda_passes = lda_passes

    def _fit_extras(self, X, y):
        self.classes_, codes = encode_labels(y, X.shape[0])
        self.coef_ = np.zeros((len(self.classes_), self.n_components))
        return {"codes": codes}

    def _finish(self, problem, trace, X):
        super()._finish(problem, trace, X)
        self._refit(X, problem.extras["codes"])

    def _init_labels(self, codes):
        return codes if self.dictionary_init == "class" else None

    def _supervision(self, codes):
        return {"eta": self.coef_, "y": codes, "c": self.C, "delta": self.delta,
                "linear_hinge": self.hinge == "linearized"}

    def _extra_objective(self, X, theta, codes):
        return self.C * self._hinge(theta, codes)[0] + 0.5 * float((self.coef_ ** 2).sum())

    def _after_step(self, X, theta, it, codes):
        self.coef_ = self._svm(theta, codes)


@register("OnlineMedSTC")
class OnlineMedSTC(_MaxMarginMixin, OnlineSTC):
    """Online MedSTC. Parameters of :class:`OnlineSTC` plus ``C``, ``delta``, ``refit_classifier``, ``refit_C``,
    ``hinge``, ``dictionary_init`` and ``lda_passes`` (see :class:`MedSTC`) and

    svm_codes : "label_free" (default) or "joint" — the codes of each mini-batch the Pegasos step on η sees:
        the batch's codes without labels, or the hinge-shifted codes of the coding step (module docstring).

    The defaults are the ``table2`` preset's online MedSTC row at batch 16 (81.5 % on 20 Newsgroups, paper
    81.2 %): the L-BFGS step on each mini-batch, τ0 = 10, Pegasos on the label-free codes.

    ``partial_fit(X, y, classes=None)``: ``classes`` is required on the first call unless y holds them all.
    """

    _parameter_constraints = {"C": Real(low=0.0, low_open=True), "delta": Real(low=0.0, low_open=True),
                              "refit_classifier": Boolean(), "hinge": Choice(HINGES),
                              "dictionary_init": Choice(INITS), "refit_C": Anything(),
                              "lda_passes": LDA_PASSES, "svm_codes": Choice(SVM_CODES)}
    _state_scalars = OnlineSTC._state_scalars + ("n_train_", "refit_C_")

    def __init__(self, n_components=60, *, lam=0.2, gamma=0.2, rho=0.01, eps=1e-3, prior="normal",
                 collapsed=False, max_sweeps=21, tol=1e-4, dictionary_step="lbfgs", normalize_gradient=True,
                 batch_size=16, n_epochs=1, tau0=10.0, tau=10.0, C=0.5, delta=3600.0, refit_classifier=True,
                 hinge="linearized", dictionary_init="documents", refit_C="cv", lda_passes=10,
                 svm_codes="label_free", random_state=0, n_jobs=None, verbose=0):
        super().__init__(n_components, lam=lam, gamma=gamma, rho=rho, eps=eps, prior=prior,
                         collapsed=collapsed, max_sweeps=max_sweeps, tol=tol,
                         dictionary_step=dictionary_step, normalize_gradient=normalize_gradient,
                         batch_size=batch_size, n_epochs=n_epochs,
                         tau0=tau0, tau=tau, random_state=random_state, n_jobs=n_jobs, verbose=verbose)
        self.C = C
        self.delta = delta
        self.refit_classifier = refit_classifier
        self.hinge = hinge
        self.dictionary_init = dictionary_init
        self.refit_C = refit_C
        self.lda_passes = lda_passes
        self.svm_codes = svm_codes

    # ------------------------------------------------------------------ the streaming skeleton's hooks
    def _check_stream_input(self, X, y):
        X = check_training_counts(self._check_X(X, reset=True))
        self.classes_, codes = encode_labels(y, X.shape[0])
        self.coef_ = np.zeros((len(self.classes_), self.n_components))
        self.n_train_ = X.shape[0]
        return X, codes

    def _check_partial_input(self, X, y, new, classes=None):
        """The labels first (``classes`` is required on the first call unless y holds them all), then X."""
        n = X.shape[0]
        if new:
            self.classes_, codes = encode_labels(y, n, classes)
            self.coef_ = np.zeros((len(self.classes_), self.n_components))
            self.n_train_ = 0
        else:
            _, codes = encode_labels(y, n, self.classes_)
        self.n_train_ += n
        return super()._check_partial_input(X, codes, new)[0], codes

    def _end_stream(self, X, y):
        self._refit(X, y)

    def _init_labels(self, codes):
        return codes if self.dictionary_init == "class" else None

    def _supervision(self, X, y):
        return {"eta": self.coef_, "y": y, "c": self.C, "delta": self.delta,
                "linear_hinge": self.hinge == "linearized"}

    def _before_coding(self, X, beta, y):
        if self.svm_codes == "label_free":  # the Pegasos step on the batch's codes without labels
            free = np.zeros((X.shape[0], self.n_components))
            self._code(X, beta, free, want_grad=False)
            self._pegasos(free, y)

    def _after_update(self, X, y, theta, alpha):
        if self.svm_codes == "joint":
            self._pegasos(theta, y)

    def _pegasos(self, theta, y):
        """One Pegasos step on ½‖η‖² + C Σ_d hinge_d, i.e. λ_p/2‖η‖² + mean hinge with λ_p = 1/(C N), step
        1/(λ_p t): η ← (1 − 1/t) η − (C N / (t n_b)) Σ_{d in batch} ∂hinge_d, N the training documents (seen),
        then the projection on ‖η‖ ≤ √(2 C N delta)."""
        t = self.n_batches_ + 1
        _, yhat = self._hinge(theta, y)
        sub = np.zeros_like(self.coef_)
        viol = yhat != y
        np.add.at(sub, yhat[viol], theta[viol])
        np.add.at(sub, y[viol], -theta[viol])
        n = max(self.n_train_, theta.shape[0])
        eta = (1.0 - 1.0 / t) * self.coef_ - (self.C * n / theta.shape[0] / t) * sub
        radius = np.sqrt(2.0 * self.C * n * self.delta)
        norm = float(np.linalg.norm(eta))
        self.coef_ = eta * (radius / norm) if norm > radius else eta
