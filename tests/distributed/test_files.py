"""Corpus files read and vectorized on the workers: the matrix, the vocabulary and the fit equal the local
pipeline's (read the files, ``TfidfVectorizer.fit_transform``, ``BatchRLSI.fit``)."""

import gzip
import json

import numpy as np
import pytest

from rlsi import io
from rlsi.cli.main import main
from rlsi.distributed import DaskRLSI, vectorize_files
from rlsi.errors import CorpusError, RLSIError
from rlsi.models import BatchRLSI
from rlsi.text import TfidfVectorizer, read_jsonl

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")

PARAMS = dict(n_components=4, lambda1=0.5, max_iter=4, tol=1e-12, random_state=2)
RTOL = 1e-10  # sums over the file partitions are added in another order than the local pass

TOPICS = [["heart", "blood", "artery", "valve", "pressure", "cardiac", "vein", "pulse"],
          ["eye", "lens", "retina", "vision", "cataract", "optic", "pupil", "cornea"],
          ["virus", "bacteria", "immune", "cell", "antibody", "infection", "fever", "vaccine"],
          ["bone", "fracture", "joint", "cartilage", "spine", "knee", "hip", "marrow"]]
FILLER = ["The", "and", "of", "in", "patients", "Study", "results", "2024", "Group", "shows"]


def make_docs(n, seed):
    """Texts mixing one or two planted topics with capitalized filler, stop words and numbers."""
    rng = np.random.default_rng(seed)
    docs = []
    for _ in range(n):
        words = []
        for t in rng.choice(len(TOPICS), size=rng.integers(1, 3), replace=False):
            words += list(rng.choice(TOPICS[t], size=rng.integers(3, 7)))
        words += list(rng.choice(FILLER, size=rng.integers(0, 5)))
        rng.shuffle(words)
        docs.append(" ".join(words))
    docs[5] = "the and of"  # only stop words: a zero row
    docs[9] = ""
    return docs


def write(path, docs, ids=True):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wt", encoding="utf-8") as f:
        for i, text in enumerate(docs):
            f.write(json.dumps({"id": f"d{i}", "title": text} if ids else {"text": text}) + "\n")
    return path


@pytest.fixture(scope="module")
def docs():
    return make_docs(160, seed=7)


@pytest.fixture(scope="module")
def files(docs, tmp_path_factory):
    """The corpus split over five files: uneven, one empty, one with a single document, gzip and not."""
    d = tmp_path_factory.mktemp("files")
    cuts = [(0, 57), (57, 57), (57, 58), (58, 130), (130, 160)]
    names = ["a.jsonl", "empty.jsonl", "one.jsonl.gz", "b.jsonl.gz", "c.jsonl"]
    return [write(d / name, docs[a:b], ids=(i != 3)) for i, (name, (a, b)) in enumerate(zip(names, cuts))]


def texts_of(paths):
    """The local pipeline's documents: every file read by rlsi.text.read_jsonl, in order."""
    out = []
    for p in paths:
        if p.stat().st_size:
            out += read_jsonl(p).texts
    return out


VECTORIZERS = [dict(), dict(min_df=2, max_df=0.5, stemmer="english"),
               dict(max_features=20, norm=None, dtype=np.float32), dict(min_df=0.05, stop_words=None)]


@pytest.mark.parametrize("params", VECTORIZERS, ids=["default", "pruned-stemmed", "max_features-f32", "share"])
def test_matrix_and_vocabulary_equal_the_local_vectorizer(files, docs, cluster_of, params):
    local = TfidfVectorizer(**params)
    X = local.fit_transform(texts_of(files))
    assert X.shape[0] == len(docs)
    matrix = vectorize_files(files, TfidfVectorizer(**params), client=cluster_of(2))
    assert matrix.shape == X.shape and matrix.n_rows == [57, 0, 1, 72, 30] and matrix.nnz == X.nnz
    Xd = matrix.gather()
    assert Xd.dtype == X.dtype
    np.testing.assert_array_equal(Xd.indptr, X.indptr)
    np.testing.assert_array_equal(Xd.indices, X.indices)
    np.testing.assert_array_equal(Xd.data, X.data)  # same integers, same per-row arithmetic: bit for bit
    fitted = matrix.vectorizer
    assert fitted.feature_names_ == local.feature_names_ and fitted.n_docs_ == local.n_docs_
    np.testing.assert_array_equal(fitted.df_, local.df_)
    np.testing.assert_array_equal(fitted.idf_, local.idf_)
    matrix.release()


@pytest.mark.parametrize("n_workers", [1, 3])
def test_fit_files_equals_the_local_pipeline(files, cluster_of, n_workers):
    X = TfidfVectorizer().fit_transform(texts_of(files))
    ref = BatchRLSI(**PARAMS)
    W_ref = ref.fit_transform(X)
    client = cluster_of(n_workers)
    model = DaskRLSI(**PARAMS, client=client).fit_files(files)
    assert model.partitions_ == [(0, 57), (57, 57), (57, 58), (58, 130), (130, 160)]  # one per file
    assert model.vectorizer_.feature_names_ == TfidfVectorizer().fit(texts_of(files)).feature_names_
    scale = abs(ref.components_).max()
    assert abs(model.components_ - ref.components_).max() <= RTOL * scale
    np.testing.assert_allclose(model.objective_, ref.objective_, rtol=RTOL)
    # fit on a WorkerMatrix: W comes back in file order
    matrix = vectorize_files(files, client=client)
    W = DaskRLSI(**PARAMS).fit_transform(matrix)  # the matrix names its cluster
    np.testing.assert_allclose(W, W_ref, rtol=0, atol=RTOL * np.abs(W_ref).max())
    matrix.release()


def test_one_file_is_the_local_learner_bit_for_bit(files, docs, cluster_of, tmp_path):
    whole = write(tmp_path / "all.jsonl", docs)
    X = TfidfVectorizer().fit_transform(texts_of([whole]))
    ref = BatchRLSI(**PARAMS).fit(X)
    model = DaskRLSI(**PARAMS, client=cluster_of(1)).fit_files([whole])
    assert (model.components_ != ref.components_).nnz == 0
    np.testing.assert_array_equal(model.objective_, ref.objective_)


def test_file_problems_are_one_line_errors(files, cluster_of, tmp_path):
    client = cluster_of(2)
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(CorpusError, match="missing.jsonl") as err:
        vectorize_files([files[0], missing], client=client)
    assert "\n" not in str(err.value)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "fine"}\n{"text": \n')
    with pytest.raises(CorpusError, match=r"bad.jsonl, line 2: not valid JSON"):
        vectorize_files([files[0], bad], client=client)
    other_empty = tmp_path / "empty2.jsonl"
    other_empty.write_text("")
    with pytest.raises(CorpusError, match="hold no document"):
        vectorize_files([files[1], other_empty], client=client)
    with pytest.raises(RLSIError, match="given twice"):  # its documents would be fitted twice
        vectorize_files([files[0], files[0]], client=client)
    matrix = vectorize_files(files, client=client)
    with pytest.raises(RLSIError, match="partitions="):
        DaskRLSI(**PARAMS, partitions=2).fit(matrix)
    matrix.release()


def test_cli_fits_several_files_on_the_workers(files, tmp_path, capsys):
    whole = tmp_path / "all.jsonl"
    whole.write_text("".join(json.dumps({"text": t}) + "\n" for t in texts_of(files)))
    common = ["-k", "3", "--lambda1", "10", "--seed", "1", "--max-iter", "4", "--min-df", "2",
              "--text-fields", "title,text"]
    assert main(["-q", "fit", str(whole), *common, "-o", str(tmp_path / "local")]) == 0
    assert main(["fit", *map(str, files), *common, "-o", str(tmp_path / "dask"), "--backend", "dask",
                 "--workers", "2"]) == 0
    err = capsys.readouterr().err
    assert "Dask cluster: 2 worker(s)" in err and "MB per iteration" in err
    local, dask = (io.load(tmp_path / name) for name in ("local", "dask"))
    assert type(dask["model"]) is BatchRLSI
    assert dask["vectorizer"].feature_names_ == local["vectorizer"].feature_names_
    ref = local["model"].components_
    assert abs(dask["model"].components_ - ref).max() <= RTOL * abs(ref).max()
    # several files need the Dask backend: one clean line, nothing written
    status = main(["-q", "fit", *map(str, files[:2]), "-o", str(tmp_path / "m")])
    err = capsys.readouterr().err
    assert status == 2 and "--backend dask" in err and err.count("\n") == 1
    assert not (tmp_path / "m").exists()
