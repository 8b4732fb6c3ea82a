"""Segments: immutable blocks of documents, written once and read memory-mapped.

A segment holds, for its ``n`` documents and the ``T`` terms they use (``terms``: sorted global ids)::

    col_ptr (T+1), rows, tf      term-major raw frequencies (CSC by local column): what a query reads
    row_ptr (n+1), cols, ftf     the same frequencies document-major: what a delete, a merge and a
                                 re-fold read (a deleted row's terms, a row's counts)
    doc_len (n)                  |d|, the sum of the document's counts (BM25's length)
    ids (n), order (n)           document ids and their ascending order (id lookups, the trec tie order)
    topics-vN (n x K)            the documents' L2-normalised topic vectors made by model version N

Nothing in a segment changes after it is written: deletes live apart (a sorted array of deleted rows per
generation, :mod:`rlsi.retrieval.live.manifest`), and a re-fold adds a ``topics-vN`` file. Raw
frequencies (not BM25 weights) are stored, so the statistics of the whole index — N, mean length,
document frequencies — apply at query time and a segment never goes stale.

:class:`SegmentWriter` fills the files block by block through memory maps (a 1.6M-document merge holds
a block, not the segment); :func:`open_segment` checks a segment as untrusted input (each file's CRC-32
against the manifest, dtypes and shapes, every index in range) before a kernel reads it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from numpy.lib import format as npy_format

from ...errors import ModelFormatError, RLSIError
from ...io.checksums import file_digest
from ...io.safety import check_csr, read_npy
from ..postings import column_pointers, scatter_rows

__all__ = ["Segment", "SegmentWriter", "open_segment", "read_deletes", "segment_files", "save_array", "write_topics",
           "ARRAYS"]

#: The array files of every segment (``topics-vN`` come on top, one per model version).
ARRAYS = ("terms", "col_ptr", "rows", "tf", "row_ptr", "cols", "ftf", "doc_len", "ids", "order")
_CHUNK = 1 << 22


def _index_type(n):
    return np.int32 if int(n) < 2**31 else np.int64


def topics_key(version):
    return f"topics-v{int(version)}"


@dataclass(eq=False)
class Segment:
    """The arrays of one segment (read-only; memory-mapped when opened from disk)."""

    name: str
    terms: np.ndarray
    col_ptr: np.ndarray
    rows: np.ndarray
    tf: np.ndarray
    row_ptr: np.ndarray
    cols: np.ndarray
    ftf: np.ndarray
    doc_len: np.ndarray
    ids: np.ndarray
    order: np.ndarray
    topics: dict = field(default_factory=dict)  # model version -> (n, K) array

    @property
    def n_docs(self):
        return len(self.doc_len)

    @property
    def n_postings(self):
        return len(self.tf)

    def local_columns(self, term_ids):
        """The local column of each global term id (-1 where the segment does not hold it)."""
        term_ids = np.asarray(term_ids, dtype=np.int64)
        if len(self.terms) == 0:
            return np.full(len(term_ids), -1, dtype=np.int64)
        if self.terms.dtype == np.int32 and (len(term_ids) == 0 or term_ids.max() < 2**31):
            term_ids = term_ids.astype(np.int32)  # searching in the stored type: no copy of the whole array
        pos = np.minimum(np.searchsorted(self.terms, term_ids), len(self.terms) - 1)
        return np.where(self.terms[pos] == term_ids, pos, -1).astype(np.int64)

    def sorted_ids(self):
        """The ids in ascending order (computed once per segment)."""
        cached = self.__dict__.get("_sorted_ids")
        if cached is None:
            cached = self.__dict__["_sorted_ids"] = np.asarray(self.ids)[np.asarray(self.order)]
        return cached

    def rows_of(self, ids):
        """Row of each id of ``ids`` (a ``<U`` array), -1 where the segment has no such document."""
        out = np.full(len(ids), -1, dtype=np.int64)
        if self.n_docs == 0 or len(ids) == 0:
            return out
        sorted_ids = self.sorted_ids()
        ids = np.asarray(ids, dtype=str)
        fits = np.char.str_len(ids) <= sorted_ids.dtype.itemsize // 4  # a longer id is in no row
        query = ids[fits].astype(sorted_ids.dtype)  # searching in the stored type: no copy of every id
        pos = np.minimum(np.searchsorted(sorted_ids, query), self.n_docs - 1)
        out[fits] = np.where(sorted_ids[pos] == query, np.asarray(self.order)[pos], -1)
        return out

    def counts(self, rows, n_terms):
        """The raw counts of ``rows`` (sorted) as CSR over the global vocabulary (``n_terms`` columns)."""
        rows = np.asarray(rows, dtype=np.int64)
        starts, ends = self.row_ptr[rows], self.row_ptr[rows + 1]
        lengths = ends - starts
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(lengths, out=indptr[1:])
        take = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
        cols = np.asarray(self.cols)[take] if len(take) else np.zeros(0, dtype=np.int64)
        data = np.asarray(self.ftf)[take].astype(np.float64) if len(take) else np.zeros(0)
        X = sp.csr_matrix((data, np.asarray(self.terms)[cols].astype(np.int64), indptr), shape=(len(rows), n_terms))
        X.has_sorted_indices = True
        return X

    def column_df(self):
        """Documents holding each local column (deleted ones included)."""
        return np.diff(np.asarray(self.col_ptr)).astype(np.int64)


class SegmentWriter:
    """Write one segment's files block by block (memory-mapped) and record their digests (the commit that
    names them fsyncs them first).

    n_docs, n_postings : sizes of the whole segment; terms : its sorted global term ids (the columns with
    at least one posting); versions : ``{version: K}`` of the topic vectors it holds; tf_dtype, topic_dtype,
    id_width : storage types. Files are named ``NAME.KEY.npy`` in ``folder``; a writer killed before the
    manifest names them leaves orphans that the next writer removes.
    """

    def __init__(self, folder, name, *, n_docs, n_postings, terms, versions, tf_dtype, topic_dtype, id_width):
        self.folder, self.name = Path(folder), name
        self.n_docs, self.n_postings = int(n_docs), int(n_postings)
        self.terms = np.asarray(terms, dtype=np.int64)
        T = len(self.terms)
        itype, ctype = _index_type(max(self.n_docs, 1)), _index_type(max(T, 1))
        self._arrays = {}
        shapes = {"terms": ((T,), _index_type(int(self.terms[-1]) + 1 if T else 1)),
                  "col_ptr": ((T + 1,), np.int64), "rows": ((self.n_postings,), itype),
                  "tf": ((self.n_postings,), tf_dtype), "row_ptr": ((self.n_docs + 1,), np.int64),
                  "cols": ((self.n_postings,), ctype), "ftf": ((self.n_postings,), tf_dtype),
                  "doc_len": ((self.n_docs,), np.float64), "ids": ((self.n_docs,), f"<U{max(1, int(id_width))}"),
                  "order": ((self.n_docs,), itype)}
        for v, K in versions.items():
            shapes[topics_key(v)] = ((self.n_docs, int(K)), topic_dtype)
        for key, (shape, dtype) in shapes.items():
            self._arrays[key] = self._open(key, shape, dtype)
        self._arrays["terms"][:] = self.terms
        # global term id -> local column, by one gather per posting (a search per posting costs 10x more)
        self._local = np.full(int(self.terms[-1]) + 1 if T else 0, -1, dtype=ctype)
        self._local[self.terms] = np.arange(T, dtype=ctype)
        self._row = 0
        self._post = 0
        self._arrays["row_ptr"][0] = 0
        self._df = np.zeros(T, dtype=np.int64)
        self._blocks = []  # (row0, row1, post0, post1): the CSC scatter runs after every row is written

    def _path(self, key):
        return self.folder / f"{self.name}.{key}.npy"

    def _open(self, key, shape, dtype):
        path = self._path(key)
        if path.exists():  # an orphan of a killed writer with the same name
            path.unlink()
        if int(np.prod(shape)) == 0:
            np.save(path, np.zeros(shape, dtype=dtype), allow_pickle=False)
            return np.zeros(shape, dtype=dtype)
        return npy_format.open_memmap(path, mode="w+", dtype=np.dtype(dtype), shape=shape)

    def add(self, counts, doc_len, ids, topics):
        """Append a block of documents: ``counts`` CSR over global term ids (sorted indices, no explicit
        zeros, every column in ``terms``), their lengths, ids and ``{version: normalised vectors}``."""
        n = counts.shape[0]
        a, b = self._row, self._row + n
        p0, p1 = self._post, self._post + counts.nnz
        if b > self.n_docs or p1 > self.n_postings:
            raise RLSIError("segment block larger than announced")  # pragma: no cover - caller's sizes
        A = self._arrays
        A["row_ptr"][a + 1:b + 1] = p0 + np.asarray(counts.indptr[1:], dtype=np.int64)
        local = self._local[counts.indices]
        A["cols"][p0:p1] = local
        A["ftf"][p0:p1] = counts.data
        self._df += np.bincount(local, minlength=len(self.terms))
        A["doc_len"][a:b] = doc_len
        A["ids"][a:b] = ids
        for v, V in topics.items():
            A[topics_key(v)][a:b] = V
        self._row, self._post = b, p1

    def finish(self):
        """Build the term-major arrays, fsync every file; returns ``(Segment, {key: file entry})``."""
        if self._row != self.n_docs or self._post != self.n_postings:
            raise RLSIError(f"segment {self.name}: {self._row} of {self.n_docs} documents written")
        A = self._arrays
        col_ptr = column_pointers(self._df)
        A["col_ptr"][:] = col_ptr
        cursor = col_ptr[:-1].copy()
        row_ptr, cols, ftf = (np.asarray(A[k]) for k in ("row_ptr", "cols", "ftf"))
        for a in range(0, self.n_docs, 1 << 16):  # in row blocks: the scatter's int64 pointers stay small
            b = min(self.n_docs, a + (1 << 16))
            p0, p1 = int(row_ptr[a]), int(row_ptr[b])
            scatter_rows(row_ptr[a:b + 1] - p0, cols[p0:p1], ftf[p0:p1], a, cursor,
                         np.asarray(A["tf"]), np.asarray(A["rows"]))
        ids = np.asarray(A["ids"])
        A["order"][:] = np.argsort(ids, kind="stable")
        entries = {}  # the commit fsyncs the files: their pages, mapped or written, are in the page cache
        for key, arr in A.items():
            path = self._path(key)
            entries[key] = {"file": path.name, "dtype": str(arr.dtype), "shape": list(arr.shape),
                            "digest": file_digest(path)}
        self._arrays = None
        A = {key: _map_read_only(self._path(key)) for key in entries}  # what readers share: read-only maps
        topics = {int(k[len("topics-v"):]): A[k] for k in A if k.startswith("topics-v")}
        return Segment(self.name, **{k: A[k] for k in ARRAYS}, topics=topics), entries


def _map_read_only(path):
    arr = np.load(path, mmap_mode="r", allow_pickle=False)
    return arr if arr.size else np.asarray(arr)


def save_array(path, array):
    """Write one array as ``.npy`` (the commit that names it fsyncs it); returns its manifest entry."""
    arr = np.ascontiguousarray(array)
    with open(path, "wb") as f:
        np.save(f, arr, allow_pickle=False)
    return {"file": Path(path).name, "dtype": str(arr.dtype), "shape": list(arr.shape), "digest": file_digest(path)}


def write_topics(folder, seg_name, version, V):
    """Write a re-folded ``topics-vN`` file of a segment; returns ``(read-only map, manifest entry)``."""
    path = Path(folder) / f"{seg_name}.{topics_key(version)}.npy"
    entry = save_array(path, V)
    return _map_read_only(path), entry


def segment_files(entry):
    """The file names a segment's manifest entry references."""
    files = [e["file"] for e in entry["files"].values()]
    files += [e["file"] for e in entry["topics"].values()]
    if entry.get("deletes"):
        files.append(entry["deletes"]["file"])
    return files


def read_checked(folder, entry, where, *, mmap, kinds=None):
    """One array of the folder, checked against the CRC-32 its manifest entry records (memory-mapped ones
    too: :func:`rlsi.io.safety.read_npy` with ``verify=True``) and as untrusted input (ModelFormatError)."""
    try:
        return read_npy(folder, entry, mmap=mmap, kinds=kinds, verify=True)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{where}: {exc}") from None


def _fail(where, what):
    raise ModelFormatError(f"{where}: {what}: the index is damaged")


def _check_sorted_unique(arr, where, what):
    for a in range(0, len(arr), _CHUNK):
        block = np.asarray(arr[max(0, a - 1): a + _CHUNK])
        if len(block) > 1 and (np.diff(block) <= 0).any():
            _fail(where, f"{what} are not strictly increasing")


def open_segment(folder, entry, n_terms, versions, *, mmap=True, where="segment"):
    """A :class:`Segment` from its checked manifest ``entry`` (files, sizes), memory-mapped; only the
    topic vectors of ``versions`` are read. Every problem is a ModelFormatError naming the file."""
    files = entry["files"]
    A = {}
    for key in ARRAYS:
        kinds = {"ids": "U", "tf": "f", "ftf": "f", "doc_len": "f"}.get(key, "i")
        A[key] = read_checked(folder, files[key], where, mmap=mmap, kinds=kinds)
    n, T, nnz = entry["docs"], len(A["terms"]), entry["postings"]
    for key, shape in (("terms", (T,)), ("col_ptr", (T + 1,)), ("rows", (nnz,)), ("row_ptr", (n + 1,)),
                       ("doc_len", (n,)), ("ids", (n,)), ("order", (n,))):
        if A[key].shape != shape:
            _fail(where, f"{key} has shape {A[key].shape}, expected {shape}")
    if T and (int(A["terms"][0]) < 0 or int(A["terms"][-1]) >= n_terms):
        _fail(where, f"a term id is outside the vocabulary of {n_terms} terms")
    _check_sorted_unique(A["terms"], where, "term ids")
    check_csr(A["tf"], A["rows"], A["col_ptr"], (T, n), f"{where} (term-major postings)")
    check_csr(A["ftf"], A["cols"], A["row_ptr"], (n, T), f"{where} (document-major postings)")
    for key in ("tf", "doc_len"):
        for a in range(0, len(A[key]), _CHUNK):
            if (np.asarray(A[key][a:a + _CHUNK]) < 0).any():
                _fail(where, f"{key} holds negative values")
    order = np.asarray(A["order"])
    if n and (order.min() < 0 or order.max() >= n or np.bincount(order, minlength=n).max() != 1):
        _fail(where, "order is not a permutation of the rows")
    sorted_ids = A["ids"][order]
    if n > 1 and not (sorted_ids[1:] > sorted_ids[:-1]).all():
        _fail(where, "document ids are not unique")
    topics = {}
    for v in versions:
        e = entry["topics"].get(str(v))
        if e is None:
            _fail(where, f"no topic vectors of model version {v}")
        V = read_checked(folder, e, where, mmap=mmap, kinds="f")
        if V.ndim != 2 or V.shape[0] != n:
            _fail(where, f"topic vectors of version {v} have shape {V.shape} for {n} documents")
        topics[v] = V
    return Segment(entry["name"], **A, topics=topics)


def read_deletes(folder, entry, n_docs, where):
    """The sorted deleted rows of a segment (int64), checked."""
    rows = np.asarray(read_checked(folder, entry, where, mmap=False, kinds="i"), dtype=np.int64)
    if rows.ndim != 1 or (len(rows) and (rows[0] < 0 or rows[-1] >= n_docs)):
        _fail(where, "deleted rows are outside the segment")
    _check_sorted_unique(rows, where, "deleted rows")
    return rows
