"""A vocabulary of millions of terms in numpy arrays, grown batch by batch (the first pass of
:func:`rlsi.text.ingest.ingest`).

A Python ``dict`` of terms costs about 150 bytes a term (the ``str`` object, the table entry, the ``int``
of the column): about 1 GB at the 7M terms of the TOIS web corpus. :class:`TermStore` keeps, per term:

* its UTF-8 bytes in one growing byte buffer (``ends``: int64 end offsets) — about the term's length;
* a 64-bit key (Python's ``hash`` of the ``str``: SipHash, which the batch's dict has computed already)
  in a sorted array with the term's int32 id beside it (12 bytes), through which a batch's distinct terms find
  their ids (``searchsorted``: no per-term Python object outlives its batch);
* a second, independent fingerprint by id (32 bits of a polynomial hash of the UTF-8 bytes, computed in
  numpy): two terms with the same key but different fingerprints are a **collision**, detected and
  raised as :class:`HashCollision` (the caller starts over with another seed, which swaps the roles of
  the two hashes). A key collision (about ``n² / 2⁶⁵``: 10⁻⁶ at 7M terms) that the fingerprint also
  misses (2⁻³² of those, for text not built to collide) would go undetected: about 3·10⁻¹⁶ at 7M terms;
* the document frequency and the total count (int64 each, by id).

About 50 bytes a term in all for a 10-byte term (40 plus its length, up to 25 % more while a buffer has
just grown; every array in its own anonymous memory map, given back when replaced), plus the distinct
terms of a few thousand documents as Python objects. No numba here: importing and loading a compiled
kernel costs about 150 MB of resident memory, more than the arrays of a million terms.
Ids are given in the order the terms are first seen (what a ``dict`` of first appearance gives), so
the pruning and the column order downstream are those of the in-memory vectorizer.

UTF-8 with ``surrogatepass`` round-trips every ``str`` (lone surrogates included), so
:meth:`TermStore.term` decodes exactly the ``str`` that was added.
"""

from __future__ import annotations

import mmap

import numpy as np

from ..errors import CorpusError

__all__ = ["TermStore", "TermSequence", "HashCollision", "hash_terms"]

#: Odd 64-bit multipliers of the polynomial hash, one per seed (any odd constant will do; these are
#: well-mixed ones: golden ratio, splitmix64's and MurmurHash3's).
_BASES = (0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB, 0xFF51AFD7ED558CCD)


#: Terms encoded and hashed together by :meth:`TermStore.add_batch`.
CHUNK = 65536


class HashCollision(CorpusError):
    """Two different terms got the same 64-bit key (about one chance in 10⁶ at 7M terms): the vocabulary
    pass is started again with another seed by :func:`rlsi.text.ingest.ingest`."""


def _mix(h):
    """splitmix64's finalizer on a uint64 array (in place; every input bit reaches every output bit)."""
    h ^= h >> np.uint64(30)
    h *= np.uint64(0xBF58476D1CE4E5B9)
    h ^= h >> np.uint64(27)
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(31)
    return h


def _polynomial(blob, ends, seed):
    """``Σ_j (byte_j + 1) · B^j`` over each term's bytes (mod 2⁶⁴, B an odd constant of ``seed``), plus
    the length and the seed, then :func:`_mix`: a uint64 per term. One numpy step per byte position over
    the terms at least that long (longest first), so that the temporaries are O(terms), not O(bytes)."""
    n = len(ends)
    starts = np.zeros(n, dtype=np.int64)
    starts[1:] = ends[:-1]
    sizes = ends - starts
    order = np.argsort(-sizes, kind="stable")
    s_starts, s_sizes = starts[order], sizes[order]
    h = np.zeros(n, dtype=np.uint64)
    base, power = _BASES[seed % len(_BASES)], 1
    longest = int(s_sizes[0]) if n else 0
    # the terms longer than j: a prefix of the sorted terms
    active = n - np.searchsorted(s_sizes[::-1], np.arange(longest), side="right")
    for j in range(longest):
        k = int(active[j])
        h[:k] += (blob[s_starts[:k] + j].astype(np.uint64) + np.uint64(1)) * np.uint64(power)
        power = (power * base) & 0xFFFFFFFFFFFFFFFF
    h += s_sizes.astype(np.uint64) * np.uint64(0x2545F4914F6CDD1D) + np.uint64(0x9E3779B97F4A7C15 ^ seed)
    out = np.empty(n, dtype=np.uint64)
    out[order] = _mix(h)
    return out


def _encode(terms):
    """``(blob, ends)``: the UTF-8 bytes of ``terms`` one after the other (uint8) and their end offsets
    (joined with NUL separators and encoded at once; term by term when a term holds a NUL)."""
    if not terms:
        return np.zeros(0, dtype=np.uint8), np.zeros(0, dtype=np.int64)
    joined = np.frombuffer("\x00".join(terms).encode("utf-8", "surrogatepass"), dtype=np.uint8)
    nul = np.flatnonzero(joined == 0)
    if len(nul) == len(terms) - 1:
        ends = np.empty(len(terms), dtype=np.int64)
        ends[:-1] = nul - np.arange(len(nul))  # the separators before each end are not in the blob
        ends[-1] = len(joined) - len(nul)
        keep = np.ones(len(joined), dtype=bool)
        keep[nul] = False
        return joined[keep], ends
    encoded = [t.encode("utf-8", "surrogatepass") for t in terms]
    ends = np.cumsum(np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded)))
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), ends


def hash_terms(terms, blob, ends, seed=0):
    """``(keys, check)`` (uint64 each, shape ``(n_terms,)``) of ``terms`` (their UTF-8 bytes are ``blob`` cut
    at ``ends``): two independent 64-bit hashes — Python's own ``hash`` of the ``str`` (SipHash, keyed per
    process, already computed by the batch's dict) and a polynomial hash of the bytes (:func:`_polynomial`);
    at seed 0 the first is the key and the second the check, at other seeds the other way round with
    another polynomial, so that a pair of terms that collides at one seed does not at the next."""
    sip = np.fromiter(map(hash, terms), dtype=np.int64, count=len(terms)).view(np.uint64)
    poly = _polynomial(blob, ends, seed)
    return (sip, poly) if seed == 0 else (poly, sip)


def _anon(n, dtype):
    """A zeroed array of ``n`` elements in its own anonymous memory map: given back to the system when the
    array is freed. (From malloc, arrays of up to 32 MB come from the heap once glibc has raised its mmap
    threshold, and a store whose arrays are re-allocated batch after batch then leaves the freed ones
    behind as holes: measured, about 230 bytes of resident memory a term for 50 bytes of arrays.)"""
    dtype = np.dtype(dtype)
    return np.frombuffer(mmap.mmap(-1, max(1, int(n) * dtype.itemsize)), dtype=dtype, count=int(n))


def _merge(old, at, new):
    """``np.insert(old, at, new)`` (``at`` sorted) into an :func:`_anon` array."""
    out = _anon(len(old) + len(new), old.dtype)
    where = np.asarray(at, dtype=np.int64) + np.arange(len(new))  # positions of the new elements
    keep = _anon(len(out), np.bool_)
    keep[:] = True
    keep[where] = False
    out[keep] = old
    out[where] = new
    return out


class _Grow:
    """A 1-D numpy array that grows by appending (capacity grows by a quarter: amortized O(1) per element,
    at most 25 % unused)."""

    def __init__(self, dtype):
        self.buf = _anon(1024, dtype)
        self.n = 0

    def extend(self, values):
        need = self.n + len(values)
        if need > len(self.buf):
            new = _anon(max(need, len(self.buf) + len(self.buf) // 4), self.buf.dtype)
            new[: self.n] = self.buf[: self.n]
            self.buf = new
        self.buf[self.n: need] = values
        self.n = need

    def grow_to(self, n):
        """Append zeros up to length ``n``."""
        if n > self.n:
            self.extend(np.zeros(n - self.n, dtype=self.buf.dtype))

    @property
    def array(self):
        return self.buf[: self.n]

    @property
    def nbytes(self):
        return self.buf.nbytes


class TermStore:
    """The distinct terms seen so far, with their document frequency and total count (see the module).

    ``add_batch(terms, df, total)`` registers a batch's distinct terms and returns their ids; ``df`` and
    ``total`` (int64 arrays by id), ``term(j)`` and ``len()`` give the vocabulary back. ``chunk``: terms
    encoded and hashed together (:data:`CHUNK`; the ids do not depend on it).
    """

    def __init__(self, seed=0, *, chunk=CHUNK):
        self.seed = int(seed)
        self.chunk = max(1, int(chunk))
        self._keys = np.zeros(0, dtype=np.uint64)   # sorted
        self._ids = np.zeros(0, dtype=np.int32)     # id of each sorted key (< 2^31: check_term_count)
        self._check = _Grow(np.uint32)              # by id: 32 bits of the second hash
        self._df = _Grow(np.int64)
        self._total = _Grow(np.int64)
        self._blob = _Grow(np.uint8)
        self._ends = _Grow(np.int64)
        self._has_nul = None  # whether a term holds a NUL byte (known once the terms are read back)

    def __len__(self):
        return self._ends.n

    @property
    def nbytes(self):
        """Bytes held (capacity included)."""
        return (self._keys.nbytes + self._ids.nbytes + self._check.nbytes + self._df.nbytes
                + self._total.nbytes + self._blob.nbytes + self._ends.nbytes)

    def add_batch(self, terms, df, total):
        """Register distinct ``terms`` (a list of str, no repeats) with their document frequencies ``df``
        and counts ``total`` in the batch (int arrays of ``len(terms)``); returns their ids (int64).
        Raises :class:`HashCollision` when two different terms share a key.

        The terms are encoded and hashed ``chunk`` at a time (the temporaries of a chunk, not of the
        batch); the sorted keys are merged once per batch (one O(vocabulary) copy)."""
        n_terms = len(terms)
        keys = np.empty(n_terms, dtype=np.uint64)
        check = np.empty(n_terms, dtype=np.uint32)
        step = self.chunk
        for a in range(0, n_terms, step):
            part = terms[a: a + step]
            k, c = hash_terms(part, *_encode(part), self.seed)
            keys[a: a + len(part)], check[a: a + len(part)] = k, c.astype(np.uint32)  # the low 32 bits
        pos = np.searchsorted(self._keys, keys)
        found = pos < len(self._keys)
        found[found] = self._keys[pos[found]] == keys[found]
        ids = np.empty(n_terms, dtype=np.int64)
        ids[found] = self._ids[pos[found]]
        del pos
        clash = np.zeros(n_terms, dtype=bool)
        clash[found] = self._check.array[ids[found]] != check[found]
        if clash.any():
            i = int(np.flatnonzero(clash)[0])
            raise HashCollision(f"terms {self.term(int(ids[i]))!r} and {terms[i]!r} share a 64-bit key "
                                f"(seed {self.seed})")
        del clash
        new = np.flatnonzero(~found)
        del found
        if len(new):
            new_keys = keys[new]
            order = np.argsort(new_keys, kind="stable")
            new_keys = new_keys[order]
            same = np.flatnonzero(new_keys[1:] == new_keys[:-1])
            if len(same):
                a, b = new[order[same[0]]], new[order[same[0] + 1]]
                raise HashCollision(f"terms {terms[a]!r} and {terms[b]!r} share a 64-bit key (seed {self.seed})")
            first = len(self)
            ids[new] = np.arange(first, first + len(new))
            at = np.searchsorted(self._keys, new_keys)
            self._keys = _merge(self._keys, at, new_keys)
            self._ids = _merge(self._ids, at, ids[new[order]].astype(np.int32))
            del new_keys, order, at
            self._check.extend(check[new])
            self._has_nul = None  # new bytes: looked at again by terms()
            for a in range(0, len(new), step):  # the new terms' bytes, in id order
                blob, ends = _encode([terms[i] for i in new[a: a + step].tolist()])
                base = self._ends.array[-1] if len(self) else 0
                self._blob.extend(blob)
                self._ends.extend(base + ends)
        n = len(self)
        self._df.grow_to(n)
        self._total.grow_to(n)
        self._df.buf[ids] += np.asarray(df, dtype=np.int64)  # ids of distinct terms: no repeats
        self._total.buf[ids] += np.asarray(total, dtype=np.int64)
        return ids

    @property
    def df(self):
        """Document frequency by id: int64 ``(len(self),)`` (a view)."""
        return self._df.array

    @property
    def total(self):
        """Occurrences by id: int64 ``(len(self),)`` (a view)."""
        return self._total.array

    def term(self, j):
        """The term of id ``j`` (a new ``str``)."""
        ends = self._ends.buf
        start = int(ends[j - 1]) if j > 0 else 0
        return self._blob.buf[start: int(ends[j])].tobytes().decode("utf-8", "surrogatepass")

    def terms(self, ids):
        """The terms of ``ids`` (a list of str, in that order): their bytes gathered with NUL separators and
        decoded and split at once (C speed), or one by one when a term holds a NUL character."""
        ids = np.asarray(ids, dtype=np.int64)
        if len(ids) == 0:
            return []
        blob, ends = self._blob.array, self._ends.array
        if self._has_nul is None:
            self._has_nul = bool(np.any(blob == 0))
        if self._has_nul:
            return [self.term(int(j)) for j in ids]
        stops = ends[ids]
        starts = np.where(ids > 0, ends[np.maximum(ids - 1, 0)], 0)
        sizes = stops - starts + 1  # each term and its separator
        out_ends = np.cumsum(sizes)
        gather = np.arange(int(out_ends[-1]), dtype=np.int64) - np.repeat(out_ends - sizes - starts, sizes)
        buf = blob[np.minimum(gather, len(blob) - 1)] if len(blob) else np.zeros(len(gather), dtype=np.uint8)
        buf[out_ends - 1] = 0
        return buf[:-1].tobytes().decode("utf-8", "surrogatepass").split("\x00")


class TermSequence:
    """A read-only sequence view of a :class:`TermStore` (``len``, ``[j]``), decoding each term when asked:
    what :func:`rlsi.text.vectorize.kept_columns` needs of ``terms`` without a list of every term."""

    def __init__(self, store):
        self.store = store

    def __len__(self):
        return len(self.store)

    def __getitem__(self, j):
        if not 0 <= j < len(self.store):
            raise IndexError(j)
        return self.store.term(j)


def check_term_count(n_terms, n_docs):
    """Refuse more than 2³¹ distinct terms (the token cache holds int32 ids)."""
    if n_terms >= 2**31:  # pragma: no cover - 2 billion distinct terms
        raise CorpusError(f"more than 2^31 distinct terms after {n_docs} documents: prune the text first "
                          f"(a stricter token pattern or stop list)")
