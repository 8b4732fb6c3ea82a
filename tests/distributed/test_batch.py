"""DaskRLSI against the local BatchRLSI: equality, partitions, a lost worker, checkpoints, errors."""


import numpy as np
import pytest

from conftest import planted_corpus
from dask_helpers import killing_its_worker_once
from rlsi import io
from rlsi.distributed import DaskExecutor, DaskRLSI, _tasks
from rlsi.errors import RLSIError
from rlsi.models import BatchRLSI

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

PARAMS = dict(n_components=5, lambda1=0.5, max_iter=4, tol=1e-12, random_state=3)
RTOL = 1e-10  # sums over partitions are added in another order than the local pass: rounding only


@pytest.fixture(scope="module")
def X():
    return planted_corpus(n_docs=240, n_terms=130, n_topics=5, seed=4)


@pytest.fixture(scope="module")
def local_fits(X):
    """``local_fits(**params)`` -> (BatchRLSI, W) fitted with PARAMS updated by params (cached)."""
    cache = {}

    def get(**params):
        key = tuple(sorted(params.items()))
        if key not in cache:
            model = BatchRLSI(**dict(PARAMS, **params))
            cache[key] = model, model.fit_transform(X)
        return cache[key]

    return get


@pytest.fixture(scope="module")
def local(local_fits):
    return local_fits()  # topic_representation="auto": sparse, then dense once U is dense enough


def assert_same_fit(model, W, local, exact=False):
    ref, W_ref = local
    if exact:
        assert (model.components_ != ref.components_).nnz == 0
        np.testing.assert_array_equal(W, W_ref)
        np.testing.assert_array_equal(model.objective_, ref.objective_)
        return
    scale = abs(ref.components_).max()
    assert abs(model.components_ - ref.components_).max() <= RTOL * scale
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=RTOL * np.abs(W_ref).max())
    np.testing.assert_allclose(model.objective_, ref.objective_, rtol=RTOL)
    assert model.n_iter_ == ref.n_iter_


@pytest.mark.parametrize("n_workers", [1, 2, 3])
@pytest.mark.parametrize("representation", ["sparse", "auto"])
def test_equals_local_learner(X, local_fits, cluster_of, n_workers, representation):
    local = local_fits(topic_representation=representation)
    model = DaskRLSI(**PARAMS, client=cluster_of(n_workers), topic_representation=representation)
    W = model.fit_transform(X)
    assert len(model.partitions_) == n_workers
    # one partition runs the local learner's tasks on the same rows: bit-identical
    assert_same_fit(model, W, local, exact=n_workers == 1)
    assert model.bytes_moved_.shape == (model.n_iter_,) and np.all(model.bytes_moved_ > 0)
    assert model.topic_representation_ == local[0].topic_representation_
    if representation == "sparse":
        # the exact screening of term rows skips rows here too (it never changes U: checked above)
        assert local[0].n_rows_screened_ > 0 and model.n_rows_screened_ > 0


@pytest.mark.parametrize("n_workers", [1, 2])
def test_dense_topics_equal_the_local_dense_fit(X, local_fits, cluster_of, n_workers):
    local = local_fits(topic_representation="dense")
    model = DaskRLSI(**PARAMS, client=cluster_of(n_workers), topic_representation="dense")
    assert_same_fit(model, model.fit_transform(X), local, exact=n_workers == 1)
    assert model.topic_representation_ == "dense"


def test_l2_topics_are_dense_from_the_start_as_locally(X, local_fits, cluster_of):
    local = local_fits(topic_penalty="l2", lambda1=5.0)  # "auto" holds ℓ2 topics dense from the first step
    model = DaskRLSI(**dict(PARAMS, topic_penalty="l2", lambda1=5.0), client=cluster_of(2))
    assert_same_fit(model, model.fit_transform(X), local)
    assert model.topic_representation_ == local[0].topic_representation_ == "dense"


@pytest.mark.parametrize("n_workers", [1, 2])
def test_target_terms_per_topic_finds_the_local_lambda1(X, local_fits, cluster_of, n_workers):
    local = local_fits(target_terms_per_topic=12)
    model = DaskRLSI(**PARAMS, target_terms_per_topic=12, client=cluster_of(n_workers))
    W = model.fit_transform(X)
    # the search sees the same sampled rows of R and the same S (summed over partitions)
    assert model.lambda1_effective_ == pytest.approx(local[0].lambda1_effective_, rel=RTOL)
    assert model.lambda1_ == pytest.approx(local[0].lambda1_, rel=RTOL)
    assert_same_fit(model, W, local, exact=n_workers == 1)


def test_target_terms_per_topic_is_checked_as_locally(X):
    with pytest.raises(RLSIError, match="target_terms_per_topic needs l1 topics"):
        DaskRLSI(**PARAMS, topic_penalty="l2", target_terms_per_topic=10).fit(X)
    with pytest.raises(RLSIError, match="larger than the vocabulary"):
        DaskRLSI(**PARAMS, target_terms_per_topic=10**6).fit(X)


def test_uneven_partitions_with_an_empty_one(X, local, cluster_of):
    model = DaskRLSI(**PARAMS, client=cluster_of(2), partitions=[37, 0, 150, 53])
    W = model.fit_transform(X)
    assert model.partitions_ == [(0, 37), (37, 37), (37, 187), (187, 240)]
    assert_same_fit(model, W, local)


def test_tasks_survive_serialization_over_tcp(X, local, cluster_of):
    model = DaskRLSI(**PARAMS, client=cluster_of(2, "tcp"))
    assert_same_fit(model, model.fit_transform(X), local)


def test_lost_worker_is_recomputed_and_the_fit_matches(X, local, cluster_of, tmp_path, monkeypatch):
    from rlsi.distributed import open_cluster

    handle = open_cluster(n_workers=3)  # own cluster: one of its workers goes away
    flag = tmp_path / "killed"
    monkeypatch.setattr(_tasks, "doc_step", killing_its_worker_once(_tasks.doc_step, flag))
    try:
        model = DaskRLSI(**PARAMS, client=handle.client, partitions=3)
        W = model.fit_transform(X)
        workers_left = len(handle.client.nthreads())
    finally:
        handle.close()
    assert flag.exists() and workers_left == 2
    assert_same_fit(model, W, local)


def test_resume_from_checkpoint_equals_uninterrupted_fit(X, cluster_of, tmp_path):
    client = cluster_of(2)
    ckpt = tmp_path / "ckpt"
    full = DaskRLSI(**dict(PARAMS, max_iter=5), client=client)
    W_full = full.fit_transform(X)
    # a fit that stopped after 2 iterations (its client died), then resumed to the same total
    DaskRLSI(**dict(PARAMS, max_iter=2), client=client, checkpoint_dir=ckpt).fit(X)
    assert (ckpt / "state" / "manifest.json").exists() and sorted(p.name for p in ckpt.glob("W-*")) == [
        "W-000002-p0", "W-000002-p1"]
    resumed = DaskRLSI(**dict(PARAMS, max_iter=5), client=client, checkpoint_dir=ckpt, resume=True)
    W = resumed.fit_transform(X)
    assert resumed.resumed_from_ == 2 and resumed.n_iter_ == 5
    assert (resumed.components_ != full.components_).nnz == 0
    np.testing.assert_array_equal(W, W_full)
    np.testing.assert_array_equal(resumed.objective_, full.objective_)
    # the checkpoint of another fit is refused by name
    with pytest.raises(RLSIError, match="lambda2"):
        DaskRLSI(**dict(PARAMS, max_iter=5), lambda2=2.0, client=client, checkpoint_dir=ckpt,
                 resume=True).fit(X)


@pytest.mark.parametrize("extra", [dict(target_terms_per_topic=12), dict(topic_representation="sparse")],
                         ids=["target", "sparse"])
def test_resume_keeps_the_lambda1_found_and_the_representation(X, cluster_of, tmp_path, extra):
    client = cluster_of(2)
    ckpt = tmp_path / "ckpt"
    full = DaskRLSI(**dict(PARAMS, max_iter=5), **extra, client=client).fit(X)
    DaskRLSI(**dict(PARAMS, max_iter=2), **extra, client=client, checkpoint_dir=ckpt).fit(X)
    resumed = DaskRLSI(**dict(PARAMS, max_iter=5), **extra, client=client, checkpoint_dir=ckpt, resume=True).fit(X)
    assert resumed.resumed_from_ == 2 and resumed.lambda1_effective_ == full.lambda1_effective_
    assert resumed.topic_representation_ == full.topic_representation_
    assert (resumed.components_ != full.components_).nnz == 0
    np.testing.assert_array_equal(resumed.objective_, full.objective_)


def test_unreachable_scheduler_is_one_clean_line(X):
    import socket

    with socket.socket() as s:  # a port with nothing listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    address = f"tcp://127.0.0.1:{port}"
    with pytest.raises(RLSIError) as err:
        DaskRLSI(**PARAMS, scheduler=address, timeout=1).fit(X)
    message = str(err.value)
    assert address in message and "\n" not in message


def test_save_format_is_the_local_learners(X, local, cluster_of, tmp_path):
    model = DaskRLSI(**PARAMS, client=cluster_of(2)).fit(X)
    io.save(tmp_path / "m", model=model.to_local())
    loaded = io.load(tmp_path / "m")["model"]
    assert type(loaded) is BatchRLSI
    np.testing.assert_allclose(loaded.transform(X[:7]), local[0].transform(X[:7]), rtol=0, atol=1e-9)
    io.save(tmp_path / "d", model=model)  # the estimator itself: its client is not part of the file
    again = io.load(tmp_path / "d")["model"]
    assert type(again) is DaskRLSI and again.client is None
    np.testing.assert_array_equal(again.bytes_moved_, model.bytes_moved_)


def test_dask_executor_runs_the_local_learners_tasks(X, local, cluster_of):
    ex = DaskExecutor(cluster_of(2))
    model = BatchRLSI(**PARAMS, executor=ex)
    W = model.fit_transform(X)
    assert_same_fit(model, W, local, exact=True)  # same blocks, reduced in block order
    assert ex.map(lambda v: v * v, [3, 1, 2]) == [9, 1, 4]


def test_the_workers_are_asked_of_the_scheduler(cluster_of, monkeypatch):
    # the client's cached identity lists no worker after its periodic refresh (every 2 s): a fit whose
    # partitions were placed from it failed with "partitions=None must be at least 1" once in a full run
    client = cluster_of(2)
    ex = DaskExecutor(client)
    monkeypatch.setattr(client, "scheduler_info", lambda *a, **k: {"workers": {}})
    assert len(ex.workers()) == 2
