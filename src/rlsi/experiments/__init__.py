"""The experimental protocol of the TOIS retrieval comparison (§8.2) as a reusable runner.

For each topic-modelling method and each setting of its grid (K, and λ₁ for RLSI), the model is fitted
**once** on the documents; the topic matching scores of every query against every document are computed
once and combined with the (fixed) term matching scores for every α of the grid (Eq. 9). Every
(setting, α) is evaluated per query, so that both protocols, and any significance test, reuse the same
table of per-query values. The term baseline has no parameter and is scored as it is.

Modules, in pipeline order:

* :mod:`~rlsi.experiments.prepare` — a collection as matrices (:func:`prepare_collection`);
* :mod:`~rlsi.experiments.methods` — the methods and their grids (:data:`METHODS`, :func:`make_methods`);
* :mod:`~rlsi.experiments.grid` — each setting fitted once, Eq. 9 at every α (:class:`Experiment`,
  :class:`GridResult`);
* :mod:`~rlsi.experiments.selection` — the ``"best"`` (paper) and ``"cv"`` (cross-validated) protocols;
* :mod:`~rlsi.experiments.edges` — warnings for chosen settings on the edge of a grid (:func:`find_edges`);
* :mod:`~rlsi.experiments.report` — tables with one-sided p-values (:class:`ProtocolReport`);
* :mod:`~rlsi.experiments.config` — the settings of a run (:class:`ProtocolConfig`);
* :mod:`~rlsi.experiments.protocol` — all of it on one collection (:func:`run_protocol`);
* :mod:`~rlsi.experiments.defaults` — the defaults, those ``benchmarks/bench_ranking.py`` measures.

Evaluation is vectorised over the whole document ranking (no depth cut-off) by
:class:`rlsi.evaluation.metrics.MatrixEvaluator`, with trec_eval's conventions (ties broken by document id
descending, linear gains, IDCG over all judged documents, relevant documents missing from the corpus
counted in R). A query none of whose terms is in the vocabulary retrieves nothing and scores 0, as a query
missing from a run does in trec_eval. Per-query values are returned for the paired tests of
:mod:`rlsi.evaluation.significance`.

Typical use::

    from rlsi.datasets import demo_collection_dir
    from rlsi.evaluation import load_collection
    from rlsi.experiments import ProtocolConfig, run_protocol
    report = run_protocol(load_collection(demo_collection_dir()), ["lsi", "rlsi"], ProtocolConfig(k_grid=(10, 20)))
    print(report.to_text())
"""

from .config import ProtocolConfig
from .defaults import (DEFAULT_ALPHAS, DEFAULT_CV_TUNE, DEFAULT_FIT_NORMALIZE, DEFAULT_FOLD_GRID,
                       DEFAULT_K_GRID, DEFAULT_LAMBDA1_GRID, DEFAULT_STEMMER, EXTENDED_K_GRID,
                       EXTENDED_LAMBDA1_GRID, GRID_PRESETS, PAPER_K_GRID, PAPER_LAMBDA1_GRID)
from .edges import find_edges
from .grid import Experiment, GridResult
from .methods import METHODS, MethodSpec, make_methods
from .prepare import PreparedCollection, evaluate_scores, prepare_collection
from .protocol import run_protocol
from .report import ProtocolReport
from .selection import Selection, cross_validate, query_folds, select_best

__all__ = ["PreparedCollection", "prepare_collection", "evaluate_scores", "MethodSpec", "METHODS",
           "make_methods", "GridResult", "Experiment", "Selection", "select_best", "cross_validate",
           "ProtocolReport", "ProtocolConfig", "run_protocol", "query_folds", "DEFAULT_ALPHAS", "DEFAULT_K_GRID",
           "DEFAULT_LAMBDA1_GRID", "DEFAULT_FOLD_GRID", "DEFAULT_FIT_NORMALIZE", "DEFAULT_STEMMER",
           "DEFAULT_CV_TUNE", "EXTENDED_K_GRID", "EXTENDED_LAMBDA1_GRID", "GRID_PRESETS", "PAPER_K_GRID",
           "PAPER_LAMBDA1_GRID", "find_edges"]
