"""TREC qrels/run reading and writing."""

import gzip

import numpy as np
import pytest

from rlsi.errors import RLSIError
from rlsi.evaluation.trec import ranked, read_qrels, read_run, run_from_scores, write_qrels, write_run


def _write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def test_read_qrels_grades_and_whitespace(tmp_path):
    path = _write(tmp_path / "q.tsv", "1\t0\td1\t2\n1 0 d2 0\n\n2  0  d1  -1\n1 0 d1 2\n")
    assert read_qrels(path) == {"1": {"d1": 2, "d2": 0}, "2": {"d1": -1}}


def test_qrels_round_trip_plain_and_gzip(tmp_path):
    qrels = {"q1": {"a": 1, "b": 0}, "q2": {"c": 3, "a": -1}}
    for name in ("qrels.tsv", "qrels.tsv.gz"):
        write_qrels(qrels, tmp_path / name)
        assert read_qrels(tmp_path / name) == qrels
    with gzip.open(tmp_path / "qrels.tsv.gz", "rt") as handle:
        assert handle.readline() == "q1\t0\ta\t1\n"


@pytest.mark.parametrize("text, message", [
    ("1 0 d1 1\n1 0 d2\n", r"q.tsv, line 2: a qrels line needs 4 fields"),
    ("1 0 d1 1\n\n1 0 d2 x\n", r"q.tsv, line 3: relevance 'x' is not an integer"),
    ("1 0 d1 1\n1 0 d1 2\n", r"q.tsv, line 2: .*'1'.*'d1'.*twice"),
])
def test_read_qrels_errors_name_the_line(tmp_path, text, message):
    with pytest.raises(RLSIError, match=message):
        read_qrels(_write(tmp_path / "q.tsv", text))


def test_missing_files(tmp_path):
    with pytest.raises(RLSIError, match="qrels file not found: .*nope"):
        read_qrels(tmp_path / "nope")
    with pytest.raises(RLSIError, match="run file not found"):
        read_run(tmp_path / "nope")


def test_read_run_uses_scores(tmp_path):
    path = _write(tmp_path / "r.txt", "1 Q0 a 1 2.5 t\n1 Q0 b 2 3 t\n2 Q0 a 1 -1e-3 t\n1 Q0 a 1 2.5 t\n")
    assert read_run(path) == {"1": {"a": 2.5, "b": 3.0}, "2": {"a": -0.001}}


@pytest.mark.parametrize("text, message", [
    ("1 Q0 a 1 2.5\n", r"r.txt, line 1: a run line needs 6 fields"),
    ("1 Q0 a 1 2.5 t\n1 Q0 b one 2 t\n", r"r.txt, line 2: rank 'one'"),
    ("1 Q0 a 1 high t\n", r"r.txt, line 1: score 'high' is not a number"),
    ("1 Q0 a 1 nan t\n", r"r.txt, line 1: score 'nan' is not finite"),
    ("1 Q0 a 1 2 t\n1 Q0 a 2 1 t\n", r"r.txt, line 2: score .*'a'.*twice"),
])
def test_read_run_errors(tmp_path, text, message):
    with pytest.raises(RLSIError, match=message):
        read_run(_write(tmp_path / "r.txt", text))


def test_write_run_order_ties_depth_and_round_trip(tmp_path):
    run = {"q2": {"a": 1.0, "c": 2.0, "b": 2.0, "d": 0.1 + 0.2}, "q1": {"x": 0.5}}
    write_run(run, tmp_path / "run.txt", tag="mine", depth=3)
    lines = (tmp_path / "run.txt").read_text().splitlines()
    # score descending, the tie between b and c broken by docid descending (trec_eval's order)
    assert lines == ["q2 Q0 c 1 2.0 mine", "q2 Q0 b 2 2.0 mine", "q2 Q0 a 3 1.0 mine", "q1 Q0 x 1 0.5 mine"]
    write_run(run, tmp_path / "all.txt", depth=None)
    back = read_run(tmp_path / "all.txt")
    assert back == run  # shortest round-trip float text: 0.1 + 0.2 comes back exactly


def test_write_run_errors(tmp_path):
    with pytest.raises(RLSIError, match="run tag 'my run'"):
        write_run({"q": {"a": 1.0}}, tmp_path / "r", tag="my run")
    with pytest.raises(RLSIError, match="document id 'a b'"):
        write_run({"q": {"a b": 1.0}}, tmp_path / "r")
    with pytest.raises(RLSIError, match="depth=0"):
        write_run({"q": {"a": 1.0}}, tmp_path / "r", depth=0)
    with pytest.raises(RLSIError, match="folder .* does not exist"):
        write_run({"q": {"a": 1.0}}, tmp_path / "no" / "r")
    with pytest.raises(RLSIError, match="not finite"):
        write_run({"q": {"a": float("inf")}}, tmp_path / "r")


def test_ranked_order():
    assert [d for d, _ in ranked({"a": 1, "b": 1, "c": 3, "B": 1})] == ["c", "b", "a", "B"]
    # compared in float32 as trec_eval does: a 1e-10 difference is a tie, broken by docid descending
    assert [d for d, _ in ranked({"a": 1 + 1e-10, "b": 1.0})] == ["b", "a"]


def test_run_from_scores_depth_and_ties_do_not_depend_on_column_order():
    scores = np.array([[0.1, 0.5, 0.5, 0.5, 0.9], [0.0, 0.0, 0.0, 0.0, 0.0]])
    ids = ["d0", "d1", "d2", "d3", "d4"]
    run = run_from_scores(scores, ["q1", "q2"], ids, depth=3)
    # d4 first, then two of the tied {d1, d2, d3}: docid descending keeps d3 and d2
    assert list(run["q1"]) == ["d4", "d3", "d2"]
    assert list(run["q2"]) == ["d4", "d3", "d2"]
    perm = [3, 0, 4, 2, 1]
    again = run_from_scores(scores[:, perm], ["q1", "q2"], [ids[j] for j in perm], depth=3)
    assert again == run
    assert len(run_from_scores(scores, ["q1", "q2"], ids, depth=None)["q1"]) == 5
    with pytest.raises(RLSIError, match="shape"):
        run_from_scores(scores, ["q1"], ids)


def test_a_failed_write_keeps_the_old_file(tmp_path, monkeypatch):
    from rlsi.io import atomic

    path = tmp_path / "a.run.gz"
    write_run({"q1": {"d1": 1.0}}, path)

    def no_space(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic, "_rename", no_space)
    with pytest.raises(RLSIError, match="cannot write .*a.run.gz: no space left"):
        write_run({"q1": {"d2": 2.0}}, path)
    assert read_run(path) == {"q1": {"d1": 1.0}}
    assert [p.name for p in tmp_path.iterdir()] == ["a.run.gz"]
