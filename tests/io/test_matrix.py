"""The matrix directory (rlsi.io.matrix): written by streaming, memory-mapped on load, and checked as
untrusted input — every damage is one ModelFormatError, never a crash or a read outside the folder."""

import json
import mmap
import re
import shutil

import numpy as np
import pytest
import scipy.sparse as sp

from rlsi.errors import ModelFormatError, RLSIError
from rlsi.io import load
from rlsi.io.matrix import MatrixWriter, index_dtype, load_matrix, save_matrix
from rlsi.text import TfidfVectorizer

from conftest import planted_corpus
from forge import reseal


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
    with pytest.raises(RLSIError, match="exists and is not an rlsi matrix directory"):
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
    reseal(path)  # a crafted folder with matching checksums: the check under test must refuse it
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


# ----------------------------------------------------------------------------------- raw counts
def _counted(n_docs=60, n_terms=64, seed=7):
    """Raw counts and their tf-idf with the entries of idf 0 dropped (a term in every document)."""
    rng = np.random.default_rng(seed)
    dense = rng.integers(1, 9, (n_docs, n_terms)) * (rng.random((n_docs, n_terms)) < 0.2)
    dense[np.arange(n_docs), np.arange(n_docs) % n_terms] += 1  # no empty row
    dense[:, 5] = 3  # term 5 in every document: idf 0, so X does not store it
    C = sp.csr_matrix(dense)
    idf = np.log(n_docs / np.maximum((dense > 0).sum(axis=0), 1))
    X = sp.csr_matrix(dense * idf[None, :] / dense.sum(axis=1, keepdims=True))
    return C, X


def test_counts_round_trip_aligned_with_x(tmp_path):
    C, X = _counted()
    assert X.nnz < C.nnz  # the idf-0 column was dropped from X
    save_matrix(tmp_path / "m", X, counts=C)
    m = load_matrix(tmp_path / "m")
    assert _is_mapped(m.counts) and m.counts.dtype == np.int32 and m.counts.shape == (X.nnz,)
    got = m.count_matrix()
    assert got.indices is m.X.indices or np.shares_memory(got.indices, m.X.indices)
    expected = C.multiply(X != 0)  # the counts of X's entries
    assert (got != expected).nnz == 0
    assert (load_matrix(tmp_path / "m", mmap=False).count_matrix() != expected).nnz == 0


def test_counts_in_blocks_and_refused_when_inconsistent(tmp_path):
    C, X = _counted()
    with MatrixWriter(tmp_path / "a", n_cols=X.shape[1], max_nnz=X.nnz) as w:
        for a in range(0, 60, 11):
            w.append(X[a:a + 11], counts=C[a:a + 11])
    assert (load_matrix(tmp_path / "a").count_matrix() != C.multiply(X != 0)).nnz == 0
    with pytest.raises(ValueError, match="some blocks only"):
        with MatrixWriter(tmp_path / "b", n_cols=X.shape[1], max_nnz=X.nnz) as w:
            w.append(X[:30], counts=C[:30])
            w.append(X[30:])
    assert not (tmp_path / "b").exists()
    missing = C.tolil()
    r, c = X.nonzero()
    missing[r[0], c[0]] = 0
    with pytest.raises(ValueError, match="has no count"):
        with MatrixWriter(tmp_path / "c", n_cols=X.shape[1], max_nnz=X.nnz) as w:
            w.append(X, counts=sp.csr_matrix(missing))
    with pytest.raises(ValueError, match="whole numbers"):
        with MatrixWriter(tmp_path / "d", n_cols=X.shape[1], max_nnz=X.nnz) as w:
            w.append(X, counts=C * 0.5)


def test_old_directory_without_counts_still_loads(matrix_dir):
    path, X = matrix_dir
    m = load_matrix(path)
    assert m.counts is None and not (path / "matrix.counts.npy").exists()
    with pytest.raises(RLSIError, match="no raw term counts.*rlsi synth") as info:
        m.count_matrix()
    assert "\n" not in str(info.value)


@pytest.fixture
def counted_dir(tmp_path):
    C, X = _counted()
    save_matrix(tmp_path / "m", X, counts=C)
    return tmp_path / "m"


def _set_counts(path, fn):
    counts = np.load(path / "matrix.counts.npy")
    np.save(path / "matrix.counts.npy", fn(counts))


@pytest.mark.parametrize("bad", [
    lambda c: np.where(np.arange(len(c)) == 3, 0, c).astype(c.dtype),  # a zero count
    lambda c: -c,
    lambda c: np.where(np.arange(len(c)) == 1, 2**31 - 1, c).astype(np.int64) * 2,  # beyond int32
])
def test_damaged_count_values_give_one_clear_error_on_use(counted_dir, bad):
    m = _manifest(counted_dir)
    counts = bad(np.load(counted_dir / "matrix.counts.npy"))
    np.save(counted_dir / "matrix.counts.npy", counts)
    m["components"]["matrix"]["arrays"]["counts"]["dtype"] = str(counts.dtype)
    _write_manifest(counted_dir, m)
    reseal(counted_dir)
    for mapped in (True, False):
        loaded = load_matrix(counted_dir, mmap=mapped)  # type and shape are right: values checked on use
        with pytest.raises(ModelFormatError, match="counts holds values outside") as info:
            loaded.count_matrix()
        assert "\n" not in str(info.value)


@pytest.mark.parametrize("damage, words", [
    (lambda p: _set_counts(p, lambda c: c.astype(np.float32)), "manifest says"),
    (lambda p: _set_counts(p, lambda c: c[:-1]), "manifest says"),
    (lambda p: (p / "matrix.counts.npy").unlink(), "missing"),
])
def test_damaged_counts_give_one_clear_error(counted_dir, damage, words):
    damage(counted_dir)
    for mapped in (True, False):
        with pytest.raises(ModelFormatError, match=words) as info:
            load_matrix(counted_dir, mmap=mapped)
        assert "\n" not in str(info.value)


def test_damaged_counts_with_a_consistent_manifest(counted_dir):
    m = _manifest(counted_dir)
    counts = np.load(counted_dir / "matrix.counts.npy")
    np.save(counted_dir / "matrix.counts.npy", counts[:-1])
    m["components"]["matrix"]["arrays"]["counts"]["shape"] = [len(counts) - 1]
    _write_manifest(counted_dir, m)
    reseal(counted_dir)
    with pytest.raises(ModelFormatError, match="counts must be an integer array of shape") as info:
        load_matrix(counted_dir)
    assert "\n" not in str(info.value)


# ----------------------------------------------------------------------------------- crafted structure
def _rewrite(path, name, arr):
    np.save(path / name, arr)


@pytest.mark.parametrize("how", ["unsorted", "duplicate"])
def test_rows_with_unsorted_or_repeated_columns_are_refused(tmp_path, how):
    X = sp.random(60, 40, density=0.2, format="csr", random_state=1)
    save_matrix(tmp_path / "mx", X)
    idx = np.load(tmp_path / "mx" / "matrix.X.indices.npy")
    r = int(np.argmax(np.diff(X.indptr)))
    a = X.indptr[r]
    if how == "unsorted":
        idx[a], idx[a + 1] = idx[a + 1], idx[a]
    else:
        idx[a + 1] = idx[a]
    _rewrite(tmp_path / "mx", "matrix.X.indices.npy", idx)
    reseal(tmp_path / "mx")
    with pytest.raises(ModelFormatError, match=f"row {r} of X are unsorted or repeated"):
        load_matrix(tmp_path / "mx")


def test_a_loaded_matrix_is_canonical_and_stays_read_only(tmp_path):
    X = sp.random(30, 20, density=0.3, format="csr", random_state=2)
    save_matrix(tmp_path / "mx", X)
    m = load_matrix(tmp_path / "mx")
    assert m.X.has_sorted_indices and m.X.has_canonical_format
    m.X.sort_indices()  # nothing to do: never writes to the read-only map
    assert (m.X != X).nnz == 0


@pytest.mark.parametrize("value, words", [(2959.0, "meta.nnz must be an integer, got 2959.0 (float)"),
                                          ("7", "meta.nnz must be an integer, got '7' (str)"),
                                          (3, "meta.nnz is 3 but X has")])
def test_meta_counts_are_named_with_their_type(tmp_path, value, words):
    X = sp.random(10, 8, density=0.5, format="csr", random_state=3)
    save_matrix(tmp_path / "mx", X)
    manifest = json.loads((tmp_path / "mx" / "manifest.json").read_text())
    manifest["components"]["matrix"]["meta"]["nnz"] = value
    (tmp_path / "mx" / "manifest.json").write_text(json.dumps(manifest))
    reseal(tmp_path / "mx")
    with pytest.raises(ModelFormatError, match=re.escape(words)):
        load_matrix(tmp_path / "mx")
