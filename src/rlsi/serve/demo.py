"""The demo of ``rlsi serve`` without a folder: the 1,033 MEDLINE abstracts shipped with rlsi, topics of
batch RLSI as ``rlsi demo`` fits them (K = 20, stemmed, min_df = 2), in a live index with their texts, so a
fresh install serves a search engine with one command."""

from __future__ import annotations

__all__ = ["build_demo", "DEMO_TOPICS"]

#: Topics of the demo model (``rlsi demo``'s default).
DEMO_TOPICS = 20


def build_demo(folder, *, verbose=0):
    """Fit the demo model and write a live index of the MED abstracts, with their texts, to ``folder`` (new
    or empty); returns the folder."""
    from ..datasets import load_demo_corpus
    from ..models.batch import BatchRLSI
    from ..retrieval.live import LiveIndex
    from ..text import TfidfVectorizer
    from .texts import TextStore

    corpus = load_demo_corpus()
    vectorizer = TfidfVectorizer(stemmer="english", min_df=2)
    X = vectorizer.fit_transform(corpus.texts)
    model = BatchRLSI(DEMO_TOPICS, lambda1=0.1, lambda2=1.0, random_state=0, verbose=verbose).fit(X)
    with LiveIndex.create(folder, model, vectorizer) as index:
        index.add(corpus.texts, corpus.ids)
        index.commit()
    store = TextStore(folder)
    try:
        store.apply(zip(corpus.ids, corpus.texts))
    finally:
        store.close()
    return folder
