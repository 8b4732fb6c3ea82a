"""Streaming ingestion: JSON-lines corpora (gzip'ed or not, of any size) -> a tf-idf matrix directory.

:func:`ingest` reads the files once and never holds the text:

1. **vocabulary** — each document is tokenized, its distinct terms counted once (document frequency), and
   the provisional column of every token appended to a scratch file (4 bytes a token, next to the output,
   removed at the end). The terms live in numpy arrays (:class:`rlsi.text.vocab.TermStore`: UTF-8 bytes,
   64-bit keys sorted for lookup, a second 64-bit fingerprint that detects key collisions, df and counts;
   about 50 bytes a term against about 150 in a Python ``dict``); only a batch's distinct terms are Python
   objects, for the time of the batch. A detected collision (about 10⁻⁶ at 7M terms) starts the pass again
   with another hash seed. Provisional columns are in order of first appearance, as a ``dict`` gives them;
2. **matrix** — the terms kept (``min_df``/``max_df``/``max_features``, as in
   :class:`rlsi.text.TfidfVectorizer`; columns in alphabetical order) are weighted with the idf of the
   whole corpus: the rows are rebuilt batch by batch from the scratch file (no second tokenization) and
   appended to the ``.npy`` files of a matrix directory (:mod:`rlsi.io.matrix`), with the raw count of
   every entry (what BM25 needs: :meth:`rlsi.retrieval.Searcher.from_matrix`).

The tokenizer, the pruning rules and the weighting are those of :class:`rlsi.text.TfidfVectorizer`
(``vectorizer`` gives its settings; the row weighting is its own ``_weight``), so the matrix and the
vocabulary are exactly what ``TfidfVectorizer(...).fit_transform(read_jsonl(path).texts)`` gives, without
the corpus in memory (tested). The fitted vectorizer is saved in the directory, so a model fitted on the
matrix (``rlsi fit --matrix DIR``) is saved with the vectorizer that maps queries onto its columns.

Documents: as :func:`rlsi.text.read_jsonl` reads them (``text_fields`` joined; the ``"id"`` field, or the
line number; ids unique across all files). With several files a document without an ``"id"`` gets
``FILE_NAME:LINE``.

Memory: the term arrays of the first pass (every distinct term before pruning: about 40 bytes plus its
UTF-8 length), then the fitted vectorizer (a ``dict`` and a list of the *kept* terms: what
:class:`TfidfVectorizer` holds, about 150 bytes a kept term), the ids (N strings), one batch of documents,
and O(N) integers; the matrix itself goes to disk. Disk: the matrix plus 4 bytes a token of scratch.
Progress bars show documents per second.
"""

from __future__ import annotations

import logging
import shutil
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
from .vectorize import TfidfVectorizer, _doc_count_threshold, kept_columns
from .vocab import HashCollision, TermSequence, TermStore, check_term_count

__all__ = ["ingest", "iter_documents"]

log = logging.getLogger(__name__)

#: Documents per batch (tokenized together; a batch's tokens are held as one int64 array).
BATCH_DOCS = 10_000

#: Documents whose distinct terms are gathered in a dict before they go to the term store together (each
#: time one merge of the store's sorted keys: O(terms seen)).
VOCAB_DOCS = 2_000

#: Vocabulary passes tried (hash seeds 0, 1, ...) when two terms share a 64-bit key (:mod:`rlsi.text.vocab`).
HASH_ATTEMPTS = 3


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
    """Local columns of the tokens of each document (``lookup`` grows: a defaultdict whose default is its
    own length; one per batch, its terms then go to the :class:`TermStore`).

    Returns ``(tokens, lengths, distinct)``: the provisional column of every token in order (int64), |d|
    of each document, and the CSR (n_docs x len(lookup)) of each document's distinct terms with their counts."""
    indices = array("q")
    lengths = array("q")
    get = lookup.__getitem__
    for text in texts:
        tokens = tokenizer(text)
        lengths.append(len(tokens))
        indices.extend(map(get, tokens))
    n = len(lengths)
    lengths = np.frombuffer(lengths, dtype=np.int64)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    tokens = np.frombuffer(indices, dtype=np.int64)
    distinct = sp.csr_matrix((np.ones(len(tokens), dtype=np.int64), tokens.copy(), indptr), shape=(n, len(lookup)))
    distinct.sum_duplicates()
    return tokens, lengths, distinct


def _counts(tokens, lengths, remap, n_terms):
    """Term counts of a batch from its cached provisional token columns: CSR (n_docs x n_terms) of int64
    counts, sorted indices, tokens of pruned terms dropped — what ``_count_tokens(..., grow=False)`` gives
    for the same documents and the fitted vocabulary."""
    cols = remap[tokens]
    known = cols >= 0
    indptr = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    cum = np.zeros(len(cols) + 1, dtype=np.int64)
    np.cumsum(known, out=cum[1:])
    cols, indptr = cols[known], cum[indptr]
    itype = np.int32 if max(len(cols), n_terms) < 2**31 else np.int64
    counts = sp.csr_matrix((np.ones(len(cols), dtype=np.int64), cols.astype(itype), indptr.astype(itype)),
                           shape=(len(lengths), n_terms))
    counts.sum_duplicates()
    return counts


def _release_free_memory():
    """Hand the heap's free pages back to the system (glibc's ``malloc_trim``; nothing elsewhere): a batch's
    temporaries (its distinct terms as Python objects, the token arrays) are freed, but without this the
    freed heap is kept and fragments batch after batch (measured, while the batch dicts still waited for
    the cyclic GC: 637 -> 599 MB peak on a 1.1M-term corpus; not measured alone since)."""
    global _MALLOC_TRIM
    if _MALLOC_TRIM is None:
        try:
            import ctypes

            _MALLOC_TRIM = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _MALLOC_TRIM = False
    if _MALLOC_TRIM:
        _MALLOC_TRIM(0)


_MALLOC_TRIM = None


def _vocabulary_pass(paths, text_fields, batch_docs, tokenizer, token_file, *, seed, verbose):
    """Pass 1: every document tokenized once; a batch's distinct terms go to a :class:`TermStore` (no
    Python object per term outlives its batch), each token's provisional column (the store's id: the order
    of first appearance) to ``token_file`` as int32.

    Returns ``(store, ids, lengths)``: the vocabulary with df and counts, the document ids (list of str) and
    |d| of each document (list of int64 arrays, one per batch). Raises :class:`HashCollision` (start again
    with another ``seed``) and :class:`CorpusError` (duplicate ids, damaged input)."""
    store = TermStore(seed=seed)
    ids, seen, lengths = [], set(), []
    bar = progress_bar(None, "vocabulary", verbose=verbose, unit="doc")
    try:
        with open(token_file, "wb") as cache:
            for batch_ids, texts in _batches(paths, text_fields, batch_docs):
                for doc_id in batch_ids:
                    if doc_id in seen:
                        raise CorpusError(f"duplicate document id {doc_id!r} (document {len(ids) + 1})")
                    seen.add(doc_id)
                    ids.append(doc_id)
                # the distinct terms of VOCAB_DOCS documents at a time are Python objects (a dict), then
                # go to the store: fewer documents, fewer such objects alive at once
                for d0 in range(0, len(texts), VOCAB_DOCS):
                    local = defaultdict(None)  # these documents' terms -> local column
                    local.default_factory = local.__len__
                    tokens, sub_lengths, distinct = _distinct_terms(texts[d0: d0 + VOCAB_DOCS], tokenizer, local)
                    n_local = len(local)
                    column = store.add_batch(list(local), np.bincount(distinct.indices, minlength=n_local),
                                             np.bincount(tokens, minlength=n_local))
                    local.default_factory = None  # its own __len__: a reference cycle, left to the
                    del local                     # cyclic GC (gen 2) otherwise, with all its terms
                    check_term_count(len(store), len(ids))
                    cache.write(memoryview(column[tokens].astype(np.int32)).cast("B"))
                    lengths.append(sub_lengths.copy())
                    del tokens, distinct, column
                _release_free_memory()
                if bar is not None:
                    bar.update(len(texts))
    finally:
        if bar is not None:
            bar.close()
    return store, ids, lengths


def ingest(paths, output, *, vectorizer=None, text_fields=("title", "text"), batch_docs=BATCH_DOCS, verbose=0):
    """Build the vocabulary and the tf-idf matrix of JSON-lines corpora into the matrix directory ``output``.

    paths : one path or a list of ``.jsonl`` / ``.jsonl.gz`` files (read once, but not from a pipe).
    vectorizer : an unfitted :class:`TfidfVectorizer` giving the settings (tokenizer, ``min_df``,
        ``max_df``, ``max_features``, ``norm``, ``dtype``); default ``TfidfVectorizer()``. It is fitted in
        place (same attributes as after ``fit`` on the documents) and saved in the directory.
    Returns the fitted vectorizer. Problems with the input raise :class:`rlsi.errors.CorpusError`.
    """
    from ..io.matrix import MatrixWriter
    from ..io.atomic import os_error_reason, scratch_dir
    from ..io.kinds import check_destination

    paths = [paths] if isinstance(paths, (str, Path)) else list(paths)
    if not paths:
        raise CorpusError("no corpus file given")
    for p in paths:
        if not Path(p).is_file():
            raise CorpusError(f"corpus file not found: {p}" if not Path(p).exists() else
                              f"{p} is not a regular file: give .jsonl or .jsonl.gz files")
    vec = TfidfVectorizer() if vectorizer is None else vectorizer
    if not isinstance(vec, TfidfVectorizer):
        raise RLSIError(f"vectorizer must be a TfidfVectorizer, got {type(vec).__name__}")
    tokenizer = vec.build_tokenizer()  # validates the text settings before any reading
    dtype = vec._out_dtype()
    check_number("max_features", vec.max_features, low=1, integer=True, allow_none=True)
    _doc_count_threshold("min_df", vec.min_df, 1)
    _doc_count_threshold("max_df", vec.max_df, 1)
    check_destination(output, kind="matrix", reads=paths, what="matrix directory")

    # ---- pass 1: vocabulary, document frequencies, and the token columns cached on disk
    t0 = time.perf_counter()
    output = Path(output)
    scratch = scratch_dir(output, "ingest")
    try:
        token_file = scratch / "tokens.bin"
        for attempt in range(HASH_ATTEMPTS):
            try:
                store, ids, lengths = _vocabulary_pass(paths, text_fields, batch_docs, tokenizer, token_file,
                                                       seed=attempt, verbose=verbose)
                break
            except HashCollision as exc:
                if attempt + 1 == HASH_ATTEMPTS:
                    raise CorpusError(f"{exc} in each of {HASH_ATTEMPTS} vocabulary passes with different seeds: "
                                      "report this corpus (the chance is about 10^-6 a pass at 7M terms)") from None
                log.warning("%s: vocabulary pass started again with hash seed %d", exc, attempt + 1)
        n_docs = len(ids)
        if n_docs == 0:
            raise CorpusError("empty corpus: no documents to fit the vectorizer on")
        if not len(store):
            raise CorpusError(f"empty corpus: none of the {n_docs} documents has a token left after "
                              "tokenization and stop-word removal")
        n_seen, store_bytes = len(store), store.nbytes
        # only the terms min_df/max_df keep are decoded (kept_columns applies the same rule again, and
        # max_features and the alphabetical order, on them)
        df = store.df
        cand = np.flatnonzero((df >= _doc_count_threshold("min_df", vec.min_df, n_docs))
                              & (df <= _doc_count_threshold("max_df", vec.max_df, n_docs)))
        if len(cand) == 0:  # kept_columns says so, with the number of terms seen
            kept_columns(vec, TermSequence(store), df, n_docs, total=lambda s=store: s.total)
        terms, cand_df, cand_total = store.terms(cand), df[cand], store.total[cand]
        del store, df  # before the vectorizer's dict of the kept terms is built
        pos = kept_columns(vec, terms, cand_df, n_docs, total=lambda t=cand_total: t)
        order = cand[pos]
        vec._set_vocabulary(terms, cand_df, pos, n_docs)
        del terms, cand_df, cand_total, cand
        _release_free_memory()  # the term arrays and the sort's temporaries, before the matrix pass
        log.info("vocabulary: %d distinct terms in %.0f MB of arrays, %d kept", n_seen, store_bytes / 2**20,
                 len(order))
        remap = np.full(n_seen, -1, dtype=np.int64)  # provisional column -> fitted column (-1: pruned)
        remap[order] = np.arange(len(order))
        lengths = np.concatenate(lengths)
        starts = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(lengths, out=starts[1:])
        t1 = time.perf_counter()
        log.info("vocabulary: %d documents, %d terms kept, %.1f s (%.0f documents/s)", n_docs, len(order),
                 t1 - t0, n_docs / max(t1 - t0, 1e-9))

        # ---- pass 2: the weighted rows from the cached token columns, appended to the matrix directory
        nnz_bound = int(vec.df_.sum())  # every kept term of every document, before idf-0 entries are dropped
        meta = {"weighting": "tfidf", "norm": vec.norm,
                "source": {"files": [str(Path(p).resolve()) for p in paths], "text_fields": list(text_fields)}}
        n_terms = len(vec.feature_names_)
        cached = np.memmap(token_file, dtype=np.int32, mode="r") if starts[-1] else np.zeros(0, dtype=np.int32)
        with MatrixWriter(output, n_cols=n_terms, dtype=dtype, max_nnz=nnz_bound, meta=meta) as writer:
            bar = progress_bar(n_docs, "matrix", verbose=verbose, unit="doc")
            for d0 in range(0, n_docs, batch_docs):
                d1 = min(n_docs, d0 + batch_docs)
                counts = _counts(np.asarray(cached[starts[d0]:starts[d1]]), lengths[d0:d1], remap, n_terms)
                writer.append(vec._weight(counts, lengths[d0:d1]), doc_lengths=lengths[d0:d1], counts=counts)
                if bar is not None:
                    bar.update(d1 - d0)
            if bar is not None:
                bar.close()
            writer.doc_ids = ids
            writer.vectorizer = vec
            nnz = writer.nnz
        del cached
    except OSError as exc:  # the scratch file (the matrix itself is written by MatrixWriter, which says so)
        raise RLSIError(f"cannot write the scratch files of {output} in {scratch.parent}: "
                        f"{os_error_reason(exc)}") from None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    t2 = time.perf_counter()
    log.info("matrix: %d x %d, nnz %d, %.1f s (%.0f documents/s); %.1f s in all", n_docs, len(vec.feature_names_),
             nnz, t2 - t1, n_docs / max(t2 - t1, 1e-9), t2 - t0)
    return vec
