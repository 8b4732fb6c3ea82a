"""rlsi.text.vocab.TermStore: the vocabulary of the streaming ingestion in numpy arrays — ids in order of
first appearance (as a dict gives them), df and counts summed over batches, exact round trip of the
terms, and key collisions detected (within a batch and across batches) and recovered from by ingest."""

import logging

import numpy as np
import pytest

from rlsi.errors import CorpusError
from rlsi.io.matrix import load_matrix
from rlsi.text import TfidfVectorizer
from rlsi.text import vocab
from rlsi.text.ingest import ingest
from rlsi.text.vocab import HashCollision, TermSequence, TermStore, hash_terms


def _reference(batches):
    """ids, df, total from a plain dict, for batches of (terms, df, total)."""
    ids, df, total = {}, {}, {}
    for terms, d, t in batches:
        for term, a, b in zip(terms, d, t):
            ids.setdefault(term, len(ids))
            df[term] = df.get(term, 0) + a
            total[term] = total.get(term, 0) + b
    return ids, df, total


@pytest.mark.parametrize("chunk", [7, 65536])
def test_ids_counts_and_terms_match_a_dict(chunk):  # several chunks of a batch, or one
    rng = np.random.default_rng(3)
    words = ["".join(rng.choice(list("abcxyzé日\u00df"), size=rng.integers(1, 9))) for _ in range(3000)]
    words += ["\ud800lone", "", "a b"]  # a lone surrogate (JSON allows it), the empty string, a space
    words = list(dict.fromkeys(words))
    store, batches = TermStore(seed=5, chunk=chunk), []
    for _ in range(12):
        terms = list(dict.fromkeys(rng.choice(words, size=rng.integers(0, 400)).tolist()))
        d = rng.integers(1, 5, size=len(terms))
        t = d + rng.integers(0, 3, size=len(terms))
        got = store.add_batch(terms, d, t)
        batches.append((terms, d, t))
        ids, _, _ = _reference(batches)
        assert got.tolist() == [ids[w] for w in terms]
    ids, df, total = _reference(batches)
    assert len(store) == len(ids)
    assert store.terms(range(len(store))) == list(ids)  # decoded exactly, in order of first appearance
    assert store.df.tolist() == [df[w] for w in ids] and store.total.tolist() == [total[w] for w in ids]
    seq = TermSequence(store)
    assert len(seq) == len(ids) and seq[len(ids) - 1] == list(ids)[-1]
    with pytest.raises(IndexError):
        seq[len(ids)]


def test_keys_depend_on_the_bytes_and_the_seed():
    terms = ["alpha", "alphb", "blpha", "alpha\x00", "", "\x00", "ab", "ba"]
    blob = np.frombuffer("".join(terms).encode(), dtype=np.uint8)
    ends = np.cumsum([len(t.encode()) for t in terms])
    k0, c0 = hash_terms(terms, blob, ends, 0)
    k1, c1 = hash_terms(terms, blob, ends, 1)
    assert len(set(k0.tolist())) == len(terms) and len(set(c0.tolist())) == len(terms)
    assert not np.any(k0 == k1) and not np.any(c0 == c1) and not np.any(k0 == c0)
    again = hash_terms(terms, blob, ends, 0)
    assert np.array_equal(again[0], k0) and np.array_equal(again[1], c0)  # deterministic (in a process)


def _weak(real):
    """A hash whose key is the term's byte length at seed 0 (collides), the real one at other seeds."""
    def weak(terms, blob, ends, seed=0):
        keys, check = real(terms, blob, ends, seed)
        if seed == 0:
            keys = np.diff(np.concatenate([[0], ends])).astype(np.uint64)
        return keys, check
    return weak


def test_collisions_are_detected(monkeypatch):
    monkeypatch.setattr(vocab, "hash_terms", _weak(vocab.hash_terms))
    store = TermStore(seed=0, chunk=1)  # a collision between chunks of one batch is found too
    with pytest.raises(HashCollision, match="'ab' and 'cd' share a 64-bit key"):
        store.add_batch(["ab", "cd"], [1, 1], [1, 1])  # within a batch
    store = TermStore(seed=0)
    store.add_batch(["ab", "xyz"], [1, 1], [1, 1])
    with pytest.raises(HashCollision, match="'ab' and 'cd' share a 64-bit key"):
        store.add_batch(["ab", "cd"], [1, 1], [1, 1])  # against an earlier batch
    store = TermStore(seed=1)
    assert store.add_batch(["ab", "cd"], [1, 1], [1, 1]).tolist() == [0, 1]


def test_ingest_starts_again_with_another_seed_on_a_collision(tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(vocab, "hash_terms", _weak(vocab.hash_terms))
    path = tmp_path / "c.jsonl"
    docs = ["alpha beta gamma", "beta delta epsilon", "zeta eta theta alpha", "iota kappa"]
    path.write_text("".join(f'{{"id": "d{i}", "text": "{t}"}}\n' for i, t in enumerate(docs)))
    reference = TfidfVectorizer()
    X_ref = reference.fit_transform(docs)
    with caplog.at_level(logging.WARNING, logger="rlsi.text.ingest"):
        vec = ingest(path, tmp_path / "m", batch_docs=2)
    assert "started again with hash seed 1" in caplog.text
    assert vec.feature_names_ == reference.feature_names_ and np.array_equal(vec.df_, reference.df_)
    X = load_matrix(tmp_path / "m").X
    assert np.array_equal(X.indices, X_ref.indices) and np.array_equal(X.data, X_ref.data)


def test_ingest_refuses_when_every_seed_collides(tmp_path, monkeypatch):
    real = vocab.hash_terms
    monkeypatch.setattr(vocab, "hash_terms", lambda terms, blob, ends, seed=0: (
        np.diff(np.concatenate([[0], ends])).astype(np.uint64), real(terms, blob, ends, seed)[1]))
    path = tmp_path / "c.jsonl"
    path.write_text('{"text": "alpha beta"}\n{"text": "gamma delta"}\n')
    with pytest.raises(CorpusError, match="share a 64-bit key .* in each of 3 vocabulary passes"):
        ingest(path, tmp_path / "m")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]  # no matrix, no token cache left
