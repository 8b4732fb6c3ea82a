"""benchmarks/bench_pipeline.py runs end to end on a slice of 20 Newsgroups and MED (its report's tables)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"


@pytest.mark.skipif(not (DATA / "twenty_newsgroups").is_dir() or not (DATA / "med").is_dir(),
                    reason="needs ../shared/data (20 Newsgroups and MED), absent from a fresh clone")
def test_pipeline_benchmark_writes_both_tables(tmp_path):
    spec = importlib.util.spec_from_file_location("bench_pipeline", ROOT / "benchmarks" / "bench_pipeline.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = tmp_path / "pipeline.md"
    assert bench.main(["--k", "5", "--limit", "150", "--pairs", "0.05:1", "--ranking", "1",
                       "--collections", "med", "--k-grid", "5", "--out", str(out)]) == 0
    text = out.read_text()
    assert "| TruncatedSVD |" in text and "OnlineRLSI (defaults), shuffled documents" in text
    assert "BatchRLSI lambda1=0.05 lambda2=1 |" in text
    assert "| med | 1 |" in text
