"""Metrics: hand-computed cases, trec_eval conventions, the vectorised back end, parity with pytrec_eval."""

import math
from pathlib import Path

import numpy as np
import pytest

from rlsi.errors import RLSIError
from rlsi.evaluation.metrics import (METRICS, MatrixEvaluator, average_precision, evaluate, get_metric,
                                     judgement_matrix, mean_scores, ndcg_at_k, precision_at_k, recall_at_k,
                                     reciprocal_rank)
from rlsi.evaluation.trec import read_qrels, run_from_scores

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data"


def test_average_precision_r_n_r_with_three_relevant():
    run = {"a": 3.0, "b": 2.0, "c": 1.0}                  # ranking a b c = R N R
    qrels = {"a": 1, "b": 0, "c": 2, "d": 1}               # d relevant but not retrieved: R = 3
    assert average_precision(run, qrels) == pytest.approx((1 / 1 + 2 / 3) / 3, abs=1e-15)
    assert precision_at_k(run, qrels, 2) == 0.5            # 1 relevant in the top 2
    assert precision_at_k(run, qrels, 5) == 2 / 5          # divided by k although only 3 retrieved
    assert recall_at_k(run, qrels, 1) == 1 / 3
    assert recall_at_k(run, qrels, 100) == 2 / 3
    assert reciprocal_rank(run, qrels) == 1.0
    assert reciprocal_rank({"b": 5.0, "a": 1.0}, qrels) == 1 / 2


def test_graded_ndcg_by_hand():
    run = {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0}        # grades in ranking order: 3 0 2 1
    qrels = {"a": 3, "b": 0, "c": 2, "d": 1, "e": 3}       # e (grade 3) not retrieved
    # DCG@3 = 3/log2(2) + 0/log2(3) + 2/log2(4) = 3 + 0 + 1 = 4
    # ideal grades 3 3 2 1: IDCG@3 = 3 + 3/log2(3) + 2/log2(4) = 4 + 3/log2(3)
    assert ndcg_at_k(run, qrels, 3) == pytest.approx(4 / (4 + 3 / math.log2(3)), abs=1e-15)
    assert ndcg_at_k(run, qrels, 1) == 1.0                 # 3/3
    # k = 10: DCG = 4 + 1/log2(5); IDCG = 4 + 3/log2(3) + 1/log2(5)
    full = (4 + 1 / math.log2(5)) / (4 + 3 / math.log2(3) + 1 / math.log2(5))
    assert ndcg_at_k(run, qrels, 10) == pytest.approx(full, abs=1e-15)
    assert ndcg_at_k(run, qrels, None) == pytest.approx(full, abs=1e-15)


def test_negative_grades_are_non_relevant_with_zero_gain():
    qrels = {"a": 2, "bad": -3}
    run = {"bad": 2.0, "a": 1.0}
    # same as if 'bad' were unjudged: relevant at rank 2, DCG = 2/log2(3), IDCG = 2
    assert ndcg_at_k(run, qrels, 5) == pytest.approx(1 / math.log2(3), abs=1e-15)
    assert average_precision(run, qrels) == 0.5


def test_ties_are_broken_by_docid_descending():
    qrels = {"a": 1}
    run = {"a": 1.0, "b": 1.0}                             # tie: trec_eval ranks b before a
    assert average_precision(run, qrels) == 0.5
    assert reciprocal_rank(run, qrels) == 0.5
    assert average_precision({"a": 1.0, "Z": 1.0}, qrels) == 1.0   # 'a' > 'Z' in code-point order


def test_scores_are_compared_in_single_precision_like_trec_eval():
    qrels = {"a": 1}
    # 1 + 1e-9 rounds to 1.0 in float32: a tie, so b (larger docid) comes first, as in trec_eval
    assert average_precision({"a": 1.0 + 1e-9, "b": 1.0}, qrels) == 0.5
    assert average_precision({"a": 1.0 + 1e-6, "b": 1.0}, qrels) == 1.0   # distinct in float32


def test_empty_run_and_missing_or_extra_queries():
    qrels = {"q1": {"a": 1}, "q2": {"b": 2, "c": 0}, "q3": {"c": 0}}   # q3 has no relevant document
    run = {"q2": {"b": 1.0}, "qx": {"a": 1.0}}             # q1 missing, qx not judged
    res = evaluate(run, qrels, ["map", "ndcg@10", "p@1", "mrr"])
    assert set(res) == {"map", "ndcg@10", "p@1", "mrr"}
    for values in res.values():
        assert values == {"q1": 0.0, "q2": 1.0}
    assert mean_scores(res) == {"map": 0.5, "ndcg@10": 0.5, "p@1": 0.5, "mrr": 0.5}
    assert evaluate({}, qrels)["ndcg@3"] == {"q1": 0.0, "q2": 0.0}
    assert average_precision({}, {"a": 1}) == 0.0
    assert ndcg_at_k({"a": 1.0}, {"b": 0}, 3) == 0.0       # no relevant document: 0, not NaN


def test_evaluate_default_metrics_and_errors():
    assert list(evaluate({"q": {"a": 1.0}}, {"q": {"a": 1}})) == ["map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10"]
    with pytest.raises(RLSIError, match="no query with a relevant"):
        evaluate({}, {"q": {"a": 0}})
    with pytest.raises(RLSIError, match="query 'q'.*not finite"):
        evaluate({"q": {"a": float("nan")}}, {"q": {"a": 1}})
    with pytest.raises(RLSIError, match="no per-query value"):
        mean_scores({"map": {}})


@pytest.mark.parametrize("name, base, k", [
    ("map", "map", None), ("MAP", "map", None), ("ndcg@10", "ndcg", 10), ("ndcg_cut_3", "ndcg", 3),
    ("ndcg", "ndcg", None), ("p@5", "p", 5), ("P_5", "p", 5), ("recall@100", "recall", 100),
    ("mrr", "mrr", None), ("recip_rank", "mrr", None),
])
def test_metric_names(name, base, k):
    metric = get_metric(name)
    assert (metric.base, metric.k) == (base, k)
    assert metric.base in METRICS


@pytest.mark.parametrize("name", ["bpref", "p", "map@10", "ndcg@0", "recall", "ndcg@x", ""])
def test_unknown_metric_names_list_known_forms(name):
    with pytest.raises(RLSIError, match=r"map.*ndcg@k.*p@k.*recall@k.*mrr|is written"):
        get_metric(name)
    with pytest.raises(RLSIError):
        evaluate({}, {"q": {"a": 1}}, [name])

# --- the vectorised back end (MatrixEvaluator) -----------------------------------------------------

ALL = ("map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10", "ndcg@50", "p@5", "recall@10", "mrr", "ndcg")


def test_judgement_matrix_by_hand():
    qrels = {"q1": {"b": 2, "a": 0, "gone": 3, "c": -1}, "q2": {"c": 1}}
    grades, ideal = judgement_matrix(["q1", "q2"], ["a", "b", "c"], qrels)
    np.testing.assert_array_equal(grades, [[0, 2, 0], [0, 0, 1]])   # rel <= 0 and absent docs: 0
    assert [x.tolist() for x in ideal] == [[3.0, 2.0], [1.0]]        # all judged positives, descending


def test_matrix_evaluator_by_hand():
    # one query, columns a b c; judged a:1, c:2, and "gone":1 which is not in the corpus (counts in R)
    ev = MatrixEvaluator.from_qrels(["q"], ["a", "b", "c"], {"q": {"a": 1, "c": 2, "gone": 1}}, ALL)
    out = ev(np.array([[0.5, 0.9, 0.1]]))                            # ranking b a c: grades 0 1 2
    assert out["map"][0] == pytest.approx((1 / 2 + 2 / 3) / 3, abs=1e-15)
    assert out["p@5"][0] == 2 / 5 and out["recall@10"][0] == 2 / 3 and out["mrr"][0] == 1 / 2
    # DCG@3 = 0 + 1/log2(3) + 2/log2(4) = 1/log2(3) + 1; IDCG@3 = 2 + 1/log2(3) + 1/log2(4)
    assert out["ndcg@3"][0] == pytest.approx((1 / math.log2(3) + 1) / (2.5 + 1 / math.log2(3)), abs=1e-15)
    # k = 50 > n_docs: the DCG stops at 3 documents, the IDCG still counts all three judged positives
    assert out["ndcg@50"][0] == out["ndcg@3"][0] == out["ndcg"][0]
    assert out["ndcg@1"][0] == 0.0
    # a tie (b = a) is broken by docid descending: b first, as trec_eval does
    assert ev(np.array([[0.5, 0.5, 0.1]]))["mrr"][0] == 1 / 2


def test_matrix_evaluator_empty_queries_and_shapes():
    ev = MatrixEvaluator.from_qrels(["q1", "q2"], ["a", "b"], {"q1": {"a": 1}, "q2": {"b": 1}}, ["map"],
                                    empty=[False, True])
    out = ev(np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert out["map"].tolist() == [1.0, 0.0]                        # q2 retrieved nothing: 0, not 1
    assert ev.names == ["map"]
    with pytest.raises(RLSIError, match="expected"):
        ev(np.zeros((2, 3)))
    with pytest.raises(RLSIError, match="expected"):
        MatrixEvaluator(["a", "b"], np.zeros((1, 3)), [np.ones(1)])
    with pytest.raises(RLSIError, match="unknown metric"):
        MatrixEvaluator(["a"], np.zeros((1, 1)), [np.ones(1)], ["bpref"])


def test_matrix_evaluator_equals_evaluate_with_ties_and_missing_docs():
    rng = np.random.default_rng(0)
    nq, nd = 12, 40
    doc_ids = [f"D{rng.integers(0, 10**6)}_{j}" for j in range(nd)]
    qids = [f"q{i}" for i in range(nq)]
    grades = rng.choice([0, 0, 0, 0, 1, 2, 3, -1], size=(nq, nd))
    grades[:, 0] = np.maximum(grades[:, 0], 1)  # every query has a relevant document
    qrels = {q: {doc_ids[j]: int(grades[i, j]) for j in range(nd) if grades[i, j] != 0}
             for i, q in enumerate(qids)}
    qrels["q3"]["not-in-corpus"] = 2
    qrels["q7"].update({"gone": 1, "gone2": 0})
    scores = np.round(rng.random((nq, nd)), 1)  # many ties
    scores[5] = 0.0                              # a query whose scores are all tied
    scores[6] += 1e-10 * rng.integers(0, 3, nd)  # near-ties, equal in float32 (trec_eval's precision)
    fast = MatrixEvaluator.from_qrels(qids, doc_ids, qrels, ALL)(scores)
    ref = evaluate(run_from_scores(scores, qids, doc_ids, depth=None), qrels, ALL)
    for m in ALL:
        for i, q in enumerate(qids):
            assert fast[m][i] == pytest.approx(ref[m][q], abs=1e-12), (m, q)


# --- parity with trec_eval (through pytrec_eval) ---------------------------------------------------

PYTREC_MEASURES = {"map", "ndcg_cut.1,3,5,10", "P.5", "recall.100", "recip_rank", "ndcg"}
OURS = {"map": "map", "ndcg@1": "ndcg_cut_1", "ndcg@3": "ndcg_cut_3", "ndcg@5": "ndcg_cut_5",
        "ndcg@10": "ndcg_cut_10", "p@5": "P_5", "recall@100": "recall_100", "mrr": "recip_rank",
        "ndcg": "ndcg"}


def _check_parity(run, qrels):
    pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec_eval (pip install pytrec-eval-terrier) "
                                                            "is needed for the trec_eval parity test")
    theirs = pytrec_eval.RelevanceEvaluator(qrels, PYTREC_MEASURES).evaluate(run)
    ours = evaluate(run, qrels, list(OURS))
    compared = 0
    for qid in ours["map"]:
        if qid not in run:          # pytrec_eval skips queries without a run; we score them 0
            assert all(ours[m][qid] == 0.0 for m in OURS)
            continue
        for mine, trec in OURS.items():
            assert ours[mine][qid] == pytest.approx(theirs[qid][trec], abs=1e-9), (qid, mine)
            compared += 1
    assert compared > 0
    return ours


def test_parity_with_pytrec_eval_on_synthetic_runs():
    rng = np.random.default_rng(7)
    docs = [f"d{i:03d}" for i in range(300)] + [f"D{i}" for i in range(20)]
    qrels, run = {}, {}
    for q in range(60):
        qid = f"q{q}"
        judged = rng.choice(len(docs), size=rng.integers(1, 40), replace=False)
        qrels[qid] = {docs[j]: int(rng.choice([-1, 0, 0, 1, 1, 2, 3, 4])) for j in judged}
        if q % 10 == 9:
            continue                                 # some judged queries have no run
        retrieved = rng.choice(len(docs), size=rng.integers(1, 250), replace=False)
        # coarse scores produce many ties; favour judged documents so metrics are not all ~0
        # near-ties (1e-10 apart) exercise the single-precision comparison of trec_eval
        run[qid] = {docs[j]: float(np.round(rng.random() + 0.5 * (docs[j] in qrels[qid]), 1)
                                   + 1e-10 * rng.integers(0, 3))
                    for j in retrieved}
    run["unjudged"] = {"d001": 1.0}
    _check_parity(run, qrels)


def test_parity_with_pytrec_eval_on_cranfield():
    folder = DATA / "cranfield"
    if not (folder / "qrels.tsv").is_file():
        pytest.skip(f"shared Cranfield collection not found at {folder.resolve()}")
    qrels = read_qrels(folder / "qrels.tsv")
    rng = np.random.default_rng(0)
    docs = [str(i) for i in range(1, 1401)]
    run = {}
    for qid, judged in qrels.items():
        scores = np.round(rng.random(len(docs)), 2)          # ties
        boost = {d: 0.3 * max(rel, 0) for d, rel in judged.items()}
        run[qid] = {d: float(s + boost.get(d, 0.0)) for d, s in zip(docs, scores)}
    ours = _check_parity(run, qrels)
    assert len(ours["map"]) == 225
    # The run is random scores plus a boost 0.3·rel on the relevant documents only. Such a boost can
    # never lower AP: the evaluation order is by (float32 score, docid), both unchanged for the other
    # documents and non-decreasing for the relevant ones, so the j-th best relevant document has at most
    # as many non-relevant ones above it as before, and AP = (1/R) Σ_j j / rank_j cannot drop. So the
    # boosted run scores at least the unboosted one on every query, and more on some.
    plain = {q: {d: s - 0.3 * max(qrels[q].get(d, 0), 0) for d, s in r.items()} for q, r in run.items()}
    plain_ap = evaluate(plain, qrels, ["map"])["map"]
    assert all(ours["map"][q] >= plain_ap[q] for q in plain_ap)
    assert mean_scores(ours)["map"] > mean_scores({"map": plain_ap})["map"]
