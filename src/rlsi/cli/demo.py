"""``rlsi demo``: fit RLSI on the embedded MED abstracts and show readable, compact topics."""

from __future__ import annotations

import time

from ..datasets import demo_corpus_path
from ..models import BatchRLSI
from ..quality import avg_compactness, format_topics, quality_report
from ..text import TfidfVectorizer, read_jsonl
from . import _bounds, _common


def register(sub):
    p = sub.add_parser("demo", help="fit RLSI on a small embedded corpus (MED) and print the topics",
                       description="Fit batch RLSI (ℓ1 topics, ℓ2 documents) on the 1,033 MEDLINE abstracts "
                                   "shipped with rlsi, with stemming, and print the topics.")
    p.add_argument("-k", "--topics", type=_bounds.topics, default=20, help="number of topics (default 20)")
    p.add_argument("--lambda1", type=_common.non_negative_float, default=0.1,
                   help="topic regularization per 1000 documents (default 0.1: with --lambda2 1, about 3%% of the "
                        "terms per topic on MED, topics to read)")
    p.add_argument("--lambda2", type=_common.non_negative_float, default=1.0,
                   help="document regularization (default 1, as in the paper; the library's default 1e-3 gives "
                        "denser topics, made to be features)")
    p.add_argument("--seed", type=_bounds.seed, default=0, help="random seed in [0, 2^32 - 1] (default 0)")
    p.set_defaults(func=run)


def run(args):
    start = time.perf_counter()
    corpus = read_jsonl(demo_corpus_path())
    vectorizer = TfidfVectorizer(stemmer="english", min_df=2)
    X = vectorizer.fit_transform(corpus.texts)
    model = BatchRLSI(args.topics, lambda1=args.lambda1, lambda2=args.lambda2, random_state=args.seed,
                      verbose=0 if args.quiet else 1).fit(X)
    elapsed = time.perf_counter() - start
    print(f"MED: {X.shape[0]} abstracts, {X.shape[1]} terms (stemmed, stop words removed, min_df=2, "
          f"unit-length tf-idf)")
    print(f"BatchRLSI K={args.topics} lambda1={args.lambda1:g} per 1000 docs (λ1={model.lambda1_effective_:.3g}),"
          f" lambda2={args.lambda2:g}: {model.n_iter_} iterations in {elapsed:.1f}s, "
          f"AvgComp={avg_compactness(model.components_):.4f} "
          f"({model.components_.nnz} non-zero term weights of {model.components_.shape[0] * X.shape[1]})")
    print()
    print(format_topics(model.components_, vectorizer.get_feature_names_out(), n_terms=8))
    print()
    print("quality: " + "  ".join(f"{k}={v:.3g}" for k, v in quality_report(model.components_).items()))
    return 0
