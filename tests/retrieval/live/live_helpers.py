"""Shared pieces of the live index tests: a small vocabulary of content words, two topic models fitted on
it, and the reference — a static :class:`~rlsi.retrieval.Searcher` built from scratch over the live
documents, whose BM25, topic and fused scores the live index must reproduce."""

import numpy as np

from rlsi.models.baselines import LSI
from rlsi.retrieval import Searcher
from rlsi.text import TfidfVectorizer

WORDS = ("aircraft wing flutter engine jet noise heart blood artery cardiac valve pressure library books "
         "catalog index reading shelf").split()
QUERIES = ["aircraft flutter", "heart blood pressure", "library books catalog", "wing heart books"]


def random_text(rng, n_words=None):
    n = int(rng.integers(2, 8)) if n_words is None else n_words
    group = int(rng.integers(0, 3))
    own = WORDS[6 * group: 6 * group + 6]
    words = [own[int(rng.integers(0, 6))] if rng.random() < 0.8 else WORDS[int(rng.integers(0, len(WORDS)))]
             for _ in range(n)]
    return " ".join(words)


_FITTED = []


def fitted_models():
    """``(vectorizer, model_a, model_b)``, fitted once: every word of WORDS is in the vocabulary (so the
    static index sees every token the live one sees); two LSI models of different K for model updates."""
    if not _FITTED:
        rng = np.random.default_rng(0)
        pool = [random_text(rng) for _ in range(60)] + [" ".join(WORDS)]
        vec = TfidfVectorizer()
        X = vec.fit_transform(pool)
        _FITTED.extend([vec, LSI(3, random_state=0).fit(X), LSI(2, random_state=0).fit(X)])
    return tuple(_FITTED)


def static_hits(docs, model, vec, query, *, alpha=0.4, k=None, candidates=None):
    """The reference ranking: a searcher built from scratch over ``docs`` (id -> text)."""
    if not docs:
        return []
    ids = sorted(docs)
    s = Searcher(model, vec, alpha=alpha).index([docs[i] for i in ids], ids)
    return s.search(query, k=k, candidates=candidates)


def assert_same_scores(live_hits, ref_hits, tol=1e-12):
    """The same documents with the same BM25, topic and fused scores (to ``tol``); the order agrees wherever
    the fused scores differ by more than ``tol``."""
    ref = {h.doc_id: h for h in ref_hits}
    assert sorted(h.doc_id for h in live_hits) == sorted(ref), (live_hits, ref_hits)
    for h in live_hits:
        r = ref[h.doc_id]
        assert abs(h.term_score - r.term_score) <= tol, (h, r)
        assert abs(h.topic_score - r.topic_score) <= tol, (h, r)
        assert abs(h.score - r.score) <= tol, (h, r)
    scores = [h.score for h in live_hits]
    assert all(a >= b - tol for a, b in zip(scores, scores[1:]))



def text_of(doc_id):
    """A fixed text for a document id (a killed writer's documents can be checked without its state)."""
    import zlib

    return random_text(np.random.default_rng(zlib.crc32(doc_id.encode())))
