"""How long the ``rlsi`` command takes to answer when it does no work: ``--version``, ``--help``, a
command's ``--help`` and a usage error, each in a fresh process (``python -m rlsi``), wall clock, the
median and the largest of ``--repeat`` runs; beside them ``python -c pass`` (the interpreter's own start)
and ``import numpy, scipy.sparse, sklearn, numba`` (what the command would take if its parser imported
them).

Usage::

    PYTHONPATH=src python benchmarks/bench_startup.py --repeat 7 --out benchmarks/results/startup.md
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from harness import command_line, machine_facts, md_table, write_report  # noqa: E402

CASES = [
    ("python -c pass (the interpreter)", ["-c", "pass"]),
    ("rlsi --version", ["-m", "rlsi", "--version"]),
    ("rlsi --help", ["-m", "rlsi", "--help"]),
    ("rlsi fit --help", ["-m", "rlsi", "fit", "--help"]),
    ("rlsi fit corpus.jsonl -k x (a usage error)", ["-m", "rlsi", "fit", "corpus.jsonl", "-k", "x", "-o", "m"]),
    ("import numpy, scipy.sparse, sklearn, numba", ["-c", "import numpy, scipy.sparse, sklearn, numba"]),
]


def timed(argv):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    start = time.perf_counter()
    subprocess.run([sys.executable, *argv], capture_output=True, env=env)
    return time.perf_counter() - start


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    facts = machine_facts()
    rows = []
    for name, case in CASES:
        times = [timed(case) for _ in range(args.repeat)]
        rows.append([name, f"{statistics.median(times):.2f}", f"{max(times):.2f}"])
    text = "\n".join(["# How fast the command answers without work", "", f"Command: `{command_line(__file__)}`", "",
                      *md_table(["what", "median s", "largest s"], rows), "",
                      "Machine: " + "; ".join(f"{k}: {v}" for k, v in facts.items()) + "; load at the end: "
                      + " ".join(f"{x:.2f}" for x in os.getloadavg()) + " (2 cores shared with other work)."])
    if args.out:
        write_report(args.out, text + "\n")
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
