"""rlsi synth, rlsi ingest and rlsi fit --matrix: the matrix directory end to end, and a fit on the
memory-mapped matrix equal to the fit on the matrix in memory."""

import numpy as np
import pytest

from rlsi import io
from rlsi.cli.main import main
from rlsi.datasets import demo_corpus_path
from rlsi.datasets.synthetic import make_corpus
from rlsi.io.matrix import load_matrix
from rlsi.models import BatchRLSI
from rlsi.models.regularization import READING
from rlsi.text import TfidfVectorizer, read_jsonl
from cli_runner import run


def _same_csr(A, B):
    return A.shape == B.shape and np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices) \
        and np.array_equal(A.data, B.data)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_fit_on_the_memory_mapped_matrix_equals_the_fit_in_memory(tmp_path, dtype):
    X = make_corpus(600, 4000, 40, n_topics=10, topic_vocab=300, seed=2, dtype=dtype, norm="l2").X
    io.matrix.save_matrix(tmp_path / "m", X)
    mapped = load_matrix(tmp_path / "m").X
    assert not mapped.data.flags.writeable
    params = dict(n_components=8, lambda1=0.02, max_iter=4, tol=0.0, random_state=0)
    a = BatchRLSI(**params).fit(X)
    W_a = a.transform(X)
    b = BatchRLSI(**params)
    W_b_fit = b.fit_transform(mapped)
    assert _same_csr(a.components_, b.components_)
    assert np.array_equal(a.objective_, b.objective_)
    assert np.array_equal(W_a, b.transform(mapped))
    assert np.array_equal(BatchRLSI(**params).fit_transform(X), W_b_fit)
    assert not np.shares_memory(b.components_.data, mapped.data)


def test_synth_then_fit(tmp_path, capsys):
    status, out, err = run(capsys, "synth", "--docs", 500, "--terms", 3000, "--tokens", 40, "--topics", 10,
                           "--topic-vocab", 300, "--seed", 5, "--dtype", "float32", "--norm", "l2",
                           "-o", tmp_path / "c")
    assert status == 0, err
    ref = make_corpus(500, 3000, 40, n_topics=10, topic_vocab=300, seed=5, dtype=np.float32, norm="l2").X
    assert _same_csr(load_matrix(tmp_path / "c").X, ref)
    status, out, err = run(capsys, "fit", "--matrix", tmp_path / "c", "-o", tmp_path / "model", "-k", 6,
                           "--max-iter", 3, "--seed", 1)
    assert status == 0, err
    bundle = io.load(tmp_path / "model")
    model = bundle["model"]
    assert model.components_.shape == (6, 3000) and "vectorizer" not in bundle
    expected = BatchRLSI(6, max_iter=3, random_state=1, **READING).fit(ref)  # rlsi fit's λ1, λ2
    assert _same_csr(model.components_, expected.components_)


def test_ingest_then_fit_then_topics_and_search(tmp_path, capsys):
    corpus = demo_corpus_path()
    status, out, err = run(capsys, "ingest", corpus, "-o", tmp_path / "m", "--min-df", 2, "--max-df", 0.5,
                           "--batch-docs", 200)
    assert status == 0, err
    reference = TfidfVectorizer(min_df=2, max_df=0.5)
    X_ref = reference.fit_transform(read_jsonl(corpus).texts)
    assert _same_csr(load_matrix(tmp_path / "m").X, X_ref)
    status, out, err = run(capsys, "fit", "--matrix", tmp_path / "m", "-o", tmp_path / "model", "-k", 8,
                           "--max-iter", 3)
    assert status == 0, err
    bundle = io.load(tmp_path / "model")
    assert bundle["vectorizer"].feature_names_ == reference.feature_names_
    # the same model as 'rlsi fit CORPUS' with the same options
    status, out, err = run(capsys, "fit", corpus, "-o", tmp_path / "model2", "-k", 8, "--max-iter", 3,
                           "--min-df", 2)
    assert status == 0, err
    status, out, err = run(capsys, "topics", tmp_path / "model", "-n", 3)
    assert status == 0 and out.count("comp=") == 8
    status, out, err = run(capsys, "search", tmp_path / "model", "blood pressure", "--corpus", corpus, "-k", 2)
    assert status == 0, err


def test_matrix_fit_and_plain_fit_agree(tmp_path, capsys):
    corpus = demo_corpus_path()
    assert run(capsys, "ingest", corpus, "-o", tmp_path / "m", "--min-df", 2)[0] == 0
    assert run(capsys, "fit", "--matrix", tmp_path / "m", "-o", tmp_path / "a", "-k", 5, "--max-iter", 2)[0] == 0
    assert run(capsys, "fit", corpus, "-o", tmp_path / "b", "-k", 5, "--max-iter", 2, "--min-df", 2)[0] == 0
    a, b = io.load(tmp_path / "a"), io.load(tmp_path / "b")
    assert _same_csr(a["model"].components_, b["model"].components_)
    assert a["vectorizer"].feature_names_ == b["vectorizer"].feature_names_


def test_memory_limit_refuses_before_any_work(tmp_path, capsys):
    assert run(capsys, "synth", "--docs", 300, "--terms", 2000, "--tokens", 30, "--topics", 5, "-o",
               tmp_path / "c")[0] == 0
    status, out, err = run(capsys, "fit", "--matrix", tmp_path / "c", "-o", tmp_path / "model", "-k", 5,
                           "--memory-limit", "10M")
    assert status == 2
    assert "more than the 10.0 MB of --memory-limit" in err and "transposed copy" in err
    assert err.count("\n") == 1 and not (tmp_path / "model").exists()
    status, out, err = run(capsys, "fit", demo_corpus_path(), "-o", tmp_path / "model", "-k", 5,
                           "--memory-limit", "10M")
    assert status == 2 and "--memory-limit" in err


@pytest.mark.parametrize("argv, words", [
    (["fit", "-o", "{tmp}/x"], "give a corpus file, or a matrix directory"),
    (["fit", "{corpus}", "--matrix", "{tmp}/nowhere", "-o", "{tmp}/x"], "not both"),
    (["fit", "--matrix", "{tmp}/nowhere", "-o", "{tmp}/x"], "does not exist"),
    (["fit", "--matrix", "{tmp}/nowhere", "--resume", "{tmp}/m", "-o", "{tmp}/x"], "drop --resume"),
    (["ingest", "{tmp}/none.jsonl", "-o", "{tmp}/x"], "corpus file not found"),
    (["synth", "--docs", "10", "--terms", "100", "--tokens", "-3", "-o", "{tmp}/x"], "tokens_per_doc=-3.0"),
])
def test_errors_are_one_line(tmp_path, capsys, argv, words):
    argv = [a.format(tmp=tmp_path, corpus=demo_corpus_path()) for a in argv]
    status, out, err = run(capsys, *argv)
    assert status == 2 and words in err and err.count("\n") == 1


def test_bad_memory_limit_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--matrix", str(tmp_path), "--memory-limit", "lots", "-o", str(tmp_path / "x")])
    assert "is not a size" in capsys.readouterr().err
