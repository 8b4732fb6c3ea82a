"""benchmarks/bench_batch.py profiles BatchRLSI from outside (wrapping the problem's steps, the penalties'
solves and the driver's loop, and replaying a late iteration on a copy of the problem): a tiny run keeps that
instrumentation in step with the code it wraps, and a failed method shows as a failed row."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_a_tiny_run_profiles_batch_rlsi_and_the_paper_algorithm(tmp_path):
    out = tmp_path / "batch.md"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "bench_batch.py"), "--docs", "200", "--terms", "600",
           "--k", "4", "--iters", "3", "--replays", "1", "--methods", "rlsi,paper", "--out", str(out),
           "--workdir", str(tmp_path / "work")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    text = out.read_text()
    assert "**failed**" not in text, text
    assert "| **BatchRLSI**, whole-fit average incl. init |" in text
    assert "| BatchRLSI, iterations 2..n |" in text  # the replay of a copied problem ran
    assert "| paper algorithm (Alg. 1–3 as printed" in text
