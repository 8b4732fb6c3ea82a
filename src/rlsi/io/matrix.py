"""The rlsi matrix directory: a documents x terms matrix on disk, written by streaming and memory-mapped
on load (``rlsi synth``, ``rlsi ingest``, ``rlsi fit --matrix``).

A matrix directory *is* an rlsi model directory (:mod:`rlsi.io.store`): the same ``manifest.json``
and one ``.npy`` file per array, so it is read by the same checked, pickle-free loader. It holds the
component ``matrix`` (class ``CorpusMatrix``) and, when it was built from text, the fitted
``vectorizer`` (a :class:`rlsi.text.TfidfVectorizer`, so that a model fitted on the matrix can be
saved with the vectorizer that maps queries onto the same columns)::

    MATRIX_DIR/
      manifest.json               components: matrix (CorpusMatrix) [, vectorizer (TfidfVectorizer)]
      matrix.X.data.npy           (nnz,)  float32 or float64: the weights, row by row
      matrix.X.indices.npy        (nnz,)  int32, or int64 when nnz or the columns need it
      matrix.X.indptr.npy         (N+1,)  same integer type as indices
      matrix.counts.npy           (nnz,)  int32: raw term counts n(t, d), aligned with X.data (same
                                          indices and indptr); absent in older directories
      matrix.doc_lengths.npy      (N,)    int64: |d|, the tokens of each document (tf denominators)
      matrix.doc_ids.npy          (N,)    unicode: document ids (ingested corpora)
      matrix.doc_topics.npy       (N, k)  int32: planted topics, -1 = none (synthetic corpora)
      matrix.topic_terms.npy      (T, V)  int64: the term slice of each planted topic (synthetic corpora)
      vectorizer.*.npy            vocabulary, df, idf (ingested corpora)

``counts`` are what BM25 needs (:meth:`CorpusMatrix.count_matrix`, used by
:meth:`rlsi.retrieval.Searcher.from_matrix`): the raw count of every stored entry of X, sharing X's
structure. An entry whose tf-idf weight is 0 (a term in every document: idf ``log(N/N) = 0``) is not
stored in X, so its count is not stored either. Directories written before counts existed load as
before (``counts`` is None); only building a BM25 index from them is refused.

``meta`` of the matrix records how it was made (``weighting``, ``norm``, ``source``: the generator's
parameters or the ingested files).

Loading (:func:`load_matrix`) treats the directory as untrusted input, like a model: every path stays
inside the folder, every ``.npy`` header is checked before any data is read, the CSR structure is
checked in full (row pointers, every column index in range) and every weight is finite — chunk by
chunk, so a memory-mapped matrix is never copied whole (the raw counts: their type and shape on
load, their values on first use, :meth:`CorpusMatrix.count_matrix`, so that a fit, which never reads
them, does not page them in). Every problem raises
:class:`rlsi.errors.ModelFormatError` with one line. With ``mmap=True`` (the default) the arrays are
read-only memory maps: the matrix costs page cache, not private memory, and a fit reads it in place.

Writing (:class:`MatrixWriter`) appends row blocks to ``.npy`` files whose headers are written last (a
fixed-size header slot is reserved first), so a matrix larger than memory never exists in memory; the
whole directory appears at once when it is complete (:func:`rlsi.io.atomic.atomic_dir`).
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.lib import format as npy_format

from ..errors import ModelFormatError, RLSIError
from .atomic import atomic_dir
from .integrity import record_digests, seal
from .store import (FORMAT, FORMAT_VERSION, MANIFEST, _check_replaceable, check_array_to_save, load, read_manifest,
                    register)

__all__ = ["CorpusMatrix", "MatrixWriter", "load_matrix", "save_matrix", "index_dtype"]

COMPONENT = "matrix"
_STATE_VERSION = 1
#: Bytes reserved for the header of a streamed 1-D ``.npy`` file (numpy pads headers to 64 bytes; a 1-D
#: header is 128 bytes whatever the length).
_HEADER_SLOT = 128
_CHUNK = 1 << 22


def index_dtype(nnz, n_cols):
    """int32 when every index and row pointer fits, else int64 (scipy keeps one type for both)."""
    return np.dtype(np.int32) if max(int(nnz), int(n_cols)) < 2**31 else np.dtype(np.int64)


def _header_dict(dtype, n):
    return {"descr": npy_format.dtype_to_descr(np.dtype(dtype)), "fortran_order": False, "shape": (int(n),)}


class _NpyStream:
    """A 1-D ``.npy`` file written by appending blocks; the header (with the final length) goes last."""

    def __init__(self, path, dtype):
        self.path = Path(path)
        self.dtype = np.dtype(dtype)
        self.n = 0
        self._f = open(self.path, "wb")
        npy_format.write_array_header_1_0(self._f, _header_dict(self.dtype, 0))
        if self._f.tell() != _HEADER_SLOT:  # pragma: no cover - numpy changed its header padding
            raise RuntimeError(f"unexpected .npy header size {self._f.tell()}")

    def append(self, values):
        block = np.ascontiguousarray(values, dtype=self.dtype)
        self._f.write(memoryview(block).cast("B"))
        self.n += block.size

    def close(self):
        """Write the header with the final length; returns the manifest entry."""
        self._f.seek(0)
        npy_format.write_array_header_1_0(self._f, _header_dict(self.dtype, self.n))
        if self._f.tell() != _HEADER_SLOT:  # a length beyond ~10^40 digits: impossible
            raise RuntimeError("the .npy header outgrew its slot")
        self._f.close()
        return {"file": self.path.name, "dtype": str(self.dtype), "shape": [self.n]}

    def abort(self):
        self._f.close()


def _dense_entry(directory, stem, arr):
    check_array_to_save(np.asarray(arr), stem)
    fname = f"{stem}.npy"
    np.save(Path(directory) / fname, np.ascontiguousarray(arr), allow_pickle=False)
    return {"kind": "dense", "file": fname, "dtype": str(arr.dtype), "shape": list(arr.shape)}


class MatrixWriter:
    """Write a matrix directory row block by row block (a context manager).

    Example::

        with MatrixWriter("corpus_dir", n_cols=M, dtype=np.float32, max_nnz=bound) as w:
            for X_block, lengths, counts in blocks:
                w.append(X_block, doc_lengths=lengths, counts=counts)
            w.meta["source"] = {...}
            w.vectorizer = fitted_vectorizer          # optional

    n_cols : number of columns (terms). dtype : float32 or float64 (blocks are cast).
    max_nnz : an upper bound of the number of stored entries (it decides int32 or int64 indices); the
        writer refuses more.
    ``scratch(name, dtype)`` gives a temporary 1-D stream inside the folder being written (removed at the
    end), for writers that need a second pass (the synthetic generator keeps its counts there).
    Nothing is visible at ``path`` until the block ends without error; an existing matrix (or model)
    directory is replaced only then.
    """

    def __init__(self, path, *, n_cols, dtype=np.float64, max_nnz, meta=None):
        self.path = Path(path)
        self.n_cols = int(n_cols)
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
            raise RLSIError(f"dtype={dtype!r} is not supported; use float32 or float64")
        self.itype = index_dtype(max_nnz, n_cols)
        self.max_nnz = int(max_nnz)
        self.meta = dict(meta or {})
        self.vectorizer = None
        self.doc_ids = None
        self.extra = {}  # name -> dense ndarray (doc_topics, topic_terms)
        _check_replaceable(self.path, "matrix")

    def __enter__(self):
        self._ctx = atomic_dir(self.path)
        self.tmp = self._ctx.__enter__()
        stem = f"{COMPONENT}.X"
        self._data = _NpyStream(self.tmp / f"{stem}.data.npy", self.dtype)
        self._indices = _NpyStream(self.tmp / f"{stem}.indices.npy", self.itype)
        self._indptr = [np.zeros(1, dtype=np.int64)]
        self._lengths = []
        self._counts = _NpyStream(self.tmp / f"{COMPONENT}.counts.npy", np.int32)
        self._count_blocks = 0
        self._blocks = 0
        self._scratch = []
        self.n_rows = 0
        self.nnz = 0
        return self

    def scratch(self, name, dtype):
        """A temporary :class:`_NpyStream` in the folder being written (deleted when the writer ends)."""
        stream = _NpyStream(self.tmp / f".scratch.{name}.npy", dtype)
        self._scratch.append(stream)
        return stream

    def append(self, X, *, doc_lengths=None, counts=None):
        """Append the rows of CSR ``X`` (n x n_cols; indices sorted within rows) and their |d|.

        counts : optional CSR of raw term counts of the same rows, whose entries include every stored
            entry of X (X is the weighting of ``counts`` with its zero weights dropped); the count of each
            entry of X is stored (give counts with every block, or with none)."""
        X = sp.csr_matrix(X)
        if X.shape[1] != self.n_cols:
            raise ValueError(f"block has {X.shape[1]} columns, the matrix {self.n_cols}")
        if self.nnz + X.nnz > self.max_nnz:
            raise ValueError(f"more than max_nnz={self.max_nnz} entries")
        if doc_lengths is not None and len(doc_lengths) != X.shape[0]:
            raise ValueError("one length per row")
        if not X.has_sorted_indices:
            X.sort_indices()
        if counts is not None:
            self._counts.append(_aligned_counts(X, counts))
            self._count_blocks += 1
        self._data.append(X.data)
        self._indices.append(X.indices)
        self._indptr.append(np.asarray(X.indptr[1:], dtype=np.int64) + self.nnz)
        if doc_lengths is not None:
            self._lengths.append(np.asarray(doc_lengths, dtype=np.int64))
        self.n_rows += X.shape[0]
        self.nnz += X.nnz
        self._blocks += 1

    def __exit__(self, exc_type, exc, tb):
        error = None
        if exc_type is None:
            try:
                self._finish()
            except BaseException as e:  # the folder is removed, and the error raised
                error = e
                exc_type, exc, tb = type(e), e, e.__traceback__
        if exc_type is not None:
            self._data.abort()
            self._indices.abort()
            self._counts.abort()
            self._close_scratch()
        suppressed = self._ctx.__exit__(exc_type, exc, tb)
        if error is not None:
            raise error
        return suppressed

    def _close_scratch(self):
        for s in self._scratch:
            s.abort()
            try:
                os.unlink(s.path)
            except OSError:
                pass

    def _finish(self):
        from .. import __version__

        self._close_scratch()
        stem = f"{COMPONENT}.X"
        parts = {"data": self._data.close(), "indices": self._indices.close()}
        indptr = np.concatenate(self._indptr).astype(self.itype)
        parts["indptr"] = _dense_entry(self.tmp, f"{stem}.indptr", indptr)
        parts["indptr"].pop("kind")
        arrays = {"X": {"kind": "csr", "shape": [self.n_rows, self.n_cols], "parts": parts}}
        counts = self._counts.close()
        if self._count_blocks:
            if self._count_blocks != self._blocks:
                raise ValueError("counts given for some blocks only")
            arrays["counts"] = counts
        else:
            os.unlink(self._counts.path)
        if self._lengths:
            lengths = np.concatenate(self._lengths)
            if len(lengths) != self.n_rows:
                raise ValueError("doc_lengths given for some blocks only")
            arrays["doc_lengths"] = _dense_entry(self.tmp, f"{COMPONENT}.doc_lengths", lengths)
        if self.doc_ids is not None:
            from .ids import check_ids

            ids = check_ids(self.doc_ids, f"document ids of {self.path}")
            if ids.shape != (self.n_rows,):
                raise ValueError("one id per row")
            arrays["doc_ids"] = _dense_entry(self.tmp, f"{COMPONENT}.doc_ids", ids)
        for name, arr in self.extra.items():
            arrays[name] = _dense_entry(self.tmp, f"{COMPONENT}.{name}", np.asarray(arr))
        meta = {"state_version": _STATE_VERSION, "n_docs": self.n_rows, "n_terms": self.n_cols,
                "nnz": self.nnz, **self.meta}
        components = {COMPONENT: {"class": CorpusMatrix._persist_name, "meta": meta, "arrays": arrays}}
        if self.vectorizer is not None:
            vmeta, varrays = self.vectorizer._to_state()
            if len(varrays["vocabulary"]) != self.n_cols:
                raise ValueError("the vectorizer's vocabulary does not match the columns")
            entries = {key: _dense_entry(self.tmp, f"vectorizer.{key}", np.asarray(value))
                       for key, value in varrays.items()}
            components["vectorizer"] = {"class": type(self.vectorizer)._persist_name, "meta": vmeta,
                                        "arrays": entries}
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "rlsi_version": __version__,
                    "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
                    "kind": "matrix", "components": components}
        (self.tmp / MANIFEST).write_text(seal(record_digests(self.tmp, manifest)), encoding="utf-8")


def _aligned_counts(X, C):
    """The count of every stored entry of ``X`` (int32, X.nnz), taken from the counts CSR ``C`` whose
    entries include X's (both with sorted indices); ValueError if one is missing or not a count."""
    C = sp.csr_matrix(C)
    if C.shape != X.shape:
        raise ValueError(f"counts of shape {C.shape} for a block of shape {X.shape}")
    if not C.has_sorted_indices:
        C = C.sorted_indices()
    if C.dtype.kind not in "iuf":
        raise ValueError(f"counts of dtype {C.dtype}")
    if C.nnz == X.nnz and np.array_equal(C.indptr, X.indptr) and np.array_equal(C.indices, X.indices):
        values = C.data
    else:  # X dropped the entries of zero weight: find X's entries among C's by (row, column) key
        n, m = X.shape
        key_x = np.repeat(np.arange(n, dtype=np.int64), np.diff(X.indptr)) * m + X.indices
        key_c = np.repeat(np.arange(n, dtype=np.int64), np.diff(C.indptr)) * m + C.indices
        pos = np.minimum(np.searchsorted(key_c, key_x), max(len(key_c) - 1, 0))
        if len(key_x) and (not len(key_c) or not np.array_equal(key_c[pos], key_x)):
            raise ValueError("an entry of X has no count")
        values = C.data[pos]
    if values.size and (values.min() < 1 or values.max() >= 2**31 or not np.all(values == np.floor(values))):
        raise ValueError("counts must be whole numbers in [1, 2^31)")
    return values.astype(np.int32)


@register("CorpusMatrix")
class CorpusMatrix:
    """A loaded matrix directory's matrix: ``X`` (CSR, N x M, possibly memory-mapped), ``counts`` (int
    (nnz,) aligned with ``X.data``, or None for directories written without), ``doc_lengths``
    (int64 (N,) or None), ``doc_ids`` (str ndarray (N,) or None), ``extra`` (dict of planted structure),
    ``meta`` (dict: weighting, norm, source) and, from :func:`load_matrix`, ``vectorizer`` (or None)."""

    def __init__(self, X, *, counts=None, doc_lengths=None, doc_ids=None, extra=None, meta=None):
        self.X = X
        self.counts = counts
        self.doc_lengths = doc_lengths
        self.doc_ids = doc_ids
        self.extra = dict(extra or {})
        self.meta = dict(meta or {})
        self.vectorizer = None

    @property
    def n_terms_(self):
        """Number of columns (checked against the vectorizer's vocabulary on load)."""
        return int(self.X.shape[1])

    @property
    def shape(self):
        return self.X.shape

    def count_matrix(self):
        """Raw term counts as a CSR (N x M) sharing X's indices and indptr (no copy of a memory map).

        Raises :class:`RLSIError` for a directory written without counts, and
        :class:`ModelFormatError` for damaged counts (checked here, on first use, rather than on load)."""
        if self.counts is None:
            where = getattr(self, "path", None)
            raise RLSIError(f"the matrix directory{' ' + str(where) if where else ''} holds no raw term counts "
                            "(written by an older rlsi), which BM25 needs: write it again with this rlsi's "
                            "'rlsi synth' or 'rlsi ingest', or use the vsm term model")
        if not getattr(self, "_counts_checked", False):
            # checked on first use, not on load: a fit never reads the counts, and scanning them would
            # bring nnz x 4 bytes of mapped pages into its resident memory
            _checked_ints(self.counts, "counts", (self.X.nnz,), 1, 2**31 - 1)
            self._counts_checked = True
        C = sp.csr_matrix((self.counts, self.X.indices, self.X.indptr), shape=self.X.shape, copy=False)
        C.has_sorted_indices = self.X.has_sorted_indices
        return C

    def _to_state(self):
        arrays = {"X": self.X}
        for key in ("counts", "doc_lengths", "doc_ids"):
            if getattr(self, key) is not None:
                arrays[key] = getattr(self, key)
        arrays.update(self.extra)
        meta = {"state_version": _STATE_VERSION, "n_docs": int(self.X.shape[0]), "n_terms": int(self.X.shape[1]),
                "nnz": int(self.X.nnz), **{k: v for k, v in self.meta.items()
                                           if k not in ("state_version", "n_docs", "n_terms", "nnz")}}
        return meta, arrays

    @classmethod
    def _from_state(cls, meta, arrays):
        if meta.get("state_version") != _STATE_VERSION:
            raise ModelFormatError(f"unsupported matrix state version {str(meta.get('state_version'))[:20]!r} "
                                   f"(this rlsi reads {_STATE_VERSION}): upgrade rlsi")
        X = arrays.get("X")
        if not sp.issparse(X):
            raise ModelFormatError("the matrix X is missing or not a sparse (csr) array")
        N, M = X.shape
        for key, want in (("n_docs", N), ("n_terms", M), ("nnz", X.nnz)):
            value = meta.get(key)
            if not isinstance(value, int) or isinstance(value, bool):
                raise ModelFormatError(f"meta.{key} must be an integer, got {repr(value)[:20]} "
                                       f"({type(value).__name__})")
            if value != want:
                raise ModelFormatError(f"meta.{key} is {value} but X has {want} "
                                       f"{dict(n_docs='rows', n_terms='columns', nnz='stored entries')[key]}")
        check_sorted_rows(X)
        known = {"X", "counts", "doc_lengths", "doc_ids", "doc_topics", "topic_terms"}
        odd = sorted(set(arrays) - known)
        if odd:
            raise ModelFormatError(f"unexpected arrays {odd[:5]}")
        lengths = _checked_ints(arrays.get("doc_lengths"), "doc_lengths", (N,), 0, 2**62)
        counts = arrays.get("counts")
        if counts is not None:  # type and shape now; the values when first used (count_matrix)
            _check_int_array(counts, "counts", (X.nnz,))
        ids = arrays.get("doc_ids")
        if ids is not None and (not isinstance(ids, np.ndarray) or ids.dtype.kind != "U" or ids.shape != (N,)):
            raise ModelFormatError(f"doc_ids must be {N} strings")
        extra = {}
        topic_terms = arrays.get("topic_terms")
        if topic_terms is not None:
            if topic_terms.ndim != 2:
                raise ModelFormatError("topic_terms must be a 2-D array")
            extra["topic_terms"] = _checked_ints(topic_terms, "topic_terms", topic_terms.shape, 0, M - 1)
        doc_topics = arrays.get("doc_topics")
        if doc_topics is not None:
            n_topics = topic_terms.shape[0] if topic_terms is not None else 2**31
            shape = (N, doc_topics.shape[1] if doc_topics.ndim == 2 else -1)
            extra["doc_topics"] = _checked_ints(doc_topics, "doc_topics", shape, -1, n_topics - 1)
        return cls(X, counts=counts, doc_lengths=lengths, doc_ids=ids, extra=extra, meta=meta)


def check_sorted_rows(X):
    """The column indices of every row of ``X`` strictly increase (sorted, no duplicates), read in chunks of
    about 4M entries (a memory map is never copied whole, nor written to); ModelFormatError otherwise.
    Marks X as canonical, so that scipy never sorts it in place (a read-only map cannot be)."""
    indptr, indices = X.indptr, X.indices
    N = X.shape[0]
    r0 = 0
    while r0 < N:
        r1 = int(np.searchsorted(indptr, int(indptr[r0]) + _CHUNK, side="right")) - 1
        r1 = min(N, max(r1, r0 + 1))
        a, b = int(indptr[r0]), int(indptr[r1])
        if b - a > 1:
            step = np.diff(np.asarray(indices[a:b], dtype=np.int64)) > 0
            starts = np.asarray(indptr[r0 + 1:r1], dtype=np.int64) - a - 1  # the step from one row into the next
            starts = starts[(starts >= 0) & (starts < step.size)]
            step[starts] = True
            if not step.all():
                bad = int(np.flatnonzero(~step)[0]) + a + 1
                row = int(np.searchsorted(indptr, bad, side="right")) - 1
                raise ModelFormatError(f"the column indices of row {row} of X are unsorted or repeated; write the "
                                       f"matrix directory again with rlsi synth or rlsi ingest")
        r0 = r1
    X.has_sorted_indices = True
    X.has_canonical_format = True


def _check_int_array(arr, name, shape):
    if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "iu" or arr.shape != tuple(shape):
        raise ModelFormatError(f"{name} must be an integer array of shape {list(shape)}, got "
                               f"{getattr(arr, 'dtype', '?')} {list(getattr(arr, 'shape', ()))}")


def _checked_ints(arr, name, shape, low, high):
    if arr is None:
        return None
    _check_int_array(arr, name, shape)
    flat = arr.reshape(-1)
    for a in range(0, flat.size, _CHUNK):
        block = np.asarray(flat[a: a + _CHUNK])
        if block.size and (int(block.min()) < low or int(block.max()) > high):
            raise ModelFormatError(f"{name} holds values outside [{low}, {high}]")
    return arr


def save_matrix(path, X, *, vectorizer=None, doc_lengths=None, doc_ids=None, meta=None, counts=None):
    """Write an in-memory CSR matrix (N x M) as a matrix directory (see :class:`MatrixWriter`);
    ``counts``: the raw term counts X was weighted from (CSR, N x M), stored aligned with X."""
    X = sp.csr_matrix(X)
    if doc_ids is not None:
        from .ids import check_ids

        doc_ids = check_ids(doc_ids, f"document ids for {path}")
    with MatrixWriter(path, n_cols=X.shape[1], dtype=X.dtype, max_nnz=X.nnz, meta=meta) as w:
        w.append(X, doc_lengths=doc_lengths, counts=counts)
        w.vectorizer = vectorizer
        w.doc_ids = doc_ids
    return Path(path)


def load_matrix(path, *, mmap=True, vectorizer=True, verify="auto") -> CorpusMatrix:
    """Load a matrix directory; returns a :class:`CorpusMatrix` with ``.vectorizer`` set when it has one.

    mmap : memory-map the arrays read-only (default) instead of reading them into memory.
    vectorizer : False skips the vectorizer (a multi-million-term vocabulary the caller already holds).
    verify : the checksums verified (:func:`rlsi.io.store.load`; by default the large memory-mapped arrays are
        not: ``rlsi check DIR`` verifies them).
    Every problem raises :class:`rlsi.errors.ModelFormatError` (one line)."""
    path = Path(path)
    manifest = read_manifest(path)
    comps = manifest["components"]
    if comps.get(COMPONENT, {}).get("class") != CorpusMatrix._persist_name:
        raise ModelFormatError(f"{path} is not a matrix directory (it holds {', '.join(sorted(comps))}); "
                               f"write one with 'rlsi synth' or 'rlsi ingest'")
    only = [name for name in (COMPONENT, "vectorizer") if name in comps and (vectorizer or name == COMPONENT)]
    bundle = load(path, mmap=mmap, only=only, verify=verify)
    matrix = bundle[COMPONENT]
    matrix.vectorizer = bundle.get("vectorizer")
    matrix.path = path
    return matrix
