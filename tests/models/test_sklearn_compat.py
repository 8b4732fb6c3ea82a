"""scikit-learn's estimator checks on every topic model: BatchRLSI, OnlineRLSI, the baselines LSI, PLSI,
LDA and NMF, and the group models GroupRLSI and GroupNMF (supervised transformers: their tags say that fit
needs y, so the checks pass class labels). CRLSI and CNMF are GroupRLSI and GroupNMF with no shared topic
(only ``__init__`` and the parameter check differ): they get the checks of the constructor and parameters,
and one fit, instead of the whole list again.

Each check that is expected to fail is listed in ``EXPECTED_FAILED`` with a one-line reason (deliberate
deviations only; ``xfail_strict = true`` in pyproject.toml makes an entry that starts passing fail the test,
on every supported scikit-learn).

One check is skipped by scikit-learn itself for every estimator: ``check_array_api_input`` needs the
``SCIPY_ARRAY_API`` environment variable; the models work on numpy/scipy inputs only.

The text vectorizers take documents (str), which these checks cannot feed; their contract is tested by
hand in ``tests/text/test_vectorizer_contract.py``.

Parameters are chosen for speed (K <= 2, few iterations): the checks test the API, not the fit.
"""

import inspect
from pathlib import Path

import pytest
from sklearn.base import clone
from sklearn.utils.estimator_checks import (check_get_params_invariance, check_no_attributes_set_in_init,
                                            check_parameters_default_constructible, check_set_params,
                                            parametrize_with_checks)

from rlsi.models import CNMF, CRLSI, LDA, LSI, NMF, PLSI, BatchRLSI, GroupNMF, GroupRLSI, OnlineRLSI

_ARPACK = ("ARPACK needs n_components < min(n_samples, n_features): a 1-sample or 1-feature X is refused with "
           "a message naming that limit, not with scikit-learn's '1 sample'/'1 feature' wording")

_LABELS = ("fit_transform(X, y) gives each document the vectors of its given class; transform(X) has no labels "
           "and assigns the class of smallest reconstruction error (§4.3), which differs on the checks' "
           "overlapping classes (with labels, transform(X, y) reproduces the training vectors: test_group.py)")
_TRANSFORM_CHECKS = ("check_transformer_general", "check_transformer_general(readonly_memmap=True)",
                     "check_transformer_data_not_an_array")
_GROUP = dict.fromkeys(_TRANSFORM_CHECKS, _LABELS)

EXPECTED_FAILED = {
    "BatchRLSI": {},
    "OnlineRLSI": {},
    "LSI": {"check_fit2d_1sample": _ARPACK, "check_fit2d_1feature": _ARPACK},
    "PLSI": {},
    "LDA": {},
    "NMF": {},
    "GroupRLSI": _GROUP,
    "GroupNMF": _GROUP,
}


# LSI: K = 1 because one check fits on 2 features and ARPACK needs K < min(n_samples, n_features).
# NMF needs about 200 iterations (scikit-learn's default) on the checks' data: with 100 or fewer,
# fit_transform and transform disagree (scikit-learn's own NMF too), a convergence matter, not an API one.
ESTIMATORS = [
    BatchRLSI(n_components=2, lambda1=0.01, max_iter=20, random_state=0),
    OnlineRLSI(n_components=2, lambda1=0.01, batch_size=16, inner_max_iter=20, random_state=0),
    LSI(n_components=1),
    PLSI(n_components=2, max_iter=20),
    LDA(n_components=2, max_iter=1),
    NMF(n_components=2, max_iter=200),
    GroupRLSI(n_shared_topics=1, n_class_topics=1, lambda1=0.01, max_iter=10, random_state=0),
    GroupNMF(n_shared_topics=1, n_class_topics=1, max_iter=50, random_state=0),
]
# subclasses that change only the constructor: its checks, and one fit (test_class_only_models)
CONSTRUCTOR_ONLY = [
    CRLSI(n_class_topics=1, lambda1=0.01, max_iter=10, random_state=0),
    CNMF(n_class_topics=1, max_iter=50, random_state=0),
]


def expected_failed(estimator):
    return EXPECTED_FAILED[type(estimator).__name__]


# Tiny check datasets do not converge in a few iterations; the warning is expected there.
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("estimator", CONSTRUCTOR_ONLY, ids=lambda e: type(e).__name__)
def test_class_only_models(estimator):
    import numpy as np

    name = type(estimator).__name__
    for check in (check_parameters_default_constructible, check_no_attributes_set_in_init,
                  check_get_params_invariance, check_set_params):
        check(name, clone(estimator))
    X = np.abs(np.random.default_rng(0).normal(size=(12, 6)))
    y = np.repeat([0, 1], 6)
    W = clone(estimator).fit(X, y).transform(X, y)
    assert W.shape == (12, 2) and np.isfinite(W).all()


def test_expected_failures_are_strict(request):
    """scikit-learn 1.6 and 1.7 mark the expected failures with a plain ``xfail`` and 1.8+ defer to the
    pytest setting: with it on, a listed check that passes fails, whatever the version."""
    assert request.config.getini("xfail_strict") is True


def test_every_estimator_is_checked():
    import rlsi.models as models

    checked = {type(e).__name__ for e in ESTIMATORS + CONSTRUCTOR_ONLY}
    # the STC family (word counts, a classifier among them) has its own checks beside its tests
    stc_checks = Path(__file__).parent / "stc" / "test_stc_sklearn.py"
    if stc_checks.is_file():
        checked |= {"SparseTopicalCoding", "OnlineSTC", "MedSTC", "OnlineMedSTC"}
    public = {name for name in dir(models) if inspect.isclass(getattr(models, name))
              and hasattr(getattr(models, name), "fit")}
    assert public <= checked, f"estimators without scikit-learn checks: {sorted(public - checked)}"
    assert set(EXPECTED_FAILED) == {type(e).__name__ for e in ESTIMATORS}
