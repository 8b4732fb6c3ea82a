"""BatchRLSI's topic warm start: ``fit(X, V_init=..., topic_init=...)`` starts the first U-step from given topics."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning

from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI, regularized_lsi

from conftest import planted_corpus

PARAMS = dict(lambda1=0.5, lambda2=0.5, random_state=0)


@pytest.fixture(scope="module")
def start():
    """A corpus and a fit of it stopped early (its topics and document vectors: a start to go on from)."""
    X = planted_corpus(n_topics=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        first = BatchRLSI(4, max_iter=3, **PARAMS)
        W = first.fit_transform(X)
    return X, first, W


def _fit(X, **fit_params):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = BatchRLSI(4, max_iter=4, tol=0, **PARAMS)
        W = model.fit_transform(X, **fit_params)
    return model, W


def test_the_first_u_step_goes_on_from_the_given_topics(start):
    X, first, W = start
    warm, _ = _fit(X, V_init=W, topic_init=first)
    # each step from (U₀, W₀) is a descent step: the first objective is at most the start's
    assert warm.objective_[0] <= first.objective_[-1] * (1 + 1e-12)
    vectors_only, _ = _fit(X, V_init=W)  # the same W₀, the first U-step from zero: another path
    assert abs(warm.components_ - vectors_only.components_).max() > 1e-8
    # a model, its components_ (CSR or dense) and the function give the same fit
    for given in (first.components_, first.components_.toarray()):
        again, _ = _fit(X, V_init=W, topic_init=given)
        assert (abs(again.components_ - warm.components_) > 0).nnz == 0
    U, V, info = regularized_lsi(X, 4, V_init=W, topic_init=first, max_iter=4, tol=0, **PARAMS)
    assert (abs(U.T - warm.components_) > 0).nnz == 0
    np.testing.assert_array_equal(info["objective"], warm.objective_)


def test_exact_u_steps_reach_the_same_topics_from_any_start(start):
    """With ``topic_sweeps=None`` every U-step is solved to ``inner_tol`` (a strictly convex problem): the start
    of the first one changes only the sweeps, not the solution."""
    X, first, W = start
    exact = dict(topic_sweeps=None, inner_tol=1e-12, inner_max_iter=1000, max_iter=3, tol=0, **PARAMS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = BatchRLSI(4, **exact).fit(X, V_init=W, topic_init=first)
        b = BatchRLSI(4, **exact).fit(X, V_init=W)
    np.testing.assert_allclose(a.components_.toarray(), b.components_.toarray(), atol=1e-9)


@pytest.mark.parametrize("representation", ["sparse", "dense"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_topics_alone_start_from_their_projection(start, representation, dtype):
    X, first, _ = start
    X = X.astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = BatchRLSI(4, max_iter=4, tol=0, topic_representation=representation, **PARAMS)
        model.fit(X, topic_init=first)
        W0 = first.transform(X)  # the ridge projection on the given topics
        both = BatchRLSI(4, max_iter=4, tol=0, topic_representation=representation, **PARAMS)
        both.fit(X, V_init=W0, topic_init=first)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    np.testing.assert_allclose(model.components_.toarray(), both.components_.toarray(), atol=tol)
    assert model.components_.dtype == dtype and model.objective_[0] <= first.objective_[-1] * (1 + 1e-5)


def test_bad_topic_init_is_one_clear_error(start):
    X, first, W = start
    with pytest.raises(RLSIError, match=r"topic_init has shape \(4, 119\).*\(4, 120\)"):
        BatchRLSI(4, **PARAMS).fit(X, topic_init=first.components_[:, 1:])
    with pytest.raises(RLSIError, match="topic_init has shape"):
        BatchRLSI(5, **PARAMS).fit(X, topic_init=first)
    with pytest.raises(RLSIError, match="not fitted"):
        BatchRLSI(4, **PARAMS).fit(X, topic_init=BatchRLSI(4))
    nan = first.components_.toarray()
    nan[0, 0] = np.nan
    with pytest.raises(RLSIError, match="NaN|infinity"):
        BatchRLSI(4, **PARAMS).fit(X, topic_init=nan)
    with pytest.raises(RLSIError, match="not available on this placement"):
        BatchRLSI(4, placement="numpy", **PARAMS).fit(X, topic_init=first)
    assert sp.issparse(first.components_)  # the given model is left as it was
