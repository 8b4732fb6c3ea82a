"""``rlsi topics MODEL_DIR``: print the topics of a saved model with their quality measures."""

from __future__ import annotations

import json

from . import _common
from ._choices import RANKINGS
from ._output import printable_all


def register(sub):
    p = sub.add_parser("topics", help="print the topics of a saved model",
                       description="Print each topic's top terms (by the dominating sign, TOIS §8.4.1), "
                                   "compactness (comp: share of non-zero term weights) and majority ratio (MR: "
                                   "share of the weight with the dominating sign), then the model's quality "
                                   "summary. Topics are numbered T1, T2, ... (T1 is row 0 of components_), as "
                                   "in 'rlsi track' reports; '(-)' marks a topic whose weight is mostly "
                                   "negative, listed by its most negative terms. A model saved without a "
                                   "vectorizer shows terms by column index.")
    p.add_argument("model_dir", help="model directory written by 'rlsi fit'")
    p.add_argument("-n", "--terms", type=_common.positive_int, default=10, help="terms per topic (default 10)")
    p.add_argument("--by", choices=RANKINGS, default="dominant", help="how top terms are ranked")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.set_defaults(func=run)


def run(args):
    from ..quality import format_topics, quality_report, topic_summary

    model, vectorizer, _ = _common.load_model_dir(args.model_dir)
    if vectorizer is None:  # e.g. fitted in Python on a matrix: terms shown by their column index
        import sys

        import numpy as np

        print(f"rlsi: note: {args.model_dir} has no vectorizer; terms are shown by column index",
              file=sys.stderr)
        names = np.arange(model.components_.shape[1]).astype(str)
    else:
        names = vectorizer.get_feature_names_out()
    if not args.json:  # terms read from the model file are shown escaped (JSON escapes them itself)
        names = printable_all(names)
    if len(getattr(model, "topic_groups", {})) > 1:  # shared and per-class topics (rlsi.cli.group)
        from .group import print_group_topics

        return print_group_topics(model, names, args)
    report = quality_report(model.components_, n_top=args.terms)
    labels = getattr(model, "topic_names_", None)  # seed words' names (rlsi.models.seeds)
    if args.json:
        topics = topic_summary(model.components_, names, n_terms=args.terms, by=args.by, labels=labels)
        print(json.dumps({"topics": topics, "quality": report}, default=float, indent=1))
        return 0
    if labels is not None:  # read from the model file: shown escaped
        labels = [None if n is None else str(printable_all([n])[0]) for n in labels]
    print(format_topics(model.components_, names, n_terms=args.terms, by=args.by, labels=labels))
    print()
    print("  ".join(f"{k}={v:.4g}" for k, v in report.items()))
    return 0
