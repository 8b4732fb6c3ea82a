"""A slightly damaged online model is never destroyed by resuming it: a flipped bit is refused (by its checksum,
or in a folder without checksums by the check of the statistics), and a resume whose numbers leave the range a
load accepts saves nothing. Each ends in one line and leaves the folder as it was."""

import hashlib
import json
import shutil

import numpy as np
import pytest

from rlsi.cli.main import main

from forge import reseal, unseal

WORDS = "heart blood artery vein pressure lens retina vision cataract immune virus cell".split()


def _corpus(path, n=40, seed=0):
    rng = np.random.default_rng(seed)
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"d{i}", "text": " ".join(rng.choice(WORDS, size=8))}) + "\n")
    return path


def _digest(folder):
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(p.name.encode() + (p.read_bytes() if p.is_file() else b""))
    return h.hexdigest()


@pytest.fixture(scope="module")
def online(tmp_path_factory):
    root = tmp_path_factory.mktemp("online")
    corpus = _corpus(root / "c.jsonl")
    assert main(["-q", "fit", str(corpus), "--online", "-k", "3", "--batch-size", "10", "-o", str(root / "m")]) == 0
    return root, corpus


def _resume(capsys, corpus, folder):
    status = main(["-q", "fit", str(corpus), "--resume", str(folder)])
    return status, capsys.readouterr().err


@pytest.mark.parametrize("sealed", [True, False], ids=["with-checksums", "older-folder"])
def test_a_flipped_bit_in_the_statistics_is_refused_by_the_resume(online, tmp_path, capsys, sealed):
    root, corpus = online
    folder = tmp_path / "m"
    shutil.copytree(root / "m", folder)
    if not sealed:
        unseal(folder)
    S_file = folder / "model.stats_S.npy"
    raw = bytearray(S_file.read_bytes())
    raw[128 + 8 * 4 + 7] ^= 0x40  # the exponent's top bit of S[1, 1]: a denormal, finite and positive
    S_file.write_bytes(bytes(raw))
    assert 0 < np.load(S_file)[1, 1] < 1e-300
    before = _digest(folder)
    status, err = _resume(capsys, corpus, folder)
    assert status == 2 and err.startswith("rlsi: error: ") and err.count("\n") == 1, err
    assert ("checksum" in err) if sealed else ("not positive semidefinite" in err)
    assert _digest(folder) == before


def test_a_resume_whose_numbers_leave_the_loadable_range_saves_nothing(online, tmp_path, capsys):
    """Statistics at the edge of what a load accepts (R near 1e100, S small: a crafted but loadable folder)
    make topics beyond it: the save refuses, the folder keeps its version."""
    root, corpus = online
    folder = tmp_path / "m"
    shutil.copytree(root / "m", folder)
    R = np.load(folder / "model.stats_R.npy")
    np.save(folder / "model.stats_R.npy", R * (9.9e99 / np.abs(R).max()))
    np.save(folder / "model.stats_S.npy", np.load(folder / "model.stats_S.npy") * 1e-3)
    reseal(folder)
    before = _digest(folder)
    status, err = _resume(capsys, corpus, folder)
    assert status == 2 and "cannot save array" in err and "nothing is saved" in err and err.count("\n") == 1, err
    assert _digest(folder) == before
