"""Report tables: means, one-sided p-values against the baseline, stars, bold, strict JSON."""

import json
import math

from rlsi.experiments import ProtocolReport, Selection


def _report():
    q = ["a", "b", "c"]
    baseline = {"map": dict(zip(q, [0.0, 0.0, 0.0])), "ndcg@10": dict(zip(q, [0.9, 0.9, 0.9]))}
    sel = Selection("m", "M", "best", {"map": dict(zip(q, [0.1, 0.2, 0.3])),
                                       "ndcg@10": dict(zip(q, [0.3, 0.3, 0.3]))},
                    [{"setting": {"n_components": 2, "fold_lambda2": math.inf}, "alpha": 0.5, "queries": 3}])
    return ProtocolReport("coll", "BM25", ["map", "ndcg@10"], baseline, {"best": [sel]}, test="randomization")


def test_rows_means_and_exact_randomization_p_values():
    rows = _report().rows("best")
    assert [r["method"] for r in rows] == ["BM25", "BM25+M"]
    assert rows[1]["means"]["map"] == (0.1 + 0.2 + 0.3) / 3
    # 3 paired differences, all positive: of the 2^3 sign flips only the observed one reaches its mean,
    # so the exact one-sided p-value is 1/8; for NDCG@10 every difference is negative: p = 1
    assert rows[1]["p"] == {"map": 0.125, "ndcg@10": 1.0}


def test_stars_bold_and_json():
    rep = _report()
    md = rep.to_markdown()
    # level 0.05: p = 0.125 gets no star; the best mean of each column is bold
    assert "| BM25+M | **0.2000** | 0.3000 |" in md and "| BM25 | 0.0000 | **0.9000** |" in md
    assert "| BM25+M | **0.2000 *** |" in rep.to_markdown(level=0.2)
    assert "0.2000*" in rep.to_text(level=0.2)
    data = json.loads(rep.to_json())      # strict JSON: the infinite fold λ is written "inf"
    assert data["protocols"]["best"][1]["chosen"][0]["setting"]["fold_lambda2"] == "inf"
    assert data["protocols"]["best"][0]["per_query"]["map"] == {"a": 0.0, "b": 0.0, "c": 0.0}
