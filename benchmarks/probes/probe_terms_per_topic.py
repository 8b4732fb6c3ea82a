"""Terms per topic that ``BatchRLSI(target_terms_per_topic=T)`` delivers on 20 Newsgroups, by the λ1 search's
rounds: a fixed number (``--rounds R``, no early stop) against the default (rounds until λ1 settles).

    PYTHONPATH=src python benchmarks/probes/probe_terms_per_topic.py --lambda2 1e-3 --targets 30,300 --rounds 3
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
sys.path.insert(0, str(HERE.parent))

from harness import shared_data, use_src  # noqa: E402

use_src()

from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402

from rlsi import BatchRLSI  # noqa: E402
from rlsi._validation import check_random_state  # noqa: E402
from rlsi.models.sparsity import lambda1_for_terms_per_topic  # noqa: E402


class FixedRounds(BatchRLSI):
    """BatchRLSI whose λ1 search runs exactly ``rounds`` bisections (``settled=1``: never stops early)."""
    rounds = 3

    def _lambda1_for_target(self, X, W, target, D=None):
        return lambda1_for_terms_per_topic(
            X, W, target, problem_factory=lambda W_, lam_: self._problem(X, W_, lam_, D),
            rng=check_random_state(self.random_state), max_iter=self.inner_max_iter, tol=self.inner_tol, D=D,
            return_problem=True, rounds=self.rounds, settled=1.0)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--k", type=int, default=30)
    ap.add_argument("--lambda2", type=float, default=1e-3)
    ap.add_argument("--targets", default="30,300")
    ap.add_argument("--rounds", type=int, default=3, help="the fixed-rounds comparison")
    args = ap.parse_args(argv)
    path = shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz"
    with gzip.open(path, "rt") as f:
        texts = [d.get("text", "") for d in map(json.loads, f) if d["split"] == "train"]
    X = TfidfVectorizer().fit_transform(texts)
    print(f"20 Newsgroups train: {X.shape[0]} x {X.shape[1]}, K = {args.k}, lambda2 = {args.lambda2:g}")
    FixedRounds.rounds = args.rounds
    for target in (int(t) for t in args.targets.split(",")):
        for name, cls in ((f"{args.rounds} fixed rounds", FixedRounds), ("until lambda1 settles", BatchRLSI)):
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                m = cls(args.k, lambda2=args.lambda2, target_terms_per_topic=target, random_state=0).fit(X)
            print(f"target {target:5d}, {name:22s}: {m.components_.nnz / args.k:7.0f} terms per topic, "
                  f"lambda1_ {m.lambda1_:.4g}, {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
