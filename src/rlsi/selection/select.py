"""``rlsi.select``: choose the number of topics K and the topic regularization λ₁ of BatchRLSI from the data.

Steps (each in its own module):

1. Split the documents at random into training documents and held-out ones (``test_size``), and each
   held-out document's terms into two halves (:func:`rlsi.selection.completion.split_terms`).
2. Fit the warm-started path over the grid of K and λ₁ on the training documents
   (:mod:`rlsi.selection.path`), twice: from two random starts (two seeds drawn from ``random_state``).
3. Score every point of the first seed's path on the held-out documents — document completion
   (:mod:`rlsi.selection.completion`), NPMI coherence of the top terms (:mod:`rlsi.quality.coherence`),
   terms per topic — and its stability: the matched similarity of the two seeds' topics
   (:mod:`rlsi.selection.stability`).
4. Recommend a point by the rule of :mod:`rlsi.selection.rule`, stated in words with the result.

The result is a :class:`~rlsi.selection.result.SelectionResult`: the table, a plot, the recommendation.
"""

from __future__ import annotations

import logging
import math
import numbers
import time

import numpy as np

from .._validation import check_matrix, check_number, check_random_state
from ..errors import RLSIError
from ..models.regularization import READING
from ..quality.coherence import npmi_coherence
from .completion import completion_score, split_terms
from .path import fit_path
from .result import SelectionResult
from .rule import DEFAULT_STABILITY_THRESHOLD, recommend
from .stability import matched_similarity

__all__ = ["DEFAULT_TOPICS", "DEFAULT_LAMBDA1_PATH", "DEFAULT_TEST_SIZE", "select"]

log = logging.getLogger(__name__)

#: The K of the grid unless given: the sizes users try first, a factor of 2–2.5 apart.
DEFAULT_TOPICS = (10, 20, 50, 100)
#: The λ₁ path unless given (per 1000 documents, largest first): READING's λ₁ (0.05, the command line's default)
#: and twice it, about half as many terms per topic (2.1–2.2× fewer on 20 Newsgroups at every K of the default grid,
#: benchmarks/results/select.md).
DEFAULT_LAMBDA1_PATH = (2 * READING["lambda1"], READING["lambda1"])
#: Share of the documents held out for the scores.
DEFAULT_TEST_SIZE = 0.2
#: Top terms per topic for NPMI coherence (the field's usual 10).
N_TOP_TERMS = 10


def select(X, topics=DEFAULT_TOPICS, lambda1=DEFAULT_LAMBDA1_PATH, *, lambda2=READING["lambda2"],
           test_size=DEFAULT_TEST_SIZE, stability_threshold=DEFAULT_STABILITY_THRESHOLD, n_top_terms=N_TOP_TERMS,
           random_state=None, verbose=0, **params):
    """Choose K and λ₁ for :class:`~rlsi.models.BatchRLSI` on X (documents x terms, e.g. tf-idf).

    Parameters
    ----------
    X : sparse matrix (n_documents, n_terms) — the corpus.
    topics : int or sequence of int, default (10, 20, 50, 100) — the K to try.
    lambda1 : float or sequence of float, default (0.1, 0.05) — the λ₁ path (per 1000 documents unless
        ``lambda1_scale="paper"`` is given in ``params``), fitted largest first.
    lambda2 : float, default 1.0 — λ₂ of every fit (the reading setting of the command line, as λ₁'s path).
    test_size : float in (0, 1), default 0.2 — share of the documents held out for the scores.
    stability_threshold : float, default 0.8 — least stability of a recommended point (:mod:`rlsi.selection.rule`).
    n_top_terms : int, default 10 — top terms per topic of the NPMI coherence.
    random_state : None or int — the split and both seeds' fits; an int makes the whole selection reproducible.
    verbose : int — 1 shows a progress bar over the fits.
    **params : other :class:`~rlsi.models.BatchRLSI` parameters of every fit (``max_iter``, ``tol``,
        ``topic_penalty``, ``n_jobs``, ...).

    Returns
    -------
    :class:`~rlsi.selection.result.SelectionResult` — ``rows`` (one per (K, λ₁), in the path's order),
    ``recommended``, ``rule``, ``best_params``; ``to_markdown()``, ``plot(path)``, ``save(out_dir)``.
    """
    start = time.perf_counter()
    X = check_matrix(X)
    topics, lambdas = _grid(topics, lambda1)
    check_number("test_size", test_size, low=0.0, high=1.0, low_inclusive=False, high_inclusive=False)
    check_number("stability_threshold", stability_threshold, low=0.0, high=1.0)
    check_number("n_top_terms", n_top_terms, low=2, integer=True)
    for name in ("n_components", "lambda1", "random_state", "target_terms_per_topic", "verbose"):
        if name in params:
            raise RLSIError(f"{name} is set by select itself; give the grid as topics= and lambda1=")
    rng = check_random_state(random_state)
    split_seed, seed_a, seed_b = (int(s) for s in rng.integers(0, 2**31 - 1, size=3))
    train, held_out = _split_documents(X, test_size, max(topics), np.random.default_rng(split_seed))
    X1, X2 = split_terms(held_out, np.random.default_rng(split_seed + 1))
    params = dict(params, lambda2=lambda2)
    paths = [fit_path(train, topics, lambdas, random_state=seed, params=params, verbose=verbose,
                      desc=f"select (seed {n} of 2)") for n, seed in enumerate((seed_a, seed_b), 1)]
    rows = [_row(a, b, X1, X2, held_out, n_top_terms) for a, b in zip(*paths)]
    chosen, rule = recommend(rows, stability_threshold)
    settings = {"n_documents": X.shape[0], "n_terms": X.shape[1], "n_train": train.shape[0],
                "n_held_out": held_out.shape[0], "test_size": test_size, "lambda2": lambda2,
                "stability_threshold": stability_threshold, "n_top_terms": n_top_terms,
                "random_state": random_state if isinstance(random_state, numbers.Integral) else None,
                "seeds": [seed_a, seed_b], **{k: v for k, v in params.items() if _plain_value(v)}}
    seconds = time.perf_counter() - start
    log.info("select: %d fits in %.1f s; %s", 2 * len(rows), seconds, rule)
    return SelectionResult(rows, chosen, rule, settings, seconds)


def _grid(topics, lambda1):
    """The checked grid: K ascending, λ₁ descending, each without repeats."""
    topics = [topics] if isinstance(topics, numbers.Number) else list(topics)
    lambdas = [lambda1] if isinstance(lambda1, numbers.Number) else list(lambda1)
    if not topics:
        raise RLSIError("topics is empty: give at least one number of topics")
    if not lambdas:
        raise RLSIError("lambda1 is empty: give at least one value")
    for k in topics:
        check_number("topics", k, low=1, integer=True)
    for lam in lambdas:
        check_number("lambda1", lam, low=0.0, low_inclusive=False)
    return sorted({int(k) for k in topics}), sorted({float(v) for v in lambdas}, reverse=True)


def _split_documents(X, test_size, k_max, rng):
    """``(train, held_out)`` rows of X at random; the training part must hold the largest K's seed documents."""
    n = X.shape[0]
    n_held = int(round(test_size * n))
    if n_held < 1 or n - n_held < 1:
        raise RLSIError(f"{n} document(s) cannot be split into training and held-out documents with "
                        f"test_size={test_size:g}; give more documents")
    order = rng.permutation(n)
    held, train = np.sort(order[:n_held]), np.sort(order[n_held:])
    if train.size < k_max:
        raise RLSIError(f"K={k_max} needs at least {k_max} training documents; {train.size} of the {n} are "
                        f"(give fewer topics, more documents or a smaller test_size)")
    if k_max > X.shape[1]:
        raise RLSIError(f"K={k_max} is larger than the vocabulary ({X.shape[1]} terms)")
    return X[train], X[held]


def _row(a, b, X1, X2, held_out, n_top_terms):
    """The table's row of one point: ``a`` and ``b`` are the two seeds' :class:`~rlsi.selection.path.PathPoint`."""
    completion, completion_se = completion_score(a.model, X1, X2)
    components = a.model.components_
    alive = int(np.count_nonzero(np.diff(components.indptr)))
    npmi = npmi_coherence(components, held_out, n_top_terms)
    npmi = npmi[~np.isnan(npmi)]
    stability, _ = matched_similarity(components, b.model.components_)
    return {"n_components": a.n_components, "lambda1": a.lambda1, "completion": completion,
            "completion_se": completion_se,
            "npmi": float(npmi.mean()) if npmi.size else math.nan, "stability": stability,
            "terms_per_topic": components.nnz / alive if alive else 0.0, "empty_topics": a.n_components - alive,
            "n_iter": a.n_iter, "seconds": a.seconds + b.seconds, "started_from": a.started_from}


def _plain_value(value):
    return value is None or isinstance(value, (bool, numbers.Number, str))
