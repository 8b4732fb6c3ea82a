"""Web-scale foundations: streamed generation, streamed ingestion and a memory-mapped fit, each in its
own process (so that its peak memory is its own: ``VmHWM``), with throughput in documents per second.

1. ``rlsi synth`` (:func:`rlsi.datasets.synthetic.write_corpus`) at N x M with mean length T;
   optionally (``--at-once``) the all-at-once generator it replaced (:mod:`rlsi.oracle.synthetic`) at the
   same size, for its peak memory.
2. A JSON-lines text corpus (gzip) made from the same synthetic counts (term id -> a letters-only word, each
   token written out), then ``rlsi ingest`` (:func:`rlsi.text.ingest.ingest`) of it.
3. Optionally (``--fit-k K``) ``BatchRLSI(K)`` on the memory-mapped matrix of step 1 for ``--fit-iters``
   iterations: time, peak memory, and the estimate of :mod:`rlsi.models.memory` made before the fit.

Usage::

    PYTHONPATH=src python benchmarks/bench_scale.py --docs 100000 --terms 500000 --tokens 300 --planted 500 \\
        --dtype float32 --fit-k 200 --fit-iters 1 --out benchmarks/results/scale.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402

harness.use_src()


def _dir_bytes(path):
    return sum(p.stat().st_size for p in Path(path).iterdir() if p.is_file())


def _word(i):
    """A letters-only word per term id ("zz" + base 26), never an English stop word."""
    s = ""
    i = int(i)
    while True:
        s = chr(97 + i % 26) + s
        i //= 26
        if i == 0:
            return "zz" + s


# ------------------------------------------------------------------------------------------ children
def child_synth(a):
    import numpy as np

    from rlsi.datasets.synthetic import write_corpus
    from rlsi.models.memory import peak_rss

    info = write_corpus(a.workdir / "synth", a.docs, a.terms, a.tokens, n_topics=a.planted, seed=a.seed,
                        dtype=np.dtype(a.dtype))
    info.update(peak_rss=peak_rss(), disk_bytes=_dir_bytes(a.workdir / "synth"))
    return info


def child_at_once(a):
    import numpy as np

    from rlsi.models.memory import peak_rss
    from rlsi.oracle.synthetic import make_corpus_at_once

    t = time.perf_counter()
    X = make_corpus_at_once(a.docs, a.terms, a.tokens, n_topics=a.planted, seed=a.seed, dtype=np.dtype(a.dtype))[0]
    return {"seconds": time.perf_counter() - t, "nnz": int(X.nnz), "peak_rss": peak_rss()}


def child_text(a):
    """Write the synthetic corpus as text (not measured: preparation of step 2)."""
    import numpy as np

    from rlsi.io.matrix import load_matrix

    m = load_matrix(a.workdir / "synth")
    X, lengths = m.X, m.doc_lengths
    idf = None
    names = np.array([_word(i) for i in range(X.shape[1])], dtype=object)
    t = time.perf_counter()
    with gzip.open(a.workdir / "corpus.jsonl.gz", "wt", compresslevel=1) as f:
        for d in range(X.shape[0]):
            lo, hi = X.indptr[d], X.indptr[d + 1]
            cols = np.asarray(X.indices[lo:hi])
            # counts back from the paper's weights: n = tf-idf * |d| / idf (the matrix is unnormalized)
            if idf is None:
                df = np.bincount(X.indices, minlength=X.shape[1])
                idf = np.log(X.shape[0] / np.maximum(df, 1))
            n = np.rint(np.asarray(X.data[lo:hi], dtype=np.float64) * lengths[d] / idf[cols]).astype(np.int64)
            words = np.repeat(names[cols], np.maximum(n, 1))
            f.write(json.dumps({"id": f"d{d}", "text": " ".join(words)}) + "\n")
    return {"seconds": time.perf_counter() - t, "bytes": (a.workdir / "corpus.jsonl.gz").stat().st_size}


def child_ingest(a):
    import numpy as np

    from rlsi.models.memory import peak_rss
    from rlsi.text import TfidfVectorizer
    from rlsi.text.ingest import ingest

    t = time.perf_counter()
    vec = ingest(a.workdir / "corpus.jsonl.gz", a.workdir / "ingested",
                 vectorizer=TfidfVectorizer(dtype=np.dtype(a.dtype).type))
    seconds = time.perf_counter() - t
    from rlsi.io.matrix import load_matrix

    nnz = load_matrix(a.workdir / "ingested").X.nnz
    return {"seconds": seconds, "n_docs": vec.n_docs_, "n_terms": len(vec.feature_names_), "nnz": int(nnz),
            "peak_rss": peak_rss(), "disk_bytes": _dir_bytes(a.workdir / "ingested")}


def child_fit(a):
    from rlsi.io.matrix import load_matrix
    from rlsi.models import BatchRLSI
    from rlsi.models.memory import current_rss, estimate_for, peak_rss

    X = load_matrix(a.workdir / "synth").X
    model = BatchRLSI(a.fit_k, lambda1=a.fit_lambda1, lambda2=1.0, max_iter=a.fit_iters, random_state=0)
    est = estimate_for(model, X, baseline=current_rss())
    t = time.perf_counter()
    model.fit(X)
    seconds = time.perf_counter() - t
    return {"seconds": seconds, "peak_rss": peak_rss(), "estimate": est.peak, "estimate_phase": est.phase,
            "estimate_components": est.components, "nnz_U": int(model.components_.nnz),
            "dead": len(model.dead_topics())}


CHILDREN = {"synth": child_synth, "at_once": child_at_once, "text": child_text, "ingest": child_ingest,
            "fit": child_fit}


# ------------------------------------------------------------------------------------------ driver
def _run(step, argv, env):
    harness.log(f"{step} ...")
    res = harness.run_child([sys.executable, __file__, "--child", step, *argv], env=env)
    harness.log(f"{step}: {res}")
    return res


def _gb(b):
    return f"{b / 2**30:.2f} GiB"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=100_000)
    p.add_argument("--terms", type=int, default=500_000)
    p.add_argument("--tokens", type=float, default=300)
    p.add_argument("--planted", type=int, default=500)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    p.add_argument("--at-once", action="store_true", help="also run the all-at-once generator (peak memory)")
    p.add_argument("--fit-k", type=int, default=0)
    p.add_argument("--fit-iters", type=int, default=1)
    p.add_argument("--fit-lambda1", type=float, default=0.05)
    p.add_argument("--threads", type=int, default=2, help="numba/BLAS threads of the children")
    p.add_argument("--workdir", type=Path, default=None)
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--child", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        a.workdir = Path(a.workdir)
        print(json.dumps(CHILDREN[a.child](a), default=float))
        return 0
    own = a.workdir is None
    work = Path(tempfile.mkdtemp(prefix="bench_scale_")) if own else a.workdir
    work.mkdir(parents=True, exist_ok=True)
    argv_child = [f"--docs={a.docs}", f"--terms={a.terms}", f"--tokens={a.tokens}", f"--planted={a.planted}",
                  f"--seed={a.seed}", f"--dtype={a.dtype}", f"--workdir={work}", f"--fit-k={a.fit_k}",
                  f"--fit-iters={a.fit_iters}", f"--fit-lambda1={a.fit_lambda1}"]
    env = harness.child_env(harness.thread_env(a.threads))
    facts = harness.machine_facts()
    results = {"synth": _run("synth", argv_child, env)}
    if a.at_once:
        results["at_once"] = _run("at_once", argv_child, env)
    results["text"] = _run("text", argv_child, env)
    results["ingest"] = _run("ingest", argv_child, env)
    if a.fit_k:
        results["fit"] = _run("fit", argv_child, env)
    if own:
        shutil.rmtree(work, ignore_errors=True)

    N = a.docs
    L = ["# Web-scale foundations: streamed generation, ingestion, memory-mapped fit", "",
         f"Command: `{harness.command_line(__file__, argv)}`", "", harness.machine_line(facts),
         f" Children ran with {a.threads} numba/BLAS threads.", ""]
    rows = []
    s = results["synth"]
    if "error" not in s:
        rows.append(["`rlsi synth` (streamed, chunks of 4M tokens)", f"{s['seconds']:.1f}", f"{N / s['seconds']:.0f}",
                     _gb(s["peak_rss"]), f"nnz {s['nnz']}, {s['n_tokens'] / N:.0f} tokens/doc, {_gb(s['disk_bytes'])} on disk"])
    o = results.get("at_once")
    if o and "error" not in o:
        rows.append(["all-at-once generator (before; in memory only)", f"{o['seconds']:.1f}",
                     f"{N / o['seconds']:.0f}", _gb(o["peak_rss"]), f"nnz {o['nnz']}"])
    g = results["ingest"]
    if "error" not in g:
        t = results["text"]
        rows.append(["`rlsi ingest` (JSONL.gz read once + token cache)", f"{g['seconds']:.1f}", f"{N / g['seconds']:.0f}",
                     _gb(g["peak_rss"]), f"{g['n_terms']} terms, nnz {g['nnz']}, input {_gb(t['bytes'])} gzip'ed, "
                                         f"{_gb(g['disk_bytes'])} on disk"])
    L += harness.md_table(["step", "seconds", "documents/s", "peak RSS", "notes"], rows, align="lrrrl")
    f = results.get("fit")
    if f and "error" not in f:
        comps = ", ".join(f"{k} {_gb(v)}" for k, v in sorted(f["estimate_components"].items(), key=lambda kv: -kv[1]) if v)
        L += ["", f"**Fit on the memory-mapped matrix** (`BatchRLSI({a.fit_k}, lambda1={a.fit_lambda1}, "
                  f"max_iter={a.fit_iters})`, initialization included): {f['seconds']:.1f} s, peak RSS "
                  f"{_gb(f['peak_rss'])}; estimate before the fit {_gb(f['estimate'])} "
                  f"({100 * (f['estimate'] / f['peak_rss'] - 1):+.1f} %; {f['estimate_phase']}: {comps}); "
                  f"nnz(U) {f['nnz_U']}, {f['dead']} empty topics."]
    errors = {k: v["error"][:300] for k, v in results.items() if "error" in v}
    if errors:
        L += ["", "Errors: " + json.dumps(errors)]
    L += ["", "Peak RSS is each child's `VmHWM` (the memory-mapped matrix pages it reads count in it). "
              "The cores were shared with other work (several agents run on this machine): times vary "
              "between runs; no timing here is a CPU-time measurement."]
    text = "\n".join(L)
    print(text)
    if a.out:
        harness.write_report(a.out, text, marker=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
