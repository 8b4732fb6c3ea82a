"""The writer's uncommitted state: documents added since the last commit and the rows deleted.

:class:`Buffer` holds the added documents as raw counts over the vocabulary (the vocabulary has grown
with their new terms already), their lengths, ids and, for vectorised documents, the caller's tf-idf; a
document deleted before its commit simply leaves the buffer. Deletes of committed documents are kept as
rows per segment until the commit writes them. Nothing here is visible to searches.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


__all__ = ["Buffer"]


class Buffer:
    """Added documents and deletes since the last commit (the writer's lock guards it)."""

    def __init__(self):
        self.batches = []  # (ids, counts CSR, lengths, tfidf or None)
        self.index = {}  # id -> (batch, row) of a buffered document
        self.dropped = set()  # (batch, row) deleted before the commit
        self.deleted = {}  # segment name -> set of committed rows to delete

    def add(self, ids, counts, lengths, tfidf):
        b = len(self.batches)
        self.batches.append((np.asarray(ids), counts, np.asarray(lengths), tfidf))
        for r, d in enumerate(np.asarray(ids).tolist()):
            self.index[d] = (b, r)

    def __contains__(self, doc_id):
        return doc_id in self.index

    def drop(self, ids):
        """Remove the buffered documents among ``ids``; returns the ids found."""
        found = set()
        for d in ids:
            where = self.index.pop(d, None)
            if where is not None:
                self.dropped.add(where)
                found.add(d)
        return found

    @property
    def n_live(self):
        return len(self.index)

    @property
    def size(self):
        return self.n_live + sum(len(rows) for rows in self.deleted.values())

    def __bool__(self):
        return self.size > 0

    def collect(self, n_terms):
        """``(counts, lengths, ids, tfidf)`` of the buffered documents (tfidf None unless every batch has one),
        counts widened to ``n_terms`` columns."""
        parts = []
        for b, (ids, counts, lengths, tfidf) in enumerate(self.batches):
            keep = np.asarray([(b, r) not in self.dropped for r in range(len(ids))], dtype=bool)
            C = sp.csr_matrix(counts)
            C.resize((C.shape[0], n_terms))
            if keep.all():  # no copy
                parts.append((ids, C, lengths, tfidf))
            else:
                parts.append((ids[keep], C[keep], lengths[keep], None if tfidf is None else tfidf[keep]))
        counts = parts[0][1] if len(parts) == 1 else sp.vstack([p[1] for p in parts], format="csr")
        counts.sum_duplicates()
        tfidfs = [p[3] for p in parts]
        tfidf = None
        if all(t is not None for t in tfidfs):
            tfidf = tfidfs[0] if len(tfidfs) == 1 else sp.vstack(tfidfs, format="csr")
        ids = np.concatenate([p[0].astype(str) for p in parts])
        return counts, np.concatenate([p[2] for p in parts]), ids, tfidf

