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

from .. import io
from ..errors import RLSIError
from ..text import read_corpus
from . import _common

MODELS = {"stc": ("SparseTopicalCoding", {}), "cstc": ("SparseTopicalCoding", {"collapsed": True}),
          "ostc": ("OnlineSTC", {}), "medstc": ("MedSTC", {}), "omedstc": ("OnlineMedSTC", {})}


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
    p.add_argument("corpus")
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--model", choices=sorted(MODELS), default="stc")
    p.add_argument("-k", "--n-components", type=_common.positive_int, default=60)
    p.add_argument("--lam", type=float, default=0.01)
    p.add_argument("--gamma", type=float, default=0.01)
    p.add_argument("--rho", type=float, default=0.1,
                   help="ℓ1 weight on word codes (paper: 0.1; on a ~50k vocabulary 0.001 classifies better, see "
                        "docs/stc.md)")
    p.add_argument("--eps", type=float, default=1e-3,
                   help="ε of Eq. (1), the Poisson mean's floor (default 1e-3, the released STC code's value; "
                        "quote perplexities with it, see docs/stc.md)")
    p.add_argument("--dictionary-step", choices=["mm", "projected"], default="mm",
                   help="mm: multiplicative majorise-minimise step (default); projected: Eq. (12)")
    p.add_argument("--max-iter", type=_common.positive_int, default=20, help="batch iterations")
    p.add_argument("--batch-size", type=_common.positive_int, default=64, help="online mini-batch size")
    p.add_argument("--epochs", type=_common.positive_int, default=1, help="online passes")
    p.add_argument("--tau0", type=float, default=1.0)
    p.add_argument("--delta", type=float, default=3600.0, help="MedSTC loss Δ(y,y')=delta·1(y≠y')")
    p.add_argument("--C", type=float, default=1.0, help="MedSTC weight of each document's hinge loss")
    p.add_argument("--dictionary-init", choices=["documents", "class", "lda"], default="documents",
                   help="starting dictionary: random documents (the paper's, default); outside the paper, "
                        "'lda': scikit-learn LDA's topics (10 passes; batch STC on 20 Newsgroups 46.4%% -> "
                        "62.6%% at the printed settings, docs/stc.md) or, MedSTC only, 'class': each topic "
                        "from the documents of one class")
    p.add_argument("--lda-passes", type=_common.positive_int, default=10,
                   help="--dictionary-init lda: batch passes of the LDA fit (default 10; about 8 s CPU a pass "
                        "on 20 Newsgroups)")
    p.add_argument("--refit-C", default="cv", type=_refit_C,
                   help="MedSTC: C of the SVM refit on the training codes: 'cv' (default, 3-fold CV over "
                        "0.01..100), 'joint' (Eq. 16's C/delta) or a positive number")
    p.add_argument("--jobs", type=_common.jobs_count, default=None, help="threads (default: all cores)")
    p.add_argument("--hinge", choices=["exact", "linearized"], default="exact",
                   help="MedSTC's θ-update: the exact hinge minimiser (default) or the released code's update "
                        "linearised at the loss-augmented label")
    _label_arguments(p)
    _common.add_text_arguments(p)
    p.set_defaults(func=run_fit)

    c = sub.add_parser("classify", help="accuracy and confusion summary of an STC model on a labelled corpus")
    c.add_argument("model_dir")
    c.add_argument("corpus")
    _label_arguments(c)
    c.add_argument("--test-split", default="test", help="value of the split field to evaluate on")
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


def _labels(corpus, args):
    values = corpus.fields.get(args.label_field)
    if values is None:
        raise RLSIError(f"the corpus has no field {args.label_field!r}; check --label-field")
    return np.array(values, dtype=object).astype(str)


def run_fit(args):
    from ..models import stc

    if args.dictionary_init == "class" and args.model not in ("medstc", "omedstc"):
        raise RLSIError("--dictionary-init class needs labels; it is for --model medstc or omedstc")
    _common.check_output_dir(args.output)
    start = time.perf_counter()
    corpus = _split(read_corpus(args.corpus, text_fields=_common.text_fields(args)), args, args.train_split)
    vectorizer = _common.make_vectorizer(args).fit(corpus.texts)
    X = vectorizer.transform_counts(corpus.texts)
    name, extra = MODELS[args.model]
    cls = getattr(stc, name)
    kw = dict(n_components=args.n_components, lam=args.lam, gamma=args.gamma, rho=args.rho,
              eps=args.eps, dictionary_step=args.dictionary_step, lda_passes=args.lda_passes,
              n_jobs=args.jobs, verbose=0 if args.quiet else 1, **extra)
    if name in ("SparseTopicalCoding", "MedSTC"):
        kw["max_iter"] = args.max_iter
    else:
        kw.update(batch_size=args.batch_size, n_epochs=args.epochs, tau0=args.tau0)
    if name in ("MedSTC", "OnlineMedSTC"):
        model = cls(delta=args.delta, C=args.C, dictionary_init=args.dictionary_init, hinge=args.hinge,
                    refit_C=args.refit_C, **kw).fit(X, _labels(corpus, args))
    else:
        model = cls(dictionary_init=args.dictionary_init, **kw).fit(X)
    io.save(args.output, model=model, vectorizer=vectorizer)
    if not args.quiet:
        print(f"fitted {name}: {X.shape[0]} documents, {X.shape[1]} terms, K={model.n_components}, "
              f"word-code sparsity {model.word_code_sparsity_:.3f}, {time.perf_counter() - start:.1f}s")
        print(f"saved to {args.output}")
    return 0


def run_classify(args):
    from sklearn.svm import LinearSVC

    model, vectorizer, _ = _common.load_model_dir(args.model_dir)
    if vectorizer is None or not hasattr(model, "word_codes"):
        raise RLSIError(f"{args.model_dir} is not an STC model directory with a vectorizer; fit it with "
                        f"rlsi fit-stc")
    corpus = read_corpus(args.corpus)
    test = _split(corpus, args, args.test_split)
    Xte, yte = vectorizer.transform_counts(test.texts), _labels(test, args)
    if hasattr(model, "predict"):
        pred = model.predict(Xte).astype(str)
    else:
        train = _split(corpus, args, args.train_split)
        svm = LinearSVC().fit(model.transform(vectorizer.transform_counts(train.texts)), _labels(train, args))
        pred = svm.predict(model.transform(Xte))
    acc = float(np.mean(pred == yte))
    print(f"accuracy {100 * acc:.2f}% on {len(yte)} documents")
    for label in sorted(set(yte)):
        mask = yte == label
        top = Counter(pred[mask & (pred != yte)]).most_common(1)
        conf = f", most confused with {top[0][0]} ({top[0][1]})" if top else ""
        print(f"  {label}: {100 * np.mean(pred[mask] == label):.1f}% of {int(mask.sum())}{conf}")
    return 0
