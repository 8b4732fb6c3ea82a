"""``rlsi fit --model grlsi|gnmf|crlsi|cnmf`` and per-group ``rlsi topics`` (issue 11)."""

import gzip
import json

import numpy as np
import pytest

from rlsi.cli.group import document_labels
from rlsi.cli.main import main
from rlsi.errors import RLSIError

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

TOPICS = {"heart": "heart blood arteries veins pressure cardiac valves pulse",
          "eye": "eye lens retina vision cataract light focus pupil",
          "germ": "bacteria viruses immune cells infection antibodies fever vaccine"}


def write_corpus(path, labels):
    rng = np.random.default_rng(0)
    with gzip.open(path, "wt") as f:
        for i, label in enumerate(labels):
            words = TOPICS[label if isinstance(label, str) else label[0]].split() if label else TOPICS["eye"].split()
            text = " ".join(rng.choice(words, size=6)) + " patient study clinic"
            f.write(json.dumps({"id": f"d{i}", "text": text, "label": label}) + "\n")
    return path


def run(capsys, *argv):
    status = main(["-q", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("model", ["grlsi", "gnmf", "crlsi", "cnmf"])
def test_fit_group_model_and_topics(tmp_path, capsys, model):
    corpus = write_corpus(tmp_path / "c.jsonl.gz", ["heart", "eye", "germ"] * 8)
    out_dir = tmp_path / "m"
    status, _, err = run(capsys, "fit", corpus, "--model", model, "--label-field", "label", "--shared-topics", 2,
                         "--class-topics", 2, "--lambda1", 1, "--max-iter", 5, "-o", out_dir)
    assert status == 0, err
    status, out, _ = run(capsys, "topics", out_dir, "-n", 3)
    assert status == 0
    assert ("== shared" in out) == (model in ("grlsi", "gnmf"))
    assert "== class:heart" in out and "AvgComp=" in out
    status, out, _ = run(capsys, "topics", out_dir, "--json")
    assert "class:eye" in json.loads(out)["groups"]


def test_missing_label_field_is_one_line(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "c.jsonl.gz", ["heart", "eye", None] * 4)
    status, _, err = run(capsys, "fit", corpus, "--model", "grlsi", "-o", tmp_path / "m")
    assert status != 0 and "have no 'label' field value" in err and err.strip().count("\n") == 0


def test_multi_label_takes_first_and_unlabeled_policy():
    assert list(document_labels([["earn", "acq"], "grain", ["corn"]], "labels")) == ["earn", "grain", "corn"]
    with pytest.raises(RLSIError, match="2 of 3 documents have no 'labels'"):
        document_labels([[], "grain", None], "labels")
    assert list(document_labels([[], "grain"], "labels", "own-class")) == ["(unlabeled)", "grain"]
