"""Methods and their parameter grids."""

import math

import pytest

from rlsi.errors import RLSIError
from rlsi.experiments import METHODS, MethodSpec, make_methods
from rlsi.models import BatchRLSI


def test_make_methods_grids():
    specs = make_methods("lsi,rlsi", k_grid=(10, 20), lambda1_grid=(0.01, 0.1), fold_grid=(None, math.inf))
    assert [s.name for s in specs] == ["lsi", "rlsi"]
    assert len(specs[0].grid) == 2 and len(specs[1].grid) == 8      # K x λ1 x fold for RLSI
    assert specs[1].grid[1] == {"n_components": 10, "lambda1": 0.01, "random_state": 0,
                                "fold_lambda2": math.inf}
    with pytest.raises(RLSIError, match="method"):
        make_methods(["lsa"])
    with pytest.raises(RLSIError, match="empty parameter grid"):
        MethodSpec("x", "X", None, [])


def test_rlsi_variants_carry_their_penalties():
    for name, (topic, doc) in {"rlsi": ("l1", "l2"), "rlsi-l2l1": ("l2", "l1"), "rlsi-l1l1": ("l1", "l1"),
                               "rlsi-l2l2": ("l2", "l2")}.items():
        model = METHODS[name][1](n_components=3, lambda1=0.1, random_state=1)
        assert isinstance(model, BatchRLSI)
        assert (model.topic_penalty, model.doc_penalty, model.random_state) == (topic, doc, 1)
