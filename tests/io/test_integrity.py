"""Checksums in every folder kind's manifest: recorded by every writer, a flipped byte anywhere refused at
load (memory-mapped arrays above the size a load verifies: when asked, as a resume, a refit and
``rlsi check`` do), folders written without them still load, and ``rlsi check`` verifies a folder whole."""

import json
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi import io
from rlsi.cli.main import main
from rlsi.distributed import _tasks, checkpoint
from rlsi.errors import ModelFormatError
from rlsi.io import integrity
from rlsi.io.checksums import file_digest
from rlsi.io.matrix import load_matrix
from rlsi.models import BatchRLSI
from rlsi.retrieval import Searcher
from rlsi.text import TfidfVectorizer

from forge import unseal

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

TEXTS = ["heart blood artery vein", "blood pressure heart valve", "lens retina vision eye", "eye cataract lens optic",
         "immune cell virus bacteria", "virus infection immune antibody"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """One folder of each kind: model (with its index), index only, matrix, checkpoint directory."""
    root = tmp_path_factory.mktemp("kinds")
    vec = TfidfVectorizer()
    X = vec.fit_transform(TEXTS)
    model = BatchRLSI(2, lambda1=0.1, random_state=0, max_iter=3).fit(X)
    Searcher(model, vec, alpha=0.5).index(TEXTS).save(root / "model")
    Searcher(None, TfidfVectorizer().fit(TEXTS), alpha=0.0).index(TEXTS).save(root / "index")
    io.save_matrix(root / "matrix", X, vectorizer=vec, doc_ids=[f"d{i}" for i in range(len(TEXTS))],
                   doc_lengths=vec.doc_lengths(TEXTS), counts=vec.transform_counts(TEXTS))
    W = np.asarray(model.transform(X))
    bounds = [[0, 3], [3, 6]]
    for p, (a, b) in enumerate(bounds):
        _tasks.save_part_w(W[a:b], str(checkpoint.part_path(root / "ckpt", 1, p)))
    meta = {"n_docs": X.shape[0], "n_terms": X.shape[1], "n_components": 2, "dtype": "float64",
            "partitions": bounds, "lambda1_effective": 0.1, "objectives": [1.0], "bytes_moved": [1],
            "seconds": [0.1], "representations": ["sparse"]}
    checkpoint.write_state(root / "ckpt", 1, model.components_.T.tocsr(), meta)
    return root


def _rlsi_folders(root):
    return [root / "model", root / "index", root / "matrix", root / "ckpt" / "state", root / "ckpt" / "W-000001-p0"]


def _load(path, mmap=False, verify="auto"):
    if path.name == "matrix":
        return load_matrix(path, mmap=mmap, verify=verify)
    return io.load(path, mmap=mmap, verify=verify)


def test_every_folder_kind_records_a_checksum_of_each_file_and_of_its_manifest(folders):
    for path in _rlsi_folders(folders):
        manifest = json.loads((path / "manifest.json").read_text())
        assert integrity.has_digests(manifest), path
        entries = list(integrity.file_entries(manifest))
        assert entries and all(e["digest"] == file_digest(path / e["file"]) for _, _, e in entries), path
        integrity.manifest_problem(manifest, path / "manifest.json")  # its own digest matches
        _load(path, mmap=True)


def _flip(path, pos, bit=0):
    data = bytearray(path.read_bytes())
    data[pos] ^= 1 << bit
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("mmap", [False, True], ids=["read", "mapped"])
def test_a_flipped_byte_anywhere_in_an_array_file_is_refused_at_load(folders, tmp_path, mmap):
    for source in _rlsi_folders(folders):
        for npy in sorted(source.glob("*.npy")):
            size = npy.stat().st_size
            for pos in sorted({0, 7, 60, 127, 128, size // 2, size - 1}):  # magic, header, first data byte, ...
                work = tmp_path / f"{source.name}-{npy.stem}-{pos}"
                shutil.copytree(source, work)
                _flip(work / npy.name, pos, bit=pos % 8)
                with pytest.raises(ModelFormatError) as info:
                    _load(work, mmap=mmap)
                assert "\n" not in str(info.value) and str(work) in str(info.value)
                shutil.rmtree(work)


def test_a_flipped_bit_anywhere_in_a_manifest_is_refused_at_load(folders, tmp_path):
    for source in (folders / "model", folders / "matrix"):
        size = (source / "manifest.json").stat().st_size
        for pos in range(0, size, 41):  # every 41st byte: keys, values, digests, white space
            work = tmp_path / f"{source.name}-{pos}"
            shutil.copytree(source, work)
            _flip(work / "manifest.json", pos, bit=pos % 7)
            with pytest.raises(ModelFormatError):
                _load(work)
            shutil.rmtree(work)


def test_large_memory_mapped_files_are_verified_when_asked(folders, tmp_path):
    """A value changed in a memory-mapped array above the size a load verifies (here 0 bytes) loads as it is
    (its value is still finite and in range); asked (a refit, ``rlsi check``), the checksum refuses it."""
    work = tmp_path / "matrix"
    shutil.copytree(folders / "matrix", work)
    data = work / "matrix.X.data.npy"
    arr = np.load(data)
    arr[0] = arr[0] / 2  # plausible: finite, positive
    np.save(data, arr)
    assert load_matrix(work, mmap=True, verify=0).X.data[0] == arr[0]
    with pytest.raises(ModelFormatError, match="checksum"):
        load_matrix(work, mmap=True, verify=True)
    with pytest.raises(ModelFormatError, match="checksum"):
        load_matrix(work, mmap=True)  # small: the default verifies it
    assert main(["-q", "fit", "--matrix", str(work), "-k", "2", "--max-iter", "2", "-o", str(tmp_path / "m")]) == 2
    assert not (tmp_path / "m").exists()


def test_folders_written_without_checksums_still_load(folders, tmp_path, capsys):
    for source in _rlsi_folders(folders):
        work = tmp_path / source.name
        shutil.copytree(source, work)
        unseal(work)
        _load(work, mmap=True)
        assert main(["check", str(work)]) == 0
        out = capsys.readouterr().out
        assert "no checksums" in out and "written by an older rlsi" in out and out.count("\n") == 1
        shutil.rmtree(work)


def test_checksums_without_the_manifest_digest_are_refused(folders, tmp_path):
    work = tmp_path / "model"
    shutil.copytree(folders / "model", work)
    manifest = json.loads((work / "manifest.json").read_text())
    del manifest["digest"]  # files with digests, a manifest without: not what any rlsi writes
    (work / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ModelFormatError, match="'digest' is missing"):
        io.load(work)


def test_rlsi_check_verifies_every_kind_and_names_a_damaged_file(folders, tmp_path, capsys):
    for path in [*_rlsi_folders(folders), folders / "ckpt"]:
        assert main(["check", str(path)]) == 0, capsys.readouterr().err
        out = capsys.readouterr().out
        assert out.startswith(f"{path}: ") and "match their checksums" in out and out.count("\n") == 1
    work = tmp_path / "ckpt"
    shutil.copytree(folders / "ckpt", work)
    _flip(work / "W-000001-p1" / "doc_vectors.W.npy", 140)
    assert main(["check", str(work)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rlsi: error: model file ") and "W-000001-p1" in err and "checksum" in err
    assert err.count("\n") == 1
    for other in (tmp_path, tmp_path / "nothing"):
        assert main(["check", str(other)]) == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_a_save_refuses_values_it_could_not_load_back(tmp_path):
    vec = TfidfVectorizer()
    model = BatchRLSI(2, lambda1=0.1, random_state=0, max_iter=2).fit(vec.fit_transform(TEXTS))
    io.save(tmp_path / "m", model=model)
    before = (tmp_path / "m" / "manifest.json").read_bytes()
    for value in (np.nan, np.inf, 1e200):
        model.components_ = sp.csr_matrix(model.components_)
        model.components_.data[0] = value
        with pytest.raises(Exception) as info:
            io.save(tmp_path / "m", model=model)
        assert "cannot save array 'model.components_.data'" in str(info.value) and "nothing is saved" in str(
            info.value)
    assert (tmp_path / "m" / "manifest.json").read_bytes() == before
