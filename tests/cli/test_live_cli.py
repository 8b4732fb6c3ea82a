"""``rlsi index MODEL --live/--add/--update/--delete/--merge/--update-model`` and ``rlsi search`` on a live
index; a static index folder keeps working and says how to become live; every refusal is one line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rlsi.cli.main import main
from rlsi.io.kinds import folder_kind
from cli_runner import run

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

WORDS = ["heart blood artery vein pressure cardiac valve pulse".split(),
         "lens retina vision cataract optic pupil cornea sight".split(),
         "bacteria virus immune cell antibody infection protein gene".split()]


def _corpus(path, ids, seed=0, extra=""):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in ids:
            words = rng.choice(WORDS[i % 3], size=6, replace=False)
            f.write(json.dumps({"id": f"d{i}", "text": " ".join(words) + extra}) + "\n")
    return path


def refused(capsys, words, *argv):
    status, out, err = run(capsys, *argv)
    assert status == 2 and err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, err
    return err


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    root = tmp_path_factory.mktemp("live")
    corpus = _corpus(root / "c.jsonl", range(30))
    assert main(["-q", "fit", str(corpus), "-o", str(root / "m"), "-k", "3", "--max-iter", "3"]) == 0
    return root, corpus


def _hits(capsys, model, query, k=40):
    status, out, _ = run(capsys, "search", model, query, "-k", k, "--json")
    assert status == 0
    return [h["doc_id"] for h in json.loads(out)["results"]]


def test_add_delete_update_merge_and_search(made, capsys, tmp_path):
    root, corpus = made
    import shutil

    m = tmp_path / "m"
    shutil.copytree(root / "m", m)
    assert run(capsys, "index", m, "--add", corpus)[0] == 0
    assert folder_kind(m) == "live"
    more = _corpus(tmp_path / "more.jsonl", range(30, 36), seed=1, extra=" zeppelin")
    assert run(capsys, "index", m, "--add", more)[0] == 0
    assert _hits(capsys, m, "zeppelin")[:6] and set(_hits(capsys, m, "zeppelin")[:6]) == {f"d{i}" for i in range(30, 36)}
    (tmp_path / "ids.txt").write_text("d30\nd31\nnope\n")
    status, out, _ = main(["index", str(m), "--delete", str(tmp_path / "ids.txt")]), *capsys.readouterr()
    assert status == 0 and "2 deleted" in out and "1 ids to delete not found" in out
    assert "d30" not in _hits(capsys, m, "zeppelin")
    upd = _corpus(tmp_path / "upd.jsonl", [0], seed=2, extra=" zeppelin")
    assert run(capsys, "index", m, "--update", upd, "--merge")[0] == 0
    assert "d0" in _hits(capsys, m, "zeppelin")
    status, out, _ = run(capsys, "search", m, "heart", "-k", "2", "--json")
    assert json.loads(out)["results"][0]["topics"]
    # the model folder still serves the other commands
    assert run(capsys, "topics", m)[0] == 0


def test_update_model_from_another_fit(made, capsys, tmp_path):
    root, corpus = made
    import shutil

    m = tmp_path / "m"
    shutil.copytree(root / "m", m)
    assert run(capsys, "index", m, "--live", "--corpus", corpus)[0] == 0
    assert main(["-q", "fit", str(corpus), "-o", str(tmp_path / "m2"), "-k", "2", "--max-iter", "2"]) == 0
    status, out, err = main(["index", str(m), "--update-model", str(tmp_path / "m2")]), *capsys.readouterr()
    assert status == 0 and "model version 2 serving" in out, err
    assert _hits(capsys, m, "heart")


def test_refusals_are_one_line_and_change_nothing(made, capsys, tmp_path):
    root, corpus = made
    import shutil

    static = tmp_path / "static"
    shutil.copytree(root / "m", static)
    assert run(capsys, "index", static, "--corpus", corpus)[0] == 0
    refused(capsys, ["static search index", "--live --corpus"], "index", static, "--add", corpus)
    assert folder_kind(static) == "model" and _hits(capsys, static, "heart")  # the static index keeps working
    live = tmp_path / "live"
    shutil.copytree(root / "m", live)
    assert run(capsys, "index", live, "--live", "--corpus", corpus)[0] == 0
    refused(capsys, ["already in the index", "--update"], "index", live, "--add", corpus)
    refused(capsys, ["live search index"], "index", live, "--corpus", corpus)
    refused(capsys, ["live search index"], "fit", corpus, "-k", 3, "-o", live)
    refused(capsys, ["live index", "--add"], "search", live, "heart", "--corpus", corpus)
    refused(capsys, ["give the documents"], "index", live)
    refused(capsys, ["separate call"], "index", live, "--live", "--corpus", corpus, "--add", corpus)
    refused(capsys, ["bm25"], "search", live, "heart", "--term-model", "vsm")
    assert len(_hits(capsys, live, "heart", k=100)) == 30


def test_a_second_writer_process_gets_one_line(made, capsys, tmp_path):
    root, corpus = made
    import shutil

    from rlsi.retrieval.live import LiveIndex

    m = tmp_path / "m"
    shutil.copytree(root / "m", m)
    assert run(capsys, "index", m, "--live", "--corpus", corpus)[0] == 0
    holder = LiveIndex.open(m)
    holder.delete(["d1"])  # takes the writer lock
    more = _corpus(tmp_path / "more.jsonl", range(40, 42))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "rlsi.cli.main", "-q", "index", str(m), "--add", str(more)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "another writer" in proc.stderr and str(os.getpid()) in proc.stderr
    holder.close()
    assert "d40" not in LiveIndex.open(m)


def test_check_verifies_every_segment_file(made, capsys, tmp_path):
    """``rlsi check`` on a live index opens every segment against its checksums: a flipped byte in a segment
    file, which the model-folder checks alone never read, is one error line naming the file."""
    root, corpus = made
    import shutil

    m = tmp_path / "m"
    shutil.copytree(root / "m", m)
    assert run(capsys, "index", m, "--live", "--corpus", corpus)[0] == 0
    status, out, err = main(["check", str(m)]), *capsys.readouterr()
    assert status == 0 and "1 segment of 30 live documents (0 deleted) open and match their checksums" in out, err
    seg_file = max((p for p in m.rglob("*.npy") if "seg" in str(p.relative_to(m))), key=lambda p: p.stat().st_size)
    raw = bytearray(seg_file.read_bytes())
    raw[-1] ^= 0x40
    seg_file.write_bytes(bytes(raw))
    err = refused(capsys, [seg_file.name], "check", m)
    assert "checksum" in err or "damaged" in err, err
