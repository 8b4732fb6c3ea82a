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
  dominant terms read with positive weights. Shares use |v_k| and do not depend on the sign;
* the **drift** of every topic: ``1 - cosine`` between its whole weight vector at this snapshot and at the
  previous one (0: unchanged; None at a topic's first snapshot, while it is dead and when it is reborn).

Memory is one row of K shares and drifts and K x n_top_terms terms per segment, plus the last live
vector of every topic — never the documents.

Dead and reborn topics. A topic is **dead** at a snapshot when all its weights are zero (it then takes
no share: its v_k is 0 for every later document). Its index can come alive again (through the coupling
of the statistics), but nothing guarantees that it is about the same thing, so a topic's life count is
kept: ``T7`` is the first life of topic 7, ``T7.2`` its second life, and so on. The timeline records a
``died`` event (segment of the first snapshot where it is zero) and a ``reborn`` event with the cosine
similarity between the new topic and the last live vector of its previous life (``similarity``), so the
report can say "reborn, similar to its former self (0.83)" or "reborn as something else (0.02)". In the
plots each life is a separate line, with a gap while the topic is dead.

Modules: :mod:`~rlsi.tracking.periods` (dates to periods, the stream cut into mini-batches),
:mod:`~rlsi.tracking.tracker` (:class:`TopicTracker`, :func:`track`), :mod:`~rlsi.tracking.timeline`
(:class:`TopicTimeline`, the numbers), :mod:`~rlsi.tracking.report` (Markdown, text, JSON, CSV) and
:mod:`~rlsi.tracking.plots` (PNG figures).
"""

from .periods import PERIODS, period_of, segments
from .timeline import TopicTimeline
from .tracker import TopicTracker, track

__all__ = ["PERIODS", "period_of", "segments", "TopicTracker", "TopicTimeline", "track"]
