"""Topics born in a stream (``OnlineRLSI(birth=True)``) on 20 Newsgroups with a few groups held back.

The stream: the documents of every group but the held-back ones (``--held``), shuffled; its first
``--head`` share is the first part, and the rest is mixed with the held-back groups' documents (shuffled
together) as the end of the stream. The same model (K = ``--k`` topics, at most ``--max-k``) streams it
once with births on; reported:

* each born topic: the mini-batch and the stream position where it was born (and whether that is in the first
  part), its top-10 terms, the group whose distinctive vocabulary holds most of them (a group's distinctive
  vocabulary: its 200 terms of largest mean tf-idf in the group minus the mean in the other groups), the share
  of the top-10 in that vocabulary, the AUC of the topic's weight |v_k| (``transform`` of the whole stream with
  the final topics) for that group's documents against all others, and the groups of the documents that caused
  the birth;
* for each held-back group, the best AUC of any topic of the same stream streamed with births off (what the
  model has without births);
* false births: the stream without the held-back groups, births on.

    PYTHONPATH=src python benchmarks/bench_births.py [--k 20] [--max-k 26] [--batch 256]
        [--held rec.sport.hockey sci.space talk.politics.guns] [--out benchmarks/results/births.md]
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

harness.use_src()

HELD = ["rec.sport.hockey", "sci.space", "talk.politics.guns"]


def auc(scores, positive):
    """Area under the ROC curve of ``scores`` for the boolean labels ``positive`` (ties counted half)."""
    from scipy.stats import rankdata

    r = rankdata(scores)
    n_pos = int(positive.sum())
    n_neg = len(scores) - n_pos
    return float((r[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def distinctive(X, groups, g, n=200):
    """Column indices of group g's ``n`` terms of largest mean tf-idf in g minus the mean elsewhere."""
    import numpy as np

    inside = groups == g
    diff = np.asarray(X[inside].mean(axis=0)).ravel() - np.asarray(X[~inside].mean(axis=0)).ravel()
    return set(np.argsort(-diff)[:n].tolist())


def stream(model, X, batch):
    """Stream X through ``model.partial_fit`` in mini-batches; returns the seconds it took."""
    t = time.perf_counter()
    for a in range(0, X.shape[0], batch):
        model.partial_fit(X[a:a + batch])
    return time.perf_counter() - t


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--k", type=int, default=20)
    p.add_argument("--max-k", type=int, default=26)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--rho", type=float, default=1.0)
    p.add_argument("--inner", type=int, default=5)
    p.add_argument("--head", type=float, default=0.7, help="share of the other groups' documents before the end")
    p.add_argument("--held", nargs="+", default=HELD)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(HERE / "results" / "births.md"))
    a = p.parse_args(argv)

    import numpy as np

    from rlsi import OnlineRLSI
    from rlsi.text import TfidfVectorizer

    facts = harness.machine_facts()
    data = harness.shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz"
    with gzip.open(data, "rt") as f:
        rows = [json.loads(line) for line in f]
    texts = [r["text"] for r in rows]
    groups_all = np.asarray([r["id"].split("/")[0] for r in rows])
    unknown = sorted(set(a.held) - set(groups_all))
    if unknown:
        raise SystemExit(f"no group {unknown}; groups: {sorted(set(groups_all))}")
    vectorizer = TfidfVectorizer(stemmer="english", min_df=2)
    X_all = vectorizer.fit_transform(texts)
    rng = np.random.default_rng(a.seed)
    held = np.isin(groups_all, a.held)
    others = rng.permutation(np.flatnonzero(~held))
    cut = int(a.head * len(others))
    tail = rng.permutation(np.concatenate([others[cut:], np.flatnonzero(held)]))
    order = np.concatenate([others[:cut], tail])
    X, groups = X_all[order], groups_all[order]
    params = dict(lambda2=1.0, rho=a.rho, n_inner=a.inner, batch_size=a.batch, random_state=0)

    born_model = OnlineRLSI(a.k, birth=True, max_components=a.max_k, **params)
    t_birth = stream(born_model, X, a.batch)
    plain = OnlineRLSI(a.k, **params)
    t_plain = stream(plain, X, a.batch)
    control = OnlineRLSI(a.k, birth=True, max_components=a.max_k, **params)
    X_ctl = X_all[others]
    t_ctl = stream(control, X_ctl, a.batch)

    names = np.asarray(vectorizer.get_feature_names_out())
    vocab = {g: distinctive(X, groups, g) for g in a.held}
    V = np.abs(born_model.transform(X))
    V_plain = np.abs(plain.transform(X))
    rows_out, found = [], {}
    for b in born_model.births_:
        k = b["topic"]
        row = born_model.components_[k].toarray().ravel()
        top = np.argsort(-row)[:10]
        top = top[row[top] > 0]
        share = {g: len(set(top.tolist()) & vocab[g]) / 10 for g in a.held}
        g = max(share, key=share.get)
        first = int(min(b["documents"]))
        caused = np.unique(groups[np.asarray(b["documents"]) % len(order)], return_counts=True)
        causes = ", ".join(f"{n} {c}" for c, n in sorted(zip(*caused), key=lambda t: -t[1])[:3])
        score = auc(V[:, k], groups == g)
        found[g] = max(found.get(g, 0.0), score)
        rows_out.append((f"T{k + 1}", b["batch"], b["n_docs_seen"], "first part" if first < cut else "end",
                         ", ".join(names[top]), g, f"{share[g]:.1f}", f"{score:.3f}", causes))
    lines = ["# Topics born in a stream: 20 Newsgroups with groups held back", "",
             f"    {harness.command_line(__file__, argv)}", "",
             f"20 Newsgroups, {X_all.shape[0]} documents x {X_all.shape[1]} terms (tf-idf, stemmed, min_df 2). "
             f"Held back: {', '.join(a.held)} ({int(held.sum())} documents). The stream: {cut} documents of the "
             f"other groups (the first part, mini-batches 0-{(cut - 1) // a.batch}), then the other "
             f"{len(tail) - int(held.sum())} documents of those groups shuffled with the held-back ones "
             f"({len(tail)} documents, from position {cut}). OnlineRLSI K = {a.k} (at most {a.max_k}), "
             f"mini-batches of {a.batch}, ρ = {a.rho}, ξ = {a.inner}, λ₂ = 1, random_state 0; "
             f"birth=True (the default tests of rlsi.models.birth.TopicBirth).", "",
             "## Born topics", "",
             *harness.md_table(["topic", "batch", "born after (docs)", "in", "top-10 terms", "group",
                               "top-10 in group vocab", "AUC for group", "documents that caused it (top groups)"],
                              rows_out), ""]
    missed = [g for g in a.held if g not in found]
    best_plain = {g: max(auc(V_plain[:, k], groups == g) for k in range(V_plain.shape[1])) for g in a.held}
    lines += ["## Each held-back group", "",
              *harness.md_table(["group", "best AUC of a born topic", "best AUC of any topic without births"],
                               [(g, f"{found[g]:.3f}" if g in found else "none born",
                                 f"{best_plain[g]:.3f}") for g in a.held]), ""]
    early = sum(1 for r in rows_out if r[3] == "first part")
    lines += [f"Births in the first part: {early}. Groups without a born topic: {len(missed)}"
              + (f" ({', '.join(missed)})." if missed else "."), "",
              f"**False births.** The stream without the held-back groups ({X_ctl.shape[0]} documents, the same "
              f"order): {len(control.births_)} topic(s) born"
              + (f" (at mini-batches {', '.join(str(b['batch']) for b in control.births_)})." if control.births_
                 else "."), "",
              f"**Time** (wall clock, one pass): births on {t_birth:.1f} s, off {t_plain:.1f} s "
              f"({t_birth / t_plain:.2f}x), the stream without the held-back groups {t_ctl:.1f} s. "
              f"Machine: {facts['cores']} cores shared with other work; `uptime` load average at the start "
              f"{facts['loadavg']}, at the end {harness.loadavg():.2f} (1 min).", "",
              harness.machine_line(facts)]
    harness.write_report(a.out, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
