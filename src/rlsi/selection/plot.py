"""PNG of a selection table (matplotlib, Agg canvas: no display needed): the completion score, NPMI
coherence, stability and terms per topic against K, one line per λ₁, the recommended point marked."""

from __future__ import annotations

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["PANELS", "plot_selection"]

#: (column of the table, axis label) of each panel.
PANELS = (("completion", "completion score (held-out, higher is better)"),
          ("npmi", "NPMI coherence of the top terms"),
          ("stability", "stability across two seeds"),
          ("terms_per_topic", "terms per topic"))


def plot_selection(result, path):
    """Write the PNG of ``result`` (a :class:`~rlsi.selection.SelectionResult`) to ``path`` (a path or a
    binary file handle); returns ``path``."""
    rows = result.rows
    lambdas = sorted({r["lambda1"] for r in rows}, reverse=True)
    fig = Figure(figsize=(10.0, 7.0))
    FigureCanvasAgg(fig)
    chosen = rows[result.recommended]
    for p, (column, label) in enumerate(PANELS):
        ax = fig.add_subplot(2, 2, p + 1)
        for lam in lambdas:
            line = sorted((r for r in rows if r["lambda1"] == lam), key=lambda r: r["n_components"])
            k = np.array([r["n_components"] for r in line])
            y = np.array([r[column] for r in line], dtype=float)
            if column == "completion":
                se = np.array([r["completion_se"] for r in line], dtype=float)
                ax.errorbar(k, y, yerr=se, marker="o", ms=4, capsize=3, label=f"λ1 = {lam:g}")
            else:
                ax.plot(k, y, marker="o", ms=4, label=f"λ1 = {lam:g}")
        ax.plot([chosen["n_components"]], [chosen[column]], marker="*", ms=16, color="#d62728", ls="none",
                label="recommended")
        if column == "stability":
            ax.axhline(result.settings["stability_threshold"], color="0.5", ls=":", lw=1)
        if column == "terms_per_topic":
            ax.set_yscale("log")
        ax.set_xscale("log")
        ticks = sorted({r["n_components"] for r in rows})
        ax.set_xticks(ticks)
        ax.set_xticklabels([str(t) for t in ticks])
        ax.minorticks_off()
        ax.set_xlabel("number of topics K")
        ax.set_ylabel(label, fontsize=8)
        if p == 0:
            ax.legend(fontsize=7, frameon=False)
    fig.suptitle(f"Choosing K and λ1: recommended K = {chosen['n_components']}, λ1 = {chosen['lambda1']:g}",
                 fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=100, format="png")
    return path
