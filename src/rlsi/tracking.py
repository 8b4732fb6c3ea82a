"""Topic tracking over a stream (TOIS §8.2.3, Figures 7–8).

An online model (:class:`rlsi.models.OnlineRLSI`) updates its topics U in place, so topic k at one time
and topic k later are the same topic, drifting. The stream is cut into **segments** — periods of a date
field (day, ISO week, month, year) or windows of n mini-batches — and for each segment the tracker keeps

* the **share** of every topic (§8.2.3): the proportion of topic k in document d is ``|v_k| / ‖d‖₂``
  (absolute topic weight normalised by the document's ℓ2 norm); the share of the segment is its sum
  over the segment's documents (``share``). ``share_fraction()`` divides by the segment's total over
  topics (comparable across segments of different sizes; what the plots show) and ``share_per_doc()``
  by the segment's number of documents. v is the projection made when the document arrived (Algorithm
  4's v_t, the vector that went into the statistics); empty documents (‖d‖ = 0) count in
  ``n_docs`` but add no share;
* a **snapshot** of the topics at the segment's end: each topic's top terms by ``|u_mk|`` with their
  normalised weights ``u_mk / ‖u_k‖₁`` (signed: the absolute value is the paper's normalised weight, a
  negative sign marks a negative term, §8.4.1). RLSI topics may be dominated by negative weights
  (§8.4.1: "readable if the dominant parts are taken"); with ``orient=True`` (default) such a topic is
  shown as −u_k — the same model, since (−u_k, −v_k) reconstructs the same documents — so that the
  dominant terms read with positive weights. Shares use |v_k| and do not depend on the sign.

Memory is one row of K shares and K x n_top_terms terms per segment, plus the last live vector of every
topic — never the documents.

Dead and reborn topics. A topic is **dead** at a snapshot when all its weights are zero (it then takes
no share: its v_k is 0 for every later document). Its index can come alive again (through the coupling
of the statistics), but nothing guarantees that it is about the same thing, so a topic's life count is
kept: ``T7`` is the first life of topic 7, ``T7.2`` its second life, and so on. The timeline records a
``died`` event (segment of the first snapshot where it is zero) and a ``reborn`` event with the cosine
similarity between the new topic and the last live vector of its previous life (``similarity``), so the
report can say "reborn, similar to its former self (0.83)" or "reborn as something else (0.02)". In the
plots each life is a separate line, with a gap while the topic is dead.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ._validation import check_choice, check_number
from .errors import RLSIError

__all__ = ["PERIODS", "period_of", "period_labels", "segments", "TopicTracker", "TopicTimeline", "track"]

PERIODS = {"day": "YYYY-MM-DD", "week": "ISO week, YYYY-Www", "month": "YYYY-MM", "year": "YYYY"}
_DATE_RE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:[T ].*)?\s*$")
_NEEDS = {"year": 1, "month": 2, "week": 3, "day": 3}


def period_of(date, period):
    """The period label of an ISO date string (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``, or a datetime
    ``YYYY-MM-DDThh:mm:ss``), or of a :class:`datetime.date`. Raises RLSIError if the date is not precise
    enough for the period (e.g. ``1987-03`` for ``period="day"``)."""
    check_choice("period", period, PERIODS)
    if isinstance(date, _dt.date):
        parts = (date.year, date.month, date.day)
    else:
        if not isinstance(date, str):
            raise RLSIError(f"date {date!r} is not an ISO date string")
        m = _DATE_RE.match(date)
        if not m:
            raise RLSIError(f"date {date!r} is not an ISO date (YYYY, YYYY-MM or YYYY-MM-DD)")
        parts = tuple(int(x) for x in m.groups() if x is not None)
    if len(parts) < _NEEDS[period]:
        raise RLSIError(f"date {date!r} is not precise enough for period={period!r} "
                        f"(needs {PERIODS[period] if period != 'week' else 'YYYY-MM-DD'})")
    try:
        d = _dt.date(parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1)
    except ValueError as exc:
        raise RLSIError(f"date {date!r} is not a valid date ({exc})") from None
    if period == "year":
        return f"{d.year:04d}"
    if period == "month":
        return f"{d.year:04d}-{d.month:02d}"
    if period == "day":
        return d.isoformat()
    iso = d.isocalendar()
    return f"{iso[0]:04d}-W{iso[1]:02d}"


def period_labels(dates, period):
    """Period label of each date (see :func:`period_of`); the labels sort like the periods."""
    return [period_of(d, period) for d in dates]


def segments(n_docs, batch_size, *, labels=None, every=None):
    """Cut ``n_docs`` consecutive documents into mini-batches; yield ``(start, stop, segment)``.

    ``labels`` (one period label per document, documents in time order): a batch never straddles two
    periods — batches are cut at every label change and every ``batch_size`` documents inside a period;
    the segment is the period label. ``every`` (int): segments are windows of ``every`` batches of
    ``batch_size`` documents, labelled ``"batches a-b"``. Exactly one of the two must be given.
    """
    check_number("batch_size", batch_size, low=1, integer=True)
    if (labels is None) == (every is None):
        raise RLSIError("give either period labels or every=n (mini-batches per snapshot), not both")
    if labels is not None:
        if len(labels) != n_docs:
            raise RLSIError(f"{len(labels)} period labels for {n_docs} documents")
        start = 0
        while start < n_docs:
            lab = labels[start]
            stop = start
            while stop < n_docs and stop - start < batch_size and labels[stop] == lab:
                stop += 1
            yield start, stop, lab
            start = stop
        return
    check_number("every", every, low=1, integer=True)
    for i, start in enumerate(range(0, n_docs, batch_size)):
        first = (i // every) * every + 1
        yield start, min(n_docs, start + batch_size), f"batches {first}-{first + every - 1}"


def _topic_rows(components):
    C = sp.csr_matrix(components)
    C.sort_indices()
    return C


def _cosine(a_idx, a_val, b_idx, b_val):
    na, nb = np.linalg.norm(a_val), np.linalg.norm(b_val)
    if na == 0 or nb == 0:
        return 0.0
    common, ia, ib = np.intersect1d(a_idx, b_idx, assume_unique=True, return_indices=True)
    return float(np.dot(a_val[ia], b_val[ib]) / (na * nb)) if len(common) else 0.0


@dataclass
class TopicTimeline:
    """What the tracker saw: per segment, topic shares, top terms, alive flags and life numbers."""

    n_components: int
    segments: list = field(default_factory=list)
    n_docs: list = field(default_factory=list)
    share: list = field(default_factory=list)          # per segment: K floats (Σ |v_k| / ‖d‖₂)
    top_terms: list = field(default_factory=list)      # per segment: K lists of (term, signed weight)
    alive: list = field(default_factory=list)          # per segment: K bools
    life: list = field(default_factory=list)           # per segment: K ints (0: never alive yet)
    events: list = field(default_factory=list)         # dicts: topic, kind, segment, [similarity]

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
        """``T{k}`` (first life) or ``T{k}.{life}`` for topic k as of segment p (1-based topic numbers)."""
        life = self.life[p][k] if self.life else 0
        return f"T{k + 1}" if life <= 1 else f"T{k + 1}.{life}"

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

    # ------------------------------------------------------------------ reports
    def _terms(self, p, k, n_terms, weights=True):
        items = self.top_terms[p][k][:n_terms]
        if not self.alive[p][k]:
            return "(dead)"
        if weights:
            return ", ".join(f"{t} {w:+.3f}" if w < 0 else f"{t} {w:.3f}" for t, w in items)
        return ", ".join(f"-{t}" if w < 0 else t for t, w in items)

    def _event_lines(self):
        lines = []
        for e in self.events:
            name = f"T{e['topic'] + 1}"
            if e["kind"] == "died":
                lines.append(f"{name} died at {e['segment']} (all weights zero)")
            else:
                sim = e["similarity"]
                how = "similar to its former self" if sim >= 0.5 else "about something else"
                lines.append(f"{name} reborn at {e['segment']} as {name}.{e['life']} "
                             f"({how}: cosine {sim:.2f} with its last live state)")
        return lines

    def to_markdown(self, n_terms=5, topics=None, title="Topic tracking"):
        """Markdown report: share table (percent of each segment's topic mass), rising topics,
        per-topic tables of top terms per segment, and dead/reborn events."""
        topics = range(self.n_components) if topics is None else topics
        F = self.share_fraction()
        out = [f"# {title}", "",
               f"{len(self.segments)} segments, {int(np.sum(self.n_docs))} documents, "
               f"{self.n_components} topics. Share of a topic in a segment: Σ |v_k| / ‖d‖₂ over the segment's "
               f"documents (TOIS §8.2.3), shown as % of the segment's total (†: topic dead, all weights zero); "
               f"term weights are u_mk / ‖u_k‖₁ (negative terms signed; a topic whose negative part "
               f"dominates is shown as −u_k). T7.2 is the second life of topic 7 after it died.", ""]
        out += ["## Topic shares (%)", ""]
        head = ["segment", "docs"] + [self.label(k) for k in topics]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join(["---"] * len(head)) + "|")
        for p, seg in enumerate(self.segments):
            cells = [seg, str(self.n_docs[p])] + [
                f"{100 * F[p, k]:.1f}" if self.alive[p][k] or F[p, k] > 0 else "†" for k in topics]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
        rising = [r for r in self.rising(5) if r[2] > 0]
        if rising:
            out += ["## Largest rises", ""]
            for k, p, r in rising:
                out.append(f"- {self.label(k, p)} rises by {100 * r:.1f} points at {self.segments[p]}: "
                           f"{self._terms(p, k, n_terms, weights=False)}")
            out.append("")
        events = self._event_lines()
        if events:
            out += ["## Dead and reborn topics", ""] + [f"- {line}" for line in events] + [""]
        out += ["## Top terms per segment", ""]
        for k in topics:
            out += [f"### {self.label(k)}", "", "| segment | share % | top terms (normalised weight) |",
                    "|---|---|---|"]
            for p, seg in enumerate(self.segments):
                out.append(f"| {seg} | {100 * F[p, k]:.1f} | {self._terms(p, k, n_terms)} |")
            out.append("")
        return "\n".join(out)

    def to_text(self, n_terms=5, topics=None):
        """Plain-text report: one block per topic, one line per segment."""
        topics = range(self.n_components) if topics is None else topics
        F = self.share_fraction()
        width = max([len(s) for s in self.segments] + [7])
        lines = []
        for k in topics:
            lines.append(self.label(k))
            for p, seg in enumerate(self.segments):
                terms = self._terms(p, k, n_terms, weights=False)
                lines.append(f"  {seg:<{width}} {100 * F[p, k]:6.1f}%  {terms}")
            lines.append("")
        lines += self._event_lines()
        return "\n".join(lines).rstrip() + "\n"

    def to_dict(self):
        """JSON-ready dict of the whole timeline."""
        return {"n_components": self.n_components, "segments": list(self.segments),
                "n_docs": [int(n) for n in self.n_docs], "share": self.shares.tolist(),
                "share_fraction": self.share_fraction().tolist(),
                "top_terms": [[[[t, float(w)] for t, w in topic] for topic in seg] for seg in self.top_terms],
                "alive": [[bool(a) for a in row] for row in self.alive],
                "life": [[int(x) for x in row] for row in self.life], "events": list(self.events)}

    def to_csv(self):
        """Segments x topics share fractions as CSV text (header: segment, docs, T1..TK)."""
        F = self.share_fraction()
        rows = ["segment,docs," + ",".join(f"T{k + 1}" for k in range(self.n_components))]
        for p, seg in enumerate(self.segments):
            rows.append(f"\"{seg}\",{self.n_docs[p]}," + ",".join(f"{x:.6g}" for x in F[p]))
        return "\n".join(rows) + "\n"

    # ------------------------------------------------------------------ plots
    def _lives(self, k):
        """Per life of topic k: (life number, array of shares with NaN outside that life)."""
        F = self.share_fraction()[:, k]
        life = np.asarray([row[k] for row in self.life])
        alive = np.asarray([row[k] for row in self.alive], dtype=bool)
        out = []
        for n in sorted(set(life[life > 0].tolist())):
            mask = (life == n) & (alive | (F > 0))
            if mask.any():
                out.append((n, np.where(mask, F, np.nan)))
        return out

    def plot(self, path, topics=None, n_terms=3, title="Topic shares over time"):
        """PNG of the share fraction of each topic per segment (one line per topic life)."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        topics = list(range(self.n_components)) if topics is None else list(topics)
        P = len(self.segments)
        fig = Figure(figsize=(max(8.0, 0.5 * P + 4), 5.5))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        x = np.arange(P)
        cmap = _colors(len(topics))
        for i, k in enumerate(topics):
            for n, y in self._lives(k):
                name = f"T{k + 1}" if n <= 1 else f"T{k + 1}.{n}"
                last = int(np.flatnonzero(~np.isnan(y))[-1])
                ax.plot(x, 100 * y, marker="o", ms=3, lw=1.5, color=cmap[i], ls="-" if n <= 1 else "--",
                        label=f"{name}: {self._terms(last, k, n_terms, weights=False)}")
        _axis(ax, self.segments)
        ax.set_ylabel("share of the segment's topic mass (%)")
        ax.set_title(title)
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        return path

    def plot_topic(self, path, k, n_terms=5):
        """PNG for one topic in the style of TOIS Figures 7–8: its share per segment, and its top terms
        (with normalised weights) written above each segment."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        check_number("k", k, low=0, high=self.n_components - 1, integer=True)
        P = len(self.segments)
        fig = Figure(figsize=(max(7.0, 1.3 * P + 1), 5.0))
        FigureCanvasAgg(fig)
        ax = fig.add_subplot(1, 1, 1)
        x = np.arange(P)
        F = 100 * self.share_fraction()[:, k]
        ax.plot(x, F, marker="o", color="#1f5fa8", lw=2)
        top = max(float(F.max()), 1e-9)
        ax.set_ylim(0, top * 2.0)
        for p in range(P):
            if not self.alive[p][k]:
                text = "(dead)"
            else:
                text = "\n".join(f"{t} {abs(w):.2f}" + ("-" if w < 0 else "")
                                 for t, w in self.top_terms[p][k][:n_terms])
            ax.annotate(text, (x[p], F[p]), xytext=(0, 8), textcoords="offset points", ha="center",
                        va="bottom", fontsize=7)
        _axis(ax, self.segments)
        ax.set_ylabel("share of the segment's topic mass (%)")
        ax.set_title(f"{self.label(k)} over time")
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        return path


def _axis(ax, labels):
    P = len(labels)
    step = max(1, P // 24)
    ax.set_xticks(np.arange(0, P, step))
    ax.set_xticklabels([labels[i] for i in range(0, P, step)], rotation=45, ha="right", fontsize=8)
    ax.set_xlim(-0.5, P - 0.5)
    ax.grid(alpha=0.3)


def _colors(n):
    from matplotlib import colormaps

    cmap = colormaps["tab20" if n > 10 else "tab10"]
    return [cmap(i % cmap.N) for i in range(n)]


class TopicTracker:
    """Accumulates shares per segment and takes topic snapshots (see the module docstring).

    Use: for each mini-batch, ``observe(X, W, segment)`` with the batch's tf-idf X and its topic vectors W
    (``OnlineRLSI.partial_fit_transform``); at the end of each segment, ``snapshot(components,
    feature_names)``. :func:`track` does both around a model.
    """

    def __init__(self, n_components, *, n_top_terms=10, orient=True):
        check_number("n_components", n_components, low=1, integer=True)
        check_number("n_top_terms", n_top_terms, low=1, integer=True)
        self.n_components = int(n_components)
        self.n_top_terms = int(n_top_terms)
        self.orient = bool(orient)
        self.timeline = TopicTimeline(self.n_components)
        self._current = None      # label of the open segment
        self._share = None
        self._n = 0
        self._life = np.zeros(self.n_components, dtype=np.int64)
        self._was_alive = np.zeros(self.n_components, dtype=bool)
        self._last_vec = [None] * self.n_components   # last live (indices, values) of each topic

    def observe(self, X, W, segment):
        """Add the shares of a batch (X: n x M tf-idf, W: n x K) to ``segment`` (opened if new)."""
        if self._current is not None and segment != self._current:
            raise RLSIError(f"segment {self._current!r} is still open: snapshot() it before observing "
                            f"{segment!r}")
        if self._current is None:
            if segment in self.timeline.segments:
                raise RLSIError(f"segment {segment!r} was already closed: documents must come in "
                                f"segment order (sort them by date)")
            self._current = segment
            self._share = np.zeros(self.n_components)
            self._n = 0
        W = np.asarray(W, dtype=np.float64)
        if W.shape[1] != self.n_components or W.shape[0] != X.shape[0]:
            raise RLSIError(f"W has shape {W.shape}; expected ({X.shape[0]}, {self.n_components})")
        X = sp.csr_matrix(X)
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        ok = norms > 0
        if ok.any():
            self._share += (np.abs(W[ok]) / norms[ok, None]).sum(axis=0)
        self._n += X.shape[0]

    def snapshot(self, components, feature_names):
        """Close the open segment with the topics ``components`` (K x M) and the term names of the
        columns (a sequence; it may be longer than M). Returns the closed segment's label."""
        if self._current is None:
            raise RLSIError("no open segment: observe() a batch first")
        C = _topic_rows(components)
        if C.shape[0] != self.n_components:
            raise RLSIError(f"components have {C.shape[0]} topics; the tracker has {self.n_components}")
        if len(feature_names) < C.shape[1]:
            raise RLSIError(f"{len(feature_names)} feature names for {C.shape[1]} columns")
        tl, seg = self.timeline, self._current
        top, alive = [], []
        for k in range(self.n_components):
            idx = C.indices[C.indptr[k]:C.indptr[k + 1]]
            val = C.data[C.indptr[k]:C.indptr[k + 1]]
            live = bool(len(val)) and bool(np.any(val != 0))
            alive.append(live)
            if not live:
                top.append([])
                if self._was_alive[k]:
                    tl.events.append({"topic": k, "kind": "died", "segment": seg, "life": int(self._life[k])})
                self._was_alive[k] = False
                continue
            if not self._was_alive[k]:
                self._life[k] += 1
                if self._life[k] > 1:
                    prev = self._last_vec[k]
                    sim = _cosine(prev[0], prev[1], idx, val) if prev is not None else 0.0
                    tl.events.append({"topic": k, "kind": "reborn", "segment": seg, "life": int(self._life[k]),
                                      "similarity": sim})
            self._was_alive[k] = True
            self._last_vec[k] = (idx.copy(), val.astype(np.float64))
            if self.orient and val[val < 0].sum() + val[val > 0].sum() < 0:
                val = -val  # negative part dominates: shown as -u_k (with -v_k the model is unchanged)
            l1 = float(np.abs(val).sum())
            n = min(self.n_top_terms, len(val))
            best = np.argpartition(-np.abs(val), n - 1)[:n]
            best = best[np.lexsort((idx[best], -np.abs(val[best])))]
            top.append([(str(feature_names[idx[j]]), float(val[j] / l1)) for j in best])
        tl.segments.append(seg)
        tl.n_docs.append(int(self._n))
        tl.share.append(self._share.tolist())
        tl.top_terms.append(top)
        tl.alive.append(alive)
        tl.life.append(self._life.tolist())
        self._current = None
        return seg

    @property
    def open_segment(self):
        return self._current


def track(model, batches, *, feature_names, n_top_terms=10, orient=True, callback=None):
    """Fit ``model`` online over ``batches`` and track its topics; returns a :class:`TopicTimeline`.

    model : an estimator with ``partial_fit_transform(X) -> W`` and ``components_`` (OnlineRLSI).
    batches : iterable of ``(X_batch, segment)`` in stream order; consecutive batches with the same
        segment label form one segment, whose snapshot is taken after its last batch.
    feature_names : sequence, or a callable returning the current names (a growing vocabulary).
    callback : optional ``callback(n_docs_in_batch)`` after each batch (progress bars).
    """
    names = feature_names if callable(feature_names) else (lambda: feature_names)
    tracker = None
    for X, seg in batches:
        if tracker is not None and tracker.open_segment is not None and seg != tracker.open_segment:
            tracker.snapshot(model.components_, names())
        W = model.partial_fit_transform(X)
        if tracker is None:
            tracker = TopicTracker(W.shape[1], n_top_terms=n_top_terms, orient=orient)
        tracker.observe(X, W, seg)
        if callback is not None:
            callback(X.shape[0])
    if tracker is None:
        raise RLSIError("the stream is empty: nothing to track")
    if tracker.open_segment is not None:
        tracker.snapshot(model.components_, names())
    return tracker.timeline


