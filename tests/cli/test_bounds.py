"""Sizes and counts far beyond any use end in one line before any work: synth sizes, topics, workers,
inner iterations, passes, and inputs without line ends (/dev/zero)."""

import json
import os

import pytest

from rlsi.cli.main import main
from cli_runner import run


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


@pytest.mark.parametrize("cls_path, param, bound", [
    ("rlsi.models.online.OnlineRLSI", "n_inner", "MAX_N_INNER"),
    ("rlsi.models.online.OnlineRLSI", "n_passes", "MAX_PASSES"),
    ("rlsi.models.online.OnlineRLSI", "batch_size", "MAX_BATCH_SIZE"),
    ("rlsi.models.BatchRLSI", "max_iter", "MAX_ITERATIONS"),
    ("rlsi.models.BatchRLSI", "n_components", "MAX_COMPONENTS"),
    ("rlsi.models.stc.SparseTopicalCoding", "lda_passes", "MAX_LDA_PASSES"),
    ("rlsi.models.stc.SparseTopicalCoding", "n_components", "MAX_COMPONENTS"),
    ("rlsi.models.stc.OnlineSTC", "n_epochs", "MAX_PASSES"),
    ("rlsi.models.stc.MedSTC", "lda_passes", "MAX_LDA_PASSES"),
    ("rlsi.models.stc.OnlineMedSTC", "lda_passes", "MAX_LDA_PASSES"),
])
def test_the_estimators_take_the_bounds_the_command_line_takes(cls_path, param, bound):
    """One number per bound (rlsi.limits): the Python API refuses what the parser refuses, in one line,
    huge integers included (OnlineRLSI(n_inner=10**12) has no bound otherwise)."""
    import importlib

    from rlsi import limits
    from rlsi.errors import RLSIError
    from rlsi.io.checks import validate_params

    module, name = cls_path.rsplit(".", 1)
    cls = getattr(importlib.import_module(module), name)
    high = getattr(limits, bound)
    validate_params(cls(**{param: high}))
    for value in (high + 1, 10**12, 2**63, 2**64 + 1):
        with pytest.raises(RLSIError, match=f"{param}=.* must be <= {high}") as info:
            validate_params(cls(**{param: value}))
        assert "\n" not in str(info.value)


def test_fit_stc_bounds_and_huge_integers_are_usage_errors(tmp_path, capsys, corpus):
    for argv, words in ((["-k", 9223372036854775808], "--n-components"), (["--lda-passes", 10**9], "--lda-passes"),
                        (["--epochs", 10**6], "--epochs"), (["--max-iter", 10**30], "--max-iter")):
        with pytest.raises(SystemExit) as exc:
            main(["-q", "fit-stc", str(corpus), "-o", str(tmp_path / "m"), *map(str, argv)])
        err = capsys.readouterr().err
        assert exc.value.code == 2 and words in err and "is more than" in err, err
    with pytest.raises(SystemExit):
        main(["-q", "synth", "--docs", "10", "--terms", "20", "--seed", "18446744073709551617", "-o",
              str(tmp_path / "s")])
    assert "seeds are 32-bit" in capsys.readouterr().err and not (tmp_path / "m").exists()
