"""The defaults against their gates: topics to read from the commands, features for a pipeline from the
estimators (the README's defaults table).

Each section runs what a user runs, in the same run:

* ``med`` — ``rlsi fit`` on the MED abstracts shipped with rlsi, then the model's topics (``rlsi topics``):
  terms per topic (median, mean, largest), empty topics, the first topics' top terms; at the command's
  defaults (READING) and at the estimators' (FEATURES: ``--lambda1 0.01 --lambda2 1e-3``). Gate: at most a
  few hundred terms per topic at the defaults.
* ``track`` — ``rlsi track`` on Reuters-21578 by month (``--date-field date --period month -k 20``), at
  both settings: the largest rise of a topic's share from one month to the next (percentage points), the
  median over topics of a topic's largest minus smallest monthly share, the share range, and how many of the
  last month's top-5 terms are words (three letters or more, no digit); the rising topics' terms. Gate: shares
  that move (a rise of several points) and top terms that are words.
* ``pipeline`` — ``make_pipeline(TfidfVectorizer(), MODEL(30), LogisticRegression(max_iter=1000))`` on 20
  Newsgroups (bydate), MODEL = TruncatedSVD, ``BatchRLSI()`` (FEATURES, the estimators' defaults) and
  ``BatchRLSI(**READING)``. Gate: the default within 2 points of TruncatedSVD.
* ``evaluate`` — ``rlsi evaluate --collection med`` at its default grid: the settings chosen in each fold and
  the edge warnings. Gate: RLSI's chosen K and λ1 inside the grid.
* ``group`` — ``rlsi fit --model grlsi`` on 3,000 20 Newsgroups training posts (evenly spaced over the
  sorted file: every newsgroup) with their newsgroup as the class: shared and class topics, empty ones,
  terms per topic. Gate: class topics alive.

Usage::

    PYTHONPATH=src python benchmarks/bench_defaults.py --out benchmarks/results/defaults.md
    PYTHONPATH=src python benchmarks/bench_defaults.py --sections med,track --out /tmp/d.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from harness import command_line, machine_facts, md_table, shared_data, use_src, write_report  # noqa: E402

use_src()

import numpy as np  # noqa: E402

from rlsi.models.regularization import FEATURES, READING  # noqa: E402

SETTINGS = {"defaults (READING)": [], "FEATURES": ["--lambda1", str(FEATURES["lambda1"]),
                                                  "--lambda2", str(FEATURES["lambda2"])]}


def rlsi(*argv):
    """Run the ``rlsi`` command (this checkout's) and return (seconds, stdout); stop on failure."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rlsi", "-q", *map(str, argv)], capture_output=True, text=True,
                          env=env)
    if proc.returncode:
        raise SystemExit(f"rlsi {' '.join(map(str, argv))}: {proc.stderr[-2000:]}")
    return time.perf_counter() - start, proc.stdout


def _demo():
    """``rlsi demo`` (K = 20): (seconds, its output)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "rlsi", "-q", "demo"], capture_output=True, text=True, env=env,
                          check=True)
    return time.perf_counter() - start, proc.stdout


def terms_per_topic(model_dir):
    import rlsi

    C = rlsi.load(model_dir)["model"].get_topics()
    return np.diff(C.indptr)


def section_med(tmp):
    corpus = ROOT / "src" / "rlsi" / "datasets" / "med" / "corpus.jsonl.gz"
    rows, tops = [], []
    for name, extra in SETTINGS.items():
        out = tmp / f"med_{len(rows)}"
        secs, _ = rlsi("fit", corpus, "-o", out, *extra)
        n = terms_per_topic(out)
        _, topics = rlsi("topics", out, "-n", 6)
        rows.append([name, f"`rlsi fit MED -o M {' '.join(extra)}`".replace("  ", " "), int(np.median(n)),
                     f"{n.mean():.0f}", int(n.max()), int((n == 0).sum()), f"{secs:.1f}"])
        tops.append((name, [ln.strip() for ln in topics.splitlines()[:3]]))
    secs, demo = _demo()
    found = re.search(r"\((\d+) non-zero term weights of (\d+)\)", demo)
    rows.append(["rlsi demo (0.1, 1; stemmed, min_df=2)", "`rlsi demo`", "", f"{int(found.group(1)) / 20:.0f}", "",
                 "", f"{secs:.1f}"])
    table = md_table(["setting", "command", "terms per topic (median)", "mean", "largest", "empty topics",
                      "seconds"], rows)
    lines = ["## MED: `rlsi fit` + `rlsi topics` (K = 20, 13,037 terms)", "", *table, ""]
    for name, first in tops:
        lines += [f"First topics at {name}:", "", *[f"    {t}" for t in first], ""]
    return lines


def track_stats(report):
    t = json.loads((report / "timeline.json").read_text())
    F = np.asarray(t["share_fraction"])
    rise = np.diff(F, axis=0)
    k = int(rise.max(axis=0).argmax())
    last = [[w for w, _ in topic[:5]] for topic in t["top_terms"][-1]]
    flat = [w for topic in last for w in topic]
    words = sum(bool(re.fullmatch(r"[^\W\d_]{3,}", w)) for w in flat)
    order = np.argsort(-rise.max(axis=0))[:3]
    return {"segments": t["segments"], "rise": 100 * rise.max(), "topic": k + 1,
            "spread": 100 * float(np.median(F.max(axis=0) - F.min(axis=0))), "low": 100 * F.min(),
            "high": 100 * F.max(), "words": words, "terms": len(flat),
            "rising": [(int(j) + 1, 100 * float(rise.max(axis=0)[j]), " ".join(last[j])) for j in order]}


def section_track(tmp):
    corpus = shared_data() / "reuters" / "corpus.jsonl.gz"
    rows, rising = [], []
    for name, extra in SETTINGS.items():
        out = tmp / f"track_{len(rows)}"
        secs, _ = rlsi("track", corpus, "--date-field", "date", "--period", "month", "-k", 20, "-o", out, *extra)
        s = track_stats(out)
        rows.append([name, f"{s['rise']:.1f}", f"{s['spread']:.1f}", f"{s['low']:.1f}–{s['high']:.1f}",
                     f"{s['words']}/{s['terms']}", f"{secs:.1f}"])
        rising.append((name, s["rising"]))
    months = ", ".join(s["segments"])
    lines = ["## Reuters-21578 by month: `rlsi track` (K = 20)", "",
             f"Command: `rlsi track reuters/corpus.jsonl.gz --date-field date --period month -k 20 -o R` (+ the "
             f"setting's options); the months with documents: {months}.", "",
             *md_table(["setting", "largest monthly rise of a share (points)", "median share spread (points)",
                        "shares (%)", "top-5 terms that are words", "seconds"], rows), ""]
    for name, top in rising:
        lines += [f"Rising topics at {name}: " + "; ".join(f"T{k} (+{r:.1f}): {terms}" for k, r, terms in top), ""]
    return lines


def section_pipeline():
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    from bench_pipeline import load_20ng
    from rlsi import BatchRLSI

    data = load_20ng(shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz")
    (train, y_train), (test, y_test) = data["train"], data["test"]
    vec = TfidfVectorizer()
    X_train, X_test = vec.fit_transform(train), vec.transform(test)
    rows, base, scale = [], None, None

    def accuracy(W, W_test):
        return 100 * LogisticRegression(max_iter=1000).fit(W, y_train).score(W_test, y_test)

    for name, model in (("TruncatedSVD(30)", TruncatedSVD(30, random_state=0)),
                        ("BatchRLSI(30), the defaults (FEATURES)", BatchRLSI(30, random_state=0)),
                        ("BatchRLSI(30) at READING", BatchRLSI(30, random_state=0, **READING))):
        start = time.perf_counter()
        W = model.fit_transform(X_train)
        secs = time.perf_counter() - start
        W_test = model.transform(X_test)
        acc = accuracy(W, W_test)
        size = float(np.abs(W).mean())
        base, scale = (acc, size) if base is None else (base, scale)
        rescaled = accuracy(W * (scale / size), W_test * (scale / size))  # the scale argument: only |V| differs
        comp = model.components_
        density = comp.nnz / np.prod(comp.shape) if hasattr(comp, "nnz") else 1.0
        terms = int(np.median(np.diff(comp.indptr))) if hasattr(comp, "indptr") else comp.shape[1]
        rows.append([name, f"{acc:.1f}", f"{acc - base:+.1f}", f"{rescaled:.1f}", f"{size:.3g}",
                     f"{100 * density:.2f}", terms, f"{secs:.1f}"])
    return ["## 20 Newsgroups: `make_pipeline(TfidfVectorizer(), MODEL, LogisticRegression(max_iter=1000))`", "",
            f"bydate split: {X_train.shape[0]} training, {X_test.shape[0]} test documents, {X_train.shape[1]} "
            "terms.", "",
            *md_table(["MODEL", "test accuracy %", "vs TruncatedSVD (points)",
                       "accuracy, vectors scaled to TruncatedSVD's size %", "mean abs(w) (train)",
                       "non-zero topic weights %", "terms per topic (median)", "fit seconds"], rows), "",
            "The scaled column divides the document vectors by their mean absolute value and multiplies them by "
            "TruncatedSVD's: by the scale argument ((λ1, λ2) and (λ1/t, λ2 t²) give the same topics, the vectors "
            "scaled by 1/t), what a λ2 changes beyond the topics themselves.", ""]


def section_group(tmp):
    with gzip.open(shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz", "rt") as f:
        train = [line for line in f if '"split": "train"' in line]
    pick = np.linspace(0, len(train) - 1, 3000).astype(int)
    corpus = tmp / "20ng_3000.jsonl"
    corpus.write_text("".join(train[i] for i in pick))
    import rlsi as lib

    table = []
    for name, extra in (("defaults (class λ1 = 0.05 √(Np/N))", []), ("--lambda1-class 0.05", ["--lambda1-class", 0.05])):
        out = tmp / f"group_{len(table)}"
        secs, _ = rlsi("fit", corpus, "--model", "grlsi", "-o", out, *extra)
        model = lib.load(out)["model"]
        rows = [(g, b - a, np.diff(model.get_topics(g).indptr)) for g, (a, b) in model.topic_groups.items()]
        shared = np.concatenate([n for g, _, n in rows if g == "shared"])
        cls = np.concatenate([n for g, _, n in rows if g != "shared"])
        table.append([name, f"{len(shared)} / {int((shared == 0).sum())} / {int(np.median(shared))}",
                      f"{len(cls)} / {int((cls == 0).sum())} / {int(np.median(cls))}", f"{secs:.1f}"])
    return ["## Group RLSI: `rlsi fit CORPUS --model grlsi -o M` (3,000 20 Newsgroups posts, 20 newsgroups as "
            "classes)", "",
            *md_table(["setting", "shared topics / empty / terms (median)", "class topics / empty / terms (median)",
                       "seconds"], table), ""]


def section_evaluate(tmp):
    """``rlsi evaluate --collection med`` at its default grid: the chosen settings, and the edge warnings."""
    out = tmp / "evaluate.json"
    secs, _ = rlsi("evaluate", "--collection", "med", "--json", out)
    data = json.loads(out.read_text())
    rows = []
    for protocol, table in data["protocols"].items():
        for r in table[1:]:
            chosen = [c["setting"] for c in r.get("chosen") or []]
            picks = {}
            for c in chosen:
                key = ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in c.items()
                                if k in ("n_components", "lambda1")).replace("n_components", "K").replace("lambda1", "λ1")
                picks[key] = picks.get(key, 0) + 1
            rows.append([protocol, r["method"], f"{r['means']['map']:.4f}",
                         "; ".join(f"{k} ×{n}" if n > 1 else k for k, n in picks.items())])
    warnings = [f"* {w['protocol']}: {w['message']}" for w in data.get("edge_warnings", [])]
    grid = data["settings"]
    return ["## `rlsi evaluate --collection med` at the default grid", "",
            f"K ∈ {grid['k_grid']}, λ1 ∈ {grid['lambda1_grid']} (RLSI); {secs:.0f} s.", "",
            *md_table(["protocol", "method", "MAP", "chosen K (and λ1) per fold"], rows), "",
            "Edge warnings:" if warnings else "No edge warning.", "", *warnings, ""]


SECTIONS = {"med": section_med, "evaluate": section_evaluate, "track": section_track, "pipeline": lambda tmp: section_pipeline(),
            "group": section_group}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sections", default=",".join(SECTIONS))
    ap.add_argument("--out", default=None, help="Markdown report (default: print)")
    args = ap.parse_args(argv)
    facts = machine_facts()
    lines = ["# The defaults against their gates", "",
             f"READING (the commands' defaults) = {READING}; FEATURES (the estimators' defaults) = {FEATURES}.", "",
             f"Command: `{command_line(__file__)}`", ""]
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.sections.split(","):
            print(f"section {name} ...", file=sys.stderr, flush=True)
            lines += SECTIONS[name](Path(tmp))
    lines += ["Machine: " + "; ".join(f"{k}: {v}" for k, v in facts.items()) + f"; load at the end: "
              f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} (2 cores shared with other work: times move, "
              "the other figures do not)."]
    text = "\n".join(lines) + "\n"
    if args.out:
        write_report(args.out, text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
