"""Building the pages: :func:`explore` (a model, and optionally its documents) and :func:`tracking_page`
(a :class:`rlsi.tracking.TopicTimeline`). Both return a :class:`~rlsi.explorer.page.Page`."""

from __future__ import annotations

import numpy as np

from .._progress import progress_bar
from ..errors import RLSIError
from ..kernels.blas_rows import one_blas_thread
from .data import COHERENCE_TERMS, LOOKUP_TOPICS, MAX_MAP_DOCS, N_ENDS, N_TERMS, explorer_data
from .models import check_model, document_vectors, model_input
from .page import Page, render
from .tracking import TRACKING_TERMS, tracking_data


def _texts(docs):
    """The text each document is vectorized from: a Corpus' texts, the strings, or title and text of dicts
    joined by a newline (as :func:`rlsi.text.read_corpus` joins the fields)."""
    if hasattr(docs, "texts"):
        return list(docs.texts)
    out = []
    for n, d in enumerate(docs):
        if isinstance(d, str):
            out.append(d)
        elif isinstance(d, dict):
            out.append("\n".join(str(d[f]) for f in ("title", "text") if d.get(f) and str(d[f]).strip()))
        else:
            raise RLSIError(f"docs[{n}] is a {type(d).__name__}; give strings, dicts with 'text' (and 'title', "
                            f"'id'), or an rlsi.text.Corpus")
    return out


def _feature_names(model, vectorizer, feature_names):
    if feature_names is not None:
        return np.asarray(feature_names, dtype=object)
    if vectorizer is not None:
        return np.asarray(vectorizer.get_feature_names_out(), dtype=object)
    return np.arange(check_model(model).shape[1]).astype(str)


class _Steps:
    """The progress of a build: a bar of named steps when ``verbose``, else nothing."""

    def __init__(self, total, verbose):
        self.bar = progress_bar(total, "rlsi explore", verbose=verbose, unit="step")

    def __call__(self, name):
        if self.bar is not None:
            self.bar.set_postfix_str(name, refresh=False)
            self.bar.update()

    def close(self):
        if self.bar is not None:
            self.bar.close()


def explore(model, *, vectorizer=None, X=None, docs=None, doc_topics=None, y=None, feature_names=None,
            n_terms=N_TERMS, lookup_topics=LOOKUP_TOPICS, n_ends=N_ENDS, max_map_docs=MAX_MAP_DOCS,
            coherence_terms=COHERENCE_TERMS, distance="topics", title=None, random_state=0, verbose=0):
    """An HTML topic explorer of ``model``: a :class:`~rlsi.explorer.page.Page` (``.html``, ``.save(path)``,
    shown inline in Jupyter).

    The page shows a topic map (classical MDS of the distances between topics, bubble area the topic's share
    of the corpus, colour its sign balance), the selected topic's signed term bars with a relevance slider,
    a term lookup, the documents at both ends of the topic, diagnostics (compactness, non-zeros, dead
    topics, NPMI coherence, the objective per iteration) and a document map. Topics are T1..TK, row 0 first,
    as ``rlsi topics`` prints them. Its size depends on the number of topics and the options below, not on
    the vocabulary or the corpus (about 1 MB at K = 500 and 30 terms a topic).

    Parameters
    ----------
    model : a fitted rlsi topic model (any kind: RLSI batch / online / Dask, the group models, STC /
        MedSTC, LSI / NMF / LDA / PLSI), or any object with ``components_`` and ``transform``.
    vectorizer : the model's vectorizer: the term names, and the matrix of ``docs`` when X is not given.
    X : the documents as the matrix the model folds in (tf-idf; word counts for STC / MedSTC).
    docs : their text: a :class:`rlsi.text.Corpus`, strings, or dicts with ``text`` (and ``title``, ``id``).
    doc_topics : the documents' topic vectors when already computed (default ``model.transform(X)``).
    y : class labels of the documents for a group model's folding-in (default: each its predicted class).
    feature_names : term names (default: the vectorizer's, else the column numbers).
    n_terms : terms shown per topic (both sides together); lookup_topics : per term, its largest weights
        outside the topics where it is shown; n_ends : documents at each end of a topic; max_map_docs :
        documents drawn on the document map (a seeded sample beyond it); coherence_terms : top terms of the
        NPMI coherence.
    distance : ``"topics"`` (cosine of the topic rows) or ``"documents"`` (correlation of the document
        vectors) for the topic map.
    title : the page's title; random_state : the seed of the document map's sample; verbose : progress bar.
    """
    check_model(model)
    names = _feature_names(model, vectorizer, feature_names)
    steps = _Steps(7, verbose)
    try:
        if X is None and docs is not None and doc_topics is None:
            steps("vectorizing")
            X = model_input(model, vectorizer, _texts(docs))
        if X is not None and doc_topics is None:
            steps("folding in")
            doc_topics = document_vectors(model, X, y)
        # one BLAS thread, as the library's fits run: threaded OpenBLAS (its LAPACK above all) on busy cores
        # spins (the topic map's eigenvalues took 7 s instead of 0.2 s at K = 500 on two loaded cores)
        with one_blas_thread():
            data = explorer_data(model, names, X=X, doc_topics=doc_topics, docs=docs, n_terms=n_terms,
                                 lookup_topics=lookup_topics, n_ends=n_ends, max_map_docs=max_map_docs,
                                 coherence_terms=coherence_terms, distance=distance, random_state=random_state,
                                 progress=steps)
        steps("writing")
        title = title or f"rlsi topics: {data['model']['kind']}, {data['model']['n_topics']} topics"
        html = render("explorer.html.j2", "explorer.js", data, title, groups=len(data["model"]["groups"]) > 1)
    finally:
        steps.close()
    return Page(html, data)


def tracking_page(timeline, *, n_terms=TRACKING_TERMS, title="Topic tracking"):
    """An HTML page of a :class:`rlsi.tracking.TopicTimeline`: each topic's share per period (lines or
    stacked areas) with births and deaths marked, and for a clicked topic its top terms period by period and
    how far it moved (drift) from one period to the next. Returns a :class:`~rlsi.explorer.page.Page`."""
    data = tracking_data(timeline, n_terms=n_terms, title=title)
    return Page(render("tracking.html.j2", "tracking.js", data, title), data)
