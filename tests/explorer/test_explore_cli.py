"""``rlsi explore`` end to end: model folders of rlsi, a corpus file, one-line errors, nothing half-written."""

import json
import re

import pytest
from explorer._models import fit_kind

import rlsi
from rlsi.cli.main import main
from cli_runner import run_verbose as run


def page_data(path):
    html = path.read_text(encoding="utf-8")
    return json.loads(re.search(r'id="rlsi-data">(.*?)</script>', html, re.S).group(1))


@pytest.fixture(scope="module")
def folders(themed, tmp_path_factory):
    """A corpus file and model folders (batch RLSI, a group model) with their vectorizer."""
    docs, vec, X, counts, y = themed
    root = tmp_path_factory.mktemp("explore_cli")
    corpus = root / "corpus.jsonl"
    corpus.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    rlsi.save(root / "rlsi_model", model=fit_kind("BatchRLSI", X, counts, y), vectorizer=vec)
    rlsi.save(root / "group_model", model=fit_kind("GroupRLSI", X, counts, y), vectorizer=vec)
    rlsi.save(root / "bare_model", model=fit_kind("LSI", X, counts, y))
    return root, corpus


def test_explore_a_model_with_its_corpus(folders, tmp_path, capsys):
    root, corpus = folders
    out = tmp_path / "topics.html"
    status, stdout, err = run(capsys, "explore", root / "rlsi_model", "--corpus", corpus, "-o", out, "-n", "12")
    assert status == 0, err
    assert re.match(r"wrote .*topics\.html \(0\.\d\d MB\): BatchRLSI, 4 topics, 96 documents", stdout)
    data = page_data(out)
    assert data["docs"]["n"] == 96 and data["settings"]["n_terms"] == 12
    assert data["docs"]["titles"][0].startswith(("fruit", "cars", "space", "music"))  # the title field
    first = out.read_bytes()
    status, stdout, _ = run(capsys, "-q", "explore", root / "rlsi_model", "--corpus", corpus, "-o", out, "-n", "12")
    assert status == 0 and stdout == "" and out.read_bytes() == first  # the same bytes again


def test_group_models_take_the_classes_from_the_corpus(folders, tmp_path, capsys):
    root, corpus = folders
    out = tmp_path / "g.html"
    status, _, err = run(capsys, "-q", "explore", root / "group_model", "--corpus", corpus, "--label-field", "label",
                         "--distance", "documents", "-o", out)
    assert status == 0, err
    data = page_data(out)
    assert [g["label"] for g in data["model"]["groups"]][:2] == ["shared topics", "class cars"]
    assert data["settings"]["distance"] == "documents"


def test_a_model_without_vectorizer_or_corpus(folders, tmp_path, capsys):
    root, corpus = folders
    out = tmp_path / "bare.html"
    status, _, err = run(capsys, "-q", "explore", root / "bare_model", "-o", out)
    assert status == 0 and "terms are shown by column index" in err
    assert page_data(out)["docs"] is None


@pytest.mark.parametrize("args, message", [
    (["explore", "{root}/missing", "-o", "{tmp}/x.html"], "missing does not exist"),
    (["explore", "{root}/rlsi_model", "-o", "{root}/rlsi_model/x.html"], "inside"),
    (["explore", "{root}/rlsi_model", "-o", "{tmp}/x.html", "--distance", "documents"], "needs --corpus"),
    (["explore", "{root}/rlsi_model", "-o", "{tmp}/x.html", "--corpus", "{corpus}", "--label-field", "label"],
     "group models only"),
    (["explore", "{root}/group_model", "-o", "{tmp}/x.html", "--corpus", "{corpus}", "--label-field", "nope"],
     "no field 'nope'"),
    (["explore", "{root}/bare_model", "-o", "{tmp}/x.html", "--corpus", "{corpus}"], "has no vectorizer"),
    (["explore", "{root}/rlsi_model", "-o", "{tmp}/x.html", "--corpus", "{tmp}/none.jsonl"], "none.jsonl"),
])
def test_errors_are_one_line_and_write_nothing(folders, tmp_path, capsys, args, message):
    root, corpus = folders
    argv = [a.format(root=root, tmp=tmp_path, corpus=corpus) for a in args]
    status, _, err = run(capsys, "-q", *argv)
    assert status == 2 and err.startswith("rlsi: error:") and message in err and err.count("\n") == 1
    assert not (tmp_path / "x.html").exists() and not (root / "rlsi_model" / "x.html").exists()


def test_bad_option_values_are_refused_by_the_parser(folders, tmp_path, capsys):
    root, _ = folders
    with pytest.raises(SystemExit) as exc:
        main(["explore", str(root / "rlsi_model"), "-o", str(tmp_path / "x.html"), "-n", "0"])
    assert exc.value.code == 2 and "must be >= 1" in capsys.readouterr().err
