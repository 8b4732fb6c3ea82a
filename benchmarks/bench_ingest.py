"""Streaming ingestion at a large vocabulary: ``rlsi ingest`` (:func:`rlsi.text.ingest.ingest`) on a
random-token JSON-lines corpus with millions of distinct terms, each run in its own process (peak RSS =
the child's ``VmHWM``), timed by wall clock and by the child's CPU time (1 numba/BLAS thread).

``make`` writes the corpus (deterministic for a seed): N documents of T tokens each; a token is, with
probability ``--rare``, drawn uniformly from 26⁶ ≈ 3·10⁸ words (almost every one a new term, as the long
tail of web text), otherwise from a Zipf(1.1) law over ``--core`` words. Words are six letters (never an
English stop word).

``run`` ingests it with the code under ``--src`` (a checkout's ``src``: compare two versions of the code on
the same corpus), for each ``--min-df``, and appends a record per run to ``--json`` (with a digest of the
matrix and of the vocabulary, so that the report can say whether two versions wrote the same matrix);
``report`` writes the markdown.

Usage::

    python benchmarks/bench_ingest.py make --docs 60000 --tokens 200 --core 200000 --rare 0.25 \\
        -o /tmp/ingest_corpus.jsonl.gz
    python benchmarks/bench_ingest.py run --corpus /tmp/ingest_corpus.jsonl.gz --src /tmp/before/src \\
        --label before --json benchmarks/results/ingest_vocabulary.json
    python benchmarks/bench_ingest.py run --corpus /tmp/ingest_corpus.jsonl.gz --src src --label after \\
        --json benchmarks/results/ingest_vocabulary.json
    python benchmarks/bench_ingest.py report --json benchmarks/results/ingest_vocabulary.json \\
        --md benchmarks/results/ingest_vocabulary.md
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

LETTERS = 6


def words(ids):
    """Six-letter words of integer ids (base 26, 'a' = 0): an ``S6`` array."""
    import numpy as np

    ids = np.asarray(ids, dtype=np.int64)
    digits = np.empty((len(ids), LETTERS), dtype=np.uint8)
    for j in range(LETTERS - 1, -1, -1):
        digits[:, j] = 97 + ids % 26
        ids = ids // 26
    return digits.view(f"S{LETTERS}").ravel()


def cmd_make(a):
    import numpy as np

    rng = np.random.default_rng(a.seed)
    ranks = np.arange(1, a.core + 1, dtype=np.float64)
    p = ranks ** -1.1
    cdf = np.cumsum(p / p.sum())
    t = time.perf_counter()
    with gzip.open(a.output, "wb", compresslevel=1) as f:
        for d0 in range(0, a.docs, 1000):
            n = min(1000, a.docs - d0)
            m = n * a.tokens
            core = np.minimum(np.searchsorted(cdf, rng.random(m)), a.core - 1)
            rare = rng.integers(a.core, 26**LETTERS, size=m)
            ids = np.where(rng.random(m) < a.rare, rare, core)
            w = words(ids).reshape(n, a.tokens)
            f.write(b"".join(b'{"id": "d%d", "text": "%s"}\n' % (d0 + i, b" ".join(w[i].tolist()))
                             for i in range(n)))
    harness.log(f"wrote {a.docs} documents x {a.tokens} tokens to {a.output} in {time.perf_counter() - t:.1f}s "
                f"({Path(a.output).stat().st_size / 2**20:.0f} MiB)")
    return 0


def child(a):
    """Ingest in this process (run by ``run`` with PYTHONPATH = the code to measure); print a JSON line."""
    import numpy as np

    import rlsi
    from rlsi.io.matrix import load_matrix
    from rlsi.text import TfidfVectorizer
    from rlsi.text.ingest import ingest

    out = Path(tempfile.mkdtemp(prefix="ingest_bench_")) / "m"
    c0, t0 = time.process_time(), time.perf_counter()
    vec = ingest(a.corpus, out, vectorizer=TfidfVectorizer(min_df=a.min_df, dtype=np.float32), verbose=0)
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    with open("/proc/self/status") as f:
        hwm = next(int(ln.split()[1]) * 1024 for ln in f if ln.startswith("VmHWM"))
    m = load_matrix(out)
    digest = hashlib.sha256()
    for arr in (m.X.indptr, m.X.indices, m.X.data, m.doc_lengths):
        digest.update(np.ascontiguousarray(arr).tobytes())
    vocab = hashlib.sha256("\n".join(m.vectorizer.feature_names_).encode()).hexdigest()[:16]
    res = {"wall_s": wall, "cpu_s": cpu, "peak_rss": hwm, "n_docs": vec.n_docs_,
           "n_terms": len(vec.feature_names_), "nnz": int(m.X.nnz), "matrix_sha": digest.hexdigest()[:16],
           "vocabulary_sha": vocab, "rlsi_path": str(Path(rlsi.__file__).parent)}
    import shutil

    shutil.rmtree(out.parent)
    print(json.dumps(res))
    return 0


def cmd_run(a, argv):
    src = Path(a.src).resolve()
    env = harness.child_env(harness.thread_env(1))
    env["PYTHONPATH"] = str(src)
    for min_df in a.min_df:
        harness.log(f"{a.label}: min_df={min_df} ...")
        cmd = [sys.executable, __file__, "child", "--corpus", str(a.corpus), "--min-df", str(min_df)]
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if proc.returncode != 0:
            raise SystemExit(f"child failed: {proc.stderr[-2000:]}")
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        res.update(label=a.label, min_df=min_df, corpus=str(a.corpus), loadavg_before=load,
                   command=harness.command_line(__file__, argv), machine=harness.machine_facts(),
                   time=time.time())
        harness.log(f"{a.label}: min_df={min_df}: {res['wall_s']:.1f} s wall, {res['cpu_s']:.1f} s CPU, "
                    f"peak {res['peak_rss'] / 2**30:.2f} GiB, {res['n_terms']} terms")
        records = json.loads(Path(a.json).read_text()) if Path(a.json).exists() else []
        records.append(res)
        Path(a.json).write_text(json.dumps(records, indent=1))
    return 0


def cmd_report(a, argv):
    records = json.loads(Path(a.json).read_text())
    cmds = []
    for r in records:
        if r["command"] not in cmds:
            cmds.append(r["command"])
    L = ["# Streaming ingestion at a large vocabulary: `rlsi ingest` before and after the compact "
         "vocabulary", "", "Commands:", ""]
    L += [f"    {c}" for c in a.make_command] + [f"    {c}" for c in cmds]
    L += [f"    {harness.command_line(__file__, argv)}", "", harness.machine_line(records[0]["machine"]), ""]
    rows = []
    for r in records:
        same = {x["matrix_sha"] + x["vocabulary_sha"] for x in records if x["min_df"] == r["min_df"]}
        rows.append([r["label"], r["min_df"], r["n_docs"], r["n_terms"], r["nnz"], f"{r['wall_s']:.1f}",
                     f"{r['cpu_s']:.1f}", f"{r['n_docs'] / r['cpu_s']:.0f}", f"{r['peak_rss'] / 2**30:.2f} GiB",
                     r["matrix_sha"] + " / " + r["vocabulary_sha"] + (" (same for all)" if len(same) == 1 else ""),
                     r["loadavg_before"]])
    L += harness.md_table(["code", "min_df", "documents", "terms kept", "nnz", "wall s", "CPU s",
                           "documents per CPU-second", "peak RSS", "matrix / vocabulary digest", "load before"],
                          rows, align="lrrrrrrrrll")
    L += ["", "Each run is a child process with 1 numba/BLAS/OpenMP thread; CPU s is its `time.process_time` "
          "(both passes, the matrix written, scratch removed); peak RSS is its `VmHWM`. The cores were shared "
          "with other work (several agents ran on this machine), so wall-clock seconds vary more than CPU "
          "seconds."]
    harness.write_report(a.md, "\n".join(L), marker=True)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make", help="write the random-token corpus")
    m.add_argument("--docs", type=int, required=True)
    m.add_argument("--tokens", type=int, default=200)
    m.add_argument("--core", type=int, default=200_000, help="Zipf vocabulary (default 200000)")
    m.add_argument("--rare", type=float, default=0.25, help="share of tokens drawn uniformly from 26^6 words")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("-o", "--output", required=True)
    c = sub.add_parser("child")
    c.add_argument("--corpus", required=True)
    c.add_argument("--min-df", type=int, default=1)
    r = sub.add_parser("run", help="ingest with the code under --src, one child per --min-df")
    r.add_argument("--corpus", required=True)
    r.add_argument("--src", required=True, help="the src directory of the code to measure")
    r.add_argument("--label", required=True)
    r.add_argument("--min-df", type=int, nargs="+", default=[1, 2])
    r.add_argument("--json", required=True)
    q = sub.add_parser("report")
    q.add_argument("--json", required=True)
    q.add_argument("--md", required=True)
    q.add_argument("--make-command", action="append", default=[], help="the make command, for the header")
    a = p.parse_args(argv)
    if a.cmd == "make":
        return cmd_make(a)
    if a.cmd == "child":
        return child(a)
    if a.cmd == "run":
        return cmd_run(a, argv)
    return cmd_report(a, argv)


if __name__ == "__main__":
    sys.exit(main())
