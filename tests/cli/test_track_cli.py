"""``rlsi track`` and ``rlsi fit --online`` end to end on a small dated corpus written by the test."""

import argparse
import json

import numpy as np

import rlsi.io
from rlsi.cli import _common
from rlsi.cli._online import add_online_arguments, fit_online_from_args
from rlsi.models.online import OnlineRLSI
from rlsi.text.stream import StreamingTfidf
from cli_runner import run

THEMES = {
    "fruit": "apple banana cherry mango orchard harvest juice".split(),
    "cars": "engine wheel brake gearbox diesel motor garage".split(),
    "space": "rocket orbit launch satellite astronaut moon mission".split(),
}


def _corpus(path, with_bad_dates=False):
    rng = np.random.default_rng(0)
    rows = []
    for month in (1, 2, 3, 4):
        for i in range(30):
            themes = ["fruit", "cars"] if month < 3 else ["fruit", "cars", "space", "space"]
            words = list(rng.choice(THEMES[themes[i % len(themes)]], size=5, replace=False))
            rows.append({"id": f"{month}-{i}", "title": "", "text": " ".join(words),
                         "date": f"2001-{month:02d}-{1 + i % 28:02d}"})
    rng.shuffle(rows)  # the command sorts by date
    if with_bad_dates:
        rows.append({"id": "nodate", "text": "apple engine"})
        rows.append({"id": "baddate", "text": "apple engine", "date": "soon"})
    with open(path, "w") as f:
        for r in rows:
            f.write(json.dumps(r) + "\n")
    return path


ARGS = ["-k", "3", "--lambda1", "0.5", "--batch-size", "10", "--n-inner", "2"]


def test_track_writes_a_report(tmp_path, capsys, caplog):
    corpus = _corpus(tmp_path / "c.jsonl", with_bad_dates=True)
    out = tmp_path / "report"
    status, _, err = run(capsys, "track", corpus, "--date-field", "date", "--period", "month", *ARGS, "-o", out)
    assert status == 0, err
    assert "2 of 122 documents have no usable 'date' date" in caplog.text  # skipped, with a warning
    names = {p.name for p in out.iterdir()}
    assert {"report.md", "report.txt", "report.html", "shares.png", "shares.csv", "timeline.json", "model"} <= names
    assert "2001-04" in (out / "report.html").read_text()  # the browser test opens such a page
    assert any(n.startswith("topic_") and n.endswith(".png") for n in names)
    md = (out / "report.md").read_text()
    for month in ("2001-01", "2001-02", "2001-03", "2001-04"):
        assert month in md
    timeline = json.loads((out / "timeline.json").read_text())
    assert timeline["segments"] == ["2001-01", "2001-02", "2001-03", "2001-04"]
    assert timeline["n_docs"] == [30, 30, 30, 30]
    bundle = rlsi.io.load(out / "model")
    model, vec = bundle["model"], bundle["vectorizer"]
    assert isinstance(model, OnlineRLSI) and isinstance(vec, StreamingTfidf)
    assert model.n_docs_seen_ == 120 and model.n_features_in_ == len(vec.feature_names_) == 21
    # the space words (from March on) were appended to the vocabulary, after the 14 earlier words
    space = [vec.vocabulary_[w] for w in THEMES["space"]]
    assert min(space) == 14 and model.components_.shape == (3, 21)
    # running again replaces the previous report
    status, _, _ = run(capsys, "track", corpus, "--date-field", "date", "--period", "year", *ARGS, "-o", out)
    assert status == 0
    assert json.loads((out / "timeline.json").read_text())["segments"] == ["2001"]


def test_track_without_dates_and_with_fixed_idf(tmp_path, capsys):
    corpus = _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "r"
    status, _, err = run(capsys, "track", corpus, "--every", "3", "--idf", "fixed", "--warmup", "25",
                         "--plot-topics", "0", *ARGS, "-o", out)
    assert status == 0, err
    timeline = json.loads((out / "timeline.json").read_text())
    assert timeline["segments"][0] == "batches 1-3" and sum(timeline["n_docs"]) == 120
    assert not any(p.name.startswith("topic_") for p in out.iterdir())
    vec = rlsi.io.load(out / "model")["vectorizer"]
    assert vec.idf == "fixed" and vec.n_warmup_docs_ == 25


def test_track_errors_are_one_line(tmp_path, capsys):
    corpus = _corpus(tmp_path / "c.jsonl")
    status, _, err = run(capsys, "track", corpus, "--date-field", "when", *ARGS, "-o", tmp_path / "r")
    assert status == 2 and "no field 'when'" in err and err.count("\n") == 1
    status, _, err = run(capsys, "track", corpus, "--date-field", "date", "--period", "week", "--every", "2",
                         *ARGS, "-o", tmp_path / "r")
    assert status == 2 and "--every" in err
    other = tmp_path / "not-a-report"
    other.mkdir()
    (other / "precious.txt").write_text("keep me")
    status, _, err = run(capsys, "track", corpus, "--date-field", "date", *ARGS, "-o", other)
    assert status == 2 and "not an rlsi track report" in err
    assert (other / "precious.txt").read_text() == "keep me"
    assert not (tmp_path / "r").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left behind


def test_online_arguments_for_fit(tmp_path):
    parser = argparse.ArgumentParser()
    _common.add_model_arguments(parser)
    add_online_arguments(parser.add_argument_group("online"))
    args = parser.parse_args(["-k", "2", "--rho", "1", "--n-inner", "3", "--batch-size", "7", "--shuffle"])
    args.quiet = True
    rng = np.random.default_rng(0)
    X = rng.random((40, 12)) * (rng.random((40, 12)) < 0.4)
    model = fit_online_from_args(args, X)
    assert isinstance(model, OnlineRLSI)
    assert (model.rho, model.n_inner, model.batch_size, model.shuffle) == (1.0, 3, 7, True)
    assert model.n_batches_ == 6 and model.n_docs_seen_ == 40


def test_fit_online_command(tmp_path, capsys):
    corpus = _corpus(tmp_path / "c.jsonl")
    out = tmp_path / "m"
    status, _, err = run(capsys, "fit", corpus, "--online", "-k", "3", "--lambda1", "0.5", "--batch-size",
                         "16", "--rho", "0.5", "-o", out)
    assert status == 0, err
    model = rlsi.io.load(out)["model"]
    assert isinstance(model, OnlineRLSI) and model.rho == 0.5 and model.n_docs_seen_ == 120


def test_track_with_birth_reports_the_born_topic_and_its_documents(tmp_path, capsys):
    corpus = _corpus(tmp_path / "c.jsonl")  # the space theme arrives in month 3
    out = tmp_path / "report"
    status, _, err = run(capsys, "track", corpus, "--date-field", "date", "-k", "2", "--lambda1", "0.5",
                         "--batch-size", "20", "--n-inner", "2", "--birth", "--max-topics", "3", "-o", out)
    assert status == 0, err
    model = rlsi.io.load(out / "model")["model"]
    assert model.n_components_ == 3 and model.components_.shape[0] == 3
    born = [e for e in json.loads((out / "timeline.json").read_text())["events"] if e["kind"] == "born"]
    assert len(born) == 1 and born[0]["topic"] == 2 and born[0]["segment"] in ("2001-03", "2001-04")
    assert born[0]["documents"] and all(d.startswith(("3-", "4-")) for d in born[0]["documents"])
    assert "T3 born at 2001-0" in (out / "report.txt").read_text()
    assert "T3 born at" in (out / "report.md").read_text()


def test_max_topics_needs_birth(tmp_path, capsys):
    status, _, err = run(capsys, "track", _corpus(tmp_path / "c.jsonl"), "--max-topics", "4", "-o", tmp_path / "r")
    assert status != 0 and "--max-topics applies with --birth" in err


def test_track_with_seed_words_labels_the_topics_in_every_report(tmp_path, capsys):
    corpus = _corpus(tmp_path / "c.jsonl")  # the space theme arrives in month 3: its words are not in the first batch
    seeds = tmp_path / "seeds.json"
    seeds.write_text(json.dumps({"fruit": ["apple", "banana"], "space": ["rocket", "engine"]}))
    out = tmp_path / "report"
    status, _, err = run(capsys, "track", corpus, "--date-field", "date", *ARGS, "--seed-terms", seeds, "-o", out)
    assert status == 0, err
    assert "'rocket'" in err and "not in the vocabulary" in err  # resolved at the first mini-batch: named once
    bundle = rlsi.io.load(out / "model")
    model, vec = bundle["model"], bundle["vectorizer"]
    assert model.topic_names_ == ["fruit", "space", None]
    assert model.seed_terms_ == [sorted([vec.vocabulary_["apple"], vec.vocabulary_["banana"]]),
                                 [vec.vocabulary_["engine"]]]
    assert np.all(model.components_.toarray()[0, model.seed_terms_[0]] > 0)
    assert json.loads((out / "timeline.json").read_text())["names"] == ["fruit", "space", None]
    text, md = (out / "report.txt").read_text(), (out / "report.md").read_text()
    assert text.startswith("T1 [fruit]\n") and "\nT2 [space]\n" in text and "\nT3\n" in text
    assert "| T1 [fruit] | T2 [space] | T3 |" in md and "### T1 [fruit]" in md
    assert '"names":["fruit","space",null]' in (out / "report.html").read_text()
    # a resumed seeded stream goes on with its seeds and names; new seed words are refused in one line
    more = tmp_path / "more.jsonl"
    more.write_text("".join(json.dumps({"id": f"m{i}", "text": "apple banana rocket orbit"}) + "\n" for i in range(20)))
    status, _, err = run(capsys, "fit", more, "--resume", out / "model", "-o", tmp_path / "resumed")
    assert status == 0, err
    resumed = rlsi.io.load(tmp_path / "resumed")["model"]
    assert resumed.topic_names_ == model.topic_names_ and resumed.seed_terms_ == model.seed_terms_
    assert resumed.n_docs_seen_ == 140
    status, _, err = run(capsys, "fit", more, "--resume", out / "model", "-o", tmp_path / "r2", "--seed-terms", seeds)
    assert status == 2 and "do not apply with --resume" in err and err.count("\n") == 1
    assert not (tmp_path / "r2").exists()
