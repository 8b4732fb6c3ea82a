"""PNG plots of a :class:`~rlsi.tracking.TopicTimeline` (matplotlib, Agg canvas: no display needed)."""

from __future__ import annotations

import numpy as np
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from .._validation import check_number
from .report import terms_text

__all__ = ["plot_shares", "plot_topic"]


def plot_shares(timeline, path, topics=None, n_terms=3, title="Topic shares over time"):
    """PNG of the share fraction of each topic per segment (one line per topic life, a dashed line for
    a later life, a gap while the topic is dead); returns ``path``."""
    tl = timeline
    topics = list(range(tl.n_components)) if topics is None else list(topics)
    P = len(tl.segments)
    fig = Figure(figsize=(max(8.0, 0.5 * P + 4), 5.5))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(P)
    cmap = _colors(len(topics))
    for i, k in enumerate(topics):
        for n, y in tl._lives(k):
            name = tl.life_label(k, n)
            last = int(np.flatnonzero(~np.isnan(y))[-1])
            ax.plot(x, 100 * y, marker="o", ms=3, lw=1.5, color=cmap[i], ls="-" if n <= 1 else "--",
                    label=f"{name}: {terms_text(tl, last, k, n_terms, weights=False)}")
    _axis(ax, tl.segments)
    ax.set_ylabel("share of the segment's topic mass (%)")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def plot_topic(timeline, path, k, n_terms=5):
    """PNG for topic k in the style of TOIS Figures 7–8: its share per segment, and its top terms
    (with normalised weights) written above each segment; returns ``path``."""
    tl = timeline
    check_number("k", k, low=0, high=tl.n_components - 1, integer=True)
    P = len(tl.segments)
    fig = Figure(figsize=(max(7.0, 1.3 * P + 1), 5.0))
    FigureCanvasAgg(fig)
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(P)
    F = 100 * tl.share_fraction()[:, k]
    ax.plot(x, F, marker="o", color="#1f5fa8", lw=2)
    top = max(float(F.max()), 1e-9)
    ax.set_ylim(0, top * 2.0)
    for p in range(P):
        if not tl.alive[p][k]:
            text = "(dead)"
        else:
            text = "\n".join(f"{t} {weight_label(w)}" for t, w in tl.top_terms[p][k][:n_terms])
        ax.annotate(text, (x[p], F[p]), xytext=(0, 8), textcoords="offset points", ha="center",
                    va="bottom", fontsize=7)
    _axis(ax, tl.segments)
    ax.set_ylabel("share of the segment's topic mass (%)")
    ax.set_title(f"{tl.label(k)} over time")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def weight_label(w):
    """A normalised weight ``u_mk / ‖u_k‖₁`` as a plot shows it: two significant digits (a topic of thousands of
    terms gives its top terms weights of 0.004, which two decimals would all show as 0.00), a trailing ``-``
    for a negative weight."""
    return f"{abs(w):.2g}" + ("-" if w < 0 else "")


def _axis(ax, labels):
    P = len(labels)
    step = max(1, P // 24)
    ax.set_xticks(np.arange(0, P, step))
    ax.set_xticklabels([labels[i] for i in range(0, P, step)], rotation=45, ha="right", fontsize=8)
    ax.set_xlim(-0.5, P - 0.5)
    ax.grid(alpha=0.3)


def _colors(n):
    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]
