"""Ranking with group models (SIGIR 2012 §7.3): a query takes the class of the document."""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import nnls

from rlsi.errors import RLSIError
from rlsi.experiments import ProtocolConfig, make_methods, run_protocol
from rlsi.models import BatchRLSI
from rlsi.models.group import CNMF, CRLSI, GroupNMF, GroupRLSI
from rlsi.models.group_base import derive_classes
from rlsi.retrieval.group_topic import ClassTopicMatcher, topic_matcher
from rlsi.retrieval.topic import RidgeFolding, TopicMatcher


def class_corpus(n_per_class=40, n_classes=3, block=15, n_common=10, seed=0):
    """Documents of class c use the terms of block c plus a few common terms (as in test_group.py)."""
    rng = np.random.default_rng(seed)
    rows, cols, vals, y = [], [], [], []
    for c in range(n_classes):
        for _ in range(n_per_class):
            words = n_common + c * block + rng.choice(block, size=6, replace=False)
            words = np.concatenate([words, rng.choice(n_common, size=3, replace=False)])
            rows += [len(y)] * len(words)
            cols += list(words)
            vals += list(rng.uniform(0.5, 1.5, size=len(words)))
            y.append(f"c{c}")
    X = sp.csr_matrix((vals, (rows, cols)), shape=(len(y), n_common + n_classes * block))
    return X, np.array(y)


@pytest.fixture
def tiny():
    """Ten documents on three subjects and four judged queries."""
    from rlsi.evaluation.collection import Collection
    from rlsi.text import Corpus

    docs = ["aircraft wing flutter at high speed", "airplane wing design and flutter tests",
            "jet aircraft engine noise reduction", "heart disease and blood pressure",
            "cardiac surgery on the heart valves", "blood vessels arteries and the heart",
            "library catalog of books", "books indexing in the library catalog",
            "supersonic aircraft wing loads", "cardiac arrest and heart failure"]
    ids = [f"d{i + 1}" for i in range(len(docs))]
    queries = {"1": "airplane wing", "2": "cardiac heart", "3": "library books", "4": "aircraft noise"}
    qrels = {"1": {"d1": 1, "d2": 2, "d9": 1}, "2": {"d4": 1, "d5": 1, "d10": 2}, "3": {"d7": 1, "d8": 1},
             "4": {"d3": 1}}
    return Collection(Corpus(ids, docs), queries, qrels, "tiny")

pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _cos(a, b):
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return 0.0 if na == 0 or nb == 0 else float(a @ b / (na * nb))


@pytest.fixture(scope="module")
def hand_model():
    """GroupRLSI with Ks = 1, Kc = 1 on classes a, b and 3 terms, its topics replaced by hand:
    shared = e1, class a = e2, class b = e3 (so Ũa = [e1, e2], Ũb = [e1, e3])."""
    X = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [1.0, 2.0, 0.0], [1.0, 0.0, 1.0], [2.0, 0.0, 1.0]]))
    m = GroupRLSI(1, 1, lambda1=0.0, max_iter=2, random_state=0).fit(X, ["a", "a", "b", "b"])
    assert list(m.topic_groups_) == ["shared", "class:a", "class:b"]
    m._set_components(sp.identity(3, format="csr"))
    m._prepare_class_topics()
    return m


@pytest.mark.parametrize("fold", [math.inf, None, 0.3])
def test_score_is_the_cosine_in_the_documents_class_by_hand(hand_model, fold):
    # identity topics: any ridge folding scales (x1, x_class) alike, so every folding gives the same cosine
    docs = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    q = sp.csr_matrix(np.array([[1.0, 2.0, 3.0]]))
    matcher = ClassTopicMatcher(hand_model, fold_lambda2=fold).fit(docs, y=["a", "b"])
    S = matcher.score(q)
    # doc a: q on Ũa = (1, 2), d = (1, 1) -> 3 / (√5 √2); doc b: q on Ũb = (1, 3), d = (0, 1) -> 3 / √10
    assert S[0, 0] == pytest.approx(3 / (math.sqrt(5) * math.sqrt(2)))
    assert S[0, 1] == pytest.approx(3 / math.sqrt(10))
    # folded on class a's topics instead, document b would have a zero vector and score 0
    assert not matcher.fold_class(docs[1], 0).any()


def test_documents_without_labels_take_the_class_of_smallest_error(hand_model):
    docs = sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 0.0, 1.0]]))
    matcher = ClassTopicMatcher(hand_model, fold_lambda2=math.inf).fit(docs)
    assert list(hand_model.classes_[matcher.doc_classes_]) == list(hand_model.predict(docs)) == ["a", "b"]


def _oracle_scores(model, Xd, yd_idx, Xq, fold):
    """numpy: for each (q, d) fold both on the class of d with the dense Ũ, then the cosine."""
    comp = model.components_
    comp = comp.toarray() if sp.issparse(comp) else np.asarray(comp)
    layout = model._layout()

    def fold_one(x, p):
        U = comp[layout.columns(p)].T  # terms x k
        if fold == "nnls":
            return nnls(U, x)[0]
        if math.isinf(fold):
            return U.T @ x
        return np.linalg.solve(U.T @ U + fold * np.eye(U.shape[1]), U.T @ x)

    Dd, Dq = Xd.toarray(), Xq.toarray()
    out = np.zeros((Dq.shape[0], Dd.shape[0]))
    for j in range(Dd.shape[0]):
        p = int(yd_idx[j])
        vd = fold_one(Dd[j], p)
        for i in range(Dq.shape[0]):
            out[i, j] = _cos(fold_one(Dq[i], p), vd)
    return out


@pytest.fixture(scope="module")
def labelled():
    X, y = class_corpus(n_per_class=25, n_classes=3, seed=3)
    rng = np.random.default_rng(0)
    Xq = sp.csr_matrix(rng.uniform(0, 1, size=(4, X.shape[1])) * (rng.random((4, X.shape[1])) < 0.2))
    return X, y, Xq


@pytest.mark.parametrize("fold", [math.inf, 0.5, None])
def test_grlsi_scores_match_a_numpy_oracle(labelled, fold):
    X, y, Xq = labelled
    m = GroupRLSI(2, 2, lambda1=0.02, lambda2=0.7, max_iter=5, random_state=0).fit(X, y)
    S = ClassTopicMatcher(m, fold_lambda2=fold, doc_labels="fit").fit(X).score(Xq)
    ref = _oracle_scores(m, X, m.labels_, Xq, m.lambda2 if fold is None else fold)  # own folding: ridge λ₂
    np.testing.assert_allclose(S, ref, atol=1e-6)


def test_gnmf_own_folding_is_nnls_in_the_documents_class(labelled):
    X, y, Xq = labelled
    m = GroupNMF(2, 2, max_iter=30, random_state=0, inner_max_iter=2000, inner_tol=1e-12).fit(X, y)
    S = ClassTopicMatcher(m).fit(X, y=y).score(Xq)
    np.testing.assert_allclose(S, _oracle_scores(m, X, m.labels_, Xq, "nnls"), atol=1e-5)


def test_fit_labels_equal_the_given_training_labels(labelled):
    X, y, Xq = labelled
    m = CRLSI(0, 3, lambda1=0.02, max_iter=3, random_state=0).fit(X, y)
    a = ClassTopicMatcher(m, doc_labels="fit").fit(X)
    b = ClassTopicMatcher(m).fit(X, y=y)
    np.testing.assert_array_equal(a.doc_classes_, b.doc_classes_)
    np.testing.assert_allclose(a.score(Xq), b.score(Xq))
    # every document's vector lives in its own class's columns only
    for j, p in enumerate(a.doc_classes_):
        outside = np.setdiff1d(np.arange(a.doc_vectors_.shape[1]), m._layout().columns(p))
        assert not a.doc_vectors_[j, outside].any()


def test_topic_matcher_picks_the_class_heuristic_for_group_models(labelled):
    X, y, _ = labelled
    g = GroupRLSI(2, 1, max_iter=2, random_state=0).fit(X, y)
    assert isinstance(topic_matcher(g), ClassTopicMatcher)
    wrapped = topic_matcher(RidgeFolding(g, 2.5), doc_labels="fit")
    assert isinstance(wrapped, ClassTopicMatcher) and wrapped.fold_lambda2 == 2.5 and wrapped.model is g
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = BatchRLSI(3, max_iter=2, random_state=0).fit(X)
    assert type(topic_matcher(r)) is TopicMatcher
    assert type(topic_matcher(RidgeFolding(r))) is TopicMatcher


def test_bad_uses_end_in_one_line(labelled):
    X, y, Xq = labelled
    g = GroupRLSI(2, 1, max_iter=2, random_state=0).fit(X, y)
    with pytest.raises(RLSIError, match="fitted on 75 documents and 10 are indexed"):
        ClassTopicMatcher(g, doc_labels="fit").fit(X[:10])
    del g.labels_
    with pytest.raises(RLSIError, match="labels_"):
        ClassTopicMatcher(g, doc_labels="fit").fit(X)
    with pytest.raises(RLSIError, match="not seen in fit"):
        ClassTopicMatcher(g).fit(X[:2], y=["c0", "zz"])
    with pytest.raises(RLSIError, match="group model"):
        ClassTopicMatcher(BatchRLSI(2)).fit(X)
    with pytest.raises(RLSIError, match="fold_lambda2"):
        ClassTopicMatcher(g, fold_lambda2=-1.0).fit(X, y=y)


def test_derived_classes_are_cached_and_small_clusters_get_fewer_class_topics():
    X, y = class_corpus(n_per_class=30, n_classes=3, seed=5)
    a = derive_classes(X, "kmeans:3", random_state=0)
    b = derive_classes(X, "kmeans:3", random_state=0)
    np.testing.assert_array_equal(a, b)
    a[:] = -1  # a caller's copy: the cache is not changed through it
    assert derive_classes(X, "kmeans:3", random_state=0).min() >= 0
    # CRLSI with more class topics than the smallest derived cluster's documents: Kc lowered, not an error
    sizes = np.bincount(derive_classes(X, "kmeans:4", random_state=0))
    m = CRLSI(0, int(sizes.min()) + 2, classes="kmeans:4", max_iter=2, random_state=0).fit(X)
    assert m.class_topics_.min() == sizes.min()
    # labels given by the user still refuse the fit
    with pytest.raises(RLSIError, match="fewer than its"):
        CRLSI(0, 31, max_iter=2).fit(X, y)


def test_group_methods_in_the_protocol_grids():
    specs = {s.name: s for s in make_methods("grlsi,crlsi,gnmf,cnmf", k_grid=(10, 20), lambda1_grid=(0.01,),
                                             fold_grid=(math.inf,), extra={"grlsi": {"n_classes": 5}})}
    assert [len(s.grid) for s in specs.values()] == [2, 2, 2, 2]
    g = specs["grlsi"].factory(**{k: v for k, v in specs["grlsi"].grid[1].items() if k != "fold_lambda2"})
    assert (g.n_shared_topics, g.n_class_topics, g.classes, g.lambda1) == (10, 10, "kmeans:5", 0.01)
    c = specs["crlsi"].factory(**{k: v for k, v in specs["crlsi"].grid[0].items() if k != "fold_lambda2"})
    assert isinstance(c, CRLSI) and (c.n_shared_topics, c.n_class_topics) == (0, 10)
    gn = specs["gnmf"].factory(**specs["gnmf"].grid[0])
    cn = specs["cnmf"].factory(**specs["cnmf"].grid[0])
    assert isinstance(gn, GroupNMF) and (gn.n_shared_topics, gn.n_class_topics) == (5, 5)
    assert isinstance(cn, CNMF) and (cn.n_shared_topics, cn.n_class_topics) == (0, 10)


def test_protocol_runs_group_methods_with_the_class_heuristic(tiny):
    rep = run_protocol(tiny, ["grlsi", "crlsi", "gnmf"],
                       ProtocolConfig(k_grid=(2,), lambda1_grid=(0.01,), n_folds=2, alphas=(0.0, 1.0),
                                      extra={m: {"n_classes": 2} for m in ("grlsi", "crlsi", "gnmf")},
                                      keep_scores=True))
    assert [r["method"] for r in rep.rows("cv")] == ["BM25", "BM25+GRLSI", "BM25+CRLSI", "BM25+GNMF"]
    # the protocol's topic scores are the matcher's on the same fitted model (refit with the same seed)
    from rlsi.experiments import Experiment, prepare_collection

    exp = Experiment(prepare_collection(tiny), fit_normalize="l2")
    spec = make_methods(["grlsi"], k_grid=(2,), lambda1_grid=(0.01,), fold_grid=(math.inf,),
                        extra={"grlsi": {"n_classes": 2}})[0]
    model = exp.fit_model(spec, spec.grid[0])
    p = exp.prepared
    direct = ClassTopicMatcher(model.model, fold_lambda2=math.inf).fit(p.doc_tfidf, y=model.model.labels_)
    np.testing.assert_allclose(rep.grids["grlsi"].topic_scores[0], direct.score(p.query_tfidf), atol=1e-6)


def _collection_folder(folder, tiny):
    import json

    folder.mkdir()
    with open(folder / "corpus.jsonl", "w") as f:
        for d, text in zip(tiny.corpus.ids, tiny.corpus.texts):
            f.write(json.dumps({"id": d, "text": text}) + "\n")
    with open(folder / "queries.jsonl", "w") as f:
        for q, text in tiny.queries.items():
            f.write(json.dumps({"id": q, "text": text}) + "\n")
    with open(folder / "qrels.tsv", "w") as f:
        for q, rels in tiny.qrels.items():
            for d, r in rels.items():
                f.write(f"{q}\t0\t{d}\t{r}\n")
    return folder


def test_cli_evaluate_compares_group_models_on_derived_classes(tmp_path, tiny, capsys):
    from rlsi.cli.main import main

    folder = _collection_folder(tmp_path / "coll", tiny)
    fast = ["--k-grid", "2", "--lambda1-grid", "0.01", "--folds", "2", "--alpha-step", "0.5", "--protocol", "cv"]
    status = main(["-q", "evaluate", "--collection", str(folder), "--methods", "bm25,grlsi,crlsi,cnmf",
                   "--classes", "2", *fast])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert "BM25+GRLSI" in out and "BM25+CRLSI" in out and "BM25+CNMF" in out
    status = main(["-q", "evaluate", "--collection", str(folder), "--methods", "bm25,grlsi", "--classes", "0",
                   *fast])
    out, err = capsys.readouterr()
    assert status != 0 and "--classes 0" in err and len(err.strip().splitlines()) == 1


def test_class_topic_step_on_the_class_terms_equals_the_full_step(monkeypatch):
    """Rows outside a class's documents and U0's support are skipped in the Up-step: same fit as solving all."""
    X, y = class_corpus(n_per_class=30, n_classes=3, seed=7)
    fits = []
    for share in (0.0, 1.0):  # 0: every class solves all M rows; 1: only its terms ∪ U0's support
        m = GroupRLSI(2, 2, lambda1=0.01, max_iter=4, tol=0, random_state=0,
                      tuning={"class_rows_full": share}).fit(X, y)
        fits.append(m)
    np.testing.assert_allclose(fits[0].objective_, fits[1].objective_, rtol=1e-12)
    np.testing.assert_allclose(fits[0].components_.toarray(), fits[1].components_.toarray(), atol=1e-12)
