"""The matrix directory (rlsi.io.matrix): written by streaming, memory-mapped on load, and checked as
untrusted input — every damage is one ModelFormatError, never a crash or a read outside the folder."""

import json
import mmap
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.errors import ModelFormatError, RLSIError
from rlsi.io import load
from rlsi.io.matrix import MatrixWriter, index_dtype, load_matrix, save_matrix
from rlsi.text import TfidfVectorizer

from conftest import planted_corpus


@pytest.fixture
def matrix_dir(tmp_path):
    X = planted_corpus(n_docs=60, n_terms=64, seed=2)
    path = tmp_path / "mat"
    save_matrix(path, X, doc_lengths=np.arange(60) + 1)
    return path, X


def _manifest(path):
    return json.loads((path / "manifest.json").read_text())


def _write_manifest(path, manifest):
    (path / "manifest.json").write_text(json.dumps(manifest))


def _is_mapped(arr):
    while arr is not None:
        if isinstance(arr, (np.memmap, mmap.mmap)):
            return True
        arr = getattr(arr, "base", None)
    return False


def test_round_trip_is_memory_mapped(matrix_dir):
    path, X = matrix_dir
    m = load_matrix(path)
    assert m.shape == X.shape and (m.X != X).nnz == 0
    assert not m.X.data.flags.writeable  # a read-only map of the file, not a copy
    assert _is_mapped(m.X.data) and _is_mapped(m.X.indices) and _is_mapped(m.X.indptr)
    assert np.array_equal(m.doc_lengths, np.arange(60) + 1)
    assert m.vectorizer is None
    # the streamed .npy files are ordinary numpy files
    assert np.array_equal(np.load(path / "matrix.X.data.npy"), X.data)
    in_memory = load_matrix(path, mmap=False)
    assert in_memory.X.data.flags.writeable and (in_memory.X != X).nnz == 0


def test_blocks_append_to_the_same_matrix(tmp_path):
    X = planted_corpus(n_docs=50, n_terms=64, seed=5, dtype=np.float32)
    with MatrixWriter(tmp_path / "m", n_cols=64, dtype=np.float32, max_nnz=X.nnz) as w:
        for a in range(0, 50, 7):
            w.append(X[a:a + 7])
    m = load_matrix(tmp_path / "m")
    assert m.X.dtype == np.float32 and m.X.indices.dtype == np.int32
    assert (m.X != X).nnz == 0 and m.meta["nnz"] == X.nnz


def test_index_type_follows_nnz():
    assert index_dtype(2**31 - 1, 10) == np.int32
    assert index_dtype(2**31, 10) == np.int64
    assert index_dtype(5, 2**31) == np.int64


def test_vectorizer_is_saved_and_must_match_the_columns(tmp_path):
    docs = ["alpha beta", "beta gamma", "gamma delta alpha"]
    vec = TfidfVectorizer()
    X = vec.fit_transform(docs)
    save_matrix(tmp_path / "m", X, vectorizer=vec, doc_ids=["a", "b", "c"])
    m = load_matrix(tmp_path / "m")
    assert m.vectorizer.feature_names_ == vec.feature_names_
    assert list(m.doc_ids) == ["a", "b", "c"]
    with pytest.raises(ValueError):
        save_matrix(tmp_path / "m2", X[:, :2], vectorizer=vec)
    assert not (tmp_path / "m2").exists()  # nothing half-written


def test_failed_write_leaves_nothing_and_keeps_the_old_directory(matrix_dir):
    path, X = matrix_dir
    with pytest.raises(RuntimeError):
        with MatrixWriter(path, n_cols=X.shape[1], max_nnz=X.nnz) as w:
            w.append(X[:10])
            raise RuntimeError("interrupted")
    assert (load_matrix(path).X != X).nnz == 0
    assert sorted(p.name for p in path.parent.iterdir()) == ["mat"]


def test_refuses_to_overwrite_a_foreign_folder(tmp_path):
    (tmp_path / "photos").mkdir()
    (tmp_path / "photos" / "cat.jpg").write_bytes(b"x")
    with pytest.raises(RLSIError, match="not an rlsi matrix or model directory"):
        save_matrix(tmp_path / "photos", sp.identity(3, format="csr"))


def test_the_generic_loader_reads_it(matrix_dir):
    path, X = matrix_dir
    bundle = load(path, mmap=True)
    assert (bundle["matrix"].X != X).nnz == 0


# ----------------------------------------------------------------------------------- damage
def _damage_missing_file(path):
    (path / "matrix.X.indices.npy").unlink()


def _damage_wrong_shape(path):
    m = _manifest(path)
    m["components"]["matrix"]["arrays"]["X"]["shape"][0] += 1
    _write_manifest(path, m)


def _damage_shape_of_a_part(path):
    indices = np.load(path / "matrix.X.indices.npy")
    np.save(path / "matrix.X.indices.npy", indices[:-1])


def _damage_index_out_of_range(path):
    indices = np.load(path / "matrix.X.indices.npy")
    indices[len(indices) // 2] = 10_000
    np.save(path / "matrix.X.indices.npy", indices)


def _damage_negative_index(path):
    indices = np.load(path / "matrix.X.indices.npy")
    indices[0] = -1
    np.save(path / "matrix.X.indices.npy", indices)


def _damage_path_traversal(path):
    outside = path.parent / "outside.npy"
    shutil.copy(path / "matrix.X.data.npy", outside)
    m = _manifest(path)
    m["components"]["matrix"]["arrays"]["X"]["parts"]["data"]["file"] = "../outside.npy"
    _write_manifest(path, m)


def _damage_link_outside(path):
    outside = path.parent / "outside.npy"
    shutil.copy(path / "matrix.X.data.npy", outside)
    (path / "matrix.X.data.npy").unlink()
    (path / "matrix.X.data.npy").symlink_to(outside)


def _damage_nan(path):
    data = np.load(path / "matrix.X.data.npy")
    data[3] = np.nan
    np.save(path / "matrix.X.data.npy", data)


def _damage_truncated(path):
    raw = (path / "matrix.X.data.npy").read_bytes()
    (path / "matrix.X.data.npy").write_bytes(raw[:-8])


def _damage_pickle(path):
    np.save(path / "matrix.doc_lengths.npy", np.array([object()] * 60, dtype=object), allow_pickle=True)


def _damage_decreasing_indptr(path):
    indptr = np.load(path / "matrix.X.indptr.npy")
    indptr[5], indptr[6] = indptr[6], indptr[5] - 1
    np.save(path / "matrix.X.indptr.npy", indptr)


def _damage_meta_disagrees(path):
    m = _manifest(path)
    m["components"]["matrix"]["meta"]["nnz"] += 1
    _write_manifest(path, m)


def _damage_lengths_negative(path):
    np.save(path / "matrix.doc_lengths.npy", -np.ones(60, dtype=np.int64))


def _damage_manifest_garbage(path):
    (path / "manifest.json").write_text("{not json")


def _damage_fifo(path):
    (path / "matrix.X.indptr.npy").unlink()
    import os

    os.mkfifo(path / "matrix.X.indptr.npy")


@pytest.mark.parametrize("damage, words", [
    (_damage_missing_file, "missing"),
    (_damage_wrong_shape, "row pointers"),
    (_damage_shape_of_a_part, "manifest says"),
    (_damage_index_out_of_range, "column index 10000 outside"),
    (_damage_negative_index, "column index -1 outside"),
    (_damage_path_traversal, "must be a file name inside the model folder"),
    (_damage_link_outside, "outside the model folder"),
    (_damage_nan, "NaN or infinite"),
    (_damage_truncated, "damaged"),
    (_damage_pickle, "pickle"),
    (_damage_decreasing_indptr, "decrease"),
    (_damage_meta_disagrees, "meta.nnz"),
    (_damage_lengths_negative, "doc_lengths holds values outside"),
    (_damage_manifest_garbage, "not valid JSON"),
    (_damage_fifo, "not a regular file"),
])
def test_damage_gives_one_clear_error(matrix_dir, damage, words):
    path, _ = matrix_dir
    damage(path)
    for mapped in (True, False):
        with pytest.raises(ModelFormatError, match=words) as info:
            load_matrix(path, mmap=mapped)
        assert "\n" not in str(info.value)


def test_a_model_directory_is_not_a_matrix(tmp_path):
    from rlsi.io import save
    from rlsi.models import BatchRLSI

    X = planted_corpus()
    save(tmp_path / "model", model=BatchRLSI(4, max_iter=2, random_state=0).fit(X))
    with pytest.raises(ModelFormatError, match="not a matrix directory"):
        load_matrix(tmp_path / "model")
    with pytest.raises(ModelFormatError, match="does not exist"):
        load_matrix(tmp_path / "nowhere")
