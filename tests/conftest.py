"""Shared fixtures: synthetic corpora, the location of the shared development data, and a run of a test
under two numba threads on any machine."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import settings

# Property tests draw the same examples on every run (CI on a clean checkout cannot meet a new, unlucky
# draw); widen the search locally with --hypothesis-seed or a profile of your own.
settings.register_profile("rlsi", derandomize=True, deadline=None)
settings.load_profile("rlsi")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = (REPO / ".." / "shared" / "data").resolve()


def shared_collection(name):
    """Path of ``../shared/data/NAME`` next to the repository, or skip the test with the reason."""
    path = SHARED_DATA / name
    if not path.is_dir():
        pytest.skip(f"shared development data not found at {path} (only present in the project workspace)")
    return path


def in_numba_threads(request, n=2):
    """True when numba runs ``n`` threads in this process. Otherwise (numba's default is the core count, so
    a one-core machine has one) the calling test is run again in a child pytest with ``NUMBA_NUM_THREADS=n``
    (numba allows more threads than cores), this test fails unless the child passed it, and False is
    returned: the caller returns, its comparison made in the child. Thread-independence tests call it
    instead of skipping on one core."""
    import numba

    if numba.config.NUMBA_NUM_THREADS >= n:
        return True
    env = dict(os.environ, NUMBA_NUM_THREADS=str(n))
    child = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", request.node.nodeid],
                           cwd=REPO, env=env, capture_output=True, text=True)
    assert child.returncode == 0 and "1 passed" in child.stdout, (
        f"with NUMBA_NUM_THREADS={n} in a child:\n{child.stdout[-4000:]}\n{child.stderr[-2000:]}")
    return False


def planted_corpus(n_docs=200, n_terms=120, n_topics=4, words_per_topic=12, seed=0, dtype=np.float64):
    """A docs x terms tf-idf-like CSR with ``n_topics`` planted, disjoint sparse topics plus noise."""
    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for d in range(n_docs):
        topics = rng.choice(n_topics, size=rng.integers(1, 3), replace=False)
        for t in topics:
            words = t * words_per_topic + rng.choice(words_per_topic, size=6, replace=False)
            rows += [d] * len(words)
            cols += list(words)
            vals += list(rng.uniform(0.5, 1.5, size=len(words)))
        noise = rng.choice(n_terms, size=3, replace=False)
        rows += [d] * 3
        cols += list(noise)
        vals += list(rng.uniform(0.0, 0.2, size=3))
    X = sp.csr_matrix((vals, (rows, cols)), shape=(n_docs, n_terms), dtype=dtype)
    X.sum_duplicates()
    return X


@pytest.fixture
def planted():
    return planted_corpus()
