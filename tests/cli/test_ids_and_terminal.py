"""Ids and terms are checked before anything is written (valid text, printable, unique, bounded length);
an index is rebuilt without loading the old one; ids and terms read from files are shown escaped."""

import json
import re

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi import io
from rlsi.cli._output import printable
from rlsi.cli.main import main
from rlsi.errors import CorpusError, RLSIError
from rlsi.text import Tokenizer, read_jsonl
from rlsi.text.ids import MAX_ID_LENGTH, check_ids
from rlsi.text.tokenize import MAX_TERM_LENGTH

from forge import reseal, unseal
from cli_runner import run

WORDS = ["heart blood artery vein pressure cardiac valve pulse".split(),
         "lens retina vision cataract optic pupil cornea sight".split(),
         "bacteria virus immune cell antibody infection protein gene".split()]


def _records(n=24, seed=0):
    rng = np.random.default_rng(seed)
    return [{"id": f"d{i}", "text": " ".join(rng.choice(WORDS[i % 3], size=6, replace=False))} for i in range(n)]


def _write(path, records, raw_lines=()):
    with open(path, "w") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")
        for line in raw_lines:
            f.write(line + "\n")
    return path


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    root = tmp_path_factory.mktemp("ids")
    corpus = _write(root / "c.jsonl", _records())
    assert main(["-q", "fit", str(corpus), "-o", str(root / "m"), "-k", "3", "--max-iter", "3"]) == 0
    return root / "m"


def test_a_lone_surrogate_id_is_refused_and_the_model_keeps_working(model_dir, tmp_path, capsys):
    bad = _write(tmp_path / "bad.jsonl", _records(), raw_lines=['{"id": "bad\\ud800id", "text": "heart blood"}'])
    status, out, err = run(capsys, "index", model_dir, "--corpus", bad)
    assert status == 2 and "lone surrogate" in err and "line 25" in err and err.count("\n") == 1
    status, out, err = run(capsys, "search", model_dir, "heart", "--corpus", bad, "--save-index")
    assert status == 2 and "lone surrogate" in err
    io.load(model_dir)
    assert run(capsys, "topics", model_dir)[0] == 0


def test_duplicate_ids_of_a_matrix_directory_are_refused_before_writing(tmp_path):
    with pytest.raises(CorpusError, match="duplicate document id 'same'"):
        io.save_matrix(tmp_path / "mx", sp.identity(3, format="csr"), doc_ids=["same"] * 3)
    assert not (tmp_path / "mx").exists()


def test_an_index_from_a_matrix_with_duplicate_ids_is_refused(tmp_path, capsys, model_dir):
    # a matrix directory written before ids were checked: the index built from it is refused, MODEL_DIR kept
    import shutil

    corpus = _write(tmp_path / "c.jsonl", _records())
    assert run(capsys, "ingest", corpus, "-o", tmp_path / "mx")[0] == 0
    ids = np.array(["same"] * 24)
    np.save(tmp_path / "mx" / "matrix.doc_ids.npy", ids)
    manifest = json.loads((tmp_path / "mx" / "manifest.json").read_text())
    manifest["components"]["matrix"]["arrays"]["doc_ids"]["dtype"] = str(ids.dtype)
    (tmp_path / "mx" / "manifest.json").write_text(json.dumps(manifest))
    unseal(tmp_path / "mx")  # written before ids (and checksums) were checked
    m = tmp_path / "m"
    shutil.copytree(model_dir, m)
    status, out, err = run(capsys, "index", m, "--matrix", tmp_path / "mx")
    assert status == 2 and "duplicate document id 'same'" in err
    assert "index" not in io.load(m)


@pytest.mark.parametrize("bad_id, words", [("x" * (MAX_ID_LENGTH + 1), "characters long"),
                                           ("a\x1b]0;pwned\x07", "control character U+001B"),
                                           ("two\nlines", "control character U+000A"),
                                           ("", "is empty"), (" ", "is only white space"),
                                           ("\u3000 ", "is only white space")])
def test_ids_that_cannot_be_stored_or_printed_are_refused_on_reading(tmp_path, bad_id, words):
    path = _write(tmp_path / "c.jsonl", [{"id": bad_id, "text": "heart"}])
    with pytest.raises(CorpusError, match=re.escape(words)):
        read_jsonl(path)


@pytest.mark.parametrize("bad", ["", " ", "\t"])
def test_empty_and_blank_ids_are_refused_everywhere_ids_are_stored(tmp_path, capsys, bad):
    with pytest.raises(CorpusError, match="document 2: document id .* (is empty|is only white space)"):
        check_ids(["a", bad, "c"], "ids")
    corpus = _write(tmp_path / "c.jsonl", [{"id": "a", "text": "heart"}, {"id": bad, "text": "blood"}])
    for argv in (["ingest", corpus, "-o", tmp_path / "mx"], ["fit", corpus, "-k", 1, "-o", tmp_path / "m"]):
        status, out, err = run(capsys, *argv)
        assert status == 2 and "line 2" in err and err.count("\n") == 1, err
    assert not (tmp_path / "mx").exists() and not (tmp_path / "m").exists()


def test_check_ids_accepts_ordinary_ids():
    ids = check_ids(["a", "b/c", "é", "日本", "x y"], "ids")
    assert ids.dtype.kind == "U" and list(ids) == ["a", "b/c", "é", "日本", "x y"]


def test_overlong_tokens_are_dropped_so_the_vocabulary_stays_small(tmp_path, capsys):
    records = _records()
    records[5]["text"] += " " + "q" * 20000
    corpus = _write(tmp_path / "c.jsonl", records)
    assert run(capsys, "fit", corpus, "-o", tmp_path / "m", "-k", 3, "--max-iter", 2)[0] == 0
    size = (tmp_path / "m" / "vectorizer.vocabulary.npy").stat().st_size
    assert size < 20000
    assert Tokenizer()("zeta " + "b" * (MAX_TERM_LENGTH + 1) + " " + "c" * MAX_TERM_LENGTH) == ["zeta", "c" * MAX_TERM_LENGTH]


def test_the_store_never_writes_text_it_cannot_read(tmp_path):
    from rlsi.distributed.checkpoint import Arrays

    with pytest.raises(RLSIError, match="lone surrogate"):
        io.save(tmp_path / "x", state=Arrays({}, {"names": np.array(["ok", "bad\ud800"])}))
    assert not (tmp_path / "x").exists()


def test_an_index_rebuild_does_not_load_the_old_index(model_dir, tmp_path, capsys):
    import shutil

    m = tmp_path / "m"
    shutil.copytree(model_dir, m)
    corpus = _write(tmp_path / "c.jsonl", _records())
    assert run(capsys, "index", m, "--corpus", corpus)[0] == 0
    # the old index is damaged (an id that is not text): the rebuild replaces it anyway
    ids_file = m / "index.doc_ids.npy"
    ids = np.load(ids_file)
    raw = bytearray(ids_file.read_bytes())
    raw[-4:] = (0xD800).to_bytes(4, "little")
    ids_file.write_bytes(bytes(raw))
    with pytest.raises(RLSIError):
        io.load(m)
    assert run(capsys, "index", m, "--corpus", corpus)[0] == 0
    assert list(io.load(m)["index"].doc_ids_) == list(ids)


def test_search_and_transform_escape_control_characters(tmp_path, capsys):
    # an index written before ids were checked holds an id with escape sequences and a newline
    from rlsi.retrieval import Searcher

    corpus = _write(tmp_path / "c.jsonl", _records())
    assert run(capsys, "fit", corpus, "-o", tmp_path / "m", "-k", 3, "--max-iter", 2)[0] == 0
    bundle = io.load(tmp_path / "m")
    docs = read_jsonl(corpus)
    ids = list(docs.ids)
    ids[0] = "evil\x1b]0;title\x07\n   1  forged"
    s = Searcher(bundle["model"], bundle["vectorizer"])
    s.index(docs.texts, ids)
    s.save(tmp_path / "m")
    status, out, err = run(capsys, "search", tmp_path / "m", docs.texts[0])
    assert status == 0
    assert "\x1b" not in out and "\x07" not in out and "forged" in out
    assert "evil\\x1b]0;title\\x07\\n   1  forged" in out
    assert sum(1 for line in out.splitlines() if "forged" in line) == 1
    status, out, err = run(capsys, "search", tmp_path / "m", docs.texts[0], "--json")
    assert "\\u001b" in out and "\x1b" not in out


def test_topics_escape_terms(tmp_path, capsys):
    corpus = _write(tmp_path / "c.jsonl", _records())
    assert run(capsys, "fit", corpus, "-o", tmp_path / "m", "-k", 3, "--max-iter", 2)[0] == 0
    vocab_file = tmp_path / "m" / "vectorizer.vocabulary.npy"
    vocab = np.load(vocab_file)
    crafted = vocab.astype("U16")
    crafted[:] = [t[:8] + "\x1b[2J\n" for t in vocab.tolist()]
    order = np.argsort(crafted)  # the vocabulary stays sorted
    assert (order == np.arange(len(order))).all()
    np.save(vocab_file, crafted)
    manifest = json.loads((tmp_path / "m" / "manifest.json").read_text())
    manifest["components"]["vectorizer"]["arrays"]["vocabulary"]["dtype"] = str(crafted.dtype)
    (tmp_path / "m" / "manifest.json").write_text(json.dumps(manifest))
    reseal(tmp_path / "m")  # crafted, with matching checksums
    status, out, err = run(capsys, "topics", tmp_path / "m")
    assert status == 0, err
    assert "\x1b" not in out and "\\x1b[2J\\n" in out


def test_printable():
    assert printable("plain é 日本") == "plain é 日本"
    assert printable("a\x1bb\tc\nd\u202ee\ud800") == "a\\x1bb\\tc\\nd\\u202ee\\ud800"


def test_error_messages_escape_control_characters(tmp_path, capsys):
    # a file name with an escape sequence, echoed by the error message
    bad = tmp_path / "evil\x1b[2J.jsonl"
    status, out, err = run(capsys, "fit", bad, "-o", tmp_path / "m")
    assert status == 2 and "\x1b" not in err and "\\x1b[2J" in err and err.count("\n") == 1
