"""rlsi fit --matrix DIR --online: OnlineRLSI streamed over the rows of a memory-mapped matrix directory
equals the online fit on the same matrix in memory, and never holds the matrix."""

import tracemalloc

import numpy as np
import pytest

from rlsi import io
from rlsi.cli._online import fit_online_from_args, online_model_from_args
from rlsi.cli.main import build_parser, main
from rlsi.datasets.synthetic import make_corpus
from rlsi.io.matrix import load_matrix, save_matrix


def _same_csr(A, B):
    return A.shape == B.shape and np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices) \
        and np.array_equal(A.data, B.data)


@pytest.mark.parametrize("dtype, batch", [(np.float64, 50), (np.float32, 64), (np.float32, 1000)])
def test_online_fit_on_a_matrix_dir_equals_the_fit_in_memory(tmp_path, capsys, dtype, batch):
    X = make_corpus(400, 3000, 40, n_topics=8, topic_vocab=300, seed=4, dtype=dtype, norm="l2").X
    save_matrix(tmp_path / "m", X)
    argv = ["fit", "--matrix", str(tmp_path / "m"), "--online", "--batch-size", str(batch), "-k", "6",
            "--lambda1", "0.02", "--seed", "3", "-o", str(tmp_path / "model")]
    assert main(["-q", *argv]) == 0, capsys.readouterr().err
    saved = io.load(tmp_path / "model")["model"]
    args = build_parser().parse_args(["-q", *argv])
    reference = online_model_from_args(args).fit(X)  # the same options, on the CSR in memory
    assert type(saved).__name__ == "OnlineRLSI" and saved.n_docs_seen_ == 400
    assert saved.n_batches_ == -(-400 // batch)
    assert saved.components_.nnz > 0
    assert _same_csr(saved.components_, reference.components_)
    np.testing.assert_array_equal(saved.stats_.R, reference.stats_.R)
    np.testing.assert_array_equal(saved.stats_.S, reference.stats_.S)


def test_online_fit_on_a_matrix_dir_never_copies_the_matrix(tmp_path):
    """numpy reports its buffers to tracemalloc; the memory map's pages are not numpy's: the traced peak
    of the fit stays far below the matrix (a whole-matrix copy or float64 cast would exceed it)."""
    X = make_corpus(60_000, 4000, 60, n_topics=8, topic_vocab=300, seed=1, dtype=np.float32).X
    save_matrix(tmp_path / "m", X)
    size = X.data.nbytes + X.indices.nbytes
    del X
    args = build_parser().parse_args(["-q", "fit", "--matrix", str(tmp_path / "m"), "--online", "--batch-size",
                                      "500", "-k", "4", "--lambda1", "0.02", "-o", str(tmp_path / "o")])
    mapped = load_matrix(tmp_path / "m").X
    assert not mapped.data.flags.writeable
    fit_online_from_args(args, mapped[:600])  # kernels compiled/loaded first: their memory is not the fit's
    tracemalloc.start()
    try:
        model = fit_online_from_args(args, mapped)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert model.n_docs_seen_ == 60_000
    assert peak < 0.25 * size, (peak, size)


def test_memory_limit_refuses_an_online_fit_naming_the_batch_size(tmp_path, capsys):
    X = make_corpus(300, 2000, 30, n_topics=5, seed=0, dtype=np.float32).X
    save_matrix(tmp_path / "m", X)
    status = main(["-q", "fit", "--matrix", str(tmp_path / "m"), "--online", "-k", "5", "--memory-limit", "1M",
                   "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2 and "statistics R, S" in err and "--batch-size" in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()
