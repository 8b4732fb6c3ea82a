"""``rlsi select``: the table printed and the report written; bad grids and empty corpora are one line."""

import json

import pytest

from rlsi.cli.main import main
from cli_runner import run

TOPIC_WORDS = [["heart", "blood", "artery", "vein", "pressure", "pulse"],
               ["lens", "retina", "vision", "cataract", "optic", "cornea"],
               ["wheat", "harvest", "grain", "farm", "tractor", "barley"]]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.jsonl"
    with open(path, "w") as f:
        for i in range(150):
            words = TOPIC_WORDS[i % 3]
            text = " ".join(words[(i * 5 + j) % 6] for j in range(12))
            f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    return path


def test_select_prints_the_table_and_writes_the_report(capsys, corpus, tmp_path):
    out_dir = tmp_path / "sel"
    status, out, err = run(capsys, "select", corpus, "--topics", "2,3", "--lambda1", "0.05", "-o", out_dir)
    assert status == 0, err
    assert out.startswith("| K | λ1 | completion") and "Recommended: " in out
    assert sorted(p.name for p in out_dir.iterdir()) == ["selection.html", "selection.json", "selection.md",
                                                         "selection.png"]
    assert 'id="rlsi-data"' in (out_dir / "selection.html").read_text()
    data = json.loads((out_dir / "selection.json").read_text())
    assert [r["n_components"] for r in data["rows"]] == [2, 3]
    status, _, err = run(capsys, "select", corpus, "--topics", "2", "-o", out_dir)  # its own report: replaced
    assert status == 0, err


@pytest.mark.parametrize("topics", ["10,x", "0", "", "10,,20", "-5"])
def test_a_bad_topics_list_is_one_line(capsys, corpus, topics):
    with pytest.raises(SystemExit) as exc:
        main(["select", str(corpus), "--topics", topics])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    assert "--topics" in err


@pytest.mark.parametrize("argv, words", [
    (["--lambda1", "0"], "--lambda1"), (["--lambda1", "nan"], "--lambda1"), (["--test-size", "1"], "--test-size"),
])
def test_bad_settings_are_one_line(capsys, corpus, argv, words):
    with pytest.raises(SystemExit) as exc:
        main(["select", str(corpus), *argv])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("rlsi: error: ") and err.count("\n") == 1 and words in err, err


def test_an_empty_corpus_is_one_line_and_writes_nothing(capsys, tmp_path):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    status, out, err = run(capsys, "select", empty, "-o", tmp_path / "sel")
    assert status == 2 and err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    assert not (tmp_path / "sel").exists()


def test_too_many_topics_for_the_corpus_is_one_line(capsys, corpus, tmp_path):
    status, _, err = run(capsys, "select", corpus, "--topics", "500", "-o", tmp_path / "sel")
    assert status == 2 and "training documents" in err and err.count("\n") == 1, err
    assert not (tmp_path / "sel").exists()


def test_a_foreign_output_folder_is_refused_before_any_work(capsys, corpus, tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    status, _, err = run(capsys, "select", corpus, "-o", foreign)
    assert status == 2 and "not an rlsi select report" in err, err
    assert [p.name for p in foreign.iterdir()] == ["notes.txt"]
