"""Asking for sparsity: target_terms_per_topic finds λ₁ (rlsi.models.sparsity)."""

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from rlsi import BatchRLSI, TfidfVectorizer
from rlsi.datasets import load_demo_corpus
from rlsi.errors import RLSIError


@pytest.fixture(scope="module")
def med():
    corpus = load_demo_corpus()
    texts = corpus.texts if hasattr(corpus, "texts") else [d["text"] for d in corpus]
    return TfidfVectorizer(stemmer="english", min_df=2).fit_transform(texts)


@pytest.mark.parametrize("K,target", [(20, 30), (20, 200), (10, 1000)])
def test_fit_has_the_requested_terms_per_topic_within_20_percent(med, K, target):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = BatchRLSI(K, target_terms_per_topic=target, random_state=0, max_iter=50).fit(med)
    per_topic = model.components_.nnz / K
    assert 0.8 * target <= per_topic <= 1.2 * target
    # the λ₁ found is reported in the user's units and is the λ₁ of Eq. (1) when given back
    assert model.lambda1_ == pytest.approx(model.lambda1_effective_ * 1000 / med.shape[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        again = BatchRLSI(K, lambda1=model.lambda1_, random_state=0, max_iter=50).fit(med)
    assert again.lambda1_effective_ == pytest.approx(model.lambda1_effective_, rel=1e-12)
    # the fit continued from the search's state: every iteration it reports decreases Eq. (1) with the λ₁
    # found (a fit whose λ₁ changed after its first iterations would not have to)
    assert np.all(np.diff(model.objective_) <= 1e-9 * abs(model.objective_[0]))


def test_more_terms_asked_means_weaker_lambda1(med):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        lams = [BatchRLSI(10, target_terms_per_topic=t, random_state=0, max_iter=5).fit(med).lambda1_
                for t in (20, 100, 500)]
    assert lams[0] > lams[1] > lams[2]


def test_target_needs_l1_topics_and_fits_the_vocabulary(med):
    with pytest.raises(RLSIError, match="target_terms_per_topic needs l1 topics"):
        BatchRLSI(5, topic_penalty="l2", target_terms_per_topic=10).fit(med)
    with pytest.raises(RLSIError, match=r"target_terms_per_topic=10000000 is larger than the vocabulary"):
        BatchRLSI(5, target_terms_per_topic=10**7).fit(med)
    with pytest.raises(RLSIError, match="target_terms_per_topic=0 must be >= 1"):
        BatchRLSI(5, target_terms_per_topic=0).fit(med)


def test_the_search_and_the_fit_share_one_transposed_copy(med, monkeypatch):
    """BatchRLSI transposes X once: the search's bisection, its problems and the fit read the same D
    (at web scale each copy is GBs). Counted by wrapping RLSIProblem: every problem gets the caller's D."""
    from rlsi.models import local

    seen = []
    original = local.RLSIProblem.__init__

    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("D"))
        original(self, *args, **kwargs)

    monkeypatch.setattr(local.RLSIProblem, "__init__", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        BatchRLSI(10, target_terms_per_topic=50, random_state=0, max_iter=2).fit(med)
    assert len(seen) >= 2 and all(D is not None for D in seen)
    assert all(D is seen[0] for D in seen)


def test_the_fit_continues_the_search_and_is_deterministic(med, monkeypatch):
    """The fit starts where the search stopped (W and U of its last iterate, the λ₁ found), not from W₀
    again: it builds no problem of its own, its first U-step is warm, so its first objective is below that
    of a fit of the same λ₁ from W₀. Each round of the search starts a problem cold and runs
    ``ITERS_PER_ROUND`` iterations. Two fits with one seed are identical."""
    from rlsi.models import local
    from rlsi.models.sparsity import ITERS_PER_ROUND

    warm, built = [], []
    original, original_init = local.RLSIProblem.u_step, local.RLSIProblem.__init__

    def spy(self, executor):
        warm.append(self.U is not None)
        return original(self, executor)

    def spy_init(self, *args, **kwargs):
        built.append(1)
        original_init(self, *args, **kwargs)

    monkeypatch.setattr(local.RLSIProblem, "u_step", spy)
    monkeypatch.setattr(local.RLSIProblem, "__init__", spy_init)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        a = BatchRLSI(10, target_terms_per_topic=60, random_state=3, max_iter=4, tol=0.0).fit(med)
        n_search, n_built = len(warm) - 4, len(built)
        b = BatchRLSI(10, target_terms_per_topic=60, random_state=3, max_iter=4, tol=0.0).fit(med)
        scratch = BatchRLSI(10, lambda1=a.lambda1_, random_state=3, max_iter=4, tol=0.0).fit(med)
    rounds = n_search // ITERS_PER_ROUND
    assert rounds >= 1 and n_search == rounds * ITERS_PER_ROUND and n_built == rounds
    assert warm[:n_search + 4] == ([False] + [True] * (ITERS_PER_ROUND - 1)) * rounds + [True] * 4
    assert a.objective_[0] < scratch.objective_[0]
    assert (a.components_ != b.components_).nnz == 0
    np.testing.assert_array_equal(a.objective_, b.objective_)
    assert a.lambda1_ == b.lambda1_ and a.n_iter_ == 4
