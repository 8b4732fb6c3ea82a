"""Seed words (guided topics) on 20 Newsgroups: do seeded topics take their newsgroup's vocabulary and documents?

Five topics of a BatchRLSI fit (K = 20, the command line's reading defaults λ₁ = 0.05, λ₂ = 1) are seeded with two
or three words of a newsgroup each; the same fit without seeds is the baseline, in the same run. For each
seeded group g:

* **top-10 in group vocabulary**: how many of the topic's 10 largest-weight (non-zero) terms belong to g's vocabulary,
  defined as the terms whose document frequency *share* in g is at least ``--ratio`` (3) times their share in the
  other groups' documents, and that occur in at least 5 of g's documents;
* **AUC**: ``roc_auc_score(label == g, W[:, k])`` of the topic's document weights (the fit's ``fit_transform``).

The unseeded fit's topic for g is its best match: the topic with the largest AUC for g (a choice that favours the
baseline). Seed strengths ``--strengths`` are compared on the same numbers (the default is chosen from them).

Usage: PYTHONPATH=src python benchmarks/bench_seeds.py --out benchmarks/results/seeds.md
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shlex
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

from sklearn.exceptions import ConvergenceWarning  # noqa: E402
from sklearn.metrics import roc_auc_score  # noqa: E402

from harness import machine_facts, machine_line, shared_data  # noqa: E402
from rlsi.models import BatchRLSI  # noqa: E402
from rlsi.models.seeds import DEFAULT_SEED_STRENGTH  # noqa: E402
from rlsi.text import TfidfVectorizer  # noqa: E402

SEEDS = {
    "rec.sport.hockey": ["hockey", "nhl", "goalie"],
    "sci.space": ["space", "nasa", "orbit"],
    "sci.med": ["doctor", "patients", "disease"],
    "comp.graphics": ["graphics", "polygon", "rendering"],
    "talk.politics.guns": ["gun", "firearms", "weapons"],
}


def load():
    docs, labels = [], []
    with gzip.open(shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz", "rt") as fh:
        for line in fh:
            d = json.loads(line)
            if d.get("split", "train") == "train":
                docs.append((d.get("title") or "") + " " + d["text"])
                labels.append(d["label"])
    return docs, np.array(labels)


def group_vocabulary(X, labels, group, ratio, min_df=5):
    """Column ids whose document-frequency share in ``group`` is ≥ ratio x their share elsewhere."""
    inside = labels == group
    present = (X > 0).astype(np.float64)
    df_in = np.asarray(present[inside].sum(axis=0)).ravel()
    df_out = np.asarray(present[~inside].sum(axis=0)).ravel()
    share_in, share_out = df_in / inside.sum(), df_out / (~inside).sum()
    return set(np.flatnonzero((df_in >= min_df) & (share_in >= ratio * share_out)))


def topic_scores(C, W, k, labels, group, vocab, names):
    top = [t for t in np.argsort(-np.abs(C[k]))[:10] if C[k, t] != 0]  # a topic of fewer terms lists fewer
    return {"in_vocab": sum(int(t in vocab) for t in top), "auc": roc_auc_score(labels == group, W[:, k]),
            "top": [names[t] for t in top]}


def fit(X, names, args, seeds=None, strength=None):
    kw = {} if seeds is None else {"seed_terms": seeds, "seed_strength": strength}
    model = BatchRLSI(args.k, lambda1=0.05, lambda2=1.0, max_iter=args.iters, random_state=args.seed, **kw)
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        W = model.fit_transform(X, feature_names=names) if seeds else model.fit_transform(X)
    return model, np.asarray(W), time.perf_counter() - t0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=20)
    p.add_argument("--iters", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ratio", type=float, default=3.0)
    p.add_argument("--strengths", default="0.25,0.5,0.9")
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    facts = machine_facts()
    uptime = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    docs, labels = load()
    vec = TfidfVectorizer(min_df=5, max_df=0.5)
    X = vec.fit_transform(docs)
    names = list(vec.get_feature_names_out())
    vocab = {g: group_vocabulary(X, labels, g, args.ratio) for g in SEEDS}
    base, W0, t_base = fit(X, names, args)
    C0 = base.components_.toarray()
    rows, runs = [], {}
    for strength in [float(s) for s in args.strengths.split(",")]:
        model, W, t = fit(X, names, args, SEEDS, strength)
        runs[strength] = (model, W, t)
    lines = ["# Seed words (guided topics) on 20 Newsgroups", "",
             "Command: `PYTHONPATH=src python benchmarks/bench_seeds.py "
             + " ".join(map(shlex.quote, argv if argv is not None else sys.argv[1:])) + "`", "",
             machine_line(facts) + f" `uptime` at the start: `{uptime}` (the machine is shared: 2 cores).", "",
             f"Data: 20 Newsgroups training split (bydate), {X.shape[0]} documents x {X.shape[1]} terms (rlsi "
             f"TfidfVectorizer, English stop words, min_df=5, max_df=0.5). BatchRLSI K = {args.k}, λ₁ = 0.05, "
             f"λ₂ = 1, max_iter = {args.iters}, random_state = {args.seed}. A group's vocabulary: terms in at "
             f"least 5 of its documents whose document-frequency share in it is ≥ {args.ratio:g}x their share in "
             f"the other groups (sizes: " + ", ".join(f"{g} {len(v)}" for g, v in vocab.items()) + "). "
             "The unseeded topic of a group is the one with the largest AUC for it (favours the baseline).", "",
             "| group | seed words | unseeded: top-10 in vocab | unseeded AUC | "
             + " | ".join(f"s={s:g}: top-10 in vocab | s={s:g}: AUC" for s in runs) + " |",
             "|---|---|---|---|" + "---|---|" * len(runs)]
    totals = {"base": [0, 0.0], **{s: [0, 0.0] for s in runs}}
    for k, (g, words) in enumerate(SEEDS.items()):
        aucs = [roc_auc_score(labels == g, W0[:, j]) for j in range(args.k)]
        j = int(np.argmax(aucs))
        b = topic_scores(C0, W0, j, labels, g, vocab[g], names)
        cells = [g, ", ".join(words), str(b["in_vocab"]), f"{b['auc']:.3f}"]
        totals["base"][0] += b["in_vocab"]
        totals["base"][1] += b["auc"]
        for s, (model, W, _) in runs.items():
            r = topic_scores(model.components_.toarray(), W, k, labels, g, vocab[g], names)
            cells += [str(r["in_vocab"]), f"{r['auc']:.3f}"]
            totals[s][0] += r["in_vocab"]
            totals[s][1] += r["auc"]
        rows.append("| " + " | ".join(cells) + " |")
    n = len(SEEDS)
    rows.append("| mean | | " + f"{totals['base'][0] / n:.1f} | {totals['base'][1] / n:.3f} | "
                + " | ".join(f"{totals[s][0] / n:.1f} | {totals[s][1] / n:.3f}" for s in runs) + " |")
    lines += rows + ["", f"Fit times (wall, shared machine): unseeded {t_base:.1f} s; "
                     + ", ".join(f"s={s:g} {t:.1f} s" for s, (_, _, t) in runs.items()) + ".", "",
                     "Top-10 terms of the seeded topics (s = default strength) and of the unseeded best match:", ""]
    default = min(runs, key=lambda s: abs(s - DEFAULT_SEED_STRENGTH))
    model, W, _ = runs[default]
    for k, g in enumerate(SEEDS):
        aucs = [roc_auc_score(labels == g, W0[:, j]) for j in range(args.k)]
        j = int(np.argmax(aucs))
        lines.append(f"* {g}: seeded `{' '.join(topic_scores(model.components_.toarray(), W, k, labels, g, vocab[g], names)['top'])}`"
                     f"; unseeded topic {j}: `{' '.join(topic_scores(C0, W0, j, labels, g, vocab[g], names)['top'])}`")
    text = "\n".join(lines) + "\n"
    if args.out:
        args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
