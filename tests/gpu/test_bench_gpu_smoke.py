"""The device script at tiny sizes: on the stand-in for CuPy (its CUDA branches: pool limit, emptied pool, memory
read after each step, out-of-memory types), on numpy (the comparison with the host), and the card-tests stage's
subprocess. Results are written after every stage and every iteration, so a run cut short keeps them."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_gpu.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_gpu", BENCH)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_paper_stages_on_the_stand_in_write_as_they_go(bench, fake_backend, tmp_path):
    be = fake_backend(dtype=np.float32, trace=True)
    writes = []
    out, js = tmp_path / "gpu.md", tmp_path / "gpu.json"

    def on_write(rec):  # the JSON file holds this record at every write
        assert json.loads(js.read_text())["stages"].keys() == rec["stages"].keys()
        writes.append(rec)
    rec = bench.main(["--smoke", "--no-facts", "--no-warm", "--stages", "paper,paper-online", "--shape-iters", "2",
                      "--out", str(out), "--json", str(js)], backend=be, on_write=on_write)
    paper, online = rec["stages"]["paper"], rec["stages"]["paper-online"]
    assert paper["status"] == "done" and online["status"] == "done", rec["stages"]
    assert paper["memory_pass"] is True and online["memory_pass"] is True  # under the pool limit (fake: no OOM)
    assert be.xp.get_default_memory_pool().get_limit() == 0  # the limit is lifted after the stage
    first = paper["rows"][0]
    assert first["mem_u"]["held"] > 0 and first["mem_v"]["used"] > 0 and paper["resident"]["used"] > 0
    assert first["plan_at_density"] > 0 and 0 < first["avgcomp"] < 1
    # one write per iteration and per mini-batch, besides the stages'
    n_rows = [len(w["stages"].get("paper", {}).get("rows", [])) for w in writes]
    assert {1, 2} <= set(n_rows)
    n_batches = [len(w["stages"].get("paper-online", {}).get("rows", [])) for w in writes]
    assert set(range(1, len(online["rows"]) + 1)) <= set(n_batches) and len(online["rows"]) == 3
    text = out.read_text()
    assert "## paper: 2,000 x 8,000" in text and "memory **pass**" in text and "## paper-online" in text


def test_check_and_options_on_numpy(bench, tmp_path):
    rec = bench.main(["--smoke", "--no-facts", "--no-warm", "--stages", "check,options", "--iters", "2",
                      "--out", str(tmp_path / "gpu.md")])
    check = rec["stages"]["check"]
    assert check["status"] == "done" and len(check["device"]) == 2
    assert all(d["rel_diff"][-1] < 1e-4 for d in check["device"])
    assert len(rec["stages"]["options"]["variants"]) == 5
    assert "## check" in (tmp_path / "gpu.md").read_text()


def test_card_tests_stage_reports_each_test(bench, tmp_path):
    """The stage runs a test file in a subprocess and records each outcome (here a small file of this folder)."""
    rec = bench.main(["--smoke", "--no-facts", "--no-warm", "--stages", "card-tests", "--card-tests",
                      "tests/gpu/test_docs_gpu.py", "--out", str(tmp_path / "gpu.md")])
    st = rec["stages"]["card-tests"]
    assert st["status"] == "done" and st["returncode"] in (0, 1) and len(st["outcomes"]) >= 3
    assert set(st["outcomes"].values()) <= {"PASSED", "FAILED"} and Path(st["log"]).exists()


def test_a_stage_that_fails_is_recorded_and_the_next_runs(bench, tmp_path):
    """A density above 1 makes the paper stage's λ₁ calibration raise: recorded as failed, the next stage runs."""
    rec = bench.main(["--smoke", "--no-facts", "--no-warm", "--stages", "paper,options", "--density", "2",
                      "--out", str(tmp_path / "gpu.md")])
    paper = rec["stages"]["paper"]
    assert paper["status"] == "failed" and "Error" in paper["error"]
    assert rec["stages"]["options"]["status"] == "done"
    assert "| paper | failed |" in (tmp_path / "gpu.md").read_text()
