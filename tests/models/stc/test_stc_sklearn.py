"""scikit-learn's estimator checks on the STC estimators: SparseTopicalCoding, OnlineSTC (transformers on
word counts) and MedSTC, OnlineMedSTC (classifiers on word counts).

Each check that is expected to fail is listed in ``EXPECTED_FAILED`` with a one-line reason (deliberate
deviations only; with scikit-learn >= 1.8 the checks run with ``xfail_strict``, so an entry that starts
passing fails the test). Parameters are chosen for speed (K = 2, few iterations and sweeps): the checks
test the API, not the fit.
"""

import inspect

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rlsi.models.stc import MedSTC, OnlineMedSTC, OnlineSTC, SparseTopicalCoding

# No check is expected to fail. Deliberate choices that make checks pass: the positive_only tag (word
# counts; negative entries are refused), MedSTC's classifier tags with poor_score (see its __sklearn_tags__).
EXPECTED_FAILED = {
    "SparseTopicalCoding": {},
    "OnlineSTC": {},
    "MedSTC": {},
    "OnlineMedSTC": {},
}

_FAST = dict(n_components=2, max_sweeps=5, random_state=0)
ESTIMATORS = [
    SparseTopicalCoding(max_iter=3, **_FAST),
    OnlineSTC(batch_size=16, **_FAST),
    MedSTC(max_iter=3, delta=1.0, **_FAST),
    OnlineMedSTC(batch_size=16, n_epochs=2, delta=1.0, **_FAST),
]


def expected_failed(estimator):
    return EXPECTED_FAILED[type(estimator).__name__]


_STRICT = ({"xfail_strict": True} if "xfail_strict" in inspect.signature(parametrize_with_checks).parameters
           else {})


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed, **_STRICT)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_every_stc_estimator_is_checked():
    import rlsi.models.stc as stc

    public = {name for name in dir(stc) if inspect.isclass(getattr(stc, name)) and hasattr(getattr(stc, name), "fit")}
    assert public == {type(e).__name__ for e in ESTIMATORS} == set(EXPECTED_FAILED)
