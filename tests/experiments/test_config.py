"""ProtocolConfig: the settings of run_protocol as one value, checked when made; one seed for folds and models."""

import dataclasses
import json
import math

import pytest

from rlsi.errors import RLSIError
from rlsi.experiments import DEFAULT_FOLD_GRID, DEFAULT_K_GRID, ProtocolConfig, run_protocol


def test_defaults_are_the_protocols_and_values_are_normalised():
    c = ProtocolConfig()
    assert c.protocols == ("cv", "best") and c.k_grid == DEFAULT_K_GRID and c.fold_grid == DEFAULT_FOLD_GRID
    c = ProtocolConfig(protocols="best", k_grid=[2, 3], fold_grid=[None, math.inf])
    assert c.protocols == ("best",) and c.k_grid == (2, 3) and c.fold_grid == (None, math.inf)
    assert hash(c) == hash(ProtocolConfig(protocols=("best",), k_grid=(2, 3), fold_grid=(None, math.inf)))
    assert dataclasses.replace(c, n_folds=3).n_folds == 3
    assert ProtocolConfig(metrics=("map",), cv_tune=("map", "ndcg@10")).all_metrics == ["map", "ndcg@1", "ndcg@10"]


@pytest.mark.parametrize("kwargs, message", [
    ({"protocols": ("cv", "paper")}, "protocol"),
    ({"test": "wilcoxon"}, "test"),
    ({"term_model": "tfidf"}, "term_model"),
    ({"n_folds": 1}, "n_folds"),
    ({"n_repeats": 0}, "n_repeats"),
    ({"seed": -1}, "seed"),
    ({"seed": 0.5}, "seed"),
])
def test_bad_settings_fail_when_the_config_is_made(kwargs, message):
    with pytest.raises(RLSIError, match=message):
        ProtocolConfig(**kwargs)


def test_one_seed_drives_the_folds_and_the_models(tiny):
    config = ProtocolConfig(protocols=("cv",), k_grid=(2,), lambda1_grid=(0.05,), n_folds=2, alphas=(0.0, 1.0),
                            seed=7)
    rep = run_protocol(tiny, ["rlsi"], config)
    assert all(s["random_state"] == 7 for s in rep.grids["rlsi"].settings)
    settings = json.loads(rep.to_json())["settings"]
    assert settings["seed"] == 7 and "random_state" not in settings
    other = run_protocol(tiny, ["rlsi"], dataclasses.replace(config, seed=8))
    assert all(s["random_state"] == 8 for s in other.grids["rlsi"].settings)
    with pytest.raises(TypeError, match="ProtocolConfig"):
        run_protocol(tiny, ["rlsi"], {"seed": 7})
