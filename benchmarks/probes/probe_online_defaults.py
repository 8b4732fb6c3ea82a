"""Which ξ (``n_inner``) and ``topic_sweeps`` for OnlineRLSI's defaults: one pass over shuffled 20 Newsgroups
(K = 30, the bench_pipeline vectorisation), CPU seconds of ``fit_transform`` and the accuracy of
LogisticRegression on the topic vectors (test split folded in). Each argument is one setting's keywords.

    PYTHONPATH=src python benchmarks/probes/probe_online_defaults.py "n_inner=1" "n_inner=5, topic_sweeps=None" \\
        "n_inner=5, topic_sweeps=3" "n_inner=5, topic_sweeps=1" "n_inner=3, topic_sweeps=3"
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from bench_pipeline import load_20ng  # noqa: E402
from harness import shared_data, use_src  # noqa: E402

use_src()

import numpy as np  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402
from sklearn.linear_model import LogisticRegression  # noqa: E402

from rlsi import OnlineRLSI  # noqa: E402


def main(argv=None):
    settings = sys.argv[1:] if argv is None else argv
    data = load_20ng(shared_data() / "twenty_newsgroups" / "corpus.jsonl.gz")
    vec = TfidfVectorizer()
    X, y = vec.fit_transform(data["train"][0]), np.asarray(data["train"][1])
    Xt, yt = vec.transform(data["test"][0]), data["test"][1]
    perm = np.random.default_rng(0).permutation(X.shape[0])  # as fetch_20newsgroups delivers it
    X, y = X[perm], y[perm]
    OnlineRLSI(5, batch_size=100).fit(X[:600])  # compile / load the kernels
    for text in settings:
        kw = eval(f"dict({text})")  # a probe's command line, not a library input
        model = OnlineRLSI(30, random_state=0, **kw)
        start = time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            W = model.fit_transform(X)
        cpu = time.process_time() - start
        acc = LogisticRegression(max_iter=1000).fit(W, y).score(model.transform(Xt), yt)
        density = model.components_.nnz / np.prod(model.components_.shape)
        print(f"{text or 'defaults':32s} CPU {cpu:5.1f} s  accuracy {100 * acc:.1f} %  topic density {density:.4f}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    sys.exit(main())
