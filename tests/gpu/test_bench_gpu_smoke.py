"""The device script's smoke mode (numpy device path, tiny sizes) runs and writes its report."""

import importlib.util
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_gpu.py"


def test_smoke_check_and_shapes(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_gpu", BENCH)
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "gpu.md"
    rec = bench.main(["--smoke", "--no-facts", "--stages", "check,shapes", "--iters", "2", "--shape-iters", "1",
                      "--out", str(out), "--json", str(tmp_path / "gpu.json")])
    text = out.read_text()
    assert "## 1. Check" in text and "## 3. Large shapes" in text and "Smoke run" in text
    assert len(rec["check_device"]) == 2 and all(d["rel_diff"][-1] < 1e-4 for d in rec["check_device"])
    assert all("skipped" not in s and s["nnz"] > 0 for s in rec["shapes"])
