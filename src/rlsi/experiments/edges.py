"""Edge warnings: a setting chosen by tuning that lies on the edge of its grid.

An optimum found at the smallest or largest value of a grid dimension (K, λ₁, the folding-in λ, α …)
means the search was truncated there: the true optimum may lie beyond it, and a comparison of methods
tuned on such grids compares truncated searches. :func:`find_edges` lists, for the settings chosen by a
protocol (one for ``"best"``, one per fold for ``"cv"``), every dimension whose chosen value is the
smallest or the largest of the grid, with the direction in which to extend the grid.

Rules:

* a dimension is a parameter whose value varies over the grid's settings (a parameter with a single
  value, such as ``random_state``, is not a dimension and has no edge), plus α when its grid has more
  than one value;
* only numeric values are ordered: ``None`` (the model's own folding-in ridge) is never an edge, and
  an infinite value (the projection, the limit of the ridge family) cannot be extended, so it is not
  reported either;
* α is bounded by [0, 1]: at 0 (the term score alone) or 1 (the topic score alone) the grid cannot be
  extended, and the warning says what the choice means instead.
"""

from __future__ import annotations

import logging
import math
import numbers

__all__ = ["find_edges", "log_edges", "edge_message"]

log = logging.getLogger(__name__)

#: Display names of the grid parameters in messages.
_NAMES = {"n_components": "K", "lambda1": "λ1", "fold_lambda2": "fold λ2", "alpha": "α"}


def _numeric(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _dimensions(settings, alphas):
    """``{parameter: (low, high)}`` of the grid's numeric dimensions with more than one distinct value."""
    dims = {}
    keys = list(dict.fromkeys(k for s in settings for k in s))
    for key in keys:
        values = [s.get(key) for s in settings]
        distinct = {repr(v) for v in values}
        finite = [float(v) for v in values if _numeric(v) and not math.isnan(v)]
        if len(distinct) > 1 and len(set(finite)) > 1:
            dims[key] = (min(finite), max(finite))
    alpha_values = sorted({float(a) for a in alphas})
    if len(alpha_values) > 1:
        dims["alpha"] = (alpha_values[0], alpha_values[-1])
    return dims


def _fmt(v):
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e6:
        return str(int(v))
    return f"{v:g}" if isinstance(v, float) else str(v)


def edge_message(method, parameter, value, edge):
    """One line: ``"RLSI: K=50 is the largest value of the grid: extend it upward"``."""
    name = _NAMES.get(parameter, parameter)
    where = "largest" if edge == "high" else "smallest"
    text = f"{method}: {name}={_fmt(value)} is the {where} value of the grid"
    if parameter == "alpha" and value in (0.0, 1.0):
        meaning = "the term score alone" if value == 0.0 else "the topic score alone"
        return text + f" and the bound of [0, 1] ({meaning}): the grid cannot be extended, check the other parameters"
    return text + f": extend it {'upward' if edge == 'high' else 'downward'}"


def find_edges(grid, chosen, protocol=None):
    """Edge warnings of the ``chosen`` (setting, α) list of a :class:`~rlsi.experiments.Selection` over
    the :class:`~rlsi.experiments.GridResult` ``grid``.

    Returns a list of dicts ``{"method", "protocol", "parameter", "value", "edge": "low" | "high",
    "count", "of", "message"}``, one per (parameter, edge value) reached by at least one chosen setting;
    ``count`` of ``of`` chosen settings (folds) reached it. Empty when every choice is interior.
    """
    dims = _dimensions(grid.settings, grid.alphas)
    found = {}
    for c in chosen:
        point = dict(c["setting"], alpha=c["alpha"])
        for key, (low, high) in dims.items():
            v = point.get(key)
            if not _numeric(v) or math.isnan(v) or math.isinf(v):
                continue  # None (model's own ridge) is unordered; inf (projection) is a limit
            for edge, bound in (("low", low), ("high", high)):
                if float(v) == bound:
                    found.setdefault((key, edge), [v, 0])[1] += 1
    out = []
    for (key, edge), (value, count) in found.items():
        msg = edge_message(grid.label, key, value, edge)
        if len(chosen) > 1:
            msg += f" (chosen in {count} of {len(chosen)} folds)"
        out.append({"method": grid.method, "label": grid.label, "protocol": protocol, "parameter": key,
                    "value": value, "edge": edge, "count": count, "of": len(chosen), "message": msg})
    return out


def log_edges(warnings_list, collection=""):
    """Log each edge warning with :func:`logging.warning` (prefixed by the collection and protocol)."""
    for w in warnings_list:
        prefix = f"{collection} " if collection else ""
        log.warning("%s%s: %s", prefix, w.get("protocol") or "tuning", w["message"])
