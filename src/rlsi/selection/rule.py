"""The recommended point of a selection table, and the rule that chooses it, in words.

Rule (:func:`recommend`): among the points whose completion score is within one standard error of the best
point's, and whose stability reaches ``stability_threshold``, the smallest K; at that K the largest λ₁ that
qualifies (the sparsest topics).

Why. The completion score (held-out prediction, :mod:`rlsi.selection.completion`) rises while added topics
capture structure and then flattens or falls as they fit noise; the points on its plateau are not
distinguishable by the held-out documents, and the one-standard-error rule (Breiman et al., *Classification
and Regression Trees*, 1984; Hastie, Tibshirani and Friedman, *Elements of Statistical Learning*, §7.10)
takes the simplest of them — here fewer topics, then sparser ones, which are easier to read and cheaper.
Stability across seeds (:mod:`rlsi.selection.stability`) guards the other side: topics that another random
start does not find again are not a finding, whatever their score. When no point on the plateau is stable
enough the rule says so and falls back to the one-standard-error rule alone.

A recommendation at the grid's largest K says so: the score had not flattened inside the grid, and the answer
is "at least this many".

On synthetic corpora with a known number of topics (benchmarks/results/select.md) the rule lands on the
planted K where the grid has it.
"""

from __future__ import annotations

import math

from ..errors import RLSIError

__all__ = ["DEFAULT_STABILITY_THRESHOLD", "recommend"]

#: The least mean matched similarity (absolute cosine) of two seeds' topics for a recommended point: on the
#: synthetic corpora of benchmarks/bench_select.py the planted K scores 0.86–0.98 and twice the planted K
#: 0.66–0.76.
DEFAULT_STABILITY_THRESHOLD = 0.8


def recommend(rows, stability_threshold=DEFAULT_STABILITY_THRESHOLD):
    """``(index, rule)``: the index in ``rows`` of the recommended point and the rule that chose it, in words.

    ``rows``: dicts with ``n_components``, ``lambda1``, ``completion``, ``completion_se`` and ``stability``."""
    if not rows:
        raise RLSIError("no point to choose from: give at least one K and one lambda1")
    scored = [i for i, r in enumerate(rows) if math.isfinite(r["completion"])]
    if not scored:
        raise RLSIError("no point has a completion score")
    best = max(scored, key=lambda i: (rows[i]["completion"], -rows[i]["n_components"], rows[i]["lambda1"]))
    floor = rows[best]["completion"] - _se(rows[best])
    plateau = [i for i in scored if rows[i]["completion"] >= floor]
    stable = [i for i in plateau if rows[i]["stability"] >= stability_threshold]
    chosen = min(stable or plateau, key=lambda i: (rows[i]["n_components"], -rows[i]["lambda1"]))
    r, b = rows[chosen], rows[best]
    words = (f"the smallest K (then the largest lambda1) whose completion score is within one standard error of "
             f"the best ({b['completion']:.4f} - {_se(b):.4f} at K={b['n_components']}, "
             f"lambda1={b['lambda1']:g})")
    if stable:
        words += f" and whose stability across seeds is at least {stability_threshold:g}"
    else:
        words += (f"; no such point has a stability of {stability_threshold:g} or more, so stability did not "
                  f"take part")
    words = f"{words}: K={r['n_components']}, lambda1={r['lambda1']:g}"
    largest = max(row["n_components"] for row in rows)
    if r["n_components"] == largest and len({row["n_components"] for row in rows}) > 1:
        words += (f" (the largest K of the grid: the held-out score had not flattened by K={largest}, so a "
                  f"grid reaching past it may recommend more topics)")
    return chosen, words


def _se(row):
    se = row.get("completion_se", 0.0)
    return se if math.isfinite(se) else 0.0
