"""Terms per topic that ``BatchRLSI(target_terms_per_topic=T)`` delivers on 20 Newsgroups, at each λ2, by the
λ1 search's rounds: the default (rounds until λ1 settles) against a fixed number (``--rounds R``, no early
stop), each fit in this process one after the other.

    PYTHONPATH=src python benchmarks/bench_terms_per_topic.py --lambda2 1e-3,1 --targets 30,300 --rounds 3 \\
        --out benchmarks/results/terms_per_topic.md

Corpus: the training split of ``../shared/data/twenty_newsgroups`` under scikit-learn's TfidfVectorizer
defaults (the vectorisation of ``bench_pipeline.py``); K = 30, ``random_state=0``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402

harness.use_src()

from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402

from rlsi import BatchRLSI  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=30)
    ap.add_argument("--lambda2", default="1e-3,1", help="comma-separated λ2 values")
    ap.add_argument("--targets", default="30,300")
    ap.add_argument("--rounds", type=int, default=3, help="the fixed-rounds comparison")
    ap.add_argument("--out", help="Markdown result file")
    args = ap.parse_args(argv)
    facts = harness.machine_facts()
    path = harness.shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz"
    with gzip.open(path, "rt") as f:
        texts = [d.get("text", "") for d in map(json.loads, f) if d["split"] == "train"]
    X = TfidfVectorizer().fit_transform(texts)
    harness.log(f"20 Newsgroups train: {X.shape[0]} x {X.shape[1]}, K = {args.k}")
    # the λ1 search with exactly ``rounds`` bisections (settled 1: it never stops early): the tuning's
    fixed = {"search_rounds": args.rounds, "search_settled": 1.0}
    rows = []
    for lambda2 in (float(v) for v in args.lambda2.split(",")):
        for target in (int(t) for t in args.targets.split(",")):
            for name, tuning in (("until λ1 settles (default)", None), (f"{args.rounds} fixed rounds", fixed)):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    m = BatchRLSI(args.k, lambda2=lambda2, target_terms_per_topic=target, random_state=0,
                                  tuning=tuning).fit(X)
                seconds = time.perf_counter() - start
                per_topic = m.components_.nnz / args.k
                harness.log(f"λ2 {lambda2:g}, target {target}, {name}: {per_topic:.0f} terms per topic, "
                            f"λ1_ {m.lambda1_:.4g}, {seconds:.1f} s")
                rows.append([f"{lambda2:g}", target, name, f"{per_topic:.0f}", f"{per_topic / target:.2f}",
                             f"{m.lambda1_:.4g}", f"{seconds:.1f}"])
    lines = ["# The λ1 search: terms per topic asked and delivered", "",
             f"Command: `{harness.command_line(__file__, argv)}`", "",
             f"20 Newsgroups training split, {X.shape[0]} x {X.shape[1]} (scikit-learn's TfidfVectorizer "
             f"defaults), `BatchRLSI({args.k}, lambda2=..., target_terms_per_topic=..., random_state=0)`; terms "
             f"per topic = nnz(U) / K of the fitted topics. Seconds are wall clock of the whole fit (search "
             f"included), one fit after the other in one process.", "",
             f"**Machine.** {facts['cpu']}, {facts['cores']} cores, {facts['memory']} RAM; BLAS {facts['blas']}; "
             f"numba {facts['numba']}; code {facts['code']}. {harness.load_note(facts)}", ""]
    lines += harness.md_table(["λ2", "target terms per topic", "λ1 search", "terms per topic", "× target",
                               "λ1_ (per 1000 docs)", "seconds"], rows, align="rrlrrrr")
    text = "\n".join(lines)
    print(text)
    if args.out:
        harness.write_report(args.out, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
