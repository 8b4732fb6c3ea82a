"""The defaults of the retrieval protocol: the pipeline ``benchmarks/bench_ranking.py`` measures.

Each choice (stemming, L2-normalised rows when fitting tf-idf models, projection folding-in for RLSI, the
λ₁ grid, tuning on mean(MAP, NDCG@10)) is the one that benchmark's ablations on Cranfield, MED and CISI
found at least as good as its alternatives.
"""

from __future__ import annotations

import math

__all__ = ["DEFAULT_ALPHAS", "DEFAULT_K_GRID", "DEFAULT_LAMBDA1_GRID", "DEFAULT_FOLD_GRID",
           "DEFAULT_FIT_NORMALIZE", "DEFAULT_STEMMER", "DEFAULT_CV_TUNE", "EXTENDED_K_GRID",
           "EXTENDED_LAMBDA1_GRID", "PAPER_K_GRID", "PAPER_LAMBDA1_GRID", "GRID_PRESETS"]

#: α from 0 to 1 in steps of 0.05 (§8.2).
DEFAULT_ALPHAS = tuple(round(0.05 * i, 2) for i in range(21))
#: Number of topics: on MED (the collection shipped with rlsi) the cross-validated choice of RLSI, LSI and NMF is
#: K = 50 in every fold, inside this grid (benchmarks/results/defaults.md).
DEFAULT_K_GRID = (10, 20, 50, 100)
#: λ₁ of BatchRLSI on its per-thousand-documents scale (``lambda1_scale="per_doc"``), a factor √10 apart: on MED the
#: cross-validated choice is 0.003 (4 folds) or 0.001 (1), inside the grid.
DEFAULT_LAMBDA1_GRID = (3e-4, 1e-3, 3e-3, 1e-2)
#: The ``"paper"`` preset: the paper's K range [10, 50] and the λ₁ grid of the ranking benchmark
#: (benchmarks/bench_ranking.py; the README's ranking figures). On Cranfield, MED and CISI its tuned optimum lies
#: on its edge (K = 50, the largest; λ₁ = 0.001, the smallest).
PAPER_K_GRID = (10, 20, 30, 40, 50)
PAPER_LAMBDA1_GRID = (0.001, 0.002, 0.005, 0.01, 0.02)
#: The ``"extended"`` preset reaches K = 300 (the papers went up to 500) for every method, and λ₁ = 1e-5 per
#: 1000 documents for RLSI; its RLSI fits at K >= 200 and λ₁ <= 1e-4 take minutes each.
EXTENDED_K_GRID = (10, 20, 50, 100, 200, 300)
#: λ₁ of the ``"extended"`` preset (per 1000 documents), two decades below the default grid.
EXTENDED_LAMBDA1_GRID = (1e-5, 1e-4, 0.001, 0.01)
#: Named grids: ``{name: {"k_grid": ..., "lambda1_grid": ...}}`` (``rlsi evaluate --grid NAME``).
GRID_PRESETS = {
    "default": {"k_grid": DEFAULT_K_GRID, "lambda1_grid": DEFAULT_LAMBDA1_GRID},
    "paper": {"k_grid": PAPER_K_GRID, "lambda1_grid": PAPER_LAMBDA1_GRID},
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
