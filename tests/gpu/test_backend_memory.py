"""Device resolution, the clear messages without CuPy or a card, and the memory plan."""

import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi import BatchRLSI, OnlineRLSI
from rlsi.errors import RLSIError
from rlsi.gpu import memory
from rlsi.gpu.backend import DEVICES, cuda_available, numpy_backend, resolve
from rlsi.datasets.synthetic import make_corpus
from rlsi.gpu.batch import DeviceRLSIProblem
from rlsi.models.solver import initial_doc_vectors

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


PAPER = (1_600_000, 7_000_000, 326_080_841, 500)  # docs, terms, nnz, K: the TOIS paper's web-scale run


def test_paper_shape_plans_within_40_gb():
    """1.6M docs x 7M terms, nnz 326M, K = 500, float32, topics at the paper's AvgComp 0.0044: every array the
    fit allocates, resident and per phase."""
    p = memory.plan(*PAPER, topic_density=0.0044)
    assert not p.streamed
    assert p.resident["W"] == 1_600_000 * 500 * 4
    assert p.resident["X"] == 326_080_841 * 8 + 4 * 1_600_001
    assert p.resident["U"] == int(0.0044 * 7_000_000 * 500) * 8 + 4 * 7_000_001
    t = memory.TERM_ROWS
    assert p.phases["U-step"]["one solve of term rows"] == 5 * t * 500 * 4 + 2 * 32 * t * 4 + 2 * t * 500
    assert p.peak_phase == "V-step" and p.total == sum(p.resident.values()) + p.phase_bytes["V-step"]
    assert 9e9 < p.total < 40e9
    # a corpus made on the card adds the set-up's given W0 and transposition; denser topics, more U
    assert p.total < memory.plan(*PAPER, topic_density=0.0044, card=True).total < 40e9
    assert memory.plan(*PAPER).total < 40e9  # the default density 0.02
    # dense topics of the paper's shape alone would be 14 GB: "auto" never plans them there (above 2 GB)
    assert memory.plan(*PAPER, dense_topics=True).resident["U"] == 7_000_000 * 500 * 4


def test_online_paper_vocabulary_plans_within_40_gb():
    """OnlineRLSI at 7M terms, K = 500, float32, ξ = 10, mini-batches of 1,000 documents (nnz 204k): R and U
    (14 GB each) and blocks of term_rows rows, nothing else of M x K."""
    p = memory.online_plan(7_000_000, 500, 204_000, 1000, 4, n_inner=10, topic_density=0.0044)
    assert p.resident["R"] == p.resident["U"] == 7_000_000 * 500 * 4
    other = p.total - p.resident["R"] - p.resident["U"]
    assert other < 5e9 and 28e9 < p.total < 40e9
    assert memory.online_plan(7_000_000, 500, 204_000, 1000, 4, n_inner=10).total < 40e9


def test_streaming_then_the_one_line_error():
    p = memory.plan(*PAPER, budget=10e9, topic_density=0.0044)
    assert p.streamed and "D blocks" in p.resident and p.total < 10e9
    with pytest.raises(RLSIError) as err:
        memory.check(memory.plan(*PAPER, budget=2e9, topic_density=0.0044), 2e9)
    msg = str(err.value)
    assert "\n" not in msg and "needs about" in msg and "streamed from host memory" in msg
    assert "1600000 x 7000000" in msg and "2.00 GB usable" in msg


def test_the_problem_checks_its_plan_before_work():
    X = planted_corpus()
    W = np.ones((X.shape[0], 4))
    with pytest.raises(RLSIError, match=r"needs about .* MB .*; the card has 0\.0 MB usable"):
        DeviceRLSIProblem(numpy_backend(), X, W, lambda1=0.1, lambda2=1.0, budget=10_000)


def test_online_memory_message():
    with pytest.raises(RLSIError, match=r"needs about 3\d\.\d\d GB .*R 14\.00 GB.*7000000 terms, K=500"):
        memory.check_online(numpy_backend(), 7_000_000, 500, 10_000_000, 100_000, budget=20e9)
    assert memory.check_online(numpy_backend(), 7_000_000, 500, 10_000_000, 100_000).total > 28e9


@pytest.fixture(scope="module")
def wide():
    """Many more terms and documents than one block holds (40 term blocks, 47 document blocks; Φ in blocks of 2
    topics), so that an array of the whole M x K or N x K would stand out from the blocks."""
    return make_corpus(6000, 20000, 40, n_topics=10, topic_vocab=800, seed=1).X


#: Host-side bookkeeping that is no device memory (K x K arrays, Python objects, numpy's gather-then-convert
#: of rows where CuPy gathers in one copy): allowed above the plan when it is measured on numpy.
HOST_SLACK = 64_000 + 512 * 8 * 8


@pytest.mark.parametrize("lam,opts", [(0.15, {}), (0.15, {"phi_cols": 5}), (0.15, {"topics": "dense"}),
                                      (0.15, {"stream": True}), (0.15, {"doc_penalty": "l1"}), (0.015, {})])
def test_plan_counts_what_the_steps_allocate(wide, lam, opts):
    """The device steps on numpy under tracemalloc: the arrays that live through the fit are the plan's, to the
    byte, and what each step allocates beyond them stays within the plan's phase (at the density reached)."""
    import tracemalloc

    K = 8
    W0 = initial_doc_vectors(wide, BatchRLSI(K, random_state=0))
    p = DeviceRLSIProblem(numpy_backend(np.float64), wide, W0, lambda1=lam, lambda2=1.0, inner_max_iter=8,
                          topic_sweeps=3, screen=False, term_rows=512, doc_rows=128, **{"phi_cols": 2, **opts})
    peaks = {}
    tracemalloc.start()
    try:
        for _ in range(3):
            for phase, run in (("U-step", p.u_step), ("V-step", p.v_step), ("objective", p.objective)):
                base = tracemalloc.get_traced_memory()[0]
                tracemalloc.reset_peak()
                run()
                peaks[phase] = max(peaks.get(phase, 0), tracemalloc.get_traced_memory()[1] - base)
    finally:
        tracemalloc.stop()
    M = wide.shape[1]
    U = p.U
    nnz = int(U.nnz) if sp.issparse(U) else int(np.count_nonzero(U))
    q = p.plan_at(nnz / (M * K))

    def nbytes(A):
        return sum(a.nbytes for a in (A.data, A.indices, A.indptr)) if sp.issparse(A) else A.nbytes
    held = {"W": p.Wd.nbytes, "live rows": 2 * p.live.nbytes,
            "U": nbytes(U) if sp.issparse(U) else U.nbytes}
    if not p.plan.streamed:
        held["X"] = sum(nbytes(B) for _, _, B in p.X) - 4 * (len(p.X) - 1)  # the blocks share no row pointer
        held["D = X^T"] = sum(nbytes(B) for _, _, B in p.D) - 4 * (len(p.D) - 1)
    for name, b in held.items():
        assert b == q.resident[name] or (name == "U" and sp.issparse(U) and b <= q.resident[name] + 16), name
    allowed = dict(q.phase_bytes)
    # the U-step makes the new topics beside its temporaries (the old ones are freed), and may switch their
    # representation at its end
    switched = len(set(p.used)) > 1 or sp.issparse(U) != (p.used[0] == "sparse")
    switch = allowed.get("switch of representation", 0) if switched else 0
    allowed["U-step"] = max(allowed["U-step"], switch) + held["U"] + q.resident["live rows"] // 2
    for phase, peak in peaks.items():
        assert peak <= allowed[phase] + HOST_SLACK, (phase, peak, q.phases[phase])
    assert max(peaks.values()) > 0.3 * max(q.phase_bytes[k] for k in peaks)  # the plan is no loose bound
