"""``rlsi fit-stc`` and ``rlsi classify``: sparse topical coding models from the command line.

* ``rlsi fit-stc CORPUS -o MODEL_DIR --model stc|ostc|cstc|medstc|omedstc`` is ``rlsi fit --model NAME``
  under its older name (``-k`` is ``--n-components`` here): it vectorizes the corpus into raw counts, fits the
  model (optionally on one split only, with labels for the max-margin models) and saves model + vectorizer in
  the one model-directory format (:mod:`rlsi.cli.stc_fit`).
* ``rlsi classify MODEL_DIR CORPUS --label-field label --split-field split`` prints the test accuracy and a
  confusion summary: MedSTC models predict directly; unsupervised models get a linear SVM on θ trained
  on the training split.

The models' defaults are the ``table2`` preset (:mod:`rlsi.models.stc.settings`); ``--settings printed``
takes the paper's printed values.
"""

from __future__ import annotations

import time
from collections import Counter

from ..errors import RLSIError
from . import _bounds, _common, _output
from .learners import get_learner, learners, model_help, report_fit, stc_labels
from .scale import _size
from .stc_fit import add_split_arguments, add_stc_arguments, fit_counts, split_corpus


def register(sub):
    p = sub.add_parser("fit-stc", help="fit a sparse topical coding model (STC family) and save it "
                                       "(the same as rlsi fit --model stc|cstc|ostc|medstc|omedstc)",
                       description="Fit STC, collapsed STC, online STC, MedSTC or online MedSTC on the word "
                                   "counts of a corpus and save the model and its vectorizer. The same fit as "
                                   "'rlsi fit --model NAME' with -k for --n-components.")
    p.add_argument("corpus", help="corpus file (.jsonl / .jsonl.gz) or folder of .txt files")
    p.add_argument("-o", "--output", required=True, help="model directory to write")
    p.add_argument("--model", choices=sorted(learners("fit-stc")), default="stc", help=model_help("fit-stc"))
    p.add_argument("-k", "--n-components", type=_bounds.topics, default=None,
                   help="number of topics K (default 60)")
    p.add_argument("--rho", type=float, default=None,
                   help="ℓ1 weight on word codes (default 0.01; printed 0.1)")
    p.add_argument("--max-iter", type=_bounds.max_iter, default=None,
                   help="batch iterations, run whole (default: 4 for stc, 10 for medstc)")
    p.add_argument("--batch-size", type=_bounds.batch_size, default=None,
                   help="online mini-batch size (default: 32 for ostc, 16 for omedstc)")
    p.add_argument("--jobs", type=_common.jobs_count, default=None, help="threads (default: all cores)")
    p.add_argument("--memory-limit", type=_size, default=None, metavar="SIZE",
                   help="refuse a fit whose estimated peak memory exceeds SIZE (e.g. 8G; default: the memory "
                        "available now)")
    p.add_argument("--label-field", default="label", help="JSON field with the class label")
    add_stc_arguments(p)
    _common.add_text_arguments(p)
    p.set_defaults(func=run_fit)

    c = sub.add_parser("classify", help="accuracy and confusion summary of an STC model on a labelled corpus")
    c.add_argument("model_dir", help="model directory written by 'rlsi fit-stc'")
    c.add_argument("corpus", help="labelled corpus (.jsonl / .jsonl.gz) with a split field")
    c.add_argument("--label-field", default="label", help="JSON field with the class label")
    add_split_arguments(c)
    c.add_argument("--test-split", default="test", help="value of the split field to evaluate on")
    c.add_argument("--same-documents", action="store_true",
                   help="without --split-field: train and test on every document and report it as training "
                        "accuracy (otherwise refused: it says nothing about new documents)")
    c.set_defaults(func=run_classify)


def run_fit(args):
    learner = get_learner(args.model, "fit-stc")
    model = learner.build(args)  # options are checked before the corpus is read
    _output.model_destination(args.output, reads=[args.corpus])
    _output.replacing_notice(args.output, quiet=args.quiet)
    start = time.perf_counter()
    model, vectorizer, (n_docs, n_terms) = fit_counts(args, learner, model, args.corpus)
    return report_fit(learner, args.output, {"model": model, "vectorizer": vectorizer}, n_docs, n_terms, start,
                      quiet=args.quiet)


def run_classify(args):
    import numpy as np
    from sklearn.svm import LinearSVC

    from ..text import read_corpus

    model, vectorizer, _ = _common.load_model_dir(args.model_dir)
    if vectorizer is None or not hasattr(model, "word_codes"):
        raise RLSIError(f"{args.model_dir} is not an STC model directory with a vectorizer; fit it with "
                        f"rlsi fit-stc")
    if not args.split_field and not args.same_documents:
        raise RLSIError("without --split-field the accuracy would be measured on the documents the classifier "
                        "was trained on; give --split-field FIELD (with --train-split/--test-split), or "
                        "--same-documents for the training accuracy")
    if args.split_field and args.train_split == args.test_split:
        raise RLSIError(f"--train-split and --test-split are both {args.test_split!r}: the test documents "
                        "would be the training documents")
    corpus = read_corpus(args.corpus)
    test = split_corpus(corpus, args, args.test_split)
    Xte, yte = vectorizer.transform_counts(test.texts), stc_labels(args, test)
    if hasattr(model, "predict"):
        pred = model.predict(Xte).astype(str)
    else:
        train = split_corpus(corpus, args, args.train_split)
        svm = LinearSVC().fit(model.transform(vectorizer.transform_counts(train.texts)), stc_labels(args, train))
        pred = svm.predict(model.transform(Xte))
    acc = float(np.mean(pred == yte))
    what = "training accuracy" if not args.split_field else "accuracy"
    print(f"{what} {100 * acc:.2f}% on {len(yte)} documents")
    for label in sorted(set(yte)):
        mask = yte == label
        top = Counter(pred[mask & (pred != yte)]).most_common(1)
        conf = f", most confused with {_output.printable(top[0][0])} ({top[0][1]})" if top else ""
        print(f"  {_output.printable(label)}: {100 * np.mean(pred[mask] == label):.1f}% of {int(mask.sum())}{conf}")
    return 0
