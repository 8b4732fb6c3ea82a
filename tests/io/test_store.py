"""The model directory format: round trips, atomic replacement and clear errors on damage."""

import json

import numpy as np
import pytest

from rlsi import io
from rlsi.errors import ModelFormatError, RLSIError
from rlsi.models import BatchRLSI

from conftest import planted_corpus


@pytest.fixture(scope="module")
def fitted():
    X = planted_corpus()
    return X, BatchRLSI(4, lambda1=1.0, random_state=0, max_iter=20).fit(X)


@pytest.mark.parametrize("mmap", [False, True])
def test_round_trip_is_exact(tmp_path, fitted, mmap):
    X, model = fitted
    io.save(tmp_path / "m", model=model)
    loaded = io.load(tmp_path / "m", mmap=mmap)["model"]
    assert loaded.get_params() == model.get_params()
    assert (loaded.components_ != model.components_).nnz == 0
    np.testing.assert_array_equal(loaded.objective_, model.objective_)
    np.testing.assert_array_equal(loaded.transform(X), model.transform(X))
    assert loaded.n_iter_ == model.n_iter_


def test_no_pickle_and_manifest_version(tmp_path, fitted):
    _, model = fitted
    path = io.save(tmp_path / "m", model=model)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["format_version"] == io.FORMAT_VERSION
    for f in path.glob("*.npy"):
        np.load(f, allow_pickle=False)  # raises if anything was pickled


def test_overwrite_replaces_a_model_but_not_other_dirs(tmp_path, fitted):
    _, model = fitted
    io.save(tmp_path / "m", model=model)
    io.save(tmp_path / "m", model=model)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m"]  # no temp or backup dirs left
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"x")
    with pytest.raises(RLSIError, match="not an rlsi model"):
        io.save(other, model=model)
    assert (other / "cat.jpg").exists()


def test_failed_save_leaves_nothing(tmp_path, fitted):
    _, model = fitted
    with pytest.raises(RLSIError, match="cannot be saved"):
        io.save(tmp_path / "m", model=model, junk=object())
    assert list(tmp_path.iterdir()) == []


def test_newer_format_version_is_refused(tmp_path, fitted):
    _, model = fitted
    path = io.save(tmp_path / "m", model=model)
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["format_version"] = io.FORMAT_VERSION + 1
    (path / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match="upgrade rlsi"):
        io.load(path)


@pytest.mark.parametrize("damage", ["truncate", "garbage", "delete", "manifest", "shape"])
def test_damaged_files_give_clear_errors(tmp_path, fitted, damage):
    _, model = fitted
    path = io.save(tmp_path / "m", model=model)
    target = path / "model.components_.data.npy"
    if damage == "truncate":
        target.write_bytes(target.read_bytes()[:60])
    elif damage == "garbage":
        target.write_bytes(b"not numpy at all")
    elif damage == "delete":
        target.unlink()
    elif damage == "manifest":
        (path / "manifest.json").write_text("{ broken")
    elif damage == "shape":
        np.save(target, np.zeros(3), allow_pickle=False)
    with pytest.raises(ModelFormatError) as info:
        io.load(path)
    assert "\n" not in str(info.value)


def test_missing_directory(tmp_path):
    with pytest.raises(ModelFormatError, match="does not exist"):
        io.load(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelFormatError, match="not an rlsi model directory"):
        io.load(tmp_path / "empty")
