"""Every command checks its inputs and its output location before any work, and each
bad case ends in one line naming the problem, with nothing written; `rlsi fit --resume` continues a
saved online model."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rlsi
from rlsi import io
from rlsi.cli import _online
from rlsi.cli.main import main
from rlsi.errors import RLSIError
from rlsi.io import atomic
from rlsi.models import BatchRLSI
from rlsi.text.stream import StreamingTfidf
from cli_runner import run

WORDS = {
    "heart": "heart blood artery vein pressure cardiac valve pulse".split(),
    "eye": "lens retina vision cataract optic pupil cornea sight".split(),
    "cell": "bacteria virus immune cell antibody infection protein gene".split(),
}


def _write_corpus(path, n, seed=0, prefix="d"):
    rng = np.random.default_rng(seed)
    topics = list(WORDS)
    with open(path, "w") as f:
        for i in range(n):
            words = rng.choice(WORDS[topics[i % 3]], size=6, replace=False)
            f.write(json.dumps({"id": f"{prefix}{i}", "text": " ".join(words), "date": f"2001-0{1 + i % 3}"}) + "\n")
    return path


@pytest.fixture
def corpus(tmp_path):
    return _write_corpus(tmp_path / "docs.jsonl", 40)


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "txt"
    (d / "sub").mkdir(parents=True)
    rng = np.random.default_rng(1)
    for i in range(12):
        words = rng.choice(WORDS[list(WORDS)[i % 3]], size=6, replace=False)
        (d / ("sub" if i % 2 else "") / f"doc{i}.txt").write_text(" ".join(words))
    return d


def _one_line_error(status, err, *fragments):
    assert status == 2 and err.startswith("rlsi: error:") and err.count("\n") == 1, err
    for f in fragments:
        assert f in err, err


# ------------------------------------------------------------------ output locations, before any work
@pytest.mark.parametrize("command", ["fit", "transform", "track"])
def test_output_under_an_existing_file_is_refused_before_reading_anything(tmp_path, capsys, command):
    (tmp_path / "file").write_text("x")
    missing = tmp_path / "missing.jsonl"  # would fail later: the output check must come first
    argv = {"fit": ["fit", missing, "-o", tmp_path / "file" / "sub"],
            "transform": ["transform", tmp_path / "nomodel", missing, "-o", tmp_path / "file" / "w.tsv"],
            "track": ["track", missing, "-o", tmp_path / "file" / "sub"]}[command]
    before = sorted(p.name for p in tmp_path.iterdir())
    _one_line_error(*run(capsys, *argv)[::2], "file is not a folder")
    assert sorted(p.name for p in tmp_path.iterdir()) == before


@pytest.mark.parametrize("command", ["fit", "transform"])
def test_unwritable_parent_is_refused_before_any_work(tmp_path, capsys, monkeypatch, corpus, command):
    ro = tmp_path / "ro"
    ro.mkdir()
    real = os.access
    monkeypatch.setattr(atomic.os, "access", lambda p, m: False if Path(p) == ro else real(p, m))
    called = []
    monkeypatch.setattr(BatchRLSI, "fit", lambda *a, **k: called.append(1))
    argv = {"fit": ["fit", corpus, "-o", ro / "m"], "transform": ["transform", tmp_path / "m", corpus, "-o", ro / "w.npy"]}
    _one_line_error(*run(capsys, *argv[command])[::2], "is not writable")
    assert not called


def test_transform_output_that_is_a_folder(tmp_path, capsys, corpus):
    assert run(capsys, "fit", corpus, "-k", 2, "-o", tmp_path / "m")[0] == 0
    (tmp_path / "out.tsv").mkdir()
    _one_line_error(*run(capsys, "transform", tmp_path / "m", corpus, "-o", tmp_path / "out.tsv")[::2], "is a folder")


def test_read_only_model_folder_is_refused_and_nothing_hidden_is_left(tmp_path, capsys, monkeypatch, corpus):
    assert run(capsys, "fit", corpus, "-k", 2, "-o", tmp_path / "m")[0] == 0
    real = os.access
    monkeypatch.setattr(atomic.os, "access", lambda p, m: False if Path(p) == tmp_path / "m" else real(p, m))
    _one_line_error(*run(capsys, "fit", corpus, "-k", 2, "-o", tmp_path / "m")[::2], "read-only")
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_evaluate_outputs_are_checked_first(tmp_path, capsys):
    (tmp_path / "q.tsv").write_text("1 0 d1 1\n")
    (tmp_path / "a.run").write_text("1 Q0 d1 1 2.5 a\n")
    _one_line_error(*run(capsys, "evaluate", "--qrels", tmp_path / "q.tsv", "--run", tmp_path / "a.run",
                         "--json", tmp_path / "nowhere" / "r.json")[::2], "does not exist")


# ------------------------------------------------------------------ inputs
def test_text_folder_corpus_in_fit_transform_track(tmp_path, capsys, folder):
    status, _, err = run(capsys, "fit", folder, "-k", 2, "--lambda1", 0.1, "-o", tmp_path / "m")
    assert status == 0, err
    status, out, err = run(capsys, "transform", tmp_path / "m", folder)
    assert status == 0, err
    assert sorted(line.split("\t")[0] for line in out.splitlines()[1:]) == sorted(
        p.relative_to(folder).with_suffix("").as_posix() for p in folder.rglob("*.txt"))
    status, _, err = run(capsys, "track", folder, "-k", 2, "--batch-size", 4, "-o", tmp_path / "r")
    assert status == 0, err
    assert (tmp_path / "r" / "model" / "manifest.json").is_file()


@pytest.mark.parametrize("command", ["fit", "transform", "track"])
def test_empty_text_folder(tmp_path, capsys, command):
    (tmp_path / "empty").mkdir()
    argv = {"fit": ["fit", tmp_path / "empty", "-o", tmp_path / "m"],
            "transform": ["transform", tmp_path / "m", tmp_path / "empty"],
            "track": ["track", tmp_path / "empty", "-o", tmp_path / "r"]}[command]
    if command == "transform":
        assert run(capsys, "fit", _write_corpus(tmp_path / "c.jsonl", 20), "-k", 2, "-o", tmp_path / "m")[0] == 0
    _one_line_error(*run(capsys, *argv)[::2], "contains no file matching")


@pytest.mark.parametrize("command", ["fit", "demo", "track"])
def test_negative_seed_is_refused_by_name(tmp_path, capsys, corpus, command):
    argv = {"fit": ["fit", corpus, "-o", tmp_path / "m"], "demo": ["demo"], "track": ["track", corpus, "-o", tmp_path / "r"]}
    with pytest.raises(SystemExit) as info:
        main([*map(str, argv[command]), "--seed", "-1"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "--seed" in err and "Traceback" not in err


def test_negative_random_state_names_the_parameter():
    X = np.abs(np.random.default_rng(0).normal(size=(20, 10)))
    with pytest.raises(RLSIError, match="random_state=-1"):
        BatchRLSI(2, random_state=-1).fit(X)


def test_sigint_during_imports_exits_quietly(tmp_path):
    """Ctrl-C while the command is still importing (numba, SciPy, scikit-learn): one line, status 130."""
    script = (
        "import sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'numpy':\n"
        "            raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Interrupt())\n"
        "from rlsi.cli.main import main\n"  # what the installed `rlsi` script does
        "sys.exit(main(['demo']))\n")
    env = dict(os.environ, PYTHONPATH=str(Path(rlsi.__file__).parents[1]))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 130, proc.stderr
    assert "Traceback" not in proc.stderr and proc.stderr.strip() == "rlsi: interrupted"


def test_track_refuses_a_single_document(tmp_path, capsys):
    _write_corpus(tmp_path / "one.jsonl", 1)
    status, _, err = run(capsys, "track", tmp_path / "one.jsonl", "-k", 2, "-o", tmp_path / "r")
    _one_line_error(status, err, "at least 2")
    assert not (tmp_path / "r").exists()


def test_identical_documents_say_why_nothing_can_be_learned(tmp_path, capsys):
    with open(tmp_path / "same.jsonl", "w") as f:
        for i in range(50):
            f.write(json.dumps({"id": str(i), "text": "heart blood artery"}) + "\n")
    for argv in (["fit", tmp_path / "same.jsonl", "-k", 1, "-o", tmp_path / "m"],
                 ["fit", tmp_path / "same.jsonl", "--online", "-k", 1, "-o", tmp_path / "m"],
                 ["track", tmp_path / "same.jsonl", "-k", 1, "-o", tmp_path / "r"]):
        _one_line_error(*run(capsys, *argv)[::2], "idf 0")
    assert not (tmp_path / "m").exists() and not (tmp_path / "r").exists()


def test_evaluate_with_an_empty_run_is_an_error(tmp_path, capsys):
    (tmp_path / "q.tsv").write_text("1 0 d1 1\n")
    (tmp_path / "empty.run").write_text("")
    _one_line_error(*run(capsys, "evaluate", "--qrels", tmp_path / "q.tsv", "--run", tmp_path / "empty.run")[::2],
                    "holds no result")


# ------------------------------------------------------------------ fit --resume
ONLINE = ["-k", 3, "--lambda1", 0.1, "--batch-size", 10, "--seed", 3]


def _components(path):
    return io.load(path)["model"].components_


def test_resume_in_two_steps_equals_one_step(tmp_path, capsys):
    """The saved stream (vocabulary, df, N, idf mode) and model continue exactly where they stopped."""
    a = _write_corpus(tmp_path / "a.jsonl", 30, seed=0, prefix="a")
    b = _write_corpus(tmp_path / "b.jsonl", 20, seed=1, prefix="b")
    c = _write_corpus(tmp_path / "c.jsonl", 15, seed=2, prefix="c")
    with open(tmp_path / "bc.jsonl", "w") as f:
        f.write(b.read_text() + c.read_text())
    assert run(capsys, "fit", a, "--online", *ONLINE, "-o", tmp_path / "m")[0] == 0
    assert run(capsys, "fit", b, "--resume", tmp_path / "m", "-o", tmp_path / "mb")[0] == 0
    assert run(capsys, "fit", c, "--resume", tmp_path / "mb", "-o", tmp_path / "mbc")[0] == 0
    assert run(capsys, "fit", tmp_path / "bc.jsonl", "--resume", tmp_path / "m", "-o", tmp_path / "once")[0] == 0
    two, one = io.load(tmp_path / "mbc"), io.load(tmp_path / "once")
    assert (two["model"].components_ != one["model"].components_).nnz == 0
    assert two["model"].n_docs_seen_ == one["model"].n_docs_seen_ == 65
    assert isinstance(two["vectorizer"], StreamingTfidf)
    assert two["vectorizer"].feature_names_ == one["vectorizer"].feature_names_
    np.testing.assert_array_equal(two["vectorizer"].df_, one["vectorizer"].df_)
    assert two["vectorizer"].n_docs_ == 65
    # and it is the API's continuation of the saved model, to the bit
    model, stream = _online.load_resumable(tmp_path / "m")
    texts = [json.loads(line)["text"] for line in (tmp_path / "bc.jsonl").read_text().splitlines()]
    for i in range(0, len(texts), 10):
        model.partial_fit(stream.partial_fit_transform(texts[i:i + 10]))
    assert (model.components_ != one["model"].components_).nnz == 0


def test_resumed_model_works_with_every_command(tmp_path, capsys):
    a = _write_corpus(tmp_path / "a.jsonl", 30)
    b = tmp_path / "b.jsonl"
    b.write_text(json.dumps({"id": "new", "text": "zebra giraffe heart lens"}) + "\n")
    assert run(capsys, "fit", a, "--online", *ONLINE, "-o", tmp_path / "m")[0] == 0
    assert run(capsys, "fit", b, "--resume", tmp_path / "m")[0] == 0  # in place
    bundle = io.load(tmp_path / "m")
    assert "zebra" in bundle["vectorizer"].vocabulary_
    assert bundle["model"].n_features_in_ == len(bundle["vectorizer"].vocabulary_)
    assert run(capsys, "topics", tmp_path / "m")[0] == 0
    assert run(capsys, "transform", tmp_path / "m", b)[0] == 0
    status, out, err = run(capsys, "search", tmp_path / "m", "zebra", "--corpus", b)
    assert status == 0 and "new" in out, err


def test_resume_refuses_a_batch_model_before_reading_the_corpus(tmp_path, capsys, corpus):
    assert run(capsys, "fit", corpus, "-k", 2, "-o", tmp_path / "m")[0] == 0
    _one_line_error(*run(capsys, "fit", tmp_path / "missing.jsonl", "--resume", tmp_path / "m")[::2],
                    "only an online model")


def test_resume_a_track_model(tmp_path, capsys, corpus):
    assert run(capsys, "track", corpus, "--date-field", "date", *ONLINE, "-o", tmp_path / "r")[0] == 0
    more = _write_corpus(tmp_path / "more.jsonl", 10, seed=5, prefix="m")
    before = io.load(tmp_path / "r" / "model")["model"].n_docs_seen_
    assert run(capsys, "fit", more, "--resume", tmp_path / "r" / "model", "-o", tmp_path / "m2")[0] == 0
    assert io.load(tmp_path / "m2")["model"].n_docs_seen_ == before + 10


def test_lambda1_that_overflows_ends_in_one_line_before_work(tmp_path, capsys):
    from rlsi.datasets import demo_corpus_path

    status, out, err = run(capsys, "fit", demo_corpus_path(), "-k", 2, "--lambda1", "1e308", "-o", tmp_path / "m")
    assert status == 2 and "lambda1=1e+308 overflows" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "m").exists()
