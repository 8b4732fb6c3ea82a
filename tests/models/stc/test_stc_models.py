"""STC learners: monotone batch objective, online = batch for one full mini-batch, MedSTC separates
separable data, persistence, bad input."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln

import rlsi.io
from rlsi.errors import RLSIError
from rlsi.models.stc import (MedSTC, OnlineMedSTC, OnlineSTC, SparseTopicalCoding, split_counts,
                             stc_perplexity)

from conftest import in_numba_threads
from forge import reseal, unseal
from models.stc._stc_synth import planted_counts


def _on_simplex(B):
    return np.all(np.isfinite(B)) and B.min() >= 0 and np.allclose(B.sum(axis=1), 1.0)


@pytest.mark.parametrize("step", ["mm", "projected"])
@pytest.mark.parametrize("collapsed", [False, True])
def test_batch_objective_is_non_increasing(collapsed, step):
    X, _ = planted_counts(n_docs=60, seed=2)
    m = SparseTopicalCoding(3, max_iter=12, keep_word_codes=True, collapsed=collapsed, fit_tol=0.0,
                            dictionary_step=step, step_size=0.5 if step == "projected" else None).fit(X)
    obj = np.array(m.objective_)
    assert len(obj) == 12
    assert np.all(np.diff(obj) <= 1e-9 * np.abs(obj[:-1])), obj
    assert obj[-1] < obj[0]
    assert _on_simplex(m.components_)


@pytest.mark.parametrize("step,normalize", [("mm", True), ("projected", True), ("projected", False),
                                            ("lbfgs", True)])
def test_online_with_one_full_batch_and_unit_rate_is_one_batch_step(step, normalize):
    X, _ = planted_counts(n_docs=40, seed=3)
    common = dict(dictionary_step=step, normalize_gradient=normalize, random_state=7, max_sweeps=5)
    kept = dict(keep_word_codes=True) if step == "lbfgs" else {}  # batch L-BFGS runs on the kept codes
    batch = SparseTopicalCoding(3, max_iter=1, step_size=1.0, **common, **kept).fit(X)
    online = OnlineSTC(3, tau0=10.0, tau=10.0, **common)  # α_0 = τ0 / (0 + τ) = 1
    online.partial_fit(X)
    np.testing.assert_allclose(online.components_, batch.components_, rtol=1e-12, atol=1e-14)
    assert online.n_batches_ == 1 and online.n_docs_seen_ == X.shape[0]


def _separable(n_docs=90, seed=0):
    X, y = planted_counts(n_docs=n_docs, seed=seed, strength=10.0, noise_terms=2)
    return X, y


@pytest.mark.parametrize("cls,kw", [(MedSTC, dict(max_iter=15)),
                                    (OnlineMedSTC, dict(batch_size=15, n_epochs=6, tau0=1.0)),
                                    (OnlineMedSTC, dict(batch_size=15, n_epochs=6, tau0=1.0,
                                                        dictionary_step="lbfgs", svm_codes="label_free")),
                                    (MedSTC, dict(max_iter=15, hinge="linearized")),
                                    (MedSTC, dict(max_iter=15, dictionary_init="class")),
                                    (OnlineMedSTC, dict(batch_size=15, n_epochs=6, tau0=1.0,
                                                        dictionary_init="class"))])
def test_medstc_reaches_zero_training_error_on_separable_data(cls, kw):
    X, y = _separable()
    labels = np.array(["a", "b", "c"])[y]
    m = cls(3, delta=10.0, C=1.0, **kw).fit(X, labels)
    assert list(m.classes_) == ["a", "b", "c"]
    assert m.score(X, labels) == 1.0
    assert m.decision_function(X).shape == (X.shape[0], 3)
    assert _on_simplex(m.components_)


def test_transform_word_codes_and_sparsity():
    X, _ = planted_counts(n_docs=30, seed=5)
    m = OnlineSTC(3, batch_size=10, n_epochs=2).fit(X)
    theta, S = m.word_codes(X)
    assert theta.shape == (30, 3) and S.shape == (X.nnz, 3)
    assert theta.min() >= 0 and S.min() >= 0
    np.testing.assert_allclose(m.transform(X), theta)
    assert m.word_code_sparsity(X) == pytest.approx(np.mean(S == 0))
    # a document with no known word gets the zero code, not NaN
    empty = sp.csr_matrix((1, X.shape[1]))
    assert np.all(m.transform(empty) == 0)
    X1, X2 = split_counts(X, seed=1)
    assert np.isfinite(stc_perplexity(m, X1, X2))


@pytest.mark.parametrize("cls", [SparseTopicalCoding, OnlineSTC, MedSTC, OnlineMedSTC])
def test_save_load_round_trip(tmp_path, cls):
    X, y = planted_counts(n_docs=30, seed=6)
    kw = dict(max_iter=2) if cls in (SparseTopicalCoding, MedSTC) else dict(batch_size=10)
    m = cls(3, **kw)
    m.fit(X, y) if cls in (MedSTC, OnlineMedSTC) else m.fit(X)
    rlsi.io.save(tmp_path / "m", model=m)
    back = rlsi.io.load(tmp_path / "m")["model"]
    assert type(back) is cls
    np.testing.assert_array_equal(back.components_, m.components_)
    np.testing.assert_array_equal(back.transform(X), m.transform(X))
    if cls in (MedSTC, OnlineMedSTC):
        np.testing.assert_array_equal(back.predict(X), m.predict(X))


def test_bad_input_is_a_one_line_error():
    X, y = planted_counts(n_docs=20, seed=8)
    with pytest.raises(RLSIError, match="negative"):
        SparseTopicalCoding(2).fit(-X)
    with pytest.raises(RLSIError, match="no word counts"):
        OnlineSTC(2).fit(sp.csr_matrix(X.shape))
    with pytest.raises(RLSIError, match="requires y"):
        MedSTC(2).fit(X)
    with pytest.raises(RLSIError, match="one class"):
        MedSTC(2).fit(X, np.zeros(X.shape[0]))
    with pytest.raises(RLSIError, match="missing labels"):
        MedSTC(2).fit(X, np.array([None] + ["a"] * (X.shape[0] - 1), dtype=object))
    with pytest.raises(RLSIError, match="collapsed"):
        SparseTopicalCoding(2, collapsed=True, prior="laplace").fit(X)
    for err in (RLSIError,):
        with pytest.raises(err) as info:
            SparseTopicalCoding(2).fit(-X)
        assert "\n" not in str(info.value)


def test_beta_never_nan_with_empty_documents_and_huge_counts():
    X, _ = planted_counts(n_docs=20, seed=9)
    X = sp.vstack([X, sp.csr_matrix((3, X.shape[1]))]).tocsr()
    X.data[0] = 1e6  # one huge count
    m = SparseTopicalCoding(3, max_iter=3).fit(X)
    assert _on_simplex(m.components_)
    assert np.all(m.doc_codes_[-3:] == 0)


def test_mm_objective_falls_faster_than_the_projected_step():
    # the reason "mm" is the default: the same iterations reach a lower objective of Eq. (4)
    X, _ = planted_counts(n_docs=60, seed=4)
    common = dict(max_iter=8, keep_word_codes=True, fit_tol=0.0, random_state=1)
    mm = SparseTopicalCoding(3, dictionary_step="mm", **common).fit(X)
    pg = SparseTopicalCoding(3, dictionary_step="projected", **common).fit(X)
    assert mm.objective_[0] == pytest.approx(pg.objective_[0])  # same start
    assert mm.objective_[-1] < pg.objective_[-1]


@pytest.mark.parametrize("cls,kw", [(MedSTC, dict(max_iter=3)), (OnlineMedSTC, dict(batch_size=10))])
def test_medstc_refits_the_classifier_on_label_free_codes(cls, kw):
    X, y = planted_counts(n_docs=40, seed=10)
    joint = cls(3, delta=10.0, refit_classifier=False, **kw).fit(X, y)
    refit = cls(3, delta=10.0, **kw).fit(X, y)
    np.testing.assert_array_equal(refit.components_, joint.components_)  # only η changes
    # the refit η is the batch SVM on the codes predict sees (inferred without labels)
    np.testing.assert_allclose(refit.coef_, refit._refit_svm(refit.transform(X), y, refit.refit_C_))
    assert not np.allclose(refit.coef_, joint.coef_)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_medstc_refit_C_is_chosen_by_cross_validation_on_the_training_codes():
    # refit_C="cv": the C of the refit SVM is the grid value with the best 3-fold accuracy on the label-free
    # training codes, checked against scikit-learn's own cross-validation of the same SVM
    from sklearn.model_selection import StratifiedKFold, cross_val_score
    from sklearn.svm import LinearSVC

    from rlsi.models.stc.medstc import REFIT_C_GRID

    X, y = planted_counts(n_docs=45, seed=11)
    m = MedSTC(3, delta=3600.0, max_iter=2, random_state=2).fit(X, y)
    theta = m.transform(X)
    folds = StratifiedKFold(3, shuffle=True, random_state=2)
    unit = theta / np.linalg.norm(theta, axis=1, keepdims=True)
    scores = [cross_val_score(LinearSVC(C=c, fit_intercept=False, max_iter=5000, tol=1e-4, random_state=2),
                              unit, y, cv=folds).mean() for c in REFIT_C_GRID]
    assert m.refit_C_ == REFIT_C_GRID[int(np.argmax(scores))]
    np.testing.assert_allclose(m.coef_, m._refit_svm(theta, y, m.refit_C_))
    # the same classifier as scikit-learn's SVM on the normalised codes
    svm = LinearSVC(C=m.refit_C_, fit_intercept=False, max_iter=5000, tol=1e-4, random_state=2).fit(unit, y)
    np.testing.assert_array_equal(m.predict(X), svm.predict(unit))
    # "joint" keeps Eq. (16)'s weight C/delta, a number is used as given
    joint = MedSTC(3, delta=3600.0, max_iter=2, random_state=2, refit_C="joint").fit(X, y)
    assert joint.refit_C_ == pytest.approx(1.0 / 3600.0)
    np.testing.assert_allclose(joint.coef_, joint._svm(theta, y))
    assert MedSTC(3, max_iter=1, refit_C=0.5).fit(X, y).refit_C_ == 0.5
    for bad in ("auto", 0.0, -1.0, True):
        with pytest.raises(RLSIError, match="refit_C"):
            MedSTC(3, refit_C=bad).fit(X, y)


@pytest.mark.parametrize("cls,step,extra", [(OnlineSTC, "mm", {}), (OnlineMedSTC, "mm", {}),
                                            (OnlineSTC, "lbfgs", {}),
                                            (OnlineMedSTC, "lbfgs", {"svm_codes": "label_free"})])
@pytest.mark.parametrize("batch_size", [1, 7])
def test_online_fit_with_the_factored_dictionary_equals_the_dense_updates(cls, step, extra, batch_size):
    # fit() keeps β as U·diag(c) and touches only each mini-batch's terms; the dense path (partial_fit's
    # _update) must give the same dictionary for the same start and document order
    X, y = planted_counts(n_docs=40, seed=4)
    kw = dict(batch_size=batch_size, n_epochs=2, random_state=5, max_sweeps=5, tau0=1.0, tau=2.0,
              dictionary_step=step, **extra)
    fast = cls(3, **kw).fit(X, y)
    slow = cls(3, **kw)
    slow._validate_params()
    slow._start(X.shape[1], X)
    if cls is OnlineMedSTC:
        slow.classes_ = np.unique(y)
        slow.coef_ = np.zeros((3, 3))
        slow.n_train_ = X.shape[0]
    rng = np.random.default_rng(5)
    for _ in range(2):
        order = rng.permutation(X.shape[0])
        for a in range(0, X.shape[0], batch_size):
            rows = np.sort(order[a:a + batch_size])
            slow._update(X[rows], y[rows] if cls is OnlineMedSTC else None)
    np.testing.assert_allclose(fast.components_, slow.components_, rtol=1e-9, atol=1e-12)
    assert _on_simplex(fast.components_)
    assert fast.n_batches_ == slow.n_batches_


def test_class_seeded_dictionary_starts_from_each_class_words():
    # planted topic t owns terms [8t, 8t + 8) and documents of class t are dominated by it: with
    # dictionary_init="class" topic k (class k mod 3) must start with most of its mass on its class' terms
    X, y = planted_counts(n_docs=90, seed=6)
    for K in (3, 6):
        m = MedSTC(K, dictionary_init="class")
        m._validate_params()
        beta0 = m._init_beta(X.shape[1], X, y)
        assert _on_simplex(beta0)
        for k in range(K):
            t = k % 3
            assert beta0[k, 8 * t:8 * t + 8].sum() > 0.6, (K, k, beta0[k])
    # the default start does not look at the labels
    assert MedSTC(3)._init_labels(y) is None and MedSTC(3, dictionary_init="class")._init_labels(y) is y


@pytest.mark.parametrize("unit", ["tokens", "terms"])
def test_document_completion_split_units(unit):
    X, _ = planted_counts(n_docs=40, seed=9)
    X1, X2 = split_counts(X, seed=3, unit=unit)
    np.testing.assert_array_equal((X1 + X2).toarray(), X.toarray())
    assert X1.data.min() > 0 and X2.data.min() > 0
    both = X1.multiply(X2).nnz  # terms of a document present in both halves
    if unit == "terms":
        assert both == 0
        assert 0.3 < X1.nnz / X.nnz < 0.7  # about half of the distinct terms (binomial over > 100 entries)
    else:
        assert both > 0  # a term counted several times is split between the halves
    with pytest.raises(RLSIError, match="unit"):
        split_counts(X, unit="documents")


def test_perplexity_details_floor_and_share():
    X, _ = planted_counts(n_docs=40, seed=10)
    m = OnlineSTC(3, batch_size=10, n_epochs=2).fit(X)
    X1, X2 = split_counts(X, seed=2)
    value, info = stc_perplexity(m, X1, X2, details=True)
    assert value == stc_perplexity(m, X1, X2)
    # the floor is Eq. 19 of a model whose codes explain nothing: the learned topics must beat it
    assert info["floor"] > value
    w = X2.data
    expected = np.exp(-np.sum(w * np.log(m.eps) - m.eps - gammaln(w + 1)) / X2.nnz)
    assert info["floor"] == pytest.approx(expected)
    assert 0.0 <= info["share_below_eps"] <= 1.0


def test_lda_dictionary_init_starts_from_scikit_learn_lda_topics():
    # dictionary_init="lda" (outside the paper): β⁰ is scikit-learn's batch LDA on the training counts with
    # each topic normalised onto the simplex; the default start is unchanged
    from sklearn.decomposition import LatentDirichletAllocation

    from rlsi.models.stc.core import LDA_INIT_PASSES

    X, y = planted_counts(n_docs=45, seed=12)
    lda = LatentDirichletAllocation(3, learning_method="batch", max_iter=LDA_INIT_PASSES, random_state=4).fit(X)
    expected = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    for m in (SparseTopicalCoding(3, dictionary_init="lda", random_state=4),
              MedSTC(3, dictionary_init="lda", random_state=4), OnlineSTC(3, dictionary_init="lda", random_state=4)):
        m._validate_params()
        beta0 = m._init_beta(X.shape[1], X, m._init_labels(y) if isinstance(m, MedSTC) else None)
        assert m.dictionary_init == "lda"
        assert _on_simplex(beta0)
        np.testing.assert_allclose(beta0, expected, rtol=1e-12)
    default = SparseTopicalCoding(3, random_state=4)
    assert not np.allclose(default._init_beta(X.shape[1], X), expected)
    # a fit from it stays on the simplex; a choice of MedSTC's only is refused by batch STC
    fit = SparseTopicalCoding(3, dictionary_init="lda", max_iter=1, random_state=4).fit(X)
    assert _on_simplex(fit.components_)
    with pytest.raises(RLSIError, match="dictionary_init"):
        SparseTopicalCoding(3, dictionary_init="class").fit(X)


@pytest.mark.parametrize("cls", [SparseTopicalCoding, OnlineSTC, MedSTC, OnlineMedSTC])
def test_lda_passes_sets_the_passes_of_the_lda_start(cls):
    # lda_passes (outside the paper): the LDA start is scikit-learn's batch LDA with that many passes; the
    # default stays LDA_INIT_PASSES; a non-positive or non-integer count is refused
    from sklearn.decomposition import LatentDirichletAllocation

    from rlsi.models.stc.core import LDA_INIT_PASSES

    X, y = planted_counts(n_docs=45, seed=12)
    assert cls(3).lda_passes == LDA_INIT_PASSES == 10
    lda = LatentDirichletAllocation(3, learning_method="batch", max_iter=2, random_state=4).fit(X)
    expected = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    m = cls(3, dictionary_init="lda", lda_passes=2, random_state=4)
    m._validate_params()
    beta0 = m._init_beta(X.shape[1], X, None)
    np.testing.assert_allclose(beta0, expected, rtol=1e-12)
    ten = cls(3, dictionary_init="lda", random_state=4)._init_beta(X.shape[1], X, None)
    assert not np.allclose(beta0, ten)
    assert cls(3, dictionary_init="lda", lda_passes=2, random_state=4).get_params()["lda_passes"] == 2
    for bad in (0, -1, 2.5):
        with pytest.raises(RLSIError, match="lda_passes"):
            cls(3, dictionary_init="lda", lda_passes=bad).fit(X, y)


@pytest.mark.parametrize("cls", [MedSTC, OnlineMedSTC])
def test_refit_C_is_saved_and_a_damaged_one_refused(tmp_path, cls):
    import json

    rng = np.random.default_rng(3)
    X = sp.csr_matrix(rng.poisson(1.0, (24, 15)).astype(float))
    y = np.arange(24) % 2
    model = cls(2, refit_C=0.5, **({"max_iter": 1} if cls is MedSTC else {"batch_size": 8})).fit(X, y)
    rlsi.io.save(tmp_path / "m", model=model)
    assert rlsi.io.load(tmp_path / "m")["model"].refit_C_ == 0.5
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    fitted = manifest["components"]["model"]["meta"]["fitted"]
    del fitted["refit_C_"]  # a model saved before refit_C_ was kept (and before checksums) still loads
    (tmp_path / "m" / "manifest.json").write_text(json.dumps(manifest))
    unseal(tmp_path / "m")
    assert not hasattr(rlsi.io.load(tmp_path / "m")["model"], "refit_C_")
    for bad in ("big", -1.0, True):
        fitted["refit_C_"] = bad
        (tmp_path / "m" / "manifest.json").write_text(json.dumps(manifest))
        reseal(tmp_path / "m")  # crafted, with matching checksums: the parameter check must refuse it
        with pytest.raises(RLSIError, match="refit_C_"):
            rlsi.io.load(tmp_path / "m")


@pytest.mark.parametrize("cls", [SparseTopicalCoding, OnlineSTC, MedSTC, OnlineMedSTC])
def test_the_thread_count_changes_no_number(cls, request):
    """1 and 2 threads (``n_jobs``) give bit-identical dictionaries and codes: the dictionary statistics are
    summed over a fixed number of runs of documents, in run order (they were once summed per thread, and the
    last digits of β differed). ``n_jobs`` sets the threads of fit and transform and restores them after."""
    import numba

    if not in_numba_threads(request):
        return  # compared in a child with two numba threads
    X, y = planted_counts(n_docs=200, seed=9)
    params = dict(random_state=0)
    if cls in (OnlineSTC, OnlineMedSTC):
        params["batch_size"] = 40
    else:
        params["max_iter"] = 2
    seen, out = [], []
    before = numba.get_num_threads()
    for jobs in (1, 2):
        m = cls(4, n_jobs=jobs, **params)
        original = m._code
        m._code = lambda *a, **k: (seen.append((jobs, numba.get_num_threads())), original(*a, **k))[1]
        m = m.fit(X, y) if cls in (MedSTC, OnlineMedSTC) else m.fit(X)
        out.append((m.components_, m.transform(X)))
        assert numba.get_num_threads() == before
    assert seen and all(j == t for j, t in seen)
    np.testing.assert_array_equal(out[0][0], out[1][0])
    np.testing.assert_array_equal(out[0][1], out[1][1])


def _lbfgs_reference_step(model, X, beta, alpha):
    """The online ``"lbfgs"`` step written out: code the batch under β (word codes kept), L-BFGS on the batch's
    loss over its terms with each topic's mass on them kept, blend with α — with the plain-numpy projection
    of the oracle and the batch solver run on the batch's columns."""
    from rlsi.models.stc import dictionary
    from rlsi.oracle import stc as oracle

    cols = np.unique(X.indices)
    local = X[:, cols].tocsr()
    sub = beta[:, cols]
    theta = np.zeros((X.shape[0], model.n_components))
    S = np.zeros((X.nnz, model.n_components))
    model._code(local, sub, theta, S=S, want_grad=False)
    mass = sub.sum(axis=1)
    new, losses = dictionary.lbfgs_dictionary(local, sub, S, model.eps, mass=mass)
    for row, m in zip(new, mass):  # on {x ≥ 1e-30 m, Σ x = m}: the scaled projection leaves it in place
        np.testing.assert_allclose(row, m * oracle.project_simplex(row / m), rtol=1e-10, atol=1e-14)
    assert losses[-1] <= losses[0]
    out = np.array(beta)
    out[:, cols] = (1 - alpha) * sub + alpha * new
    return out, losses


def test_online_lbfgs_step_moves_the_batch_terms_and_keeps_their_mass():
    X, _ = planted_counts(n_docs=40, seed=11)
    batch = X[:3]  # a mini-batch that misses some of the vocabulary
    assert np.unique(batch.indices).size < X.shape[1]
    m = OnlineSTC(3, dictionary_step="lbfgs", tau0=3.0, tau=10.0, max_sweeps=5, random_state=2)
    m.partial_fit(batch)
    start = OnlineSTC(3, dictionary_step="lbfgs", max_sweeps=5, random_state=2)
    start._start(X.shape[1], batch)
    beta0 = start.components_
    ref, losses = _lbfgs_reference_step(start, batch, beta0, 3.0 / 10.0)
    np.testing.assert_allclose(m.components_, ref, rtol=1e-12, atol=1e-15)
    outside = np.setdiff1d(np.arange(X.shape[1]), batch.indices)
    np.testing.assert_array_equal(m.components_[:, outside], beta0[:, outside])  # other terms untouched
    assert _on_simplex(m.components_)
    assert losses[-1] < losses[0]


def test_online_lbfgs_is_refused_for_nothing_and_lbfgs_batch_still_needs_kept_codes():
    X, _ = planted_counts(n_docs=30, seed=1)
    OnlineSTC(3, dictionary_step="lbfgs", batch_size=10).fit(X)
    with pytest.raises(RLSIError, match="keep_word_codes"):
        SparseTopicalCoding(3, dictionary_step="lbfgs").fit(X)


def _pegasos_reference(coef, theta, y, t, C, delta, n_train):
    """One Pegasos step on ½‖η‖² + C Σ hinge_Δ (plain loops) and the projection on ‖η‖ ≤ √(2 C N Δ)."""
    eta = np.array(coef)
    sub = np.zeros_like(eta)
    for d in range(theta.shape[0]):
        scores = [delta * (c != y[d]) + eta[c] @ theta[d] - eta[y[d]] @ theta[d] for c in range(eta.shape[0])]
        yhat = int(np.argmax(scores))
        if yhat != y[d]:
            sub[yhat] += theta[d]
            sub[y[d]] -= theta[d]
    eta = (1 - 1 / t) * eta - C * n_train / theta.shape[0] / t * sub
    radius = np.sqrt(2 * C * n_train * delta)
    norm = np.linalg.norm(eta)
    return eta * radius / norm if norm > radius else eta


@pytest.mark.parametrize("step", ["mm", "lbfgs"])
def test_label_free_svm_codes_take_the_pegasos_step_on_the_codes_without_labels(step):
    X, y = planted_counts(n_docs=30, seed=12)
    kw = dict(C=0.5, delta=20.0, max_sweeps=5, random_state=1, dictionary_step=step, svm_codes="label_free")
    m = OnlineMedSTC(3, **kw)
    first, second = X[:10], X[10:20]
    m.partial_fit(first, y[:10], classes=[0, 1, 2])
    # first step: η⁰ = 0, the label-free codes of the batch under β⁰ (what transform gives)
    ref = OnlineMedSTC(3, **kw)
    ref._start(X.shape[1], first)
    theta0 = ref.transform(first)
    eta1 = _pegasos_reference(np.zeros((3, 3)), theta0, y[:10], 1, 0.5, 20.0, 10)
    np.testing.assert_allclose(m.coef_, eta1, rtol=1e-10, atol=1e-10)
    # second step: codes under the updated β, N = 20 documents seen
    theta1 = m.transform(second)
    m.partial_fit(second, y[10:20])
    np.testing.assert_allclose(m.coef_, _pegasos_reference(eta1, theta1, y[10:20], 2, 0.5, 20.0, 20),
                               rtol=1e-10, atol=1e-10)
    assert np.linalg.norm(m.coef_) <= np.sqrt(2 * 0.5 * 20 * 20.0) * (1 + 1e-12)


def test_joint_svm_codes_project_eta_on_the_pegasos_ball():
    X, y = planted_counts(n_docs=30, seed=13)
    m = OnlineMedSTC(3, C=5.0, delta=50.0, batch_size=10, max_sweeps=5, hinge="linearized",
                     refit_classifier=False).fit(X, y)
    assert np.linalg.norm(m.coef_) <= np.sqrt(2 * 5.0 * 30 * 50.0) * (1 + 1e-12)


def test_svm_codes_is_validated_and_saved(tmp_path):
    X, y = planted_counts(n_docs=30, seed=14)
    with pytest.raises(RLSIError, match="svm_codes"):
        OnlineMedSTC(3, svm_codes="shifted").fit(X, y)
    m = OnlineMedSTC(3, batch_size=10, svm_codes="label_free", dictionary_step="lbfgs").fit(X, y)
    rlsi.io.save(tmp_path / "m", model=m)
    back = rlsi.io.load(tmp_path / "m")["model"]
    assert back.svm_codes == "label_free" and back.dictionary_step == "lbfgs"
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
