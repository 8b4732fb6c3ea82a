"""scikit-learn's estimator checks on BatchRLSI.

Skipped checks, each for a stated reason, are listed in ``EXPECTED_FAILED``.
"""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from rlsi.models import BatchRLSI

# No check is expected to fail. One is skipped by scikit-learn itself (check_array_api_input needs the
# SCIPY_ARRAY_API environment variable); RLSI works on numpy/scipy inputs only.
EXPECTED_FAILED = {}


# Tiny check datasets do not converge in 20 iterations; the warning is expected there.
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@parametrize_with_checks([BatchRLSI(n_components=2, lambda1=0.01, max_iter=20, random_state=0)],
                         expected_failed_checks=lambda est: EXPECTED_FAILED)
def test_sklearn_compatible(estimator, check):
    check(estimator)
