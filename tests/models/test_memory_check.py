"""The memory check before a fit (rlsi.models.memory_check): the floor refuses and the bound accepts without
predicting the topics; the prediction decides in between; a refusal says what would fit, in the case's
terms; the estimates keep their order (floor <= prediction <= bound)."""

import numpy as np
import pytest

from rlsi.datasets.synthetic import make_corpus
from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI, OnlineRLSI
from rlsi.models.memory import ALLOCATOR_SHARE, FREED, SLACK, estimate_for
from rlsi.models.memory_check import bound_estimate, check_fit, floor_estimate


@pytest.fixture(scope="module")
def X():
    return make_corpus(2000, 20_000, 30, n_topics=10, seed=0).X  # M x K large enough for the topics to weigh


def test_the_estimates_are_ordered_and_carry_the_slack(X):
    model = BatchRLSI(100, max_iter=2, random_state=0)
    floor, predicted, bound = floor_estimate(model, X).peak, estimate_for(model, X).peak, bound_estimate(model, X).peak
    assert floor <= predicted <= bound
    est = estimate_for(model, X, topic_density=0.05)
    counted = sum(v for k, v in est.components.items() if k not in (SLACK, "process before the fit"))
    assert est.components[SLACK] == int(ALLOCATOR_SHARE * counted)
    assert FREED not in est.components  # two iterations; more hold an earlier one's pages
    long = estimate_for(BatchRLSI(100, max_iter=50, random_state=0), X, topic_density=0.05)
    assert long.components[FREED] > 0 and long.peak > est.peak
    assert SLACK not in floor_estimate(model, X).components


def test_the_bound_accepts_without_predicting(X):
    status = []
    check = check_fit(BatchRLSI(100, max_iter=2, random_state=0), X, memory_limit=10 * 2**30, baseline=0, status=status.append)
    assert check.method == "bound" and status == [] and "density bound" in check.describe()


def test_the_floor_refuses_at_once_with_what_would_fit(X):
    model = BatchRLSI(100, max_iter=2, random_state=0)
    floor = floor_estimate(model, X).peak
    status = []
    with pytest.raises(RLSIError) as exc:
        check_fit(model, X, memory_limit=floor // 2, baseline=0, status=status.append)
    message = str(exc.value)
    assert status == [] and "more than the" in message and "--memory-limit" in message
    assert "float32" in message  # X is float64 here
    assert "a machine with more memory" in message


def test_a_float32_matrix_is_not_advised_for_a_float32_matrix(X):
    X32 = X.astype(np.float32)
    model = BatchRLSI(100, max_iter=2, random_state=0)
    with pytest.raises(RLSIError) as exc:
        check_fit(model, X32, memory_limit=floor_estimate(model, X32).peak // 2, baseline=0)
    assert "float32" not in str(exc.value).split("; use ")[1]


def test_fewer_topics_are_advised_when_they_fit(X):
    model = BatchRLSI(400, random_state=0)
    limit = (floor_estimate(BatchRLSI(100, random_state=0), X).peak + floor_estimate(model, X).peak) // 2
    with pytest.raises(RLSIError, match=r"at most (\d+) topics \(-k \1\)") as exc:
        check_fit(model, X, memory_limit=limit, baseline=0)
    k = int(str(exc.value).split("at most ")[1].split()[0])
    assert 100 <= k < 400 and floor_estimate(BatchRLSI(k, random_state=0), X).peak <= limit
    assert floor_estimate(BatchRLSI(k + 1, random_state=0), X).peak > limit


def test_between_floor_and_bound_the_prediction_decides_and_says_so(X):
    model = BatchRLSI(100, lambda1=0.01, lambda2=1.0, max_iter=2, random_state=0)  # sparse topics: below the bound
    floor, bound = floor_estimate(model, X).peak, bound_estimate(model, X).peak
    predicted = estimate_for(model, X).peak
    assert floor < predicted < bound
    status = []
    check = check_fit(model, X, memory_limit=(predicted + bound) // 2, baseline=0, status=status.append)
    assert check.method == "prediction" and len(status) == 1 and "sample" in status[0]
    with pytest.raises(RLSIError):
        check_fit(model, X, memory_limit=(floor + predicted) // 2, baseline=0)


def test_an_online_fit_names_its_mini_batch(X):
    model = OnlineRLSI(20, batch_size=3000, random_state=0)
    est = estimate_for(model, X)
    own = est.peak  # baseline 0
    with pytest.raises(RLSIError, match="--batch-size than 3000") as exc:
        check_fit(model, X, memory_limit=own // 2, baseline=0)
    assert "--online (" not in str(exc.value)


def test_a_limit_below_the_process_itself_says_so(X):
    with pytest.raises(RLSIError, match="the process holds before the fit"):
        check_fit(BatchRLSI(10, random_state=0), X, memory_limit=100 * 2**20, baseline=200 * 2**20)
