"""Sparse x dense products of RLSI, in numba, parallel over output rows (deterministic).

* ``csr_dense(A, B)``: ``A @ B`` for CSR ``A`` (n x m) and dense ``B`` (m x K). Used for
  ``R = D Vᵀ`` by blocks of terms (A = rows of D, i.e. columns of X) and for folding in.
* ``csr_dense_take``: only some rows of ``A @ B`` (the rows of a block that screening leaves to compute).
* ``csr_gram(U)``: ``UᵀU`` of a CSR U in parallel (fixed row ranges, float64).
* ``csr_csr_dense(A, B, a=, b=)``: ``A[a:b] @ B`` for CSR ``A`` (n x m) and CSR ``B`` (m x K) into a
  dense result. Used for ``Φᵀ = X U`` with sparse topics: cost ``Σ_nnz(A) nnz(B row)``, no densified U.

Reductions and dtype casts of dense row blocks are in :mod:`rlsi.kernels.rows`, conversions between dense
blocks and CSR in :mod:`rlsi.kernels.convert`.

scipy's CSR x dense product is single-threaded and, for float32, upcasts; these kernels keep the dtype of
the output chosen by the caller and run on every numba thread.

Cache blocking. At web scale the right-hand side does not fit in the cache: ``R = D W`` reads a row of W
(K floats, 2 KB at K = 500 in float32) for every entry of D, at a random place of an N x K array of GBs,
and ``Φ = X U`` a row of U for every entry of X. Both products therefore run over *tiles* of output rows
(in parallel) and, inside a tile, over *chunks* of the right-hand side's rows (ascending column ranges of
A, about :data:`CHUNK_BYTES` of B each): the chunk of B is read from memory once per tile and then from
the cache by every row of the tile that has entries in it. With sorted column indices (every CSR matrix
here: scipy's transpose and our builders sort them) each output row still adds its terms in storage
order, so the results are bit-identical to the plain row-by-row product; with unsorted indices one chunk
covers all of B (the plain product).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit, prange

from rlsi.kernels.convert import _take_rows, out_block
from rlsi.kernels.hints import prefetch_row


#: Bytes of the right-hand side per chunk of the blocked products, and of the output per tile: a chunk is
#: re-read from the cache by every row of a tile that has entries in it, so the larger the tile the fewer
#: times B travels from memory; both stay in L2/L3. Measured at 1 thread on R = D W of the 100k x 500k
#: corpus (K = 500, float32; AMD EPYC, 512 KB L2 per core, 32 MB L3): 2 MB chunks and tiles of 1024 to
#: 2048 rows took 2.5-2.8 s against 5.6-9.0 s for the plain product, tiles of 16 rows 5.2-5.6 s.
CHUNK_BYTES = 2 << 20
TILE_BYTES = 2 << 20
#: Rows of a CSR right-hand side with more than this share of K non-zero entries are added densely by
#: :func:`csr_csr_dense` (a contiguous, vectorised row update instead of an indirect scatter per entry; an
#: entry of the scatter cost about 5 of the dense update at 1 thread).
DENSE_ROW_SHARE = 0.2
#: Most partial K x K sums of :func:`csr_gram` (also capped to about :data:`GRAM_PARTS_BYTES` of them).
GRAM_PARTS = 64
GRAM_PARTS_BYTES = 64 << 20


@dataclass(frozen=True)
class ProductBlocks:
    """How the products block their work, as one named value: ``chunk_bytes`` of the right-hand side per
    chunk, ``tile_bytes`` of output per tile, ``dense_row_share`` (rows of a CSR right-hand side held densely
    above this share of K entries) and ``gram_parts`` (most partial sums of :func:`csr_gram`). The numbers do
    not depend on it; small values give many chunks and tiles on a small problem (the tests pass them)."""

    chunk_bytes: int = CHUNK_BYTES
    tile_bytes: int = TILE_BYTES
    dense_row_share: float = DENSE_ROW_SHARE
    gram_parts: int = GRAM_PARTS


#: The blocking of every product given none.
BLOCKS = ProductBlocks()


def _tile(n_rows, row_bytes, tile_bytes=TILE_BYTES):
    """Output rows per tile (the unit of parallel work): ``tile_bytes`` of output, fewer when that
    would leave a thread with fewer than two tiles, at least 8."""
    import numba

    per_thread = -(-n_rows // (2 * numba.get_num_threads()))
    return int(max(8, min(tile_bytes // max(1, row_bytes), per_thread)))


def _chunk_rows(B, sorted_indices, chunk_bytes=CHUNK_BYTES):
    """Rows of dense ``B`` per chunk: ``chunk_bytes`` of it, or all of B where blocking cannot apply."""
    n = B.shape[0]
    if not sorted_indices:
        return max(1, n)
    return max(1, min(n, chunk_bytes // max(1, B.shape[1] * B.dtype.itemsize)))


def _sorted(A):
    """Whether CSR ``A`` has sorted column indices in every row (scipy checks once, O(nnz), and keeps it)."""
    return bool(A.has_sorted_indices)


def _entries_as(A, dtype, rhs_dtype):
    """A's stored entries for a product computed in ``dtype`` with a right-hand side of ``rhs_dtype``:
    float32 entries as they are when both are float64 (the kernels then multiply a float32 entry by a
    float64 value, in float64, where the float32 converts exactly: the same sums as a float64 copy, without
    copying all of A's entries at every call — 2.6 GB at 1.6M documents), otherwise converted (a no-op when
    they already are ``dtype``; a float32 right-hand side needs them converted, or float32 x float32 would be
    multiplied in float32)."""
    if A.data.dtype == np.float32 and np.dtype(dtype) == np.float64 and np.dtype(rhs_dtype) == np.float64:
        return A.data
    return A.data.astype(dtype, copy=False)


def csr_dense(A, B, dtype=None, *, blocks=BLOCKS):
    """Dense ``A @ B`` for scipy CSR ``A`` (n x m) and ndarray ``B`` (m x K)."""
    return csr_dense_rows(A, 0, A.shape[0], B, dtype=dtype, blocks=blocks)



class SparsePlan:
    """How :func:`csr_csr_dense` runs ``A @ B`` for a CSR ``B`` (m x K), made once per B and reused for
    every block of rows of A (:func:`sparse_plan`).

    dense_of : int32 (m,) — row of ``dense`` holding row j of B, or −1 (B's rows with more than
        ``blocks.dense_row_share`` · K entries are held densely).
    dense : (n_dense, K) — those rows, dense, in the dtype of the product.
    bounds : int64 — chunk boundaries over B's rows (ascending column ranges of A), about
        ``blocks.chunk_bytes`` of B per chunk (one chunk when A's indices are not sorted).
    blocks : the :class:`ProductBlocks` it was made with (the products' tiles follow it).
    """

    def __init__(self, dense_of, dense, bounds, data, dtype, blocks=BLOCKS):
        self.dense_of, self.dense, self.bounds, self.data, self.dtype = dense_of, dense, bounds, data, dtype
        self.blocks = blocks

    @property
    def nbytes(self):
        """Bytes of the plan's own arrays (the row index and the dense rows; B's data only where converted)."""
        return self.dense_of.nbytes + self.dense.nbytes + self.bounds.nbytes


def max_heavy_rows(nnz, n_cols, dense_row_share=DENSE_ROW_SHARE):
    """The most rows of a CSR B with ``nnz`` entries and ``n_cols`` columns that :func:`sparse_plan` holds
    densely (each has more than ``dense_row_share`` · n_cols entries)."""
    return int(nnz / (dense_row_share * max(1, int(n_cols))))


def sparse_plan_nbytes(n_rows, heavy_rows, n_cols, itemsize, converted=0):
    """Bytes :func:`sparse_plan` allocates for B (``n_rows`` x ``n_cols``, ``heavy_rows`` of them dense) in a
    product of ``itemsize``: the int32 row index, the dense rows, and ``converted`` entries of B copied to
    the product's dtype (B's entries when B has another dtype, else 0; the chunk bounds are a few hundred
    bytes)."""
    return (4 * int(n_rows) + min(int(n_rows), int(heavy_rows)) * int(n_cols) * int(itemsize)
            + int(converted) * int(itemsize))


def sparse_plan(B, dtype=None, sorted_indices=True, *, blocks=BLOCKS):
    """A :class:`SparsePlan` of CSR ``B`` (m x K) for products of ``dtype`` (default B's), blocked by
    ``blocks`` (:class:`ProductBlocks`)."""
    dtype = np.dtype(dtype or B.dtype)
    m, K = B.shape
    counts = np.diff(B.indptr)
    heavy = np.flatnonzero(counts > blocks.dense_row_share * K)
    dense_of = np.full(m, -1, dtype=np.int32)
    dense_of[heavy] = np.arange(len(heavy), dtype=np.int32)
    dense = np.zeros((len(heavy), K), dtype=dtype)
    data = B.data.astype(dtype, copy=False)
    _take_rows(B.indptr, B.indices, data, heavy.astype(np.int64), dense)
    if sorted_indices and m:
        row_bytes = counts * (dtype.itemsize + B.indices.dtype.itemsize) + 8
        row_bytes[heavy] = K * dtype.itemsize + 8
        ends = np.cumsum(row_bytes)
        step = blocks.chunk_bytes
        cuts = np.searchsorted(ends, np.arange(step, ends[-1], step), side="right")
        bounds = np.unique(np.concatenate([[0], cuts, [m]])).astype(np.int64)
    else:
        bounds = np.array([0, m], dtype=np.int64)
    return SparsePlan(dense_of, dense, bounds, data, dtype, blocks)


@njit(cache=True, parallel=True)
def _csr_csr_dense_tiled(a_indptr, a_indices, a_data, b_indptr, b_indices, b_data, dense_of, dense, bounds,
                         out, row0, tile):
    """``out = A[row0:row0+n] @ B``: tiles of output rows in parallel, chunks of B's rows (``bounds``) in
    ascending order inside a tile; rows of B with a dense copy are added densely (the zeros add nothing),
    the others scattered. Every output entry adds its terms in the order of the plain product."""
    n = out.shape[0]
    K = out.shape[1]
    n_tiles = (n + tile - 1) // tile
    for t in prange(n_tiles):
        r0 = t * tile
        r1 = min(n, r0 + tile)
        pos = np.empty(r1 - r0, dtype=np.int64)
        for i in range(r0, r1):
            pos[i - r0] = a_indptr[row0 + i]
            for k in range(K):
                out[i, k] = 0.0
        for c in range(bounds.shape[0] - 1):
            c1 = bounds[c + 1]
            for i in range(r0, r1):
                p = pos[i - r0]
                end = a_indptr[row0 + i + 1]
                while p < end and a_indices[p] < c1:
                    j = a_indices[p]
                    a = a_data[p]
                    d = dense_of[j]
                    if d >= 0:
                        for k in range(K):
                            out[i, k] += a * dense[d, k]
                    else:
                        for q in range(b_indptr[j], b_indptr[j + 1]):
                            out[i, b_indices[q]] += a * b_data[q]
                    p += 1
                pos[i - r0] = p


def csr_csr_dense(A, B, dtype=None, a=0, b=None, plan=None, out=None, *, blocks=BLOCKS):
    """Dense ``A[a:b] @ B`` for scipy CSR ``A`` (n x m) and CSR ``B`` (m x K), without slicing A (scipy's
    row slice copies the rows, single-threaded). ``plan``: :func:`sparse_plan` of B for this dtype, when
    the caller multiplies several row blocks by the same B (made here with ``blocks`` otherwise; a plan's own
    blocks set the tiles). ``out``: optional C-contiguous ((b − a) x K) array of ``dtype`` to write into (a
    reused buffer, as :func:`csr_dense_take`)."""
    dtype = np.dtype(dtype or np.result_type(A.dtype, B.dtype))
    b = A.shape[0] if b is None else b
    if plan is None or plan.dtype != dtype:
        plan = sparse_plan(B, dtype, _sorted(A), blocks=plan.blocks if plan is not None else blocks)
    elif len(plan.bounds) > 2 and not _sorted(A):
        plan = SparsePlan(plan.dense_of, plan.dense, np.array([0, B.shape[0]], dtype=np.int64), plan.data, dtype,
                          plan.blocks)
    out = out_block(out, (b - a, B.shape[1]), dtype)
    tile = _tile(b - a, out.shape[1] * dtype.itemsize, plan.blocks.tile_bytes)
    _csr_csr_dense_tiled(A.indptr, A.indices, _entries_as(A, dtype, plan.dense.dtype), B.indptr, B.indices, plan.data,
                         plan.dense_of, plan.dense, plan.bounds, out, a, tile)
    return out


@njit(cache=True, parallel=True)
def _csr_dense_tiled(indptr, indices, data, rows, dest, B, out, rowmax, chunk, starts, tiles, worker_starts):
    """``out[dest[i]] = A[rows[i]] @ B`` for every i, with ``rowmax[i] = max_k |out[dest[i], k]|`` when
    rowmax is not empty. Tile t is the rows ``starts[t]..starts[t+1]`` (see :func:`_dense_tile`); worker w
    runs the tiles ``tiles[worker_starts[w]:worker_starts[w + 1]]``, the workers in parallel (one per
    thread: :func:`_balanced_tiles` gives them equal work, whatever numba's scheduler would do)."""
    for w in prange(worker_starts.shape[0] - 1):
        for q in range(worker_starts[w], worker_starts[w + 1]):
            t = tiles[q]
            _dense_tile(indptr, indices, data, rows, dest, B, out, rowmax, chunk, starts[t], starts[t + 1])


#: Entries ahead whose row of B the light rows of :func:`_dense_tile` ask the cache for (:mod:`rlsi.kernels.hints`):
#: enough to cover a wait on memory with the multiply-adds of the entries in between, few enough that the
#: rows asked for are still in the cache when their turn comes. 50k x 200k, K = 200, 1 thread, light rows:
#: 0.37 s without, 0.30-0.32 s at 2-8 ahead (float64); the whole R product -6 to -10 % (benchmarks/results/products.md).
PREFETCH_AHEAD = 4


@njit(cache=True)
def _dense_tile(indptr, indices, data, rows, dest, B, out, rowmax, chunk, r0, r1):
    """One tile of :func:`_csr_dense_tiled`, rows ``r0..r1``. The rows with at least one entry per chunk on
    average run over chunks of ``chunk`` rows of B (column ranges of A) in ascending order, each resuming
    where the last chunk stopped; the other (light) rows, whose entries would each fall in a chunk of their
    own (their output row fetched again for every entry, for no reuse of B), run through at once, asking the
    cache for the row of B :data:`PREFETCH_AHEAD` entries on (in the tile's light rows). Either way every
    output row adds its terms in storage order, as the plain product does."""
    K = out.shape[1]
    n_b = B.shape[0]
    n_chunks = (n_b + chunk - 1) // chunk
    want_max = rowmax.shape[0] > 0
    pos = np.empty(r1 - r0, dtype=np.int64)
    n_heavy = 0
    # the prefetch cursor: entry q of row ci, PREFETCH_AHEAD light entries ahead of the one being added (it
    # starts at the tile's first entry and moves one entry per entry added, so it never falls behind)
    ci = r0
    q = indptr[rows[r0]] if r0 < r1 else 0
    ahead = 0
    for i in range(r0, r1):
        o = dest[i]
        for k in range(K):
            out[o, k] = 0.0
        start = indptr[rows[i]]
        end = indptr[rows[i] + 1]
        if n_chunks > 1 and end - start >= n_chunks:
            pos[i - r0] = start  # chunked below
            n_heavy += 1
            continue
        pos[i - r0] = end  # done here
        for p in range(start, end):
            while ahead < PREFETCH_AHEAD and ci < r1:  # move the cursor on to the next light entry
                if q < indptr[rows[ci] + 1]:  # (a tile's rows are all light or all heavy: _balanced_tiles)
                    prefetch_row(B, indices[q])
                    q += 1
                    ahead += 1
                else:
                    ci += 1
                    if ci < r1:
                        q = indptr[rows[ci]]
            j = indices[p]
            a = data[p]
            for k in range(K):
                out[o, k] += a * B[j, k]
            if ahead > 0:
                ahead -= 1
        if want_max:  # while the row is in the cache
            rowmax[i] = _absmax(out, o)
    c1 = 0
    while n_heavy > 0 and c1 < n_b:
        c1 = min(n_b, c1 + chunk)
        for i in range(r0, r1):
            p = pos[i - r0]
            end = indptr[rows[i] + 1]
            o = dest[i]
            while p < end and indices[p] < c1:
                j = indices[p]
                a = data[p]
                for k in range(K):
                    out[o, k] += a * B[j, k]
                p += 1
            pos[i - r0] = p
    if want_max and n_heavy > 0:  # the heavy rows' max |entry| (the batch U-step's screening needs it)
        for i in range(r0, r1):
            start = indptr[rows[i]]
            if not (n_chunks > 1 and indptr[rows[i] + 1] - start >= n_chunks):
                continue
            rowmax[i] = _absmax(out, dest[i])


@njit(cache=True, nogil=True, inline="always")
def csr_row_into(acc, indptr, indices, data, B, i):
    """``acc = A[i] @ B`` (acc: (K,) float64 scratch) for row i of a CSR A (indptr, indices, data) and dense B:
    from zero, the row's terms added in storage order (the order of the plain product). Inlined into the
    row loops of small-K kernels (the online block's projection and rows of R)."""
    for k in range(acc.shape[0]):
        acc[k] = 0.0
    for p in range(indptr[i], indptr[i + 1]):
        a = data[p]
        Bj = B[indices[p]]
        for k in range(acc.shape[0]):
            acc[k] += a * Bj[k]


@njit(cache=True, nogil=True, inline="always")
def _absmax(out, o):
    """``max_k |out[o, k]|`` (0 for an empty row)."""
    m = 0.0
    for k in range(out.shape[1]):
        v = abs(out[o, k])
        if v > m:
            m = v
    return m


#: Tiles per worker that :func:`_balanced_tiles` aims at: a tile holds at most 1/(this · workers) of the
#: product's work, so that greedy assignment can even the workers out.
TILES_PER_WORKER = 4


def _balanced_tiles(lengths, heavy, tile, n_workers):
    """Tiles of the blocked product :func:`_csr_dense_tiled` and their assignment to ``n_workers``.

    ``lengths[i]``: entries of row i (its work, plus 2 for zeroing its output and taking its max);
    ``heavy[i]``: whether row i runs chunk by chunk. Heavy rows share tiles only with heavy rows (a chunk of
    B is reused by the heavy rows of its tile), light rows with light rows. A tile holds at most ``tile``
    rows and, with more than one worker, about ``total work / (TILES_PER_WORKER · n_workers)``: the
    frequent terms of a Zipfian corpus are few rows with most of the entries (22,649 heavy rows held 65 %
    of the 5.4 M entries of the 50k × 200k corpus), and tiles of equal row counts, split among the threads
    in contiguous shares, left one thread 1.6× the mean work at 2 threads and 3.2× at 16. The tiles go to
    the workers largest first, each to the least loaded worker (so no worker exceeds the mean by more than
    one tile).

    Returns ``(order, starts, tiles, worker_starts)``: the rows in processing order, tile boundaries in
    ``order``, the tiles worker by worker (ascending within a worker) and the workers' boundaries in it."""
    work = np.asarray(lengths, dtype=np.int64) + 2
    n_workers = max(1, int(n_workers))
    # one worker has nothing to balance: its tiles are cut by rows only, so the heavy rows' chunks of B are
    # shared by as many rows as a tile holds (a U-step calls this per block of ~21k term rows: capping each
    # call's tiles at a quarter of its work made R 0.66 -> 0.75 s at 50k x 200k, K = 200, benchmarks/results/products.md)
    cap = max(1, int(work.sum()) // (TILES_PER_WORKER * n_workers)) if n_workers > 1 else int(work.sum()) + 1
    order_parts, cut_parts, offset = [], [], 0
    for idx in (np.flatnonzero(heavy), np.flatnonzero(~np.asarray(heavy, dtype=bool))):
        if not len(idx):
            continue
        before = np.cumsum(work[idx]) - work[idx]
        by_work = np.flatnonzero(np.diff(before // cap)) + 1  # a row that starts a new unit of work
        by_rows = np.arange(tile, len(idx), tile)
        cuts = np.unique(np.concatenate([[0], by_work, by_rows]))
        order_parts.append(idx)
        cut_parts.append(cuts + offset)
        offset += len(idx)
    if not order_parts:
        return (np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64),
                np.zeros(n_workers + 1, dtype=np.int64))
    order = np.concatenate(order_parts).astype(np.int64)
    starts = np.concatenate(cut_parts + [[offset]]).astype(np.int64)
    tile_work = np.add.reduceat(work[order], starts[:-1])
    worker = _largest_first(tile_work, n_workers)
    tiles = np.argsort(worker, kind="stable").astype(np.int64)
    worker_starts = np.concatenate([[0], np.cumsum(np.bincount(worker, minlength=n_workers))]).astype(np.int64)
    return order, starts, tiles, worker_starts


@njit(cache=True)
def _largest_first(work, n_workers):
    """Worker of each item: items by decreasing work (ties by index), each to the least loaded worker
    (lowest index among equals) — the longest-processing-time-first rule."""
    worker = np.empty(work.shape[0], dtype=np.int64)
    load = np.zeros(n_workers, dtype=np.int64)
    for t in np.argsort(-work, kind="mergesort"):
        w = np.argmin(load)
        worker[t] = w
        load[w] += work[t]
    return worker


def _csr_dense_into(A, rows, dest, B, out, rowmax, dtype, blocks=BLOCKS):
    """Run the blocked kernel of rows ``rows`` of ``A @ B`` into ``out[dest]`` (B already of ``dtype``);
    ``rowmax[i]`` (if not empty) receives the max |entry| of the row of ``rows[i]``. The order in which rows
    are processed does not change any row's sums."""
    import numba

    chunk = _chunk_rows(B, _sorted(A), blocks.chunk_bytes)
    n_chunks = -(-B.shape[0] // chunk)
    tile = _tile(len(rows), out.shape[1] * out.dtype.itemsize, blocks.tile_bytes)
    lengths = A.indptr[rows + 1] - A.indptr[rows]
    heavy = lengths >= n_chunks if n_chunks > 1 else np.zeros(len(rows), bool)
    order, starts, tiles, worker_starts = _balanced_tiles(lengths, heavy, tile, numba.get_num_threads())
    got = np.empty(len(rows)) if rowmax.shape[0] else rowmax
    _csr_dense_tiled(A.indptr, A.indices, _entries_as(A, dtype, B.dtype), rows[order], dest[order], B, out, got,
                     chunk, starts, tiles, worker_starts)
    if rowmax.shape[0]:
        rowmax[order] = got


def csr_dense_rows(A, a, b, B, mask=None, dtype=None, out=None, *, blocks=BLOCKS):
    """Rows a..b of ``A @ B`` (CSR ``A``, dense ``B``) without slicing A; rows where ``mask`` is False
    are left zero (not computed). ``out`` (without a mask): optional C-contiguous ((b − a) x K) array of
    ``dtype`` to write into (a reused buffer, as :func:`csr_dense_take`)."""
    dtype = np.dtype(dtype or np.result_type(A.dtype, B.dtype))
    B = np.ascontiguousarray(B, dtype=dtype)
    if mask is None:
        dest = np.arange(b - a, dtype=np.int64)
        out = out_block(out, (b - a, B.shape[1]), dtype)
    elif out is not None:
        raise ValueError("csr_dense_rows: out is not supported with a mask")
    else:
        dest = np.flatnonzero(np.asarray(mask, dtype=np.bool_)).astype(np.int64)
        out = np.zeros((b - a, B.shape[1]), dtype=dtype)
    _csr_dense_into(A, dest + a, dest, B, out, _NO_ROWMAX, dtype, blocks)
    return out


_NO_ROWMAX = np.zeros(0)


def csr_dense_rows_f64(A, a, b, B, *, blocks=BLOCKS):
    """Rows a..b of ``A @ B`` in float64 for a float32 or float64 ``B`` read as it is: each product
    ``a_ij · B[j, k]`` is taken in float64 (a float32 entry converts exactly), so the result equals
    ``csr_dense_rows(A, a, b, B, dtype=np.float64)`` bit for bit without that call's float64 copy of B
    (8 n K bytes: 6.4 GB for the λ₁ search's W at 1.6M documents and K = 500)."""
    B = np.ascontiguousarray(B)
    if B.dtype not in (np.float32, np.float64):
        B = B.astype(np.float64)
    out = np.empty((b - a, B.shape[1]))
    _csr_dense_into(A, np.arange(a, b, dtype=np.int64), np.arange(b - a, dtype=np.int64), B, out, _NO_ROWMAX,
                    np.float64, blocks)
    return out


def csr_dense_take(A, rows, B, dtype=None, out=None, *, blocks=BLOCKS):
    """Rows ``rows`` (int64 indices) of ``A @ B`` (CSR ``A``, dense ``B``), only those: returns
    ``(out (len(rows) x K), rowmax)`` with ``rowmax[i] = max_k |out[i, k]|`` (float64). Each row equals
    the row of :func:`csr_dense_rows` bit for bit. ``out``: optional C-contiguous (len(rows) x K) array of
    ``dtype`` to write into (a reused buffer: a fresh block is zeroed by the OS page by page on first write,
    3.3 ms for 32 MB, a tenth of the product's own time per block at the paper's density)."""
    dtype = np.dtype(dtype or np.result_type(A.dtype, B.dtype))
    B = np.ascontiguousarray(B, dtype=dtype)
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    out = out_block(out, (len(rows), B.shape[1]), dtype)
    rowmax = np.empty(len(rows))
    _csr_dense_into(A, rows, np.arange(len(rows), dtype=np.int64), B, out, rowmax, dtype, blocks)
    return out, rowmax


def csr_dense_rows_max(A, a, b, B, mask, dtype=None, *, blocks=BLOCKS):
    """:func:`csr_dense_rows` with a mask, also returning ``max_k |out[i, k]|`` of every computed row
    (float64; 0 for rows not computed) from the same pass (the screening of the batch U-step needs it)."""
    dtype = np.dtype(dtype or np.result_type(A.dtype, B.dtype))
    B = np.ascontiguousarray(B, dtype=dtype)
    dest = np.flatnonzero(np.asarray(mask, dtype=np.bool_)).astype(np.int64)
    out = np.zeros((b - a, B.shape[1]), dtype=dtype)
    rowmax = np.zeros(b - a)
    got = np.empty(len(dest))
    _csr_dense_into(A, dest + a, dest, B, out, got, dtype, blocks)
    rowmax[dest] = got
    return out, rowmax


@njit(cache=True, parallel=True)
def _csr_gram_parts(indptr, indices, data, bounds, parts):
    """``parts[c] = Σ_{rows bounds[c]..bounds[c+1]} u uᵀ`` (upper triangle, float64) for the CSR rows u; the
    parts run in parallel and each adds its rows in order (the split does not depend on the threads)."""
    for c in prange(bounds.shape[0] - 1):
        G = parts[c]
        G[:, :] = 0.0
        for i in range(bounds[c], bounds[c + 1]):
            p0 = indptr[i]
            p1 = indptr[i + 1]
            for p in range(p0, p1):
                kp = indices[p]
                a = np.float64(data[p])
                for q in range(p, p1):
                    kq = indices[q]
                    v = a * np.float64(data[q])
                    if kp < kq:
                        G[kp, kq] += v
                    elif kp > kq:  # unsorted indices: the same entry of the upper triangle
                        G[kq, kp] += v
                    else:  # the square, or twice the product of two duplicates of one column
                        G[kp, kp] += v if q == p else 2.0 * v


def csr_gram(U, *, blocks=BLOCKS):
    """``UᵀU`` (K x K, float64) of a scipy CSR ``U`` (M x K), in parallel: work ``Σ_rows nnz(row)²/2``.

    The rows are split into at most ``blocks.gram_parts`` (:data:`GRAM_PARTS`) ranges of about equal work (a split fixed by U,
    not by the threads), each range's outer products are summed in float64 into a K x K part, and the parts
    are added in order: the same numbers on any number of threads. (scipy's ``U.T @ U`` is single-threaded
    and, for float32 U, sums in float32; it was 9 % of an iteration at 50k x 200k, K = 200, AvgComp 0.026.)
    Duplicate entries of a non-canonical CSR are summed, as scipy does."""
    M, K = U.shape
    parts_max = int(max(1, min(blocks.gram_parts, GRAM_PARTS_BYTES // max(1, 8 * K * K))))
    work = np.diff(U.indptr).astype(np.float64) ** 2
    ends = np.cumsum(work)
    total = float(ends[-1]) if M else 0.0
    n_parts = 1 if total == 0.0 else parts_max
    cuts = np.searchsorted(ends, total * np.arange(1, n_parts) / n_parts, side="right")
    bounds = np.unique(np.concatenate([[0], cuts, [M]])).astype(np.int64)
    parts = np.empty((len(bounds) - 1, K, K))
    _csr_gram_parts(U.indptr, U.indices, U.data, bounds, parts)
    return _sum_parts_sym(parts)


@njit(cache=True, parallel=True)
def _sum_parts_sym(parts):
    """``Σ_c parts[c]`` (added in order of c) of upper-triangular parts, as a symmetric K x K array."""
    K = parts.shape[1]
    G = np.zeros((K, K))
    for k in prange(K):
        for c in range(parts.shape[0]):
            for l in range(k, K):
                G[k, l] += parts[c, k, l]
        for l in range(k + 1, K):
            G[l, k] = G[k, l]
    return G
