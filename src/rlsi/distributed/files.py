"""Corpus files read and vectorized on the workers: input that need not fit on the client.

:func:`vectorize_files` turns a list of corpus files (JSON lines, gzip'ed or not, the format of
:func:`rlsi.text.read_jsonl`) into a tf-idf matrix held by the workers in row blocks, one per file,
with the tokenization, pruning and weighting of :class:`rlsi.text.TfidfVectorizer`. Two passes:

1. **Count** (one task per file, where Dask places it): read the file, tokenize every document and count
   its tokens against a vocabulary of the file's own (``TfidfVectorizer``'s counting, columns in order of
   first occurrence). The counts and document lengths |d| stay on the worker; what leaves it is the
   file's document frequency and total count of every term (a dict), reduced by a tree of merges on the
   workers into the corpus's.
2. **Weight** (one task per file, where its counts are): the client applies ``min_df`` / ``max_df`` /
   ``max_features`` to the reduced frequencies exactly as ``TfidfVectorizer.fit`` does (same thresholds,
   same ties, columns sorted alphabetically) and makes the fitted vectorizer; it is sent to the workers
   once, and each file's counts are moved to the final columns and weighted
   (``n(t,d)/|d| · log(N/df(t))``, then the ℓ2 row norm) by the vectorizer's own code.

The result equals ``TfidfVectorizer(...).fit_transform(texts of all files, in order)`` entry for entry
(every weight is computed from the same integers by the same per-row arithmetic; the tests check
equality), and the fitted vectorizer equals the local one. What reaches the client: the vocabulary
(one dict of terms, as a saved model needs anyway) and a few numbers per file; the documents and the
matrix do not.

Files: every path must be readable by the workers (a shared file system, or one machine). A file may be
empty or hold a single document (an empty file gives a block of 0 rows); document ids must be unique
within a file, as :func:`rlsi.text.read_jsonl` requires, but are not compared across files (a missing id
is the line number, which files share). Text folders are not read here (one document per file does not
make row blocks): give JSON lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.base import clone

from .._validation import check_number
from ..errors import CorpusError, RLSIError
from ..io.jsonl import iter_json_lines
from ..text import TfidfVectorizer
from ..text.corpus import _check_unique, _record_id, _record_text, _text_fields
from ..text.vectorize import _count_tokens, _doc_count_threshold, _keep_columns, kept_columns
from .problem import tree_reduce

__all__ = ["WorkerMatrix", "vectorize_files", "fit_vocabulary", "check_distinct_files"]


# ------------------------------------------------------------------ worker side (pure tasks)
@dataclass
class FileCounts:
    """One file's token counts as they live on a worker between the two passes.

    terms : list[str] — the file's own columns, in order of first occurrence; counts : CSR int64
    (n_docs x len(terms)); lengths : int64 (n_docs,), |d| (every token after stop words).
    """

    terms: list
    counts: sp.csr_matrix
    lengths: np.ndarray


def read_texts(path, text_fields):
    """The document texts of one JSON lines file, in order (an empty file gives ``[]``)."""
    ids, texts = [], []
    for lineno, obj in iter_json_lines(path, what="corpus", error=CorpusError):
        ids.append(_record_id(obj.get("id"), lineno, path))
        texts.append(_record_text(obj, text_fields, lineno, path))
    _check_unique(ids, path)
    return texts


def count_file(path, text_fields, vectorizer):
    """Pass 1 on a worker: :class:`FileCounts` of the file at ``path``."""
    vocabulary = {}
    counts, lengths = _count_tokens(read_texts(Path(path), text_fields), vectorizer.build_tokenizer(),
                                    vocabulary, grow=True)
    return FileCounts(list(vocabulary), counts, lengths)


def file_frequencies(fc, with_totals):
    """``(n_docs, {term: df}, {term: total count} or None)`` of one file."""
    df = np.bincount(fc.counts.indices, minlength=len(fc.terms))
    dfs = dict(zip(fc.terms, df.tolist()))
    totals = None
    if with_totals:
        total = np.bincount(fc.counts.indices, weights=fc.counts.data, minlength=len(fc.terms))
        totals = dict(zip(fc.terms, total.tolist()))
    return fc.counts.shape[0], dfs, totals


def merge_frequencies(a, b):
    """The frequencies of two groups of files (new dicts; the larger is copied, the smaller added)."""

    def add(x, y):
        if x is None:
            return None
        if len(x) < len(y):
            x, y = y, x
        out = dict(x)
        for term, n in y.items():
            out[term] = out.get(term, 0) + n
        return out

    return a[0] + b[0], add(a[1], b[1]), add(a[2], b[2])


def weight_file(fc, vectorizer):
    """Pass 2 on a worker: the file's tf-idf rows (CSR n_docs x n_terms of the vectorizer's dtype)."""
    vocab = vectorizer.vocabulary_
    local = np.fromiter((vocab.get(t, -1) for t in fc.terms), dtype=np.int64, count=len(fc.terms))
    kept = np.flatnonzero(local >= 0)
    kept = kept[np.argsort(local[kept])]  # the file's kept columns in the order of the final columns
    compact = _keep_columns(fc.counts, kept, len(fc.terms))  # compact column j = final column local[kept[j]]
    final = local[kept].astype(compact.indices.dtype)
    counts = sp.csr_matrix((compact.data, final[compact.indices], compact.indptr),
                           shape=(compact.shape[0], len(vocab)))
    return vectorizer._weight(counts, fc.lengths)  # increasing map: the indices stay sorted


def block_summary(X):
    """``(rows, nnz)`` of a block."""
    return X.shape[0], X.nnz


# ------------------------------------------------------------------ client side
def fit_vocabulary(vectorizer, n_docs, dfs, totals, what="the corpus files"):
    """A fitted copy of ``vectorizer`` from reduced document frequencies (and total counts when
    ``max_features`` is set): the pruning and column order of :meth:`TfidfVectorizer.fit`."""
    if n_docs == 0:
        raise CorpusError(f"empty corpus: {what} hold no document")
    if not dfs:
        raise CorpusError(f"empty corpus: none of the {n_docs} documents of {what} has a token left after "
                          "tokenization and stop-word removal")
    terms = sorted(dfs)  # the final columns are alphabetical whatever order the terms came in
    df = np.fromiter((dfs[t] for t in terms), dtype=np.int64, count=len(terms))
    kept = kept_columns(vectorizer, terms, df, n_docs, total=lambda: [totals[t] for t in terms])
    fitted = clone(vectorizer)
    fitted._set_vocabulary(terms, df, kept, n_docs)
    return fitted


@dataclass
class WorkerMatrix:
    """A tf-idf matrix held by the workers of ``client`` in row blocks (one per file, in file order).

    blocks : list of futures of CSR (n_f x n_terms); n_rows : list[int] (n_f, zero for an empty file);
    n_terms, nnz, dtype; vectorizer : the fitted TfidfVectorizer (on the client); paths : the files.
    :class:`rlsi.distributed.DaskRLSI` fits it where it lies (``fit(matrix)``, one partition per
    non-empty file). ``gather()`` brings the whole matrix to the client (tests, small corpora).
    """

    client: object
    blocks: list
    n_rows: list
    n_terms: int
    nnz: int
    dtype: np.dtype
    vectorizer: TfidfVectorizer
    paths: list = field(default_factory=list)

    @property
    def shape(self):
        return int(sum(self.n_rows)), int(self.n_terms)

    @property
    def bounds(self):
        """``[(start, stop), ...]`` document ranges of the blocks."""
        edges = np.concatenate([[0], np.cumsum(self.n_rows)]).astype(int)
        return [(int(a), int(b)) for a, b in zip(edges, edges[1:])]

    def gather(self):
        """The whole matrix on the client (CSR n_docs x n_terms)."""
        parts = self.client.gather(self.blocks)
        return sp.vstack(parts, format="csr") if parts else sp.csr_matrix(self.shape, dtype=self.dtype)

    def release(self):
        """Let the workers drop the blocks."""
        for f in self.blocks:
            f.release()
        self.blocks = []


def check_distinct_files(paths):
    """The resolved paths, after refusing a file given twice (its documents would be fitted twice)."""
    resolved, seen = [], {}
    for i, p in enumerate(paths):
        real = str(Path(p).resolve())
        if real in seen:
            raise RLSIError(f"corpus file {p} is given twice (files {seen[real] + 1} and {i + 1}): its documents "
                            f"would be fitted twice; give each file once")
        seen[real] = i
        resolved.append(real)
    return resolved


def vectorize_files(paths, vectorizer=None, *, client, text_fields=("title", "text")):
    """Read and vectorize corpus files on the workers of ``client`` (see the module docstring).

    paths : list of JSON lines files (``.jsonl`` / ``.jsonl.gz``), documents taken in this order;
    vectorizer : an unfitted :class:`rlsi.text.TfidfVectorizer` giving the text parameters (default:
    ``TfidfVectorizer()``); it is not modified. Returns a :class:`WorkerMatrix`; its ``vectorizer`` is
    the fitted copy (what ``TfidfVectorizer.fit`` on the concatenated files would give).
    """
    if isinstance(paths, (str, Path)):
        paths = [paths]
    paths = check_distinct_files(paths)
    if not paths:
        raise RLSIError("vectorize_files needs at least one corpus file")
    vectorizer = TfidfVectorizer() if vectorizer is None else vectorizer
    if not isinstance(vectorizer, TfidfVectorizer):
        raise RLSIError(f"vectorizer={type(vectorizer).__name__} must be a rlsi.text.TfidfVectorizer")
    vectorizer.build_tokenizer()  # the text parameters fail here, before any task runs
    vectorizer._out_dtype()
    check_number("max_features", vectorizer.max_features, low=1, integer=True, allow_none=True)
    _doc_count_threshold("min_df", vectorizer.min_df, 1)
    _doc_count_threshold("max_df", vectorizer.max_df, 1)
    fields = _text_fields(text_fields)
    def submit(fn, *args):
        return client.submit(fn, *args, pure=False)

    counted = [submit(count_file, p, fields, vectorizer) for p in paths]
    with_totals = vectorizer.max_features is not None
    freqs = [submit(file_frequencies, fc, with_totals) for fc in counted]
    n_docs, dfs, totals = client.gather(tree_reduce(submit, merge_frequencies, freqs))
    fitted = fit_vocabulary(vectorizer, n_docs, dfs, totals, what=f"the {len(paths)} corpus file(s)")
    [shared] = client.scatter([fitted], broadcast=True, hash=False)
    blocks = [submit(weight_file, fc, shared) for fc in counted]
    summary = client.gather([submit(block_summary, b) for b in blocks])
    for f in counted + freqs:
        f.release()
    return WorkerMatrix(client, blocks, [s[0] for s in summary], len(fitted.vocabulary_),
                        int(sum(s[1] for s in summary)), np.dtype(fitted._out_dtype()), fitted, paths)
