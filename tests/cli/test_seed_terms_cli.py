"""``rlsi fit --seed-terms FILE.json --seed-strength S``: the names label the topics in ``rlsi topics``; bad
files and seeds end in one clear message."""

import gzip
import json

import pytest

from rlsi.cli.main import main

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


def run(capsys, *argv):
    status = main(["-q", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


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
