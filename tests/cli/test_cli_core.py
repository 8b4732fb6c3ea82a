"""The ``rlsi`` command: demo, fit, topics, transform, and one-line errors on bad input."""

import gzip
import json
import re

import numpy as np
import pytest

from rlsi.cli.main import main
from rlsi.models.rlsi_policy import TOPIC_SWEEPS
from cli_runner import run

DOCS = [
    "the heart pumps blood through arteries and veins",
    "blood pressure in arteries rises with heart disease",
    "cardiac surgery repairs the heart valves and arteries",
    "the lens of the eye focuses light on the retina",
    "cataract clouds the lens and blurs vision of the eye",
    "retina damage and vision loss in the eye",
    "bacteria infect cells and the immune system responds",
    "immune cells attack bacteria and viruses in infection",
    "viruses infect cells; antibodies of the immune system bind viruses",
]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for i, text in enumerate(DOCS):
            f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    return path


def test_fit_topics_transform(tmp_path, corpus, capsys):
    model_dir = tmp_path / "model"
    status, out, err = run(capsys, "fit", corpus, "-k", 3, "--lambda1", 10, "-o", model_dir, "--seed", 1)
    assert status == 0, err
    assert (model_dir / "manifest.json").exists()
    status, out, _ = run(capsys, "topics", model_dir, "-n", 4)
    assert status == 0
    assert len(re.findall(r"^(?:\(-\) |    )?T\d+ ", out, re.M)) == 3 and "comp=" in out and "avg_compactness=" in out
    status, out, _ = run(capsys, "topics", model_dir, "--json")
    assert len(json.loads(out)["topics"]) == 3
    status, out, _ = run(capsys, "transform", model_dir, corpus)
    header, *rows = [line.split("\t") for line in out.strip().splitlines()]
    assert header == ["id", "T1", "T2", "T3"]
    assert [r[0] for r in rows] == [f"d{i}" for i in range(len(DOCS))] and all(len(r) == 4 for r in rows)
    npy, tsv = tmp_path / "w.npy", tmp_path / "w.tsv"
    status, out, _ = run(capsys, "transform", model_dir, corpus, "-o", npy)  # quiet: nothing on stdout
    assert status == 0 and np.load(npy).shape == (len(DOCS), 3) and out == ""
    assert main(["transform", str(model_dir), str(corpus), "-o", str(tsv)]) == 0
    assert capsys.readouterr().out.strip() == f"wrote the topic vectors of {len(DOCS)} documents (3 topics) to {tsv}"
    assert tsv.read_text().splitlines()[0] == "id\tT1\tT2\tT3"


def test_demo_prints_readable_compact_topics(capsys):
    status, out, _ = run(capsys, "demo", "-k", 10)
    assert status == 0
    assert "1033 abstracts" in out and "AvgComp=" in out
    assert out.count("comp=") == 10


@pytest.mark.parametrize("argv,message", [
    (["fit", "{tmp}/missing.jsonl", "-o", "{tmp}/m"], "corpus not found"),
    (["fit", "{tmp}/empty.jsonl", "-o", "{tmp}/m"], "no document"),
    (["fit", "{corpus}", "-k", "500", "-o", "{tmp}/m"], "larger than the vocabulary"),
    (["topics", "{tmp}/nowhere"], "does not exist"),
    (["transform", "{tmp}/nowhere", "{corpus}"], "does not exist"),
])
def test_bad_input_gives_one_line_error_and_writes_nothing(tmp_path, corpus, capsys, argv, message):
    (tmp_path / "empty.jsonl").write_text("")
    argv = [a.format(tmp=tmp_path, corpus=corpus) for a in argv]
    before = sorted(p.name for p in tmp_path.iterdir())
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert err.startswith("rlsi: error:") and message in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_unknown_option_value_is_rejected_by_name(corpus, capsys):
    with pytest.raises(SystemExit) as info:
        main(["fit", str(corpus), "-o", "x", "--topic-penalty", "l3"])
    assert info.value.code == 2
    assert "--topic-penalty" in capsys.readouterr().err


def test_refuses_to_overwrite_a_non_model_directory(tmp_path, corpus, capsys):
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("...")
    status, _, err = run(capsys, "fit", corpus, "-o", precious)
    assert status == 2 and "not an rlsi model directory" in err
    assert (precious / "thesis.tex").read_text() == "..."


def test_damaged_model_is_reported(tmp_path, corpus, capsys):
    model_dir = tmp_path / "model"
    assert run(capsys, "fit", corpus, "-k", 2, "--lambda1", 10, "-o", model_dir)[0] == 0
    (model_dir / "model.components_.data.npy").write_bytes(b"\x93NUMPY garbage")
    status, _, err = run(capsys, "topics", model_dir)
    assert status == 2 and "damaged" in err


def test_fit_terms_per_topic_reports_the_lambda1_it_found(tmp_path, capsys):
    from rlsi.datasets import demo_corpus_path
    from rlsi.io import load

    status = main(["fit", str(demo_corpus_path()), "-k", "10", "--terms-per-topic", "50", "--max-iter", "30",
                   "-o", str(tmp_path / "m")])
    out, _ = capsys.readouterr()
    assert status == 0
    model = load(tmp_path / "m")["model"]
    assert "found for 50 terms per topic" in out and f"{model.lambda1_:.6g}" in out
    assert 40 <= model.components_.nnz / 10 <= 60
    assert "topics held sparse" in out
    with pytest.raises(SystemExit) as exit_info:
        run(capsys, "fit", str(demo_corpus_path()), "--terms-per-topic", "0", "-o", tmp_path / "x")
    assert exit_info.value.code == 2 and "--terms-per-topic: 0 must be >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("value,expected", [("exact", None), ("2", 2), (None, 3)])
def test_fit_topic_sweeps_option(tmp_path, corpus, capsys, value, expected):
    from rlsi.io import load

    extra = [] if value is None else ["--topic-sweeps", value]
    status, _, err = run(capsys, "fit", corpus, "-k", 3, "--lambda1", 10, "--max-iter", 3, *extra,
                         "-o", tmp_path / "m")
    assert status == 0, err
    saved = load(tmp_path / "m")["model"].topic_sweeps
    assert saved == (TOPIC_SWEEPS if value is None else expected)


@pytest.mark.parametrize("value,expected", [("2", 2), ("exact", None), (None, TOPIC_SWEEPS)])
def test_fit_online_topic_sweeps_option(tmp_path, corpus, capsys, value, expected):
    from rlsi.io import load

    extra = [] if value is None else ["--topic-sweeps", value]
    status, _, err = run(capsys, "fit", corpus, "--online", "--batch-size", 4, "-k", 3, "--lambda1", 10, *extra,
                         "-o", tmp_path / "m")
    assert status == 0, err
    model = load(tmp_path / "m")["model"]
    assert type(model).__name__ == "OnlineRLSI" and model.topic_sweeps == expected


def test_fit_topic_sweeps_rejects_other_words(tmp_path, corpus, capsys):
    with pytest.raises(SystemExit) as exit_info:
        run(capsys, "fit", corpus, "--topic-sweeps", "all", "-o", tmp_path / "x")
    assert exit_info.value.code == 2 and "neither a positive integer nor 'exact'" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


# ------------------------------------------------------------------ --seed-terms (rlsi.models.seeds)
@pytest.mark.parametrize("online", [False, True])
def test_seed_names_label_the_topics(tmp_path, corpus, capsys, online):
    seeds = tmp_path / "seeds.json"
    seeds.write_text(json.dumps({"eyes": ["retina", "lens"], "infection": ["viruses", "bacteria", "nosuchword"]}))
    model_dir = tmp_path / "model"
    extra = ["--online", "--batch-size", 3] if online else []
    status, _, err = run(capsys, "fit", corpus, "-k", 3, "--lambda1", 1, "-o", model_dir, "--seed-terms", seeds,
                         "--seed-strength", 0.8, *extra)
    assert status == 0, err
    assert "nosuchword" in err  # the one warning naming the missing term
    status, out, err = run(capsys, "topics", model_dir)
    assert status == 0, err
    lines = out.splitlines()
    assert "[eyes]" in lines[0] and "[infection]" in lines[1] and "[" not in lines[2].split("comp=")[0]
    status, out, _ = run(capsys, "topics", model_dir, "--json")
    assert [t.get("label") for t in json.loads(out)["topics"]] == ["eyes", "infection", None]


@pytest.mark.parametrize("content,match", [
    ("{not json", "is not JSON"),
    ('{"a": []}', "group 'a' is empty"),
    ('[["x"], ["y"], ["z"], ["w"]]', "4 groups but n_components=3"),
    ('"heart"', "list of term lists"),
])
def test_bad_seed_files_have_one_clear_message(tmp_path, corpus, capsys, content, match):
    seeds = tmp_path / "seeds.json"
    seeds.write_text(content)
    with pytest.raises(SystemExit) if match == "is not JSON" else _no_raise():
        status, _, err = run(capsys, "fit", corpus, "-k", 3, "-o", tmp_path / "m", "--seed-terms", seeds)
    err = capsys.readouterr().err if match == "is not JSON" else err
    assert match in err and "rlsi: error" in err
    assert not (tmp_path / "m").exists()


class _no_raise:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
