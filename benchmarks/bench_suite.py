"""The test suite's wall time from a fresh clone: lint, then the suite compiling every numba kernel (no cache),
then the suite again with the kernels cached — what CI and a new contributor wait for.

    PYTHONPATH=src python benchmarks/bench_suite.py --out benchmarks/results/suite.md

The clone (``git clone`` of this checkout's HEAD into a temporary folder) is not installed: it runs with
``PYTHONPATH=<clone>/src`` (the installed dependencies of this environment), so the numba cache starts empty
next to its sources. Commands: ``python -m ruff check .`` and ``python -m pytest -n <workers> --dist
loadfile -q -p no:cacheprovider``. Wall clock; the load average is sampled before and after each step.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402


def timed_step(name, argv, cwd, env):
    load0 = harness.loadavg()
    start = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    tail = (proc.stdout.strip().splitlines() or [""])[-1]
    harness.log(f"{name}: {seconds:.0f} s, status {proc.returncode}: {tail}")
    return {"step": name, "seconds": seconds, "status": proc.returncode, "summary": tail,
            "load": f"{load0:.1f} → {harness.loadavg():.1f}"}


def minutes(seconds):
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s:02d} s"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", default="2", help="pytest-xdist workers (-n)")
    ap.add_argument("--out", help="Markdown result file")
    args = ap.parse_args(argv)
    facts = harness.machine_facts()
    head = subprocess.run(["git", "-C", str(harness.ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "rlsi"
        subprocess.run(["git", "clone", "--quiet", "--no-hardlinks", str(harness.ROOT), str(clone)], check=True)
        env = dict(os.environ, PYTHONPATH=str(clone / "src"))
        env.pop("NUMBA_CACHE_DIR", None)
        pytest = [sys.executable, "-m", "pytest", "-n", args.workers, "--dist", "loadfile", "-q", "-p",
                  "no:cacheprovider"]
        steps = [timed_step("ruff check", [sys.executable, "-m", "ruff", "check", "."], clone, env),
                 timed_step("suite, kernels compiled in the run", pytest, clone, env),
                 timed_step("suite, kernels cached", pytest, clone, env)]
    rows = [[s["step"], minutes(s["seconds"]), f"{s['seconds']:.0f}", s["load"], s["summary"] or "—"] for s in steps]
    lines = ["# The test suite from a fresh clone", "",
             f"Command: `{harness.command_line(__file__, argv)}`", "",
             f"A `git clone` of commit {head}, run with `PYTHONPATH=<clone>/src` (not installed), "
             f"`pytest -n {args.workers} --dist loadfile`: the first run compiles every numba kernel (the cache "
             f"starts empty), the second reads them from the cache. Wall clock.", "",
             f"**Machine.** {facts['cpu']}, {facts['cores']} cores, {facts['memory']} RAM; BLAS {facts['blas']}; "
             f"numba {facts['numba']}. {harness.load_note(facts)}", ""]
    lines += harness.md_table(["step", "wall", "wall s", "load average before → after", "pytest's last line"],
                              rows, align="lrrll")
    text = "\n".join(lines)
    print(text)
    if args.out:
        harness.write_report(args.out, text)
    return 0 if all(s["status"] == 0 for s in steps) else 1


if __name__ == "__main__":
    sys.exit(main())
