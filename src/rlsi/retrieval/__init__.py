"""Relevance ranking: term matching (BM25, VSM), topic matching and their combination (TOIS §7).

* :mod:`rlsi.retrieval.term` — :class:`BM25`, :class:`VSM` over sparse matrices.
* :mod:`rlsi.retrieval.topic` — :class:`TopicMatcher`: cosine of folded-in query and document vectors;
  :class:`RidgeFolding`: another folding-in (ridge with a chosen λ, or the projection) for any model.
* :mod:`rlsi.retrieval.group_topic` — :class:`~rlsi.retrieval.group_topic.ClassTopicMatcher`: group models
  match a query with a document on the topics of the document's class (SIGIR 2012 §7.3); the searcher and
  the evaluation protocol pick it for group models.
* :mod:`rlsi.retrieval.combine` — per-query score normalisation and Eq. 9 interpolation.
* :mod:`rlsi.retrieval.searcher` — :class:`Searcher`: index once, ``search(query, k)``, save/load;
  ``Searcher.from_matrix`` and ``search(..., candidates=N)`` for corpora of millions of documents.
* :mod:`rlsi.retrieval.directory` — :func:`open_searcher`: a ready searcher of a model directory (its saved
  index, or a new one of a corpus or a matrix directory), what ``rlsi search`` and ``rlsi index`` run.
* :mod:`rlsi.retrieval.build` — the index of a matrix directory, built block by block.
* :mod:`rlsi.retrieval.postings` — numba kernels: CSC weights by scatter, posting-list scoring, top-n.
* :mod:`rlsi.retrieval.live` — :class:`~rlsi.retrieval.live.LiveIndex`: an index that takes documents (add,
  delete, update, merge) without a rebuild, with model versions that follow an online model (docs/live_index.md).
"""

from .combine import NORMALIZERS, Combiner, interpolate, normalize_scores
from .directory import DEFAULT_FOLDING, FOLDINGS, open_searcher
from .live import LiveHit, LiveIndex
from .searcher import TERM_MODELS, Hit, Searcher
from .term import BM25, VSM
from .topic import INPUT_KINDS, RidgeFolding, TopicMatcher, cosine_scores, model_input, normalize_rows

__all__ = [
    "BM25", "VSM",
    "TopicMatcher", "RidgeFolding", "cosine_scores", "model_input", "normalize_rows", "INPUT_KINDS",
    "NORMALIZERS", "Combiner", "interpolate", "normalize_scores",
    "Searcher", "Hit", "TERM_MODELS", "open_searcher", "FOLDINGS", "DEFAULT_FOLDING", "LiveIndex", "LiveHit",
]
