"""Writing segments: a flushed buffer, a merge of segments, a re-fold of one segment's topic vectors.

Each function writes new files only (fsynced, digests recorded) and returns the new segment and its
manifest entry; the caller commits them by swapping the manifest. A merge copies the live rows of its
inputs block by block (raw counts, lengths, ids and the topic vectors of the model versions in use) in
segment order, so its memory is one block plus the output's memory maps; the topic vectors of a version
an input lacks (a re-fold under way) are folded in from the counts as the block passes.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .segment import SegmentWriter, topics_key, write_topics

__all__ = ["flush_segment", "merge_segments", "refold_segment", "MERGE_BLOCK_ROWS"]

#: Documents copied per block by a merge or a re-fold.
MERGE_BLOCK_ROWS = 1 << 16


def _tf_dtype(data):
    """float32 when every count is exact in it (raw counts are whole numbers), else float64."""
    data = np.asarray(data)
    if data.dtype == np.float32 or (len(data) == 0) or np.array_equal(data.astype(np.float32), data):
        return np.float32
    return np.float64


def _entry(seg, files, deleted=0, deletes=None):
    topics = {str(v): files.pop(topics_key(v)) for v in list(seg.topics)}
    return {"name": seg.name, "docs": seg.n_docs, "postings": seg.n_postings, "deleted": deleted,
            "files": files, "topics": topics, "deletes": deletes}


def _id_width(ids):
    ids = np.asarray(ids)
    return max(1, ids.dtype.itemsize // 4) if ids.dtype.kind == "U" else max(1, max(map(len, ids), default=1))


def flush_segment(folder, name, counts, lengths, ids, models, vocabulary, *, topic_dtype, tfidf=None):
    """A segment of new documents: ``counts`` CSR over the global vocabulary (sorted, no zeros), their
    lengths and ids; vectors folded by each :class:`~rlsi.retrieval.live.models.ModelVersion` of ``models``
    (``tfidf``: the caller's model input for the versions of an index without a vectorizer)."""
    counts = sp.csr_matrix(counts)
    topics = {m.version: m.fold(counts, lengths, vocabulary, tfidf=tfidf) for m in models}
    terms = np.flatnonzero(np.bincount(counts.indices, minlength=counts.shape[1]))  # O(postings + terms)
    writer = SegmentWriter(folder, name, n_docs=counts.shape[0], n_postings=counts.nnz, terms=terms,
                           versions={v: V.shape[1] for v, V in topics.items()}, tf_dtype=_tf_dtype(counts.data),
                           topic_dtype=topic_dtype, id_width=_id_width(ids))
    writer.add(counts, np.asarray(lengths, dtype=np.float64), np.asarray(ids), topics)
    seg, files = writer.finish()
    return seg, _entry(seg, files)


def _blocks(rows, size=MERGE_BLOCK_ROWS):
    for a in range(0, len(rows), size):
        yield rows[a:a + size]


def merge_segments(folder, name, views, models, vocabulary, n_terms, *, topic_dtype, show=None):
    """One segment of the live documents of ``views`` (in order), with the topic vectors of every version
    of ``models``: copied where the input has them, folded in where it does not. ``show(n)``: progress."""
    df = np.zeros(n_terms, dtype=np.int64)
    n_docs = n_postings = 0
    width, tf32 = 1, True
    for v in views:
        df[np.asarray(v.seg.terms)] += v.live_df
        n_docs += v.n_live
        row_ptr = np.asarray(v.seg.row_ptr)
        dead_postings = int((row_ptr[v.deleted + 1] - row_ptr[v.deleted]).sum()) if len(v.deleted) else 0
        n_postings += v.seg.n_postings - dead_postings
        width = max(width, _id_width(v.seg.ids))
        tf32 &= v.seg.ftf.dtype == np.float32
    K = {m.version: m.n_topics for m in models}
    writer = SegmentWriter(folder, name, n_docs=n_docs, n_postings=n_postings, terms=np.flatnonzero(df),
                           versions=K, tf_dtype=np.float32 if tf32 else np.float64, topic_dtype=topic_dtype,
                           id_width=width)
    for v in views:
        for rows in _blocks(v.live_rows()):
            C = v.seg.counts(rows, n_terms)
            lengths = np.asarray(v.seg.doc_len[rows])
            topics = {}
            for m in models:
                have = v.seg.topics.get(m.version)
                topics[m.version] = (np.asarray(have[rows]) if have is not None
                                     else m.fold(C, lengths, vocabulary))
            writer.add(C, lengths, np.asarray(v.seg.ids[rows]), topics)
            if show is not None:
                show(len(rows))
    seg, files = writer.finish()
    return seg, _entry(seg, files)


def refold_segment(folder, view, model, vocabulary, n_terms, *, topic_dtype):
    """The topic vectors of ``view``'s segment by ``model`` (a ModelVersion), written as the segment's
    ``topics-vN`` file (deleted rows get zero vectors: no query reads them); returns (array, entry)."""
    seg = view.seg
    V = np.zeros((seg.n_docs, model.n_topics), dtype=topic_dtype)
    for rows in _blocks(view.live_rows()):
        V[rows] = model.fold(seg.counts(rows, n_terms), np.asarray(seg.doc_len[rows]), vocabulary)
    return write_topics(folder, seg.name, model.version, V)
