"""Child process of test_memory.py: fit batch RLSI on a memory-mapped matrix directory and print the
estimated and the measured peak memory as JSON. Run in a fresh process so that the peak is this fit's, not
the test session's: the peak is ``VmHWM``, which starts afresh at exec (``ru_maxrss`` would carry the
pytest parent's peak over fork + exec); ``ru_maxrss`` is printed too, for the record."""

import json
import resource
import sys

import numpy as np

from rlsi.datasets.synthetic import make_corpus
from rlsi.io.matrix import load_matrix
from rlsi.models import BatchRLSI
from rlsi.models.memory import current_rss, estimate_for, peak_rss


LAMBDA1 = 0.001  # per 1000 documents: live topics, about 4 % non-zero (0.05 leaves them empty), at λ₂ = 1 ...
LAMBDA2 = 1.0
SETTINGS = {"paper": (LAMBDA1, LAMBDA2), "defaults": (0.01, 1e-3)}  # ... and at the estimators' defaults


def main(path, k, max_iter, setting="paper"):
    # load or compile every kernel first, so that the baseline holds them (their cost is not the fit's)
    small = make_corpus(300, 2000, 30, n_topics=5, seed=1, dtype=load_matrix(path).X.dtype).X
    BatchRLSI(5, max_iter=2, random_state=0).fit(small)
    estimate_for(BatchRLSI(5, lambda1=LAMBDA1, lambda2=LAMBDA2, max_iter=2, random_state=0), small)  # its kernels
    del small
    baseline = current_rss()
    X = load_matrix(path).X
    lambda1, lambda2 = SETTINGS[setting]
    model = BatchRLSI(k, lambda1=lambda1, lambda2=lambda2, max_iter=max_iter, random_state=0)
    estimate = estimate_for(model, X, baseline=baseline)
    before_fit = peak_rss()
    model.fit(X)
    peak = peak_rss()
    maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"baseline": baseline, "peak": peak, "peak_before_fit": before_fit, "ru_maxrss": maxrss, "estimate": estimate.peak, "phase": estimate.phase,
                      "components": estimate.components,
                      "topic_density": model.components_.nnz / np.prod(model.components_.shape)}))


def main_online(path, k, batch_size):
    """One pass of OnlineRLSI in mini-batches of ``batch_size`` with CSR topics (as at a web vocabulary, where
    dense M x K topics do not fit): the estimate with the fitted topics' density, and the measured peak."""
    from rlsi.models import OnlineRLSI

    small = make_corpus(300, 2000, 30, n_topics=5, seed=1, dtype=load_matrix(path).X.dtype).X
    OnlineRLSI(5, lambda1=0.001, batch_size=100, topic_sweeps=3, random_state=0).with_tuning(dense_max_bytes=0).fit(small)
    del small
    baseline = current_rss()
    X = load_matrix(path).X
    # the fit and the estimate (which reads the model's tuning): CSR topics
    model = OnlineRLSI(k, lambda1=LAMBDA1, batch_size=batch_size, topic_sweeps=3, random_state=0)
    model.with_tuning(dense_max_bytes=0)
    model.fit(X)
    peak = peak_rss()
    density = model.components_.nnz / np.prod(model.components_.shape)
    estimate = estimate_for(model, X, baseline=baseline, topic_density=density)
    print(json.dumps({"baseline": baseline, "peak": peak, "estimate": estimate.peak, "components": estimate.components,
                      "topic_density": density}))


if __name__ == "__main__":
    if sys.argv[1] == "online":
        main_online(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *sys.argv[4:])
