"""Sizes and counts far beyond any use end in one line before any work: synth sizes, topics, workers,
inner iterations, passes, and inputs without line ends (/dev/zero)."""

import json
import os

import pytest

from rlsi.cli.main import main


def run(capsys, *argv):
    status = main(["-q", *map(str, argv)])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.jsonl"
    words = "heart blood artery vein pressure lens retina vision".split()
    with open(path, "w") as f:
        for i in range(24):
            f.write(json.dumps({"id": f"d{i}", "text": f"{words[i % 8]} cardiac valve pulse optic"}) + "\n")
    return path


def _one_line(status, err, *words):
    assert status == 2, err
    assert err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, err


@pytest.mark.parametrize("argv, words", [
    (["--docs", 10**12, "--terms", 1000], []),
    (["--docs", 10, "--terms", 10**12], ["for their draws"]),
    (["--docs", 10, "--terms", 100, "--topics", 10**12], ["for their draws"]),
    (["--docs", 10, "--terms", 100, "--tokens", 1e12], ["tokens a document"]),
], ids=["docs", "terms", "topics", "tokens"])
def test_synth_refuses_sizes_that_cannot_be_made(tmp_path, capsys, argv, words):
    status, out, err = run(capsys, "synth", *argv, "--topic-vocab", 10, "-o", tmp_path / "s")
    _one_line(status, err, *words)
    assert not (tmp_path / "s").exists()


def test_an_online_fit_with_too_many_topics_is_refused_before_work(tmp_path, capsys, corpus):
    # 20,000 topics is within rlsi.limits.MAX_COMPONENTS: the memory preflight refuses it (its S is 3 GB)
    status, out, err = run(capsys, "fit", corpus, "--online", "-k", 20_000, "--memory-limit", "1G",
                           "-o", tmp_path / "m")
    _one_line(status, err, "this fit needs")


@pytest.mark.parametrize("argv, words", [
    (["--backend", "dask", "--workers", 10**6], "--workers"),
    (["--online", "--n-inner", 10**9], "--n-inner"),
    (["--online", "--n-passes", 10**12], "--n-passes"),
    (["-k", 10**9], "--topics"),
    (["-k", 9223372036854775808], "--topics"),
    (["--seed", 18446744073709551617], "--seed"),
    (["--max-iter", 10**30], "--max-iter"),
    (["--online", "--batch-size", 10**12], "--batch-size"),
])
def test_counts_beyond_use_are_usage_errors_with_the_reason(tmp_path, capsys, corpus, argv, words):
    with pytest.raises(SystemExit) as exc:
        main(["-q", "fit", str(corpus), "-o", str(tmp_path / "m"), *map(str, argv)])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and words in err and "is more than" in err
    assert not (tmp_path / "m").exists()


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_is_not_read_as_a_corpus(tmp_path, capsys):
    link = tmp_path / "z.jsonl"
    link.symlink_to("/dev/zero")
    for path in ("/dev/zero", link):
        status, out, err = run(capsys, "fit", path, "-k", 3, "-o", tmp_path / "m")
        _one_line(status, err, "is a device")


def test_a_line_without_end_stops_at_the_limit():
    from rlsi.io import jsonl

    class Endless:
        def readline(self, limit):
            return b"x" * limit

    line = next(jsonl._lines(Endless()))
    assert len(line) == jsonl.MAX_LINE_BYTES + 1
