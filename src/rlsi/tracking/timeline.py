"""What the tracker saw: :class:`TopicTimeline`, per segment the topic shares, top terms and lives."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import report

__all__ = ["TopicTimeline"]


@dataclass
class TopicTimeline:
    """What the tracker saw: per segment, topic shares, top terms, alive flags and life numbers.

    With P segments and K topics: ``share`` P lists of K floats (Σ |v_k| / ‖d‖₂ over the segment's
    documents), ``top_terms`` P lists of K lists of ``(term, signed normalised weight)``, ``alive`` and
    ``life`` P lists of K bools / ints (life 0: never alive yet), ``events`` the dead/reborn events
    (dicts: topic, kind, segment, life, [similarity]), ``drift`` P lists of K values: how far each topic
    moved since the previous snapshot, ``1 - cosine`` of its whole weight vectors (None at its first
    snapshot, while dead and at a rebirth, whose event carries the similarity instead). ``names``: the topics'
    names (a model's ``topic_names_``: K strings or None, seed words' names), or None; a named topic is labelled
    ``T1 [hockey]`` in the reports.
    """

    n_components: int
    segments: list = field(default_factory=list)
    n_docs: list = field(default_factory=list)
    share: list = field(default_factory=list)          # per segment: K floats (Σ |v_k| / ‖d‖₂)
    top_terms: list = field(default_factory=list)      # per segment: K lists of (term, signed weight)
    alive: list = field(default_factory=list)          # per segment: K bools
    life: list = field(default_factory=list)           # per segment: K ints (0: never alive yet)
    events: list = field(default_factory=list)         # dicts: topic, kind, segment, [similarity]
    drift: list = field(default_factory=list)          # per segment: K floats or None (1 - cosine to the last)
    names: list | None = None                          # K names (str or None), or None

    # ------------------------------------------------------------------ numbers
    @property
    def shares(self):
        """(n_segments, K) array of summed shares."""
        return np.asarray(self.share, dtype=np.float64).reshape(len(self.segments), self.n_components)

    def share_fraction(self):
        """Shares divided by the segment's total over topics (rows sum to 1; 0 for a segment without mass)."""
        S = self.shares
        tot = S.sum(axis=1, keepdims=True)
        return np.divide(S, tot, out=np.zeros_like(S), where=tot > 0)

    def share_per_doc(self):
        """Shares divided by the segment's number of documents."""
        S = self.shares
        n = np.asarray(self.n_docs, dtype=np.float64)[:, None]
        return np.divide(S, n, out=np.zeros_like(S), where=n > 0)

    def label(self, k, p=-1):
        """``T{k}`` (first life) or ``T{k}.{life}`` for topic k as of segment p (1-based topic numbers), and its
        name in brackets after it when it has one (``T3 [hockey]``, ``T3.2 [hockey]``)."""
        return self.life_label(k, self.life[p][k] if self.life else 0)

    def life_label(self, k, life):
        """The label of topic k in its ``life``: ``T3``, ``T3.2`` (its second life), with its name after it."""
        return (f"T{k + 1}" if life <= 1 else f"T{k + 1}.{life}") + self.name_suffix(k)

    def name_suffix(self, k):
        """`` [name]`` of a named topic k, else ``""``."""
        name = self.names[k] if self.names is not None and 0 <= k < len(self.names) else None
        return f" [{name}]" if name else ""

    def rising(self, n=5):
        """Topics with the largest rise of share fraction from one segment to the next:
        list of ``(k, segment index, rise)``, largest first."""
        F = self.share_fraction()
        if len(F) < 2:
            return []
        rise = np.diff(F, axis=0)
        best = rise.argmax(axis=0)
        order = np.argsort(-rise[best, np.arange(self.n_components)], kind="stable")
        return [(int(k), int(best[k]) + 1, float(rise[best[k], k])) for k in order[:n]]

    def _lives(self, k):
        """Per life of topic k: (life number, (n_segments,) share fractions, NaN outside that life)."""
        F = self.share_fraction()[:, k]
        life = np.asarray([row[k] for row in self.life])
        alive = np.asarray([row[k] for row in self.alive], dtype=bool)
        out = []
        for n in sorted(set(life[life > 0].tolist())):
            mask = (life == n) & (alive | (F > 0))
            if mask.any():
                out.append((n, np.where(mask, F, np.nan)))
        return out

    # ------------------------------------------------------------------ reports (tracking.report)
    def to_markdown(self, n_terms=5, topics=None, title="Topic tracking"):
        """Markdown report: share table (percent of each segment's topic mass), rising topics,
        per-topic tables of top terms per segment, and dead/reborn events."""
        return report.to_markdown(self, n_terms=n_terms, topics=topics, title=title)

    def to_text(self, n_terms=5, topics=None):
        """Plain-text report: one block per topic, one line per segment."""
        return report.to_text(self, n_terms=n_terms, topics=topics)

    def to_dict(self):
        """JSON-ready dict of the whole timeline."""
        return report.to_dict(self)

    def to_csv(self):
        """Segments x topics share fractions as CSV text (header: segment, docs, T1..TK)."""
        return report.to_csv(self)

    # ------------------------------------------------------------------ plots (tracking.plots)
    # tracking.plots imports matplotlib, which takes most of a second to load: only plotting pays for it.
    def plot(self, path, topics=None, n_terms=3, title="Topic shares over time"):
        """PNG of the share fraction of each topic per segment (one line per topic life); returns path."""
        from . import plots

        return plots.plot_shares(self, path, topics=topics, n_terms=n_terms, title=title)

    def plot_topic(self, path, k, n_terms=5):
        """PNG for one topic in the style of TOIS Figures 7–8: its share per segment, and its top terms
        (with normalised weights) written above each segment; returns path."""
        from . import plots

        return plots.plot_topic(self, path, k, n_terms=n_terms)
