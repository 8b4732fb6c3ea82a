"""The STC family's options and corpus fit, shared by ``rlsi fit --model stc|cstc|ostc|medstc|omedstc`` and its
alias ``rlsi fit-stc``.

:func:`add_stc_arguments` declares the options of the STC learners; :func:`fit_counts` fits one on the word counts
of a corpus (``TfidfVectorizer.fit_transform_counts``: the same tokenization as every rlsi model; optionally on
one split only, with labels for the max-margin models) after checking its peak memory. How each option maps to an
estimator parameter is the learner's ``build`` (:mod:`rlsi.cli.learners`).
"""

from __future__ import annotations

import argparse
import math

from ..errors import RLSIError
from . import _bounds, _common
from ._choices import STC_PRESETS

__all__ = ["add_stc_arguments", "add_split_arguments", "fit_counts", "split_corpus"]


def _refit_C(text):
    if text in ("cv", "joint"):
        return text
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"{text!r} is not 'cv', 'joint' or a positive number")
    return value


def add_stc_arguments(parser):
    """The options of the STC learners only (``rlsi fit`` shares -k, --rho, --max-iter, --batch-size, --jobs,
    --memory-limit and --label-field with the other learners; ``rlsi fit-stc`` declares its own)."""
    p = parser.add_argument_group(
        "STC family (--model stc, cstc, ostc, medstc, omedstc; docs/stc.md)",
        "These models read -k (default 60), --rho (their ℓ1 weight on word codes, default 0.01), --max-iter "
        "(batch: default 4 for stc, 10 for medstc), --batch-size (online: 32 for ostc, 16 for omedstc), --seed, "
        "--jobs, --memory-limit and --label-field (max-margin models) where they are given, and the options "
        "below; they fit on the word counts of one corpus file.")
    p.add_argument("--settings", choices=STC_PRESETS, default=None,
                   help="start from a named preset of the STC settings (docs/stc.md): table2, what reproduces "
                        "Table 2 (the models' defaults: on 20 Newsgroups MedSTC 81.2%%; STC with the LDA start "
                        "70.7%%, online 71.4%%); printed, the paper's printed values (MedSTC 47.2%%); released, "
                        "the authors' released code's; the options given on the command line override the preset")
    p.add_argument("--lam", type=float, default=None,
                   help="λ: weight of the prior on document codes θ (default 0.2; printed 0.01)")
    p.add_argument("--gamma", type=float, default=None,
                   help="γ: weight tying word codes to their document code (default 0.2; printed 0.01)")
    p.add_argument("--eps", type=float, default=None,
                   help="ε of Eq. (1), the Poisson mean's floor (default 1e-3, the released STC code's value; "
                        "quote perplexities with it)")
    p.add_argument("--dictionary-step", choices=["mm", "projected", "lbfgs"], default=None,
                   help="mm: multiplicative majorise-minimise step; projected: Eq. (12) (the default of stc and "
                        "ostc); lbfgs: the released code's projected L-BFGS steps (the default of medstc and "
                        "omedstc; batch models keep the word codes, online models keep each mini-batch's codes "
                        "and move its terms)")
    p.add_argument("--epochs", type=_bounds.epochs, default=None, help="online models: passes (default 1)")
    p.add_argument("--tau0", type=float, default=None,
                   help="online models: τ0 of the learning rate τ0/(t + τ) (default: 1 for ostc, 10 for omedstc)")
    p.add_argument("--svm-codes", choices=["joint", "label_free"], default=None,
                   help="online MedSTC: the codes its Pegasos step on η sees: each mini-batch's codes without "
                        "labels (label_free, default) or the hinge-shifted codes (joint)")
    p.add_argument("--delta", type=float, default=None, help="MedSTC loss Δ(y,y')=delta·1(y≠y') (default 3600)")
    p.add_argument("--C", type=float, default=None, help="MedSTC weight of each document's hinge loss (default 0.5)")
    p.add_argument("--dictionary-init", choices=["documents", "class", "lda", "uniform"], default=None,
                   help="starting dictionary: 'documents', random documents (the paper's; the default of medstc "
                        "and omedstc); outside the paper, 'lda': scikit-learn LDA's topics (the default of stc "
                        "and ostc; 10 passes; batch STC on 20 Newsgroups 59.7%% -> 70.7%%) or, MedSTC only, "
                        "'class': each topic from the documents of one class; 'uniform': β = 1/M, the released "
                        "code's start")
    p.add_argument("--lda-passes", type=_bounds.lda_passes, default=None,
                   help="--dictionary-init lda: batch passes of the LDA fit (default 10; about 8 s CPU a pass "
                        "on 20 Newsgroups)")
    p.add_argument("--refit-C", default=None, type=_refit_C,
                   help="MedSTC: C of the SVM refit on the training codes: 'cv' (default, 3-fold CV over "
                        "0.01..100), 'joint' (Eq. 16's C/delta) or a positive number")
    p.add_argument("--hinge", choices=["exact", "linearized"], default=None,
                   help="MedSTC's θ-update: the released code's update linearised at the loss-augmented label "
                        "(default) or the exact hinge minimiser")
    add_split_arguments(p)


def add_split_arguments(p):
    """``--split-field`` and ``--train-split``: fit (or train the classifier) on one split of the corpus."""
    p.add_argument("--split-field", default=None, help="JSON field with the split (e.g. split)")
    p.add_argument("--train-split", default="train", help="value of the split field to train on")


def split_corpus(corpus, args, value):
    """The documents of ``corpus`` whose ``--split-field`` is ``value`` (all of them without a split field)."""
    import numpy as np

    if not args.split_field:
        return corpus
    values = corpus.fields.get(args.split_field)
    if values is None:
        raise RLSIError(f"the corpus has no field {args.split_field!r}; check --split-field")
    keep = np.array([v == value for v in values])
    if not keep.any():
        raise RLSIError(f"no document has {args.split_field}={value!r}; check --train-split/--test-split")
    return corpus.subset(keep)


def fit_counts(args, learner, model, path):
    """Fit ``model`` (an STC learner's estimator) on the word counts of the corpus file ``path`` (its training
    split), its peak memory checked first. Returns ``(model, vectorizer, X.shape)``."""
    from ..models.stc.memory import preflight
    from ..text import read_corpus

    corpus = split_corpus(read_corpus(path, text_fields=_common.text_fields(args)), args, args.train_split)
    vectorizer = _common.make_vectorizer(args)
    X = vectorizer.fit_transform_counts(_common.reading(corpus.texts, args))
    y = learner.targets(args, corpus)
    preflight(model, X, limit=args.memory_limit)  # the peak memory of the fit, checked before it starts
    model.fit(X, y)
    return model, vectorizer, X.shape
