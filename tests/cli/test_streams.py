"""Where output fails, and an environment numba cannot use: one line with a status, never a traceback —
a full disk (``> /dev/full``), a reader that went away (``| head``), an output encoding that cannot hold an
id, and bad values of numba's environment variables (named before numba is imported)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import rlsi
from rlsi.cli._streams import NUMBA_LAYERS, environment_problem
from rlsi.cli.main import main

SRC = str(Path(rlsi.__file__).parents[1])


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    root = tmp_path_factory.mktemp("streams")
    corpus = root / "c.jsonl"
    words = "heart blood artery vein lens retina vision cataract".split()
    with open(corpus, "w", encoding="utf-8") as f:
        for i in range(40):
            f.write(json.dumps({"id": f"é{i}", "text": " ".join(words[(i + j) % 8] for j in range(5))}) + "\n")
    assert main(["-q", "fit", str(corpus), "-k", "3", "--max-iter", "3", "-o", str(root / "m")]) == 0
    return root / "m", corpus


def _rlsi(*argv, env=None, **kwargs):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]), **(env or {}))
    kwargs.setdefault("stdout", subprocess.PIPE)
    return subprocess.run([sys.executable, "-m", "rlsi.cli.main", *map(str, argv)], env=env, stderr=subprocess.PIPE,
                          timeout=300, **kwargs)


def _one_line(proc, status, *words):
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == status, err
    assert err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and "Exception ignored" not in err
    for w in words:
        assert w in err, err


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_on_standard_output_is_one_line(model):
    path, corpus = model
    with open("/dev/full", "w") as full:
        proc = _rlsi("topics", path, stdout=full)
    _one_line(proc, 1, "cannot write the output", "no space left on the device")


def test_a_reader_that_goes_away_ends_quietly(model):
    path, corpus = model
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.Popen([sys.executable, "-m", "rlsi.cli.main", "search", str(path), "heart", "--corpus", str(corpus),
                             "-k", "40"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.read(5)  # as `| head -c 5`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=300) in (0, 1) and err == "", err


def test_an_output_encoding_that_cannot_hold_an_id_is_one_line(model):
    path, corpus = model
    proc = _rlsi("search", path, "heart", "--corpus", corpus, env={"PYTHONIOENCODING": "ascii"})
    _one_line(proc, 1, "output encoding ascii", "PYTHONIOENCODING=utf-8")


@pytest.mark.parametrize("name, value", [("NUMBA_NUM_THREADS", "0"), ("NUMBA_NUM_THREADS", "abc"),
                                         ("NUMBA_NUM_THREADS", "-2"), ("NUMBA_DISABLE_JIT", "1"),
                                         ("NUMBA_DISABLE_JIT", "yes"), ("NUMBA_THREADING_LAYER", "fast"),
                                         ("NUMBA_OPT", "9")])
def test_numbas_environment_is_checked_first_naming_the_variable(model, capsys, monkeypatch, name, value):
    path, corpus = model
    monkeypatch.setenv(name, value)
    assert main(["-q", "fit", str(corpus), "-k", "3", "-o", str(path.parent / "never")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rlsi: error: {name}=") and err.count("\n") == 1, err
    assert not (path.parent / "never").exists()


def test_numbas_environment_is_checked_before_numba_is_imported(model):
    path, corpus = model
    proc = _rlsi("fit", corpus, "-k", 3, "-o", path.parent / "never", env={"NUMBA_NUM_THREADS": "abc"})
    _one_line(proc, 2, "NUMBA_NUM_THREADS='abc'")  # not numba's warning with its traceback


def test_usable_values_pass():
    assert environment_problem({}) is None
    assert environment_problem({"NUMBA_NUM_THREADS": "2", "NUMBA_DISABLE_JIT": "0", "NUMBA_OPT": "max",
                                "NUMBA_THREADING_LAYER": NUMBA_LAYERS[0]}) is None
