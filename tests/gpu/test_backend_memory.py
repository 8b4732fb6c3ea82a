"""Device resolution, the clear messages without CuPy or a card, and the memory plan."""

import importlib.util

import numpy as np
import pytest

from rlsi import BatchRLSI, OnlineRLSI
from rlsi.errors import RLSIError
from rlsi.gpu import memory
from rlsi.gpu.backend import DEVICES, cuda_available, numpy_backend, resolve
from rlsi.gpu.batch import DeviceRLSIProblem

from conftest import planted_corpus

HAS_CUPY = importlib.util.find_spec("cupy") is not None


def test_resolve_names_the_choices():
    assert resolve("numpy:float64").dtype == np.float64
    assert resolve("numpy").dtype == np.float32 and resolve("numpy").name == "numpy"
    with pytest.raises(RLSIError, match=r"device='tpu' is not a device; choose one of 'cpu'"):
        resolve("tpu")
    with pytest.raises(RLSIError, match="device='tpu' is not supported"):
        BatchRLSI(3, device="tpu").fit(planted_corpus())
    assert set(DEVICES) >= {"cpu", "cuda", "cuda:float64", "numpy:float64"}


@pytest.mark.skipif(cuda_available(), reason="a CUDA card is usable here: the missing-CUDA message cannot occur")
@pytest.mark.parametrize("est", [BatchRLSI(3, device="cuda"), OnlineRLSI(3, device="cuda")])
def test_cuda_without_cupy_or_card_is_one_clear_message(est):
    with pytest.raises(RLSIError) as err:
        est.fit(planted_corpus())
    msg = str(err.value)
    assert "\n" not in msg and "device='cpu'" in msg
    if not HAS_CUPY:
        assert 'pip install "rlsi[gpu]"' in msg and "CuPy" in msg
    else:
        assert "no CUDA card" in msg


def test_paper_shape_plans_within_40_gb():
    """1.6M docs x 7M terms, nnz 326M, K = 500, float32, topics at the paper's AvgComp 0.0044."""
    p = memory.plan(1_600_000, 7_000_000, 326_080_841, 500, topic_density=0.0044)
    assert not p.streamed
    assert p.components["W"] == 1_600_000 * 500 * 4
    assert p.components["X"] == 326_080_841 * 8 + 4 * 1_600_001
    assert p.components["U-step block"] == 6 * memory.TERM_ROWS * 500 * 4
    assert 9e9 < p.total < 40e9
    # dense R and dense U of the paper's shape alone would be 28 GB: they are never planned
    dense = memory.plan(1_600_000, 7_000_000, 326_080_841, 500, dense_topics=True)
    assert dense.components["U"] == 7_000_000 * 500 * 4


def test_streaming_then_the_one_line_error():
    args = (1_600_000, 7_000_000, 326_080_841, 500)
    p = memory.plan(*args, budget=10e9, topic_density=0.0044)
    assert p.streamed and "D blocks" in p.components and p.total < 10e9
    with pytest.raises(RLSIError) as err:
        memory.check(memory.plan(*args, budget=2e9, topic_density=0.0044), 2e9)
    msg = str(err.value)
    assert "\n" not in msg and "needs about" in msg and "streamed from host memory" in msg
    assert "1600000 x 7000000" in msg and "2.00 GB usable" in msg


def test_the_problem_checks_its_plan_before_work():
    X = planted_corpus()
    W = np.ones((X.shape[0], 4))
    with pytest.raises(RLSIError, match=r"needs about .* MB .*; the card has 0\.0 MB usable"):
        DeviceRLSIProblem(numpy_backend(), X, W, lambda1=0.1, lambda2=1.0, budget=10_000)


def test_online_memory_message():
    with pytest.raises(RLSIError, match=r"needs about 29\.82 GB .*7000000 terms, K=500"):
        memory.check_online(numpy_backend(), 7_000_000, 500, 10_000_000, 100_000, budget=20e9)
    assert memory.check_online(numpy_backend(), 7_000_000, 500, 10_000_000, 100_000) > 28e9
