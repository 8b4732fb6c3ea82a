"""The command's defaults give topics to read: `rlsi fit` + `rlsi topics` on the MED abstracts shipped with
rlsi keep a few hundred terms per topic (benchmarks/results/defaults.md has the figures and the Reuters and
20 Newsgroups gates), where the estimators' defaults, made for a pipeline, keep thousands."""

import re

import numpy as np

import rlsi
from rlsi.cli.main import main
from rlsi.datasets import demo_corpus_path
from rlsi.models.regularization import FEATURES


def _terms_per_topic(folder):
    return np.diff(rlsi.load(folder)["model"].get_topics().indptr)


def test_fit_and_topics_on_med_at_the_defaults_give_topics_of_a_few_hundred_terms(tmp_path, capsys):
    assert main(["-q", "fit", str(demo_corpus_path()), "-o", str(tmp_path / "read")]) == 0
    terms = _terms_per_topic(tmp_path / "read")
    assert len(terms) == 20 and terms.min() > 0 and np.median(terms) <= 300 and terms.mean() <= 300, terms
    assert terms.max() <= 1000, terms
    assert main(["topics", str(tmp_path / "read"), "-n", "5"]) == 0
    out = capsys.readouterr().out
    assert len(re.findall(r"^(?:\(-\) |    )?T\d+ ", out, re.M)) == 20
    assert main(["-q", "fit", str(demo_corpus_path()), "-o", str(tmp_path / "features"),
                 "--lambda1", str(FEATURES["lambda1"]), "--lambda2", str(FEATURES["lambda2"])]) == 0
    assert np.median(_terms_per_topic(tmp_path / "features")) > 10 * np.median(terms)
