"""rlsi.regularized_lsi, the public solver: the numbers of BatchRLSI.fit_transform, as (U, V, info)."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import rlsi
from rlsi import BatchRLSI, regularized_lsi
from rlsi.errors import RLSIError

from conftest import planted_corpus


@pytest.mark.parametrize("params", [dict(lambda1=0.01), dict(target_terms_per_topic=12, doc_penalty="l1"),
                                    dict(lambda1=0.01, topic_representation="dense", dtype=np.float32)])
def test_the_solver_is_the_estimator(params):
    params = dict(params)
    dtype = params.pop("dtype", np.float64)
    X = planted_corpus(n_docs=150, n_terms=80, seed=3, dtype=dtype)
    kw = dict(max_iter=5, tol=0, random_state=1, **params)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        U, V, info = regularized_lsi(X, 4, **kw)
        model = BatchRLSI(4, **kw)
        W = model.fit_transform(X)
    assert U.shape == (80, 4) and V.shape == (4, 150) and U.dtype == dtype
    assert (U != model.components_.T).nnz == 0
    np.testing.assert_array_equal(V, W.T)
    np.testing.assert_array_equal(info["objective"], model.objective_)
    assert info["n_iter"] == model.n_iter_ == 5 and not info["converged"]
    assert info["lambda1_"] == model.lambda1_
    assert rlsi.regularized_lsi is regularized_lsi


def test_the_solver_takes_a_given_v_and_checks_its_input():
    X = planted_corpus(n_docs=60, n_terms=60, seed=4)
    V0 = np.random.default_rng(0).random((60, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _, V, _ = regularized_lsi(X, 3, V_init=V0, lambda1=0.01, max_iter=2)
        W = BatchRLSI(3, lambda1=0.01, max_iter=2).fit_transform(X, V_init=V0)
    np.testing.assert_array_equal(V, W.T)
    with pytest.raises(RLSIError, match="lambda1"):
        regularized_lsi(X, 3, lambda1=-1.0)
    with pytest.raises(RLSIError):
        regularized_lsi(X, 3, V_init=V0[:5])
