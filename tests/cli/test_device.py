"""``rlsi fit --device``: BatchRLSI and OnlineRLSI placed on a device (here the numpy device path), saved with it;
``--resume --device`` moves a saved stream; the learners without a device placement refuse it in one line."""

import json

import numpy as np
import pytest

from rlsi.cli.learners import fit_modes
from rlsi.cli.main import build_parser
from rlsi.io import load
from cli_runner import run


def write_corpus(path, n, offset=0):
    with open(path, "w") as f:
        for i in range(offset, offset + n):
            text = " ".join(f"w{(i * 7 + j * (1 + i % 5)) % 400}" for j in range(25))
            f.write(json.dumps({"id": f"d{i}", "text": text, "label": f"c{i % 2}"}) + "\n")
    return path


@pytest.fixture
def corpus(tmp_path):
    return write_corpus(tmp_path / "c.jsonl", 150)


def test_batch_fit_on_the_device_path(corpus, tmp_path, capsys):
    kw = ["-k", 4, "--max-iter", 4, "--tol", 0]
    assert run(capsys, "fit", corpus, *kw, "-o", tmp_path / "host")[0] == 0
    status, _, err = run(capsys, "fit", corpus, *kw, "--device", "numpy:float64", "-o", tmp_path / "dev")
    assert status == 0, err
    host, dev = load(tmp_path / "host")["model"], load(tmp_path / "dev")["model"]
    assert type(dev).__name__ == "BatchRLSI" and dev.device == "numpy:float64" and host.device == "cpu"
    np.testing.assert_allclose(dev.objective_, host.objective_, rtol=1e-4)


def test_online_fit_on_the_device_and_resume_elsewhere(corpus, tmp_path, capsys):
    more = write_corpus(tmp_path / "more.jsonl", 60, offset=150)
    kw = ["-k", 4, "--online", "--batch-size", 50]
    status, _, err = run(capsys, "fit", corpus, *kw, "--device", "numpy", "-o", tmp_path / "m")
    assert status == 0, err
    model = load(tmp_path / "m")["model"]
    assert type(model).__name__ == "OnlineRLSI" and model.device == "numpy" and model.n_docs_seen_ == 150
    assert run(capsys, "fit", more, "--resume", tmp_path / "m", "-o", tmp_path / "same")[0] == 0
    assert load(tmp_path / "same")["model"].device == "numpy"  # the saved placement, when none is given
    assert run(capsys, "fit", more, "--resume", tmp_path / "m", "--device", "cpu", "-o", tmp_path / "host")[0] == 0
    resumed = load(tmp_path / "host")["model"]
    assert resumed.device == "cpu" and resumed.n_docs_seen_ == 210


@pytest.mark.parametrize("extra", [["--model", "grlsi", "--label-field", "label"], ["--model", "cnmf"]])
def test_learners_without_a_device_placement_refuse_it_in_one_line(tmp_path, capsys, extra):
    status, _, err = run(capsys, "fit", tmp_path / "none.jsonl", "-o", tmp_path / "m", *extra, "--device", "numpy")
    name = extra[1]
    assert status == 2 and err.count("\n") == 1
    assert f"--model {name} does not fit with --device DEVICE; --device DEVICE fits --model rlsi" in err


def test_device_option_help_and_modes():
    parser = build_parser()
    sub = next(a for a in parser._actions if hasattr(a, "choices") and isinstance(a.choices, dict))
    device = next(a for a in sub.choices["fit"]._actions if a.dest == "device")
    assert "cuda" in device.help and "numpy" in device.help and device.default is None
    args = parser.parse_args(["fit", "c.jsonl", "-o", "out", "--model", "grlsi", "--device", "cpu"])
    assert fit_modes(args) == {"batch"}  # the host is every learner's placement
    args = parser.parse_args(["fit", "c.jsonl", "-o", "out", "--online", "--device", "cuda"])
    assert fit_modes(args) == {"online", "device"}
