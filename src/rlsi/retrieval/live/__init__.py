"""A live search index: add, delete and update documents without a rebuild, with topics that follow the
stream (Lucene's segments, BM25 statistics applied at query time, TOIS §5's online topics).

* :mod:`~rlsi.retrieval.live.index` — :class:`LiveIndex`: create / open, add, delete, update, commit,
  merge, update_model and search; threads, processes and durability.
* :mod:`~rlsi.retrieval.live.snapshot` — :class:`Snapshot`: a point-in-time view, BM25 + topic search on it,
  :class:`LiveHit` with the topics that matched.
* :mod:`~rlsi.retrieval.live.segment` — immutable segments (raw frequencies, both orientations, lengths,
  ids, topic vectors by model version), written by memory maps and checked on open.
* :mod:`~rlsi.retrieval.live.vocabulary` — the append-only term -> id map.
* :mod:`~rlsi.retrieval.live.manifest` — the committed generation, swapped in atomically; orphan cleanup.
* :mod:`~rlsi.retrieval.live.lock` — one writer at a time.
* :mod:`~rlsi.retrieval.live.policy` — :class:`TieredMergePolicy`.
* :mod:`~rlsi.retrieval.live.writer` — segments written: a flushed buffer, a merge, a re-fold.
* :mod:`~rlsi.retrieval.live.models` — model versions kept in the folder, and folding-in with one.
* :mod:`~rlsi.retrieval.live.setup` — a new index, a model folder made live, a model version switched in.
* :mod:`~rlsi.retrieval.live.buffer` — the writer's uncommitted buffer.
* :mod:`~rlsi.retrieval.live.kernels` — numba kernels (query-time BM25, exact delete bookkeeping).

See ``docs/live_index.md``.
"""

from .index import LiveIndex
from .reader import check_live_folder
from .lock import IndexLockedError
from .policy import TieredMergePolicy
from .snapshot import LiveHit, Snapshot

__all__ = ["LiveIndex", "check_live_folder", "LiveHit", "Snapshot", "TieredMergePolicy", "IndexLockedError"]
