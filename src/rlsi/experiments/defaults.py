"""The defaults of the retrieval protocol: the pipeline ``benchmarks/bench_ranking.py`` measures.

Each choice (stemming, L2-normalised rows when fitting tf-idf models, projection folding-in for RLSI, the
λ₁ grid, tuning on mean(MAP, NDCG@10)) is the one that benchmark's ablations on Cranfield, MED and CISI
found at least as good as its alternatives.
"""

from __future__ import annotations

import math

__all__ = ["DEFAULT_ALPHAS", "DEFAULT_K_GRID", "DEFAULT_LAMBDA1_GRID", "DEFAULT_FOLD_GRID",
           "DEFAULT_FIT_NORMALIZE", "DEFAULT_STEMMER", "DEFAULT_CV_TUNE", "EXTENDED_K_GRID",
           "EXTENDED_LAMBDA1_GRID", "GRID_PRESETS"]

#: α from 0 to 1 in steps of 0.05 (§8.2).
DEFAULT_ALPHAS = tuple(round(0.05 * i, 2) for i in range(21))
#: Number of topics (the paper's range [10, 50]).
DEFAULT_K_GRID = (10, 20, 30, 40, 50)
#: λ₁ of BatchRLSI on its per-thousand-documents scale (``lambda1_scale="per_doc"``); see the benchmark.
DEFAULT_LAMBDA1_GRID = (0.001, 0.002, 0.005, 0.01, 0.02)
#: The ``"extended"`` preset: on Cranfield, MED and CISI the tuned optimum of the default
#: grids lies on their edge (K = 50, the largest; λ₁ = 0.001, the smallest), so this preset reaches K = 300
#: (the papers went up to 500) for every method, and λ₁ = 1e-5 per 1000 documents for RLSI. It is not the
#: default because its cost is far above a few minutes (see ``rlsi evaluate --help``).
EXTENDED_K_GRID = (10, 20, 50, 100, 200, 300)
#: λ₁ of the ``"extended"`` preset (per 1000 documents), two decades below the default grid.
EXTENDED_LAMBDA1_GRID = (1e-5, 1e-4, 0.001, 0.01)
#: Named grids: ``{name: {"k_grid": ..., "lambda1_grid": ...}}`` (``rlsi evaluate --grid NAME``).
GRID_PRESETS = {
    "default": {"k_grid": DEFAULT_K_GRID, "lambda1_grid": DEFAULT_LAMBDA1_GRID},
    "extended": {"k_grid": EXTENDED_K_GRID, "lambda1_grid": EXTENDED_LAMBDA1_GRID},
}
#: RLSI folding-in searched by default: the projection ``v = Uᵀx`` (:class:`~rlsi.retrieval.topic.RidgeFolding`
#: with λ = inf); ``None`` would be the model's own ridge with its λ₂ (see the benchmark's ablation).
DEFAULT_FOLD_GRID = (math.inf,)
#: Fit tf-idf topic models on L2-normalised document rows by default (see :class:`~rlsi.experiments.Experiment`).
DEFAULT_FIT_NORMALIZE = "l2"
#: Stemmer of the default vectorizer used by the benchmark and ``rlsi evaluate``.
DEFAULT_STEMMER = "english"
#: Metric maximised on the training folds by the cross-validated protocol (mean of the listed metrics).
DEFAULT_CV_TUNE = ("map", "ndcg@10")
