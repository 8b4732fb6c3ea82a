"""benchmarks/bench_scale_ladder.py: the exponent fit, the plot input, the plot/report from a results JSON,
and the memory watchdog of its children (no timing is asserted)."""

import importlib.util
import json
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_scale_ladder.py"


@pytest.fixture(scope="module")
def ladder():
    spec = importlib.util.spec_from_file_location("bench_scale_ladder", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_scale_ladder"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def models(ladder):
    """The peers' memory models (``benchmarks/ladder_memory.py``, on the path the script sets)."""
    import ladder_memory

    return ladder_memory


@pytest.fixture(scope="module")
def plots(ladder):
    """The reports and the plot (``benchmarks/ladder_report.py``)."""
    import ladder_report

    return ladder_report


def test_fit_exponent_recovers_a_power_law(plots):
    x = np.array([1e5, 4e5, 1.6e6, 6.4e6])
    for p in (0.5, 1.0, 1.7):
        got, c = plots.fit_exponent(x, 3.0 * x ** p)
        assert got == pytest.approx(p, abs=1e-9) and np.exp(c) == pytest.approx(3.0, rel=1e-9)
    assert plots.fit_exponent([2.0, 2.0], [1.0, 3.0]) is None  # one distinct x: no slope


def _batch(docs, terms, nnz, k, seconds, lam=0.01):
    its = [{"u_s": 10 * s, "v_s": 10 * s, "nnz_U": 100, "avgcomp": 0.003, "dead": 0} for s in seconds[:1]]
    its += [{"u_s": 0.25 * s, "v_s": 0.75 * s, "nnz_U": 100, "avgcomp": 0.003, "dead": 0} for s in seconds[1:]]
    return {"step": "batch", "size": {"docs": docs, "terms": terms, "nnz": nnz}, "k": k, "lambda1": lam,
            "iterations": its, "peak_rss": 2**30, "estimate": 2**30, "setup_s": 1.0, "seconds": sum(seconds),
            "command": "PYTHONPATH=src python benchmarks/bench_scale_ladder.py run ..."}


def test_batch_points_average_the_iterations_after_the_first(plots):
    records = [_batch(100, 500, 1000, 20, [9.0, 2.0, 4.0]), _batch(100, 500, 1000, 40, [5.0]),
               {"step": "batch", "size": {"docs": 1, "terms": 1, "nnz": 1}, "k": 20, "skipped": "would need 99 GiB"},
               {"step": "online", "size": {"docs": 1, "terms": 1, "nnz": 1}, "k": 20, "seconds": 3.0}]
    pts = plots.batch_points(records)
    # the first iteration (initialization effects) is left out when there are later ones
    assert pts == [(100, 500, 1000, 20, pytest.approx(3.0)), (100, 500, 1000, 40, pytest.approx(100.0))]


def test_plot_and_report_from_a_results_json(ladder, tmp_path):
    p_nnz, p_k = 1.1, 1.6  # the exponents the synthetic timings follow
    records = []
    for nnz in (1e6, 4e6, 1.6e7):
        t = 2e-6 * nnz ** p_nnz
        records.append(_batch(int(nnz / 100), int(nnz / 20), int(nnz), 50, [t, t, t]))
    for k in (25, 100):
        t = 2e-6 * 1e6 ** p_nnz * (k / 50) ** p_k
        records.append(_batch(10_000, 50_000, 1_000_000, k, [t, t]))
    records.append({"step": "peer:svd", "size": {"docs": 10_000, "terms": 50_000, "nnz": 1_000_000}, "k": 50,
                    "seconds": 4.0, "per_iteration_s": 0.8, "peak_rss": 2**29, "estimate": 2**29,
                    "what": "TruncatedSVD"})
    records.append({"step": "peer:nmf_mu", "size": {"docs": 160_000, "terms": 800_000, "nnz": 16_000_000},
                    "k": 50, "skipped": "would need about 40.0 GiB", "estimate": 40 * 2**30})
    path = tmp_path / "ladder.json"
    path.write_text(json.dumps(records))
    png, md = tmp_path / "ladder.png", tmp_path / "ladder.md"
    assert ladder.main(["plot", "--json", str(path), "--png", str(png), "--md", str(md)]) == 0
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
    text = md.read_text()
    assert f"nnz(D)^{p_nnz:.2f} (3 sizes)" in text
    assert f"K^{p_k:.2f} (3 values of K)" in text
    assert "would need about 40.0 GiB" in text and "TruncatedSVD" in text
    # without --png the PNG goes next to the report (never over the committed results/scale_ladder.png)
    md2 = tmp_path / "other" / "report.md"
    md2.parent.mkdir()
    assert ladder.main(["plot", "--json", str(path), "--md", str(md2)]) == 0
    assert (tmp_path / "other" / "report.png").read_bytes()[:4] == b"\x89PNG"
    assert "![time per iteration](report.png)" in md2.read_text()
    with pytest.raises(SystemExit, match="--md"):
        ladder.main(["plot", "--json", str(path)])


def test_a_child_over_the_memory_budget_is_killed_and_reported(ladder, tmp_path):
    import harness

    spec = {"matrix": str(tmp_path / "m"), "docs": 2000, "terms": 5000, "tokens": 50, "planted": 5, "seed": 0,
            "dtype": "float32", "norm": "l2"}
    res = ladder.run_child("synth", spec, env=harness.child_env(), budget=20 * 2**20, timeout=120)
    assert res["status"].startswith("killed over budget") and "error" in res
    assert not (tmp_path / "m").exists()


def test_largest_size_fits_the_budget_and_the_next_does_not(models):
    budget = 24 * 2**30
    for name in models.PEERS:
        n, m, z, need = models.largest_size(name, 500, budget, docs=100_000, terms=500_000, nnz=19_904_836)
        assert need <= budget and m == round(n * 5) and z == round(n * 199.04836)
        bigger = int(n * 1.01) + 1
        assert models.peer_memory(name, bigger, round(bigger * 5), round(bigger * 199.04836), 500) > budget


def test_a_peer_over_its_time_cap_is_reported_as_not_finished(ladder, tmp_path):
    import harness

    spec = {"matrix": str(tmp_path / "m"), "docs": 2000, "terms": 5000, "tokens": 50, "planted": 5, "seed": 0,
            "dtype": "float32", "norm": "l2"}
    res = ladder.run_child("synth", spec, env=harness.child_env(), budget=None, timeout=0.5)
    assert res["status"].startswith("did not finish in 0.5 s")
    assert "error" in res and res["seconds_run"] >= 0.5
