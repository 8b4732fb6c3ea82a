"""DaskOnlineRLSI against the local OnlineRLSI."""

import numpy as np
import pytest

from conftest import planted_corpus
from rlsi.distributed import DaskOnlineRLSI
from rlsi.models import OnlineRLSI

PARAMS = dict(n_components=5, lambda1=0.5, batch_size=60, rho=0.5, n_inner=2, random_state=2)


@pytest.fixture(scope="module")
def X():
    return planted_corpus(n_docs=200, n_terms=110, n_topics=5, seed=7)


@pytest.mark.parametrize("n_workers", [1, 2, 3])
def test_fit_equals_local_learner(X, cluster_of, n_workers):
    ref = OnlineRLSI(**PARAMS).fit(X)
    model = DaskOnlineRLSI(**PARAMS, client=cluster_of(n_workers)).fit(X)
    if n_workers == 1:  # one part: the local learner's tasks and sums, bit for bit
        assert (model.components_ != ref.components_).nnz == 0
        np.testing.assert_array_equal(model.stats_.R, ref.stats_.R)
    scale = abs(ref.components_).max()
    assert abs(model.components_ - ref.components_).max() <= 1e-10 * scale
    np.testing.assert_allclose(model.stats_.S, ref.stats_.S, rtol=1e-10, atol=1e-12)
    assert model.stats_.n_docs == ref.stats_.n_docs and model.stats_.weight == ref.stats_.weight
    assert len(model.bytes_moved_) == model.n_batches_ == ref.n_batches_


def test_partial_fit_with_uneven_parts(X, cluster_of):
    ref = OnlineRLSI(**PARAMS)
    model = DaskOnlineRLSI(**PARAMS, client=cluster_of(2), partitions=3)
    for a, b in [(0, 7), (7, 100), (100, 101), (101, 200)]:  # a batch smaller than the parts: empty parts
        W_ref = ref.partial_fit_transform(X[a:b])
        W = model.partial_fit_transform(X[a:b])
        np.testing.assert_allclose(W, W_ref, rtol=0, atol=1e-10 * max(1.0, np.abs(W_ref).max()))
    assert abs(model.components_ - ref.components_).max() <= 1e-10 * abs(ref.components_).max()
    local = model.to_local()
    assert type(local) is OnlineRLSI and (local.components_ != model.components_).nnz == 0
