"""``rlsi fit-stc`` and ``rlsi classify``: sparse topical coding models from the command line.

* ``rlsi fit-stc CORPUS -o MODEL_DIR --model stc|ostc|cstc|medstc|omedstc`` vectorizes the corpus into raw
  counts (``TfidfVectorizer.transform_counts``, same tokenization as every rlsi model), fits the model
  (optionally on one split only, with labels for the max-margin models) and saves model + vectorizer in
  the one model-directory format.
* ``rlsi classify MODEL_DIR CORPUS --label-field label --split-field split`` prints the test accuracy and a
  confusion summary: MedSTC models predict directly; unsupervised models get a linear SVM on θ trained
  on the training split.

A separate module (and sub-command names) so that ``rlsi fit`` stays untouched while it is being
reworked; ``fit-stc`` can become ``fit --model stc`` later.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

import numpy as np

from ..errors import RLSIError
from ..text import read_corpus
from . import _bounds, _common, _output
from .learners import get_learner, learners, model_help, report_fit, stc_labels
from .scale import _size

def _refit_C(text):
    if text in ("cv", "joint"):
        return text
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and np.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text!r} is not 'cv', 'joint' or a positive number")
    return value


def register(sub):
    p = sub.add_parser("fit-stc", help="fit a sparse topical coding model (STC family) and save it",
                       description="Fit STC, collapsed STC, online STC, MedSTC or online MedSTC on the word "
                                   "counts of a corpus and save the model and its vectorizer.")
    p.add_argument("corpus", help="corpus file (.jsonl / .jsonl.gz) or folder of .txt files")
    p.add_argument("-o", "--output", required=True, help="model directory to write")
    p.add_argument("--model", choices=sorted(learners("fit-stc")), default="stc", help=model_help("fit-stc"))
    p.add_argument("--settings", choices=["printed", "released", "table2"], default=None,
                   help="start from a named preset of the STC settings (docs/stc.md): printed, the paper's "
                        "values (the defaults below); released, the authors' released code's; table2, the "
                        "released values with what reproduces Table 2 (on 20 Newsgroups MedSTC 81.2%%; STC with "
                        "the LDA start 70.7%%, online 71.4%%); the "
                        "options given on the command line override the preset")
    p.add_argument("-k", "--n-components", type=_bounds.topics, default=None,
                   help="number of topics K (default 60)")
    p.add_argument("--lam", type=float, default=None,
                   help="λ: ℓ1 weight on document codes θ (default 0.01)")
    p.add_argument("--gamma", type=float, default=None,
                   help="γ: weight tying word codes to their document code (default 0.01)")
    p.add_argument("--rho", type=float, default=None,
                   help="ℓ1 weight on word codes (paper: 0.1; on a ~50k vocabulary 0.001 classifies better, see "
                        "the STC benchmark)")
    p.add_argument("--eps", type=float, default=None,
                   help="ε of Eq. (1), the Poisson mean's floor (default 1e-3, the released STC code's value; "
                        "quote perplexities with it)")
    p.add_argument("--dictionary-step", choices=["mm", "projected", "lbfgs"], default=None,
                   help="mm: multiplicative majorise-minimise step (default); projected: Eq. (12); lbfgs: the "
                        "released code's projected L-BFGS steps (batch models keep the word codes; online "
                        "models keep each mini-batch's codes and move its terms)")
    p.add_argument("--max-iter", type=_bounds.max_iter, default=None, help="batch iterations (default 20)")
    p.add_argument("--batch-size", type=_bounds.batch_size, default=None,
                   help="online mini-batch size (default: the preset's, else 64)")
    p.add_argument("--epochs", type=_bounds.epochs, default=None, help="online models: passes (default 1)")
    p.add_argument("--tau0", type=float, default=None,
                   help="online models: τ0 of the learning rate τ0/(t + τ) (default: the preset's, else 1)")
    p.add_argument("--svm-codes", choices=["joint", "label_free"], default=None,
                   help="online MedSTC: the codes its Pegasos step on η sees: the hinge-shifted codes (joint, "
                        "default) or each mini-batch's codes without labels (label_free)")
    p.add_argument("--delta", type=float, default=None, help="MedSTC loss Δ(y,y')=delta·1(y≠y') (default 3600)")
    p.add_argument("--C", type=float, default=None, help="MedSTC weight of each document's hinge loss (default 1)")
    p.add_argument("--dictionary-init", choices=["documents", "class", "lda", "uniform"], default=None,
                   help="starting dictionary: random documents (the paper's, default); outside the paper, "
                        "'lda': scikit-learn LDA's topics (10 passes; batch STC on 20 Newsgroups at the printed "
                        "settings 46.4%% -> 62.6%%, at the released ones 59.7%% -> 70.7%%) or, MedSTC only, "
                        "'class': each topic "
                        "from the documents of one class; 'uniform': β = 1/M, the released code's start")
    p.add_argument("--lda-passes", type=_bounds.lda_passes, default=None,
                   help="--dictionary-init lda: batch passes of the LDA fit (default 10; about 8 s CPU a pass "
                        "on 20 Newsgroups)")
    p.add_argument("--refit-C", default=None, type=_refit_C,
                   help="MedSTC: C of the SVM refit on the training codes: 'cv' (default, 3-fold CV over "
                        "0.01..100), 'joint' (Eq. 16's C/delta) or a positive number")
    p.add_argument("--jobs", type=_common.jobs_count, default=None, help="threads (default: all cores)")
    p.add_argument("--memory-limit", type=_size, default=None, metavar="SIZE",
                   help="refuse a fit whose estimated peak memory exceeds SIZE (e.g. 8G; default: the memory "
                        "available now)")
    p.add_argument("--hinge", choices=["exact", "linearized"], default=None,
                   help="MedSTC's θ-update: the exact hinge minimiser (default) or the released code's update "
                        "linearised at the loss-augmented label")
    _label_arguments(p)
    _common.add_text_arguments(p)
    p.set_defaults(func=run_fit)

    c = sub.add_parser("classify", help="accuracy and confusion summary of an STC model on a labelled corpus")
    c.add_argument("model_dir", help="model directory written by 'rlsi fit-stc'")
    c.add_argument("corpus", help="labelled corpus (.jsonl / .jsonl.gz) with a split field")
    _label_arguments(c)
    c.add_argument("--test-split", default="test", help="value of the split field to evaluate on")
    c.add_argument("--same-documents", action="store_true",
                   help="without --split-field: train and test on every document and report it as training "
                        "accuracy (otherwise refused: it says nothing about new documents)")
    c.set_defaults(func=run_classify)


def _label_arguments(p):
    p.add_argument("--label-field", default="label", help="JSON field with the class label")
    p.add_argument("--split-field", default=None, help="JSON field with the split (e.g. split)")
    p.add_argument("--train-split", default="train", help="value of the split field to train on")


def _split(corpus, args, value):
    if not args.split_field:
        return corpus
    values = corpus.fields.get(args.split_field)
    if values is None:
        raise RLSIError(f"the corpus has no field {args.split_field!r}; check --split-field")
    keep = np.array([v == value for v in values])
    if not keep.any():
        raise RLSIError(f"no document has {args.split_field}={value!r}; check --train-split/--test-split")
    return corpus.subset(keep)


def run_fit(args):
    learner = get_learner(args.model, "fit-stc")
    model = learner.build(args)  # options are checked before the corpus is read
    _output.model_destination(args.output, reads=[args.corpus])
    start = time.perf_counter()
    corpus = _split(read_corpus(args.corpus, text_fields=_common.text_fields(args)), args, args.train_split)
    vectorizer = _common.make_vectorizer(args).fit(corpus.texts)
    X = vectorizer.transform_counts(corpus.texts)
    y = learner.targets(args, corpus)
    from ..models.stc.memory import preflight

    preflight(model, X, limit=args.memory_limit)  # the peak memory of the fit, checked before it starts
    model.fit(X, y)
    return report_fit(learner, args.output, {"model": model, "vectorizer": vectorizer}, X.shape[0], X.shape[1],
                      start, quiet=args.quiet)


def run_classify(args):
    from sklearn.svm import LinearSVC

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
    test = _split(corpus, args, args.test_split)
    Xte, yte = vectorizer.transform_counts(test.texts), stc_labels(args, test)
    if hasattr(model, "predict"):
        pred = model.predict(Xte).astype(str)
    else:
        train = _split(corpus, args, args.train_split)
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
