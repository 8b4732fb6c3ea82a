"""A new placement needs no learner edit: a toy in-process placement (the documents held in row shards, the
stream counting its mini-batches), registered by name from this file, fits BatchRLSI and streams OnlineRLSI
through the contract of rlsi.models.placement alone, with the local placement's numbers bit for bit. It is the
worked example of docs/design.md ("Adding a placement")."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from rlsi import BatchRLSI, OnlineRLSI, regularized_lsi
from rlsi.errors import RLSIError
from rlsi.models import placement as placement_mod
from rlsi.models import steps
from rlsi.models.host_stream import HostStream
from rlsi.models.local import RLSIProblem
from rlsi.models.placement import Placement, PlacedCorpus, PlacedProblem, get_placement, register_placement
from rlsi.models.seeding import seed_topics
from rlsi.models.sparsity import rows_of_R
from rlsi.models.spec import RLSISpec

from conftest import planted_corpus


class ShardCorpus:
    """The documents in row shards (a stand-in for documents held elsewhere); the start's primitives run shard
    by shard, the problem on the whole (the local one)."""

    def __init__(self, X, n_shards, calls):
        self.X = X
        self.shape, self.dtype = X.shape, X.dtype
        bounds = np.linspace(0, X.shape[0], n_shards + 1).astype(int)
        self.shards = [X[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
        self.calls = calls
        self._D = None

    @property
    def D(self):
        if self._D is None:
            self._D = self.X.T.tocsr()
        return self._D

    def x_sqnorm(self):
        self.calls.append("x_sqnorm")
        return np.square(self.X.data, dtype=np.float64).sum()

    def seed_topics(self, k, rng):
        self.calls.append("seed_topics")
        return seed_topics(self.X, k, rng)  # the same draw on every placement

    def project(self, U, spec):
        """The ridge projection, shard by shard (each document's row is its own: the same numbers)."""
        self.calls.append("project")
        return np.vstack([steps.update_doc_vectors(S, U, penalty=spec.doc_penalty, lam=spec.lambda2,
                                                   settings=spec.inner_settings(), dtype=S.dtype)[0]
                          for S in self.shards])

    def place(self, W):
        return W

    def search_rows(self, W, rows):
        self.calls.append("search_rows")
        return rows_of_R(self.D, rows, W), steps.gram(W)

    def problem(self, W, lam, spec):
        self.calls.append("problem")
        return RLSIProblem.of_spec(self.X, W, lam, spec, D=self.D)

    def resume(self, spec):
        return None


class CountingStream(HostStream):
    """The host stream, counting the mini-batches it opens."""

    key = "shards"

    def __init__(self, spec, stats, topics, calls):
        super().__init__(spec, stats, topics)
        self.calls = calls

    def begin(self, batch, decay, n_inner):
        self.calls.append("begin")
        return super().begin(batch, decay, n_inner)


class ShardPlacement(Placement):
    """The toy placement: a name, a corpus, a stream (the contract's defaults for the rest)."""

    name = "shards"
    stream_key = "shards"

    def __init__(self, n_shards=3):
        self.n_shards = n_shards
        self.calls = []

    def corpus(self, X, spec, executor):
        return ShardCorpus(X, self.n_shards, self.calls)

    def stream(self, spec, stats, topics=None, *, n_inner=1, first=None):
        return CountingStream(spec, stats, topics, self.calls)


@pytest.fixture
def registered(monkeypatch):
    """``"shards"`` registered for the test (the registry is a dict: the test's entry is removed after it)."""
    made = []

    def factory(name, **options):
        made.append(ShardPlacement(int(name.partition(":")[2] or 3)))
        return made[-1]

    monkeypatch.setitem(placement_mod._REGISTRY, "shards", factory)
    return made


def _fit(model, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return model.fit(X)


KW = dict(lambda1=0.01, max_iter=6, tol=0, random_state=0)


def test_the_toy_corpus_and_problem_meet_the_contract():
    X = planted_corpus(n_docs=60, n_terms=60, seed=1)
    corpus = ShardCorpus(X, 2, [])
    assert isinstance(corpus, PlacedCorpus)
    assert isinstance(corpus.problem(np.ones((60, 3)), 0.1, RLSISpec.of(BatchRLSI(3))), PlacedProblem)
    assert not isinstance(object(), PlacedCorpus)


@pytest.mark.parametrize("target", [None, 12])
def test_a_registered_toy_placement_fits_batch_rlsi_bit_for_bit(registered, target):
    """By name (``placement="shards:4"``) and as an object, with a λ₁ search (``target_terms_per_topic``) or
    without: the local fit's topics, vectors and objective, through the toy's primitives."""
    X = planted_corpus(n_docs=240, n_terms=120, seed=7)
    kw = dict(KW, target_terms_per_topic=target)
    local = _fit(BatchRLSI(5, **kw), X)
    by_name = _fit(BatchRLSI(5, placement="shards:4", **kw), X)
    toy = ShardPlacement(2)
    as_object = _fit(BatchRLSI(5, placement=toy, **kw), X)
    assert registered and registered[-1].n_shards == 4
    assert (np.diff(local.components_.indptr) > 0).all()  # every topic alive: a fit worth comparing
    for got in (by_name, as_object):
        assert (got.components_ != local.components_).nnz == 0
        np.testing.assert_array_equal(got.objective_, local.objective_)
        np.testing.assert_array_equal(got.transform(X), local.transform(X))
    assert {"seed_topics", "project", "problem"} <= set(toy.calls)
    assert ("search_rows" in toy.calls) == (target is not None)
    assert clone(by_name).placement == "shards:4"


def test_a_toy_placement_streams_online_rlsi_bit_for_bit(registered):
    X = planted_corpus(n_docs=300, n_terms=100, seed=8)
    kw = dict(lambda1=0.5, batch_size=50, rho=1.0, random_state=0)
    local = OnlineRLSI(4, **kw).fit(X)
    toy = ShardPlacement()
    got = OnlineRLSI(4, placement=toy, **kw).fit(X)
    assert toy.calls.count("begin") == 6  # one per mini-batch
    assert (got.components_ != local.components_).nnz == 0
    np.testing.assert_array_equal(got.stats_.S, local.stats_.S)
    # a stream moves between placements between two partial_fit calls
    moved = OnlineRLSI(4, **kw)
    moved.partial_fit(X[:150])
    moved.set_params(placement="shards").partial_fit(X[150:])
    ref = OnlineRLSI(4, **kw)
    ref.partial_fit(X[:150])
    ref.partial_fit(X[150:])
    np.testing.assert_array_equal(moved.components_.toarray(), ref.components_.toarray())


def test_the_public_solver_takes_a_placement():
    X = planted_corpus(n_docs=120, n_terms=60, seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        U, V, info = regularized_lsi(X, 3, placement=ShardPlacement(), **KW)
        U0, V0, info0 = regularized_lsi(X, 3, **KW)
    assert (U != U0).nnz == 0 if sp.issparse(U) else np.array_equal(U, U0)
    np.testing.assert_array_equal(V, V0)


def test_an_unknown_placement_is_one_clear_error():
    with pytest.raises(RLSIError, match="placement='nowhere' is not a placement"):
        get_placement("nowhere")
    with pytest.raises(RLSIError, match="not a placement"):
        BatchRLSI(3, placement="nowhere").fit(planted_corpus(n_docs=20, n_terms=60, seed=1))
    with pytest.raises(RLSIError, match="not a placement"):
        get_placement(object())
    assert register_placement  # providers register with it (rlsi.registry.PLACEMENTS names them)
