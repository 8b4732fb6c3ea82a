"""Child process of test_stc_memory.py: fit one STC learner on random counts and print its estimated and
measured peak memory (``VmHWM``, which starts afresh at exec) as JSON."""

import json
import sys

import numpy as np
import scipy.sparse as sp

from rlsi.models.memory import current_rss, peak_rss
from rlsi.models.stc import MedSTC, OnlineSTC, SparseTopicalCoding
from rlsi.models.stc.memory import estimate_for


def counts(n, m, seed):
    rng = np.random.default_rng(seed)
    return sp.random(n, m, density=0.005, format="csr", random_state=seed,
                     data_rvs=lambda k: rng.integers(1, 4, k).astype(float))


def main(kind, n, m, k):
    cls = {"stc": SparseTopicalCoding, "ostc": OnlineSTC, "medstc": MedSTC}[kind]
    params = {"batch_size": 256} if kind == "ostc" else {"max_iter": 1}
    small = counts(60, m, 2)
    cls(4, n_jobs=1, **({"batch_size": 16} if kind == "ostc" else {"max_iter": 1})).fit(
        small, np.arange(60) % 3 if kind == "medstc" else None)  # the kernels compile outside the measure
    del small
    X = counts(n, m, 1)
    baseline = current_rss()
    model = cls(k, n_jobs=1, **params)
    estimate = estimate_for(model, X, baseline=baseline)
    model.fit(X, np.arange(n) % 3 if kind == "medstc" else None)
    print(json.dumps({"baseline": baseline, "peak": peak_rss(), "estimate": estimate.peak,
                      "components": estimate.components}))


if __name__ == "__main__":
    main(sys.argv[1], *map(int, sys.argv[2:5]))
