"""Folder kinds: a command replaces only a folder of its own kind, never its input, a folder it reads or a
path inside an rlsi folder; two writers of one folder cannot both save; what a killed ingest left is
removed by the next one. Each refusal is one line and leaves every folder as it was."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi import io
from rlsi.cli.main import main
from rlsi.errors import RLSIError
from rlsi.io import kinds

from forge import unseal
from cli_runner import run

WORDS = ["heart blood artery vein pressure cardiac valve pulse".split(),
         "lens retina vision cataract optic pupil cornea sight".split(),
         "bacteria virus immune cell antibody infection protein gene".split()]


def _corpus(path, n=30, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in range(n):
            words = rng.choice(WORDS[i % 3], size=6, replace=False)
            f.write(json.dumps({"id": f"d{i}", "text": " ".join(words)}) + "\n")
    return path


def _digest(folder):
    h = hashlib.sha256()
    for p in sorted(Path(folder).rglob("*")):
        h.update(str(p.relative_to(folder)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """A corpus, its matrix directory and a model folder (built once)."""
    root = tmp_path_factory.mktemp("kinds")
    corpus = _corpus(root / "c.jsonl")
    assert main(["-q", "ingest", str(corpus), "-o", str(root / "mx")]) == 0
    assert main(["-q", "fit", str(corpus), "-o", str(root / "m"), "-k", "3", "--max-iter", "3"]) == 0
    return root, corpus


def _refused(capsys, words, *argv):
    status, out, err = run(capsys, *argv)
    assert status == 2, err
    assert err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, err
    return err


def test_written_folders_declare_their_kind(made):
    root, _ = made
    assert json.loads((root / "mx" / "manifest.json").read_text())["kind"] == "matrix"
    assert json.loads((root / "m" / "manifest.json").read_text())["kind"] == "model"
    assert kinds.folder_kind(root / "mx") == "matrix" and kinds.folder_kind(root / "m") == "model"


def test_a_folder_without_a_kind_still_loads_and_its_kind_is_inferred(made, tmp_path):
    root, _ = made
    for name, kind in (("mx", "matrix"), ("m", "model")):
        old = tmp_path / name
        import shutil

        shutil.copytree(root / name, old)
        manifest = json.loads((old / "manifest.json").read_text())
        del manifest["kind"]
        (old / "manifest.json").write_text(json.dumps(manifest))
        unseal(old)  # written before kinds and checksums
        assert kinds.folder_kind(old) == kind
        io.load(old)


def test_index_never_replaces_a_matrix_directory(made, capsys):
    root, corpus = made
    before = _digest(root / "mx")
    _refused(capsys, ["is an rlsi matrix directory", "not a model folder"], "index", root / "mx", "--corpus", corpus)
    _refused(capsys, ["rlsi matrix directory"], "search", root / "mx", "heart", "--corpus", corpus, "--save-index")
    assert _digest(root / "mx") == before


def test_fit_never_writes_over_its_own_matrix(made, capsys):
    root, _ = made
    before = _digest(root / "mx")
    _refused(capsys, ["is the input"], "fit", "--matrix", root / "mx", "-k", 3, "-o", root / "mx")
    assert _digest(root / "mx") == before


def test_fit_never_replaces_a_matrix_directory_or_an_input(made, capsys, tmp_path):
    root, corpus = made
    before = _digest(root / "mx")
    _refused(capsys, ["rlsi matrix directory", "not replaced"], "fit", corpus, "-k", 3, "-o", root / "mx")
    assert _digest(root / "mx") == before
    # an output folder that contains the corpus it reads
    inner = tmp_path / "out"
    inner.mkdir()
    c2 = _corpus(inner / "c.jsonl", n=12)
    _refused(capsys, ["contains"], "fit", c2, "-k", 3, "-o", inner)
    assert c2.is_file()


def test_transform_never_writes_into_the_model_it_reads(made, capsys):
    root, corpus = made
    before = _digest(root / "m")
    target = root / "m" / "model.components_.data.npy"
    _refused(capsys, ["inside"], "transform", root / "m", corpus, "-o", target)
    _refused(capsys, ["inside"], "transform", root / "m", corpus, "-o", root / "m" / "new.tsv")
    assert _digest(root / "m") == before
    io.load(root / "m")


@pytest.mark.parametrize("command", ["synth", "ingest"])
def test_matrix_writers_never_replace_a_model(made, capsys, command):
    root, corpus = made
    before = _digest(root / "m")
    argv = ["synth", "--docs", 10, "--terms", 20, "--topics", 2, "--topic-vocab", 5] if command == "synth" \
        else ["ingest", corpus]
    _refused(capsys, ["rlsi model directory", "not replaced"], *argv, "-o", root / "m")
    assert _digest(root / "m") == before


def test_library_writers_keep_kinds_apart(made, tmp_path):
    root, _ = made
    model = io.load(root / "m")["model"]
    with pytest.raises(RLSIError, match="rlsi matrix directory"):
        io.save(root / "mx", model=model)
    with pytest.raises(RLSIError, match="rlsi model directory"):
        io.save_matrix(root / "m", sp.identity(3, format="csr"))
    io.load(root / "m")
    io.load_matrix(root / "mx")


def test_outputs_inside_an_rlsi_folder_are_refused(made, capsys, tmp_path):
    root, corpus = made
    _refused(capsys, ["inside", str(root / "m")], "fit", corpus, "-k", 3, "-o", root / "m" / "sub")
    assert not (root / "m" / "sub").exists()


@pytest.mark.parametrize("name", [".", "x" * 300])
def test_an_unusable_output_name_is_refused_before_the_fit(made, capsys, tmp_path, name, monkeypatch):
    _, corpus = made
    monkeypatch.chdir(tmp_path)
    err = _refused(capsys, [], "fit", corpus, "-k", 3, "-o", name)
    assert "name" in err


def test_a_folder_changed_since_it_was_read_is_not_replaced(made, tmp_path):
    root, _ = made
    import shutil

    shutil.copytree(root / "m", tmp_path / "a")
    seen = kinds.fingerprint(tmp_path / "a")
    bundle = io.load(tmp_path / "a")
    io.save(tmp_path / "a", model=bundle["model"], vectorizer=bundle["vectorizer"])  # another writer
    after_other = _digest(tmp_path / "a")
    with pytest.raises(RLSIError, match="changed since it was read"):
        io.save(tmp_path / "a", model=bundle["model"], vectorizer=bundle["vectorizer"], unchanged_since=seen)
    assert _digest(tmp_path / "a") == after_other


def test_two_resumes_of_one_folder_cannot_both_save(tmp_path, capsys):
    first = _corpus(tmp_path / "first.jsonl", n=30)
    more = _corpus(tmp_path / "more.jsonl", n=30, seed=1)
    assert run(capsys, "fit", first, "--online", "-k", 3, "-o", tmp_path / "a")[0] == 0
    # the second resume read the folder before the first one saved: its fingerprint is the old one
    seen = kinds.fingerprint(tmp_path / "a")
    assert run(capsys, "fit", more, "--resume", tmp_path / "a")[0] == 0
    from rlsi.cli import _output

    assert _output.resume_fingerprint(tmp_path / "a", tmp_path / "a") != seen
    bundle = io.load(tmp_path / "a")
    with pytest.raises(RLSIError, match="changed since it was read"):
        io.save(tmp_path / "a", model=bundle["model"], vectorizer=bundle["vectorizer"], unchanged_since=seen)
    assert io.load(tmp_path / "a")["model"].n_docs_seen_ == 60


def test_a_killed_ingest_leaves_nothing_the_next_run_keeps(tmp_path, capsys):
    corpus = _corpus(tmp_path / "c.jsonl")
    # what ingest leaves when killed with -9 during its first pass: its scratch folder, named after a
    # process of this host that no longer runs
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    from rlsi.io.atomic import _HOST

    left = tmp_path / f".mx.ingest-{_HOST}-{dead.pid}-0123abcd"
    left.mkdir()
    (left / "tokens.bin").write_bytes(b"\0" * 1000)
    alive = tmp_path / f".mx.ingest-{_HOST}-{os.getpid()}-0123abcd"  # a running writer's: kept
    alive.mkdir()
    assert run(capsys, "ingest", corpus, "-o", tmp_path / "mx")[0] == 0
    assert not left.exists() and alive.exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".mx.")) == [alive.name]


def test_track_never_writes_over_its_corpus_or_into_a_model(made, capsys, tmp_path):
    root, _ = made
    inner = tmp_path / "report"
    inner.mkdir()
    corpus = _corpus(inner / "c.jsonl", n=12)
    _refused(capsys, ["contains"], "track", corpus, "-o", inner)
    _refused(capsys, ["inside"], "track", corpus, "-o", root / "m" / "report")
    assert corpus.is_file() and not (root / "m" / "report").exists()


# ------------------------------------------------------------------ nested folders, kinds edited by hand
def _kept_inside(root, outer, depth):
    """A copy of the model folder kept inside ``outer``, ``depth`` folders down."""
    import shutil

    place = outer.joinpath(*[f"d{i}" for i in range(depth - 1)], "kept")
    place.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(root / "m", place)
    return place


@pytest.mark.parametrize("depth", [1, 3])
@pytest.mark.parametrize("command", ["synth", "ingest", "fit"])
def test_a_folder_holding_an_rlsi_folder_at_any_depth_is_never_replaced(made, capsys, tmp_path, command, depth):
    import shutil

    root, corpus = made
    target = tmp_path / "out"
    shutil.copytree(root / ("m" if command == "fit" else "mx"), target)  # a folder of the writer's own kind
    inner = _kept_inside(root, target, depth)
    before = _digest(target)
    argv = {"synth": ["synth", "--docs", 10, "--terms", 20, "--topics", 2, "--topic-vocab", 5],
            "ingest": ["ingest", corpus], "fit": ["fit", corpus, "-k", 3, "--max-iter", 2]}[command]
    _refused(capsys, [str(inner), "would delete it"], *argv, "-o", target)
    assert _digest(target) == before
    io.load(inner)


def test_the_library_writers_never_replace_a_folder_holding_one(made, tmp_path):
    import shutil

    root, _ = made
    shutil.copytree(root / "m", tmp_path / "m")
    inner = _kept_inside(root, tmp_path / "m", 2)
    model = io.load(root / "m")["model"]
    with pytest.raises(RLSIError, match="would delete it"):
        io.save(tmp_path / "m", model=model)
    shutil.copytree(root / "mx", tmp_path / "mx")
    _kept_inside(root, tmp_path / "mx", 1)
    with pytest.raises(RLSIError, match="would delete it"):
        io.save_matrix(tmp_path / "mx", sp.identity(3, format="csr"))
    io.load(inner)


@pytest.mark.parametrize("source, declared", [("mx", "model"), ("m", "matrix"), ("m", "index")])
def test_a_kind_edited_in_the_manifest_is_not_believed(made, capsys, tmp_path, source, declared):
    """A matrix folder whose manifest says "model" (or the reverse) is refused by every writer: the kind is
    decided from the contents as well, and both must agree."""
    import shutil

    root, corpus = made
    target = tmp_path / "edited"
    shutil.copytree(root / source, target)
    manifest = json.loads((target / "manifest.json").read_text())
    manifest["kind"] = declared
    (target / "manifest.json").write_text(json.dumps(manifest))
    assert kinds.folder_kind(target) == kinds.CONFLICT
    before = _digest(target)
    _refused(capsys, ["declares the kind", "not replaced"], "fit", corpus, "-k", 3, "-o", target)
    _refused(capsys, ["declares the kind", "not replaced"], "ingest", corpus, "-o", target)
    with pytest.raises(RLSIError, match="declares the kind"):
        io.save(target, model=io.load(root / "m")["model"])
    assert _digest(target) == before


def test_a_track_report_keeps_its_own_model_but_no_other_folder(made, capsys, tmp_path):
    root, _ = made
    corpus = _corpus(tmp_path / "c.jsonl", n=30)
    argv = ["track", corpus, "-k", 3, "--every", 10, "-o", tmp_path / "report"]
    assert run(capsys, *argv)[0] == 0
    assert (tmp_path / "report" / "model" / "manifest.json").is_file()
    assert run(capsys, *argv)[0] == 0  # its own model/ is rewritten with the report
    inner = _kept_inside(root, tmp_path / "report", 2)
    _refused(capsys, [str(inner), "would delete it"], *argv)
    io.load(inner)
