"""Each cause known before work is one clear line before work; a full disk is named as such; nothing is
left half-written."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from rlsi.cli.main import main
from rlsi.errors import RLSIError
from cli_runner import run

WORDS = "heart blood artery vein pressure lens retina vision cataract optic pupil cornea".split()


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "c.jsonl"
    with open(path, "w") as f:
        for i in range(2000):
            text = " ".join(f"w{(i * 7 + j) % 3000}" for j in range(30))
            f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    return path


def _one_line(status, err, *words):
    assert status == 2, err
    assert err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    for w in words:
        assert w in err, err


LIMITED = textwrap.dedent("""
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    from rlsi.cli.main import main
    sys.exit(main(["-q", *sys.argv[2:]]))
""")


def _limited(tmp_path, limit, *argv):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path), PYTHONWARNINGS="ignore")
    return subprocess.run([sys.executable, "-c", LIMITED, str(limit), *map(str, argv)], cwd=tmp_path,
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.mark.skipif(not hasattr(__import__("signal"), "SIGXFSZ"), reason="needs POSIX file size limits")
@pytest.mark.parametrize("argv, limit, words", [
    (["fit", "c.jsonl", "-k", 3, "--max-iter", 2, "-o", "m"], 30000, "bytes could be written: the disk is full"),
    (["ingest", "c.jsonl", "-o", "mx"], 100000, "cannot write the scratch files of mx"),
], ids=["fit", "ingest"])
def test_a_full_disk_is_one_line_and_leaves_nothing(tmp_path, corpus, argv, limit, words):
    # the same command without the limit first: the numba kernels it uses are compiled and cached, so the
    # limited process only writes its own output
    warm = tmp_path.parent / f"{tmp_path.name}-warm"
    warm.mkdir()
    assert main(["-q", *[str(corpus) if a == "c.jsonl" else str(warm / str(a)) if a in ("m", "mx") else str(a)
                         for a in argv]]) == 0
    done = _limited(tmp_path, limit, *argv)
    lines = [line for line in done.stderr.splitlines() if line.startswith("rlsi")]
    assert done.returncode == 2 and len(lines) == 1 and words in lines[0], done.stderr
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_an_unknown_scheduler_protocol_is_refused_before_connecting(tmp_path, capsys, corpus):
    pytest.importorskip("distributed")
    status, out, err = run(capsys, "fit", corpus, "-k", 3, "--backend", "dask", "--scheduler", "foo://bar",
                           "-o", tmp_path / "m")
    _one_line(status, err, "unknown protocol 'foo'")


def test_a_checkpoint_dir_naming_a_file_is_refused_before_the_cluster(tmp_path, capsys, corpus):
    pytest.importorskip("distributed")
    status, out, err = run(capsys, "fit", corpus, "-k", 3, "--backend", "dask", "--checkpoint-dir", corpus,
                           "-o", tmp_path / "m")
    _one_line(status, err, "is not a folder")


def test_the_same_file_twice_is_refused(tmp_path, capsys, corpus):
    pytest.importorskip("distributed")
    status, out, err = run(capsys, "fit", corpus, corpus, "-k", 3, "--backend", "dask", "-o", tmp_path / "m")
    _one_line(status, err, "given twice")
    from rlsi.distributed.files import check_distinct_files

    with pytest.raises(RLSIError, match="given twice"):
        check_distinct_files([corpus, tmp_path / "." / "c.jsonl"])


@pytest.mark.parametrize("option", ["--k-grid", "--lambda1-grid"])
def test_an_empty_grid_is_refused_not_replaced_by_the_default(tmp_path, capsys, option):
    status, out, err = run(capsys, "evaluate", "--collection", tmp_path, option, "")
    _one_line(status, err, option, "names no value")


def test_a_nan_document_count_is_not_blamed_on_lambda1():
    from rlsi.models.regularization import effective_lambda1

    with pytest.raises(RLSIError) as err:
        effective_lambda1(0.05, "per_doc", float("nan"))
    assert "damaged" in str(err.value) and "lambda1" not in str(err.value)


def test_ctrl_c_during_a_dask_fit_is_an_interruption_whatever_dask_raises():
    import logging
    import signal

    from rlsi.cli._dask import interruptible

    before = signal.getsignal(signal.SIGINT)
    names = ("distributed", "asyncio", "tornado")
    levels = {name: logging.getLogger(name).level for name in names}
    with pytest.raises(KeyboardInterrupt):
        with interruptible():
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:  # what Dask's shutdown turns it into: an empty worker list
                [][0 % 1]
    assert signal.getsignal(signal.SIGINT) is before
    assert logging.getLogger("asyncio").level == logging.CRITICAL  # its shutdown tracebacks silenced
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)
    with pytest.raises(ZeroDivisionError):  # without an interruption, errors pass unchanged
        with interruptible():
            1 // 0
