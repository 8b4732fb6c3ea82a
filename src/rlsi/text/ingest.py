"""Streaming ingestion: JSON-lines corpora (gzip'ed or not, of any size) -> a tf-idf matrix directory.

:func:`ingest` reads the files twice and never holds the text:

1. **vocabulary** — each document is tokenized and its distinct terms counted once (document frequency);
   only the term -> df table, the document ids and the number of documents are kept;
2. **matrix** — the terms kept (``min_df``/``max_df``/``max_features``, as in
   :class:`rlsi.text.TfidfVectorizer`; columns in alphabetical order) are weighted with the idf of the
   whole corpus, and the rows are appended to the ``.npy`` files of a matrix directory
   (:mod:`rlsi.io.matrix`) batch by batch.

The tokenizer, the pruning rules and the weighting are those of :class:`rlsi.text.TfidfVectorizer`
(``vectorizer`` gives its settings; the row weighting is its own ``_weight``), so the matrix and the
vocabulary are exactly what ``TfidfVectorizer(...).fit_transform(read_jsonl(path).texts)`` gives, without
the corpus in memory (tested). The fitted vectorizer is saved in the directory, so a model fitted on the
matrix (``rlsi fit --matrix DIR``) is saved with the vectorizer that maps queries onto its columns.

Documents: as :func:`rlsi.text.read_jsonl` reads them (``text_fields`` joined; the ``"id"`` field, or the
line number; ids unique across all files). With several files a document without an ``"id"`` gets
``FILE_NAME:LINE``. A file that changes between the two passes is refused.

Memory: the vocabulary table of the first pass (every distinct term before pruning: about 100-150 bytes a
term in Python), the ids (N strings), one batch of documents, and O(N) integers; the matrix itself goes to
disk. Progress bars show documents per second.
"""

from __future__ import annotations

import logging
import time
from array import array
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from .._progress import progress_bar
from .._validation import check_number
from ..errors import CorpusError, RLSIError
from ..io.jsonl import iter_json_lines
from .corpus import _record_id, _record_text, _text_fields
from .vectorize import TfidfVectorizer, _count_tokens, _doc_count_threshold, idf_from_df

__all__ = ["ingest", "iter_documents"]

log = logging.getLogger(__name__)

#: Documents per batch (tokenized together; a batch's tokens are held as one int64 array).
BATCH_DOCS = 10_000


def iter_documents(paths, text_fields=("title", "text")):
    """Yield ``(doc_id, text)`` for every document of the JSON-lines files ``paths``, in order."""
    fields = _text_fields(text_fields)
    paths = [Path(p) for p in paths]
    several = len(paths) > 1
    for path in paths:
        for lineno, obj in iter_json_lines(path, what="corpus", error=CorpusError):
            raw_id = obj.get("id")
            doc_id = f"{path.name}:{lineno}" if raw_id is None and several else _record_id(raw_id, lineno, path)
            yield doc_id, _record_text(obj, fields, lineno, path)


def _batches(paths, text_fields, batch_docs):
    ids, texts = [], []
    for doc_id, text in iter_documents(paths, text_fields):
        ids.append(doc_id)
        texts.append(text)
        if len(texts) >= batch_docs:
            yield ids, texts
            ids, texts = [], []
    if texts:
        yield ids, texts


def _distinct_terms(texts, tokenizer, lookup):
    """Provisional columns of the distinct terms of each document (``lookup`` grows: a defaultdict whose
    default is its own length, shared by every batch so that it is never copied). Returns the CSR
    (n_docs x len(lookup)) of ones at each document's distinct terms."""
    indices = array("q")
    lengths = array("q")
    get = lookup.__getitem__
    for text in texts:
        tokens = tokenizer(text)
        lengths.append(len(tokens))
        indices.extend(map(get, tokens))
    n = len(lengths)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.frombuffer(lengths, dtype=np.int64), out=indptr[1:])
    idx = np.frombuffer(indices, dtype=np.int64)
    counts = sp.csr_matrix((np.ones(len(idx), dtype=np.int64), idx, indptr), shape=(n, len(lookup)))
    counts.sum_duplicates()
    return counts


def _kept_terms(vectorizer, terms, df, total, n_docs):
    """The provisional columns kept by ``min_df``/``max_df``/``max_features``, in the fitted column order
    (alphabetical) — the rules of ``TfidfVectorizer._fit``."""
    low = _doc_count_threshold("min_df", vectorizer.min_df, n_docs)
    high = _doc_count_threshold("max_df", vectorizer.max_df, n_docs)
    kept = np.flatnonzero((df >= low) & (df <= high))
    if vectorizer.max_features is not None and len(kept) > vectorizer.max_features:
        by_count = sorted(kept.tolist(), key=lambda j: (-total[j], terms[j]))
        kept = np.asarray(by_count[: vectorizer.max_features], dtype=np.int64)
    if len(kept) == 0:
        raise CorpusError(f"no term left after pruning: min_df={vectorizer.min_df!r} and "
                          f"max_df={vectorizer.max_df!r} keep none of the {len(terms)} terms of "
                          f"{n_docs} documents")
    return np.asarray(sorted(kept.tolist(), key=terms.__getitem__), dtype=np.int64)


def ingest(paths, output, *, vectorizer=None, text_fields=("title", "text"), batch_docs=BATCH_DOCS, verbose=0):
    """Build the vocabulary and the tf-idf matrix of JSON-lines corpora into the matrix directory ``output``.

    paths : one path or a list of ``.jsonl`` / ``.jsonl.gz`` files (read twice: not a pipe).
    vectorizer : an unfitted :class:`TfidfVectorizer` giving the settings (tokenizer, ``min_df``,
        ``max_df``, ``max_features``, ``norm``, ``dtype``); default ``TfidfVectorizer()``. It is fitted in
        place (same attributes as after ``fit`` on the documents) and saved in the directory.
    Returns the fitted vectorizer. Problems with the input raise :class:`rlsi.errors.CorpusError`.
    """
    from ..io.matrix import MatrixWriter
    from ..io.atomic import check_output_dir

    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not paths:
        raise CorpusError("no corpus file given")
    for p in paths:
        if not Path(p).is_file():
            raise CorpusError(f"corpus file not found: {p}" if not Path(p).exists() else
                              f"{p} is not a regular file: ingestion reads its corpus twice (no pipes or folders)")
    vec = TfidfVectorizer() if vectorizer is None else vectorizer
    if not isinstance(vec, TfidfVectorizer):
        raise RLSIError(f"vectorizer must be a TfidfVectorizer, got {type(vec).__name__}")
    tokenizer = vec.build_tokenizer()  # validates the text settings before any reading
    dtype = vec._out_dtype()
    check_number("max_features", vec.max_features, low=1, integer=True, allow_none=True)
    _doc_count_threshold("min_df", vec.min_df, 1)
    _doc_count_threshold("max_df", vec.max_df, 1)
    check_output_dir(output, what="matrix directory", is_ours=lambda p: (Path(p) / "manifest.json").is_file(),
                     kind="an rlsi matrix or model directory", remedy="choose another -o")

    # ---- pass 1: vocabulary and document frequencies
    t0 = time.perf_counter()
    lookup = defaultdict(None)
    lookup.default_factory = lookup.__len__
    df = np.zeros(0, dtype=np.int64)
    total = np.zeros(0, dtype=np.int64)  # occurrences (for max_features)
    want_total = vec.max_features is not None
    ids, seen = [], set()
    bar = progress_bar(None, "vocabulary", verbose=verbose, unit="doc")
    for batch_ids, texts in _batches(paths, text_fields, batch_docs):
        for doc_id in batch_ids:
            if doc_id in seen:
                raise CorpusError(f"duplicate document id {doc_id!r} (document {len(ids) + 1})")
            seen.add(doc_id)
            ids.append(doc_id)
        distinct = _distinct_terms(texts, tokenizer, lookup)
        n_terms = len(lookup)
        df = np.concatenate([df, np.zeros(n_terms - len(df), dtype=np.int64)])
        df += np.bincount(distinct.indices, minlength=n_terms)
        if want_total:
            total = np.concatenate([total, np.zeros(n_terms - len(total), dtype=np.int64)])
            total += np.bincount(distinct.indices, weights=distinct.data, minlength=n_terms).astype(np.int64)
        if bar is not None:
            bar.update(len(texts))
    if bar is not None:
        bar.close()
    del seen
    n_docs = len(ids)
    if n_docs == 0:
        raise CorpusError("empty corpus: no documents to fit the vectorizer on")
    if not lookup:
        raise CorpusError(f"empty corpus: none of the {n_docs} documents has a token left after "
                          "tokenization and stop-word removal")
    terms = list(lookup)  # provisional column j is terms[j]
    del lookup
    order = _kept_terms(vec, terms, df, total, n_docs)
    vec.feature_names_ = [terms[j] for j in order]
    del terms
    vec.vocabulary_ = {t: j for j, t in enumerate(vec.feature_names_)}
    vec.df_ = df[order]
    vec.n_docs_ = int(n_docs)
    vec.idf_ = idf_from_df(vec.df_, vec.n_docs_)
    t1 = time.perf_counter()
    log.info("vocabulary: %d documents, %d terms kept, %.1f s (%.0f documents/s)", n_docs, len(order),
             t1 - t0, n_docs / max(t1 - t0, 1e-9))

    # ---- pass 2: the weighted rows, appended to the matrix directory
    nnz_bound = int(vec.df_.sum())  # every kept term of every document, before idf-0 entries are dropped
    meta = {"weighting": "tfidf", "norm": vec.norm,
            "source": {"files": [str(Path(p).resolve()) for p in paths], "text_fields": list(text_fields)}}
    seen_docs = 0
    with MatrixWriter(output, n_cols=len(vec.feature_names_), dtype=dtype, max_nnz=nnz_bound, meta=meta) as writer:
        bar = progress_bar(n_docs, "matrix", verbose=verbose, unit="doc")
        for batch_ids, texts in _batches(paths, text_fields, batch_docs):
            if batch_ids != ids[seen_docs: seen_docs + len(batch_ids)]:
                raise CorpusError(f"the corpus changed while it was read (document {seen_docs + 1} differs "
                                  f"between the two passes); ingest a file that is not being written")
            seen_docs += len(batch_ids)
            counts, lengths = _count_tokens(texts, tokenizer, vec.vocabulary_, grow=False)
            writer.append(vec._weight(counts, lengths), doc_lengths=lengths)
            if bar is not None:
                bar.update(len(texts))
        if bar is not None:
            bar.close()
        if seen_docs != n_docs:
            raise CorpusError(f"the corpus changed while it was read ({n_docs} documents, then {seen_docs}); "
                              f"ingest a file that is not being written")
        writer.doc_ids = ids
        writer.vectorizer = vec
        nnz = writer.nnz
    t2 = time.perf_counter()
    log.info("matrix: %d x %d, nnz %d, %.1f s (%.0f documents/s); %.1f s in all", n_docs, len(vec.feature_names_),
             nnz, t2 - t1, n_docs / max(t2 - t1, 1e-9), t2 - t0)
    return vec
