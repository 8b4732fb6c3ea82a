"""Sparse and dense topic representations of the batch U-step give the same fit."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from rlsi import BatchRLSI
from rlsi.errors import RLSIError
from rlsi.models import local

from conftest import planted_corpus


def _fit(X, tuning=None, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = BatchRLSI(6, random_state=0, max_iter=12, tol=0, inner_tol=1e-10, **kw)
        return model.with_tuning(**(tuning or {})).fit(X)


# λ₁ from topics of a few terms to topics with most weights non-zero
@pytest.mark.parametrize("lambda1", [3.0, 0.3, 0.01, 1e-4])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sparse_and_dense_topics_give_the_same_fit(lambda1, dtype):
    X = planted_corpus(n_docs=300, n_terms=150, seed=2, dtype=dtype)
    sparse = _fit(X, lambda1=lambda1, topic_representation="sparse")
    dense = _fit(X, lambda1=lambda1, topic_representation="dense")
    assert sparse.topic_representation_ == "sparse" and dense.topic_representation_ == "dense"
    rtol, atol = (1e-10, 1e-10) if dtype == np.float64 else (1e-4, 1e-5)
    np.testing.assert_allclose(dense.objective_, sparse.objective_, rtol=rtol)
    np.testing.assert_allclose(dense.components_.toarray(), sparse.components_.toarray(), atol=atol)
    assert dense.components_.format == "csr" and dense.components_.dtype == dtype


def test_auto_switches_mid_fit_without_changing_the_fit():
    X = planted_corpus(n_docs=300, n_terms=150, seed=3)
    sparse = _fit(X, lambda1=0.05, topic_representation="sparse")
    density = sparse.components_.nnz / np.prod(sparse.components_.shape)
    # below the fit's density: auto goes dense
    auto = _fit(X, lambda1=0.05, topic_representation="auto", tuning=dict(dense_above=density / 2))
    assert auto.topic_representation_ == "dense"
    np.testing.assert_allclose(auto.objective_, sparse.objective_, rtol=1e-10)
    np.testing.assert_allclose(auto.components_.toarray(), sparse.components_.toarray(), atol=1e-10)
    # never dense, not even for the V-step's product: bit-identical to sparse
    never = _fit(X, lambda1=0.05, topic_representation="auto", tuning=dict(dense_above=1.0, sparse_work_share=np.inf))
    np.testing.assert_array_equal(never.objective_, sparse.objective_)


def test_dense_copy_for_the_v_step_changes_only_rounding(monkeypatch):
    # sparse U-steps throughout; the V-step's product from a dense copy of U whenever the sparse one would
    # do any work at all (share 0): Φ is the same sums, G = UᵀU comes from BLAS instead of scipy
    X = planted_corpus(n_docs=300, n_terms=150, seed=3)
    sparse = _fit(X, lambda1=0.05, topic_representation="sparse")
    copies = []
    original = local.RLSIProblem.v_step_topics

    def spy(self):
        U = original(self)
        copies.append(isinstance(U, np.ndarray))
        return U

    monkeypatch.setattr(local.RLSIProblem, "v_step_topics", spy)
    auto = _fit(X, lambda1=0.05, topic_representation="auto", tuning=dict(dense_above=1.0, sparse_work_share=0.0))
    assert auto.topic_representation_ == "sparse" and copies and all(copies)
    np.testing.assert_allclose(auto.objective_, sparse.objective_, rtol=1e-12)
    np.testing.assert_allclose(auto.components_.toarray(), sparse.components_.toarray(), atol=1e-10)


def test_auto_keeps_sparse_topics_sparse_and_respects_the_memory_cap():
    X = planted_corpus(n_docs=300, n_terms=2000, seed=4)  # 4 planted topics of 12 terms in 2000
    assert _fit(X, lambda1=3.0).topic_representation_ == "sparse"
    assert _fit(X, lambda1=1e-4).topic_representation_ == "dense"
    assert _fit(X, lambda1=1e-4, tuning=dict(dense_max_bytes=100)).topic_representation_ == "sparse"


def test_representation_is_validated():
    with pytest.raises(RLSIError, match="topic_representation='csr' is not supported"):
        BatchRLSI(2, topic_representation="csr").fit(planted_corpus())
