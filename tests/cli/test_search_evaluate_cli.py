"""``rlsi evaluate`` and ``rlsi search`` end to end on a tiny collection built in the test."""

import json

import pytest

import rlsi.io
from rlsi.cli.main import main
from rlsi.models.baselines import LSI
from rlsi.text import TfidfVectorizer
from cli_runner import run

DOCS = [
    ("d1", "Wing flutter", "aircraft wing flutter at high speed"),
    ("d2", "Airplane design", "airplane wing design and flutter tests"),
    ("d3", "", "jet aircraft engine noise reduction"),
    ("d4", "", "heart disease and blood pressure"),
    ("d5", "Surgery", "cardiac surgery on the heart valves"),
    ("d6", "", "blood vessels arteries and the heart"),
    ("d7", "", "library catalog of books"),
    ("d8", "Indexing", "books indexing in the library catalog"),
    ("d9", "", "supersonic aircraft wing loads"),
    ("d10", "", "cardiac arrest and heart failure"),
]
QUERIES = [("1", "airplane wing"), ("2", "cardiac heart"), ("3", "library books"), ("4", "aircraft noise"),
           ("5", "zebra quasar"), ("6", "")]
QRELS = [("1", "d1", 1), ("1", "d2", 2), ("1", "d9", 1), ("2", "d4", 1), ("2", "d10", 2),
         ("2", "no-such-doc", 1), ("3", "d7", 1), ("3", "d8", 1), ("4", "d3", 1), ("5", "d1", 1),
         ("6", "d2", 1)]


@pytest.fixture
def collection(tmp_path):
    folder = tmp_path / "coll"
    folder.mkdir()
    with open(folder / "corpus.jsonl", "w") as f:
        for d, title, text in DOCS:
            f.write(json.dumps({"id": d, "title": title, "text": text}) + "\n")
    with open(folder / "queries.jsonl", "w") as f:
        for q, text in QUERIES:
            f.write(json.dumps({"id": q, "text": text}) + "\n")
    with open(folder / "qrels.tsv", "w") as f:
        for q, d, r in QRELS:
            f.write(f"{q}\t0\t{d}\t{r}\n")
    return folder


FAST = ["--k-grid", "2,3", "--lambda1-grid", "0.05", "--folds", "2", "--alpha-step", "0.25"]


def test_evaluate_collection_folder(tmp_path, collection, capsys, caplog):
    out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
    status = main(["evaluate", "--collection", str(collection), "--methods", "bm25,lsi,rlsi", *FAST,
                   "--json", str(out_json), "--markdown", str(out_md)])  # not quiet: warnings shown
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "BM25+LSI" in out and "BM25+RLSI" in out and "MAP" in out and "NDCG@10" in out
    assert "protocol: cv" in out and "protocol: best" in out
    assert "no term in the vocabulary" in err               # bad inputs are reported ...
    assert "not in the corpus" in caplog.text               # ... (qrels naming unknown documents)
    data = json.loads(out_json.read_text())
    assert set(data["protocols"]) == {"cv", "best"}
    rows = data["protocols"]["cv"]
    assert [r["method"] for r in rows] == ["BM25", "BM25+LSI", "BM25+RLSI"]
    assert rows[0]["per_query"]["map"]["5"] == 0.0      # no known term: scores 0, no crash
    assert rows[0]["per_query"]["map"]["6"] == 0.0      # empty query text
    assert set(rows[1]["p_values"]) == {"map", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10"}
    assert "| BM25+RLSI |" in out_md.read_text()
    # K in (2, 3): whichever is chosen is an edge of the grid, and the warning is printed and saved
    warned = data["edge_warnings"]
    assert any(w["parameter"] == "n_components" for w in warned)
    for w in warned:  # printed once each (on stderr, as every warning of the command), saved in the Markdown
        assert err.count(f"rlsi: warning: {w['protocol']}: {w['message']}\n") == 1
        assert w["message"] not in out and w["message"] in out_md.read_text()
    assert err.count("rlsi: warning:") == len(warned)


def test_evaluate_quiet_prints_no_warning(tmp_path, collection, capsys):
    status, out, err = run(capsys, "evaluate", "--collection", collection, "--methods", "bm25,lsi", *FAST)
    assert status == 0 and "warning" not in err and "warning" not in out and "BM25+LSI" in out


def test_evaluate_separate_files_and_one_protocol(tmp_path, collection, capsys):
    status, out, err = run(capsys, "evaluate", "--corpus", collection / "corpus.jsonl", "--queries",
                           collection / "queries.jsonl", "--qrels", collection / "qrels.tsv",
                           "--methods", "vsm,lsi", "--protocol", "best", *FAST)
    assert status == 0, err
    assert "VSM+LSI" in out and "protocol: cv" not in out


def test_evaluate_trec_runs(tmp_path, collection, capsys):
    """MAP of two runs, worked by hand. Six judged queries (QRELS), R = 3, 3, 2, 1, 1, 1 relevant documents
    (the judged document missing from the corpus counts in R); a query the run does not list scores 0.
    Run a: query 1 ranks d3 (not relevant) then d1 (relevant): AP = (1/2) / 3 = 1/6; query 2 ranks d4
    (relevant) first: AP = 1 / 3; MAP = (1/6 + 1/3) / 6 = 1/12. Run b: query 1 ranks d2 and d1, both
    relevant: AP = (1 + 1) / 3 = 2/3; query 2: d10 first, 1/3; query 3: d7 first, 1/2; MAP = 1.5 / 6 = 1/4."""
    a, b = tmp_path / "a.run", tmp_path / "b.run"
    a.write_text("1 Q0 d3 1 3.0 a\n1 Q0 d1 2 2.0 a\n2 Q0 d4 1 1.0 a\n")
    b.write_text("1 Q0 d2 1 3.0 b\n1 Q0 d1 2 2.0 b\n2 Q0 d10 1 1.0 b\n3 Q0 d7 1 1.0 b\n")
    out_json = tmp_path / "runs.json"
    status, out, err = run(capsys, "evaluate", "--qrels", collection / "qrels.tsv", "--run", a, "--run", b,
                           "--json", out_json)
    assert status == 0, err
    runs = {r["run"]: r for r in json.loads(out_json.read_text())["runs"]}
    assert runs["a.run"]["means"]["map"] == pytest.approx(1 / 12, abs=1e-15)
    assert runs["b.run"]["means"]["map"] == pytest.approx(1 / 4, abs=1e-15)
    assert runs["a.run"]["per_query"]["map"] == pytest.approx({"1": 1 / 6, "2": 1 / 3, "3": 0, "4": 0, "5": 0, "6": 0})
    printed = {line.split()[0]: line.split()[1] for line in out.splitlines() if line.startswith(("a.run", "b.run"))}
    assert printed == {"a.run": "0.0833", "b.run": "0.2500"}   # the MAP column (b not significant: no *)


@pytest.mark.parametrize("argv,message", [
    (["evaluate"], "--collection"),
    (["evaluate", "--collection", "{tmp}/nowhere"], "not found"),
    (["evaluate", "--collection", "{coll}", "--methods", "bm25,lsa"], "unknown method 'lsa'"),
    (["evaluate", "--collection", "{coll}", "--methods", "bm25,vsm"], "both bm25 and vsm"),
    (["evaluate", "--collection", "{coll}", "--alpha-step", "0.3"], "must divide 1"),
    (["evaluate", "--collection", "{coll}", "--folds", "50"], "at least 50"),
    (["evaluate", "--collection", "{coll}", "--k-grid", "a,b"], "numbers"),
    (["evaluate", "--run", "{tmp}/x.run"], "--qrels"),
])
def test_evaluate_bad_input_one_line_error(tmp_path, collection, capsys, argv, message):
    argv = [a.format(tmp=tmp_path, coll=collection) for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert err.startswith("rlsi: error:") and message in err and err.count("\n") == 1


@pytest.fixture
def model_dir(tmp_path, collection):
    texts = [f"{t} {x}".strip() for _, t, x in DOCS]
    vec = TfidfVectorizer()
    X = vec.fit_transform(texts)
    path = tmp_path / "model"
    rlsi.io.save(path, model=LSI(3).fit(X), vectorizer=vec)
    return path


def test_search_builds_index_from_corpus_and_saves_it(tmp_path, model_dir, collection, capsys):
    status, out, err = run(capsys, "search", model_dir, "airplane wing", "-k", "3", "--corpus",
                           collection / "corpus.jsonl", "--save-index")
    assert status == 0, err
    lines = out.strip().splitlines()
    assert lines[0].split() == ["rank", "doc", "score", "term", "topic"]
    hits = [line for line in lines[1:] if not line.startswith("      ")]
    assert len(hits) == 3 and hits[0].split()[1] in ("d1", "d2")
    # each hit is followed by its document's title and a snippet (the corpus is at hand)
    first = lines.index(hits[0])
    assert lines[first + 1].strip() in ("Airplane design", "Wing flutter") and "wing" in lines[first + 2]
    assert "index" in rlsi.io.load(model_dir)
    # now without --corpus: the saved index is used (ids and scores: no texts at hand)
    status, out2, _ = run(capsys, "search", model_dir, "airplane wing", "-k", "3")
    assert status == 0 and out2 == "\n".join([lines[0], *hits]) + "\n"
    status, out3, _ = run(capsys, "search", model_dir, "airplane wing", "zebra", "--json", "--alpha", "0")
    rows = [json.loads(line) for line in out3.strip().splitlines()]
    assert rows[0]["query"] == "airplane wing" and rows[0]["results"][0]["doc_id"] in ("d1", "d2")
    assert rows[1]["results"] == []


def test_search_messages(tmp_path, model_dir, collection, capsys):
    status, out, err = run(capsys, "search", model_dir, "airplane")
    assert status == 2 and "no search index" in err and "corpus" in err
    status, out, err = run(capsys, "search", model_dir, "zebra quasar", "--corpus", collection / "corpus.jsonl")
    assert status == 0 and "no result" in out
    status, out, err = run(capsys, "search", model_dir, "wing", "-k", "0", "--corpus", collection / "corpus.jsonl")
    assert status == 2 and "-k" in err
    status, out, err = run(capsys, "search", tmp_path / "nowhere", "wing")
    assert status == 2 and "does not exist" in err


@pytest.fixture
def rlsi_model_dir(tmp_path):
    import warnings

    from rlsi.models import BatchRLSI

    texts = [f"{t} {x}".strip() for _, t, x in DOCS]
    vec = TfidfVectorizer()
    X = vec.fit_transform(texts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BatchRLSI(3, lambda1=0.01, max_iter=20, random_state=0).fit(X)
    path = tmp_path / "rlsi_model"
    rlsi.io.save(path, model=model, vectorizer=vec)
    return path


def test_search_folds_in_with_the_models_transform_by_default(rlsi_model_dir, collection, capsys):
    """A new index folds in with the model's own transform (TOIS §7); a saved index keeps its folding."""
    path, corpus = rlsi_model_dir, collection / "corpus.jsonl"
    status, out, err = run(capsys, "search", path, "cardiac heart", "--corpus", corpus, "--save-index")
    assert status == 0, err
    assert rlsi.io.load(path)["index"].fold_lambda2 is None
    status, out2, err = run(capsys, "search", path, "cardiac heart", "--folding", "projection")
    assert status == 2 and "folding 'model'" in err and err.count("\n") == 1
    status, out3, err = run(capsys, "search", path, "cardiac heart", "--corpus", corpus, "--folding", "projection")
    assert status == 0 and out3.splitlines()[0] == out.splitlines()[0]
    assert out3 != out  # the projection ranks with other topic scores


def test_cli_and_python_search_give_the_same_scores(rlsi_model_dir, collection, capsys):
    """``rlsi search`` and ``Searcher(model, vectorizer)`` (its defaults) score a query alike."""
    from rlsi.retrieval import Searcher, open_searcher
    from rlsi.text import read_corpus

    path, corpus = rlsi_model_dir, collection / "corpus.jsonl"
    status, out, err = run(capsys, "search", path, "cardiac heart", "--corpus", corpus, "--json", "-k", 10)
    assert status == 0, err
    cli = json.loads(out)["results"]
    bundle = rlsi.io.load(path)
    docs = read_corpus(corpus)
    python = Searcher(bundle["model"], bundle["vectorizer"]).index(docs.texts, docs.ids).search("cardiac heart", k=10)
    opened = open_searcher(path, corpus=corpus).search("cardiac heart", k=10)
    assert [h["doc_id"] for h in cli] == [h.doc_id for h in python] == [h.doc_id for h in opened]
    for c, p, o in zip(cli, python, opened):
        assert c["topic_score"] == pytest.approx(p.topic_score, abs=1e-12) == o.topic_score
        assert c["score"] == pytest.approx(p.score, abs=1e-12) == o.score
    assert any(h["topic_score"] > 0 for h in cli)


def test_evaluate_grid_preset_and_overrides(tmp_path, collection, capsys):
    from rlsi.experiments import GRID_PRESETS

    out_json = tmp_path / "r.json"
    # --grid extended takes the preset's lambda1 grid; --k-grid overrides its K grid (kept tiny here)
    status, out, err = run(capsys, "evaluate", "--collection", collection, "--methods", "bm25,rlsi",
                           "--grid", "extended", "--k-grid", "2,3", "--folds", "2", "--alpha-step", "0.5",
                           "--protocol", "best", "--json", out_json)
    assert status == 0, err
    settings = json.loads(out_json.read_text())["settings"]
    assert settings["grid"] == "extended" and settings["k_grid"] == [2, 3]
    assert settings["lambda1_grid"] == list(GRID_PRESETS["extended"]["lambda1_grid"])
    assert max(GRID_PRESETS["extended"]["k_grid"]) >= 300 and min(GRID_PRESETS["extended"]["lambda1_grid"]) <= 1e-5
