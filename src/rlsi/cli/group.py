"""The group models in the CLI: the options and estimator of ``rlsi fit --model grlsi|gnmf|crlsi|cnmf``
(registered in :mod:`rlsi.cli.learners`) and per-group ``rlsi topics``.

Labels come from a JSON field of the corpus (``--label-field``, default ``label``). A field holding a list
(multi-label collections such as Reuters' ``labels``) assigns the document to the **first** label of its
list (the collection's primary label); a document with no label (field missing, null, empty string or
empty list) is an error by default, or forms a class of its own with ``--unlabeled own-class``. Without
labels at all, ``--classes kmeans:P`` derives P classes by clustering.
"""

from __future__ import annotations

import json

from ..errors import RLSIError
from . import _common
from ._choices import UNLABELED_POLICIES

#: The remedy named when documents have no label, in the CLI's words.
UNLABELED_REMEDY = "label them, use --unlabeled own-class, or --classes kmeans:P"


def add_group_arguments(parser):
    """The options of the group models (``--model grlsi|gnmf|crlsi|cnmf``)."""
    g = parser.add_argument_group("group models (shared + per-class topics)")
    g.add_argument("--label-field", default="label", help="JSON field with each document's class (default: label)")
    g.add_argument("--classes", default=None, help="derive classes by clustering instead: kmeans:P")
    g.add_argument("--shared-topics", type=int, default=10, help="shared topics Ks (default: 10)")
    g.add_argument("--class-topics", type=_common.positive_int, default=5, help="topics per class Kc (default: 5)")
    g.add_argument("--lambda1-class", type=_common.non_negative_float, default=None,
                   help="λ1 of the class topics (default: --lambda1 times the square root of the class's share "
                        "of the documents, which keeps class topics alive)")
    g.add_argument("--unlabeled", choices=UNLABELED_POLICIES, default="error",
                   help="documents without a label: stop with an error (default) or put them in one class")


def document_labels(values, field, unlabeled="error"):
    """One label per document from the raw field values (:func:`rlsi.text.labels.document_labels`)."""
    from ..text.labels import document_labels as _document_labels

    return _document_labels(values, field, unlabeled, remedy=UNLABELED_REMEDY)


def group_model_from_args(args, quiet):
    from ..models.group import CNMF, CRLSI, GroupNMF, GroupRLSI

    kind = args.model
    ks = 0 if kind in ("crlsi", "cnmf") else args.shared_topics
    common = dict(classes=args.classes, max_iter=args.max_iter, tol=args.tol, random_state=args.seed,
                  n_jobs=args.jobs, verbose=0 if quiet else 1)
    if kind in ("gnmf", "cnmf"):
        return (CNMF if kind == "cnmf" else GroupNMF)(ks, args.class_topics, **common)
    params = dict(lambda1_scale=args.lambda1_scale, topic_penalty=args.topic_penalty,
                  doc_penalty=args.doc_penalty, init=args.init, lambda1_class=args.lambda1_class, **common,
                  **_common.regularization_from_args(args))
    return (CRLSI if kind == "crlsi" else GroupRLSI)(ks, args.class_topics, **params)


def group_labels_from_args(args, corpus):
    """The class of each document of ``corpus`` from ``--label-field`` (None with ``--classes``: the model
    derives them)."""
    if args.classes is not None:
        return None
    if args.label_field not in corpus.fields:
        others = ", ".join(sorted(corpus.fields)) or "none besides id, title and text"
        raise RLSIError(f"the corpus has no field {args.label_field!r} for the classes (its other fields: "
                        f"{others}); name it with --label-field or derive classes with --classes kmeans:P")
    return document_labels(corpus.fields[args.label_field], args.label_field, args.unlabeled)


def print_group_topics(model, names, args):
    """``rlsi topics`` for a model with several topic groups: each group's topics and its AvgComp."""
    from ..quality import format_topics
    from ._output import printable

    summary, rows = model.group_summary(), model.topic_groups  # in the order of the rows: shared first
    if args.json:
        from ..quality import topic_summary

        out = {g: {"avg_compactness": s["avg_compactness"],
                   "topics": topic_summary(model.get_topics(g), names, n_terms=args.terms, by=args.by,
                                           start=rows[g][0])}
               for g, s in summary.items()}
        print(json.dumps({"groups": out}, default=float, indent=1))
        return 0
    for g, s in summary.items():
        a, b = rows[g]
        print(f"== {printable(g)}: {s['topics']} topics (T{a + 1}-T{b}), AvgComp={s['avg_compactness']:.4g}")
        print(format_topics(model.get_topics(g), names, n_terms=args.terms, by=args.by, start=a))
        print()
    return 0
