"""The tables of a protocol run: means per method, one-sided p-values against the term baseline, and the
chosen settings, as Markdown, plain text or JSON."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from ..evaluation.significance import paired_ttest, randomization_test

__all__ = ["ProtocolReport"]


def _test(a, b, test):
    """One-sided p-value (A > B) of two ``{qid: value}`` dicts paired by query."""
    qids = list(a)
    x = np.array([a[q] for q in qids])
    y = np.array([b[q] for q in qids])
    if test == "randomization":
        return randomization_test(x, y, alternative="greater")[1]
    return paired_ttest(x, y, alternative="greater")[1]


@dataclass
class ProtocolReport:
    """Results of :func:`~rlsi.experiments.run_protocol` for one collection: rows per protocol, with
    p-values."""

    collection: str
    baseline_label: str
    metrics: list
    baseline: dict                    # {metric: {qid: value}}
    selections: dict                  # protocol -> [Selection]
    grids: dict = field(default_factory=dict, repr=False)   # method -> GridResult
    settings: dict = field(default_factory=dict)
    seconds: float = 0.0
    test: str = "ttest"

    def p_values(self, selection, against=None):
        """One-sided p-values (A > B) of ``selection`` against the baseline (or another per-query dict)."""
        ref = self.baseline if against is None else against
        return {m: _test(selection.per_query[m], ref[m], self.test) for m in self.metrics}

    def edge_warnings(self, protocol=None):
        """Edge warnings of the chosen settings (:func:`~rlsi.experiments.edges.find_edges`), of one
        protocol or of all: a list of dicts with a one-line ``"message"``."""
        protocols = [protocol] if protocol is not None else list(self.selections)
        return [w for p in protocols for sel in self.selections.get(p, []) for w in sel.edges]

    def rows(self, protocol):
        """Table rows: ``{"method", "means": {metric: mean}, "p": {metric: p}, "chosen": [...]}``."""
        base_means = {m: float(np.mean(list(v.values()))) for m, v in self.baseline.items()}
        out = [{"method": self.baseline_label, "means": base_means, "p": None, "chosen": None}]
        for sel in self.selections.get(protocol, []):
            out.append({"method": f"{self.baseline_label}+{sel.label}", "means": sel.means(),
                        "p": self.p_values(sel), "chosen": sel.chosen})
        return out

    def to_markdown(self, protocols=None, level=0.05, show_p=False):
        """Markdown tables (one per protocol): Method x metrics, ``*`` for p < level vs the baseline,
        the best value of each column in bold."""
        parts = []
        for protocol in protocols or list(self.selections):
            rows = self.rows(protocol)
            title = {"best": "best setting by NDCG@1 on the test queries (paper protocol)",
                     "cv": "query-level cross-validation (held-out scores)"}.get(protocol, protocol)
            parts.append(f"**{self.collection}** — {title}\n")
            parts.append(_markdown_table(rows, self.metrics, level, show_p))
            warns = self.edge_warnings(protocol)
            if warns:
                parts.append("Warning — chosen settings on the edge of the grid (the optimum may lie beyond it):\n")
                parts.extend(f"* {w['message']}" for w in warns)
                parts.append("")
        return "\n".join(parts)

    def to_text(self, protocols=None, level=0.05, edges=True):
        """Plain-text tables for the terminal, with the edge warnings of each protocol unless ``edges`` is
        False."""
        parts = []
        for protocol in protocols or list(self.selections):
            rows = self.rows(protocol)
            parts.append(f"{self.collection} — protocol: {protocol} (* p < {level} vs {self.baseline_label}, "
                         f"one-sided paired {'t-test' if self.test == 'ttest' else 'randomization test'})")
            width = max(len(r["method"]) for r in rows) + 2
            parts.append("Method".ljust(width) + "".join(f"{m.upper():>10}" for m in self.metrics))
            for r in rows:
                cells = []
                for m in self.metrics:
                    star = "*" if r["p"] is not None and r["p"][m] < level else " "
                    cells.append(f"{r['means'][m]:9.4f}{star}")
                parts.append(r["method"].ljust(width) + "".join(cells))
            for w in self.edge_warnings(protocol) if edges else ():
                parts.append(f"warning: {w['message']}")
            parts.append("")
        return "\n".join(parts)

    def to_dict(self):
        """JSON-ready dict: settings, and per protocol the rows with their per-query values."""
        out = {"collection": self.collection, "baseline": self.baseline_label, "metrics": self.metrics,
               "test": self.test, "settings": self.settings, "seconds": round(self.seconds, 2), "protocols": {}}
        for protocol in self.selections:
            rows = self.rows(protocol)
            sels = [None] + self.selections[protocol]
            out["protocols"][protocol] = [
                {"method": r["method"], "means": r["means"], "p_values": r["p"], "chosen": r["chosen"],
                 "edge_warnings": ([] if s is None else [w["message"] for w in s.edges]),
                 "per_query": (self.baseline if s is None else s.per_query)}
                for r, s in zip(rows, sels)]
        out["edge_warnings"] = [{k: w[k] for k in ("protocol", "method", "parameter", "value", "edge", "count",
                                                   "of", "message")} for w in self.edge_warnings()]
        return out

    def to_json(self, **kwargs):
        """Strict JSON text of :meth:`to_dict` (an infinite fold λ is written ``"inf"``)."""
        return json.dumps(_finite(self.to_dict()), indent=1, default=_json_default, allow_nan=False, **kwargs)


def _finite(o):
    """Replace infinite floats (a projection fold λ) by the string "inf" so the JSON is strict."""
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    if isinstance(o, (float, np.floating)) and math.isinf(o):
        return "inf" if o > 0 else "-inf"
    return o


def _json_default(o):
    if isinstance(o, np.generic):
        o = o.item()
        return "inf" if isinstance(o, float) and math.isinf(o) else o
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"{type(o).__name__} is not JSON serialisable")


def _markdown_table(rows, metrics, level, show_p):
    head = "| Method | " + " | ".join(m.upper() if m == "map" else m.replace("ndcg", "NDCG") for m in metrics) + " |"
    sep = "|---|" + "---:|" * len(metrics)
    best = {m: max(r["means"][m] for r in rows) for m in metrics}
    lines = [head, sep]
    for r in rows:
        cells = []
        for m in metrics:
            v = r["means"][m]
            text = f"{v:.4f}"
            if r["p"] is not None and r["p"][m] < level:
                text += " *"
            if show_p and r["p"] is not None:
                text += f" (p={_fmt_p(r['p'][m])})"
            if math.isclose(v, best[m], abs_tol=1e-12):
                text = f"**{text}**"
            cells.append(text)
        lines.append(f"| {r['method']} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _fmt_p(p):
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"
