"""``rlsi fit --backend dask``: the model directory is the local learner's, with the same topics."""

import gzip
import json

import pytest

from rlsi import io
from rlsi.cli.main import main
from rlsi.models import BatchRLSI

DOCS = [
    "the heart pumps blood through arteries and veins",
    "blood pressure in arteries rises with heart disease",
    "cardiac surgery repairs the heart valves and arteries",
    "the lens of the eye focuses light on the retina",
    "cataract clouds the lens and blurs vision of the eye",
    "retina damage and vision loss in the eye",
    "bacteria infect cells and the immune system responds",
    "immune cells attack bacteria and viruses in infection",
    "viruses infect cells; antibodies of the immune system bind viruses",
]


@pytest.fixture
def corpus(tmp_path):
    path = tmp_path / "docs.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for i, text in enumerate(DOCS):
            f.write(json.dumps({"id": f"d{i}", "text": text}) + "\n")
    return path


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_fit_backend_dask_writes_the_local_model(tmp_path, corpus, capsys):
    common = ["fit", str(corpus), "-k", "3", "--lambda1", "10", "--seed", "1", "--max-iter", "5"]
    assert main(["-q", *common, "-o", str(tmp_path / "local")]) == 0
    assert main([*common, "-o", str(tmp_path / "dask"), "--backend", "dask", "--workers", "2"]) == 0
    err = capsys.readouterr().err
    assert "Dask cluster: 2 worker(s)" in err and "MB per iteration" in err
    local, dask = (io.load(tmp_path / name)["model"] for name in ("local", "dask"))
    assert type(dask) is BatchRLSI
    assert abs(dask.components_ - local.components_).max() <= 1e-10 * abs(local.components_).max()


def test_unreachable_scheduler_from_the_cli(tmp_path, corpus, capsys):
    status = main(["-q", "fit", str(corpus), "-o", str(tmp_path / "m"), "--backend", "dask",
                   "--scheduler", "tcp://127.0.0.1:9", "--scheduler-timeout", "1"])
    err = capsys.readouterr().err
    assert status == 2 and "tcp://127.0.0.1:9" in err and err.count("\n") == 1
    assert not (tmp_path / "m").exists()
