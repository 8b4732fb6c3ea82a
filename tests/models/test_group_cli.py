"""``rlsi fit --model grlsi|gnmf|crlsi|cnmf`` and per-group ``rlsi topics``."""

import gzip
import json

import numpy as np
import pytest

from rlsi.cli.group import document_labels
from rlsi.errors import RLSIError
from cli_runner import run

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


@pytest.mark.parametrize("model", ["grlsi", "gnmf", "crlsi", "cnmf"])
def test_fit_group_model_and_topics(tmp_path, capsys, model):
    corpus = write_corpus(tmp_path / "c.jsonl.gz", ["heart", "eye", "germ"] * 8)
    out_dir = tmp_path / "m"
    options = (["--shared-topics", 2] if model in ("grlsi", "gnmf") else []) + (
        ["--lambda1", 1] if model in ("grlsi", "crlsi") else [])  # each model's own options (others are refused)
    status, _, err = run(capsys, "fit", corpus, "--model", model, "--label-field", "label", *options,
                         "--class-topics", 2, "--max-iter", 5, "-o", out_dir)
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


def test_search_a_group_model_on_the_documents_classes(tmp_path, capsys):
    """``rlsi search`` with a group model matches each document on its class's topics (§7.3): with
    ``--label-field`` the corpus's classes, else the predicted ones; the topic scores are those of the
    library's ClassTopicMatcher; the saved index keeps the classes; wrong uses are one-line errors."""
    from rlsi.io import load
    from rlsi.retrieval import Searcher
    from rlsi.retrieval.group_topic import ClassTopicMatcher
    from rlsi.text import read_corpus

    labels = ["heart", "eye", "germ"] * 8
    corpus = write_corpus(tmp_path / "c.jsonl.gz", labels)
    out_dir = tmp_path / "m"
    status, _, err = run(capsys, "fit", corpus, "--model", "grlsi", "--label-field", "label", "--shared-topics", 2,
                         "--class-topics", 2, "--lambda1", 1, "--max-iter", 5, "-o", out_dir)
    assert status == 0, err
    status, out, err = run(capsys, "search", out_dir, "cardiac pressure", "--corpus", corpus, "--label-field",
                           "label", "--json", "-k", 24, "--save-index")
    assert status == 0, err
    hits = json.loads(out)["results"]
    bundle = load(out_dir)
    model, vec = bundle["model"], bundle["vectorizer"]
    docs = read_corpus(corpus)
    X = vec.transform(docs.texts)
    # the default folding: the model's own transform
    ref = ClassTopicMatcher(model, doc_labels=np.array(labels)).fit(X)
    want = ref.score(vec.transform(["cardiac pressure"]))[0]
    assert len(hits) == 24
    for h in hits:
        assert h["topic_score"] == pytest.approx(want[docs.ids.index(h["doc_id"])], abs=1e-9)
    index = Searcher.load(out_dir)
    assert isinstance(index.topic_index_, ClassTopicMatcher)
    assert [model.classes_[p] for p in index.topic_index_.doc_classes_] == labels
    status, again, _ = run(capsys, "search", out_dir, "cardiac pressure", "--json", "-k", 24)
    assert status == 0  # the saved index ranks the same; without the corpus there is no snippet to show
    assert json.loads(again)["results"] == [{k: v for k, v in h.items() if k not in ("title", "snippet")}
                                            for h in json.loads(out)["results"]]
    assert all("snippet" in h for h in hits)
    # errors: the index exists; a matrix directory; a corpus without the field
    status, _, err = run(capsys, "search", out_dir, "eye", "--label-field", "label")
    assert status != 0 and "already has an index" in err and err.strip().count("\n") == 0
    status, _, err = run(capsys, "search", out_dir, "eye", "--corpus", corpus, "--label-field", "topic")
    assert status != 0 and "no field 'topic'" in err and err.strip().count("\n") == 0
    status, _, err = run(capsys, "index", out_dir, "--matrix", tmp_path / "none", "--label-field", "label")
    assert status != 0 and "label field needs a corpus" in err and err.strip().count("\n") == 0
    # without labels: every document on its predicted class
    status, out, err = run(capsys, "index", out_dir, "--corpus", corpus)
    assert status == 0, err
    index = Searcher.load(out_dir)
    assert [model.classes_[p] for p in index.topic_index_.doc_classes_] == list(model.predict(X))


def test_search_label_field_with_a_model_that_is_not_a_group_model(tmp_path, capsys):
    corpus = write_corpus(tmp_path / "c.jsonl.gz", ["heart", "eye", "germ"] * 4)
    status, _, err = run(capsys, "fit", corpus, "-k", 3, "--max-iter", 3, "-o", tmp_path / "m")
    assert status == 0, err
    status, _, err = run(capsys, "search", tmp_path / "m", "eye", "--corpus", corpus, "--label-field", "label")
    assert status != 0 and "used by group models only" in err and err.strip().count("\n") == 0


@pytest.mark.parametrize("model, option", [("gnmf", ["--lambda1", 1]), ("cnmf", ["--init", "random"]),
                                           ("crlsi", ["--shared-topics", 3]), ("grlsi", ["-k", 7]),
                                           ("grlsi", ["--online"])])
def test_an_option_the_model_would_ignore_is_refused_in_one_line(tmp_path, capsys, model, option):
    corpus = write_corpus(tmp_path / "c.jsonl.gz", ["heart", "eye", "germ"] * 4)
    status, _, err = run(capsys, "fit", corpus, "--model", model, *option, "-o", tmp_path / "m")
    assert status == 2 and err.startswith("rlsi: error: --model ") and err.count("\n") == 1, err
    assert not (tmp_path / "m").exists()
