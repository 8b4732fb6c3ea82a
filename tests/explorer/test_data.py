"""The explorer's data and page: every model kind, the documents' side, same bytes, the size budget."""

import json
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from explorer._models import KINDS, fit_kind

import rlsi
from rlsi.errors import RLSIError
from rlsi.explorer import Page, explore
from rlsi.explorer.page import script_json
from rlsi.quality import top_terms


def page_json(html):
    """The data a page holds, read back from its HTML as the browser reads it."""
    text = re.search(r'<script type="application/json" id="rlsi-data">(.*?)</script>', html, re.S).group(1)
    return json.loads(text)


@pytest.mark.parametrize("kind", KINDS)
def test_every_model_kind_saved_by_rlsi(kind, themed, tmp_path):
    docs, vec, X, counts, y = themed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few iterations on purpose
        fitted = fit_kind(kind, X, counts, y)
    rlsi.save(tmp_path / "m", model=fitted, vectorizer=vec)
    model = rlsi.load(tmp_path / "m")["model"]
    assert type(model).__name__ == kind
    page = explore(model, vectorizer=vec, docs=docs)
    data = page_json(page.html)
    assert data == json.loads(json.dumps(page.data))  # the page holds exactly the data
    facts = data["model"]
    K = model.components_.shape[0]
    assert facts["kind"] == kind and facts["n_topics"] == K == len(data["topics"]["x"])
    # topic k of the page is row k of components_: its top terms at lam = 1 are those of `rlsi topics`
    names = vec.get_feature_names_out()
    expected = top_terms(model.components_, names, n=3)
    for k in range(K):
        t = data["topics"]
        entries = [(t["entries"][k][i], t["entries"][k][i + 1]) for i in range(0, len(t["entries"][k]), 3)]
        side = [e for e in entries if (e[1] < 0) == (t["sign"][k] < 0)]
        side.sort(key=lambda e: -abs(e[1]))
        assert [data["terms"]["names"][i] for i, _ in side[:3]] == expected[k]
    groups = [g["name"] for g in facts["groups"]]
    if kind in ("GroupRLSI", "GroupNMF"):
        assert groups == ["shared", "class:cars", "class:fruit", "class:music", "class:space"]
        assert [g["label"] for g in facts["groups"]][:2] == ["shared topics", "class cars"]
    elif kind in ("CRLSI", "CNMF"):
        assert groups == ["class:cars", "class:fruit", "class:music", "class:space"]
    else:
        assert groups == ["topics"]
    # the kinds whose saved state keeps the objective per iteration (STC's and PLSI's stay with the fitted object)
    records = kind in ("BatchRLSI", "DaskRLSI", "GroupRLSI", "CRLSI", "GroupNMF", "CNMF")
    assert (facts["objective"] is not None) == records
    if records:
        assert len(facts["objective"]["values"]) == model.n_iter_ or kind == "PLSI"
    weights = {"BatchRLSI": "signed", "LSI": "signed", "NMF": "non-negative", "GroupNMF": "non-negative",
               "PLSI": "probabilities", "SparseTopicalCoding": "probabilities"}
    assert facts["weights"] == weights.get(kind, facts["weights"])
    assert facts["input"] == ("counts" if kind in ("SparseTopicalCoding", "OnlineSTC", "MedSTC", "OnlineMedSTC",
                                                   "LDA", "PLSI") else "tfidf")
    # documents: shares sum to 1, ends and the map refer to the given documents
    D = data["docs"]
    assert D["n"] == len(docs) and sum(data["topics"]["share"]) == pytest.approx(1, abs=1e-3)
    assert set(D["ids"]) <= {d["id"] for d in docs} and len(D["map"]["x"]) == D["map"]["n_drawn"]


def test_documents_side_against_its_definitions(themed):
    docs, vec, X, counts, y = themed
    model = fit_kind("BatchRLSI", X, counts, y)
    V = model.transform(X)
    page = explore(model, vectorizer=vec, X=X, docs=docs, n_ends=3, max_map_docs=40)
    data = page.data
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    mass = (np.abs(V) / norms[:, None]).sum(axis=0)
    np.testing.assert_allclose(data["topics"]["share"], mass / mass.sum(), rtol=1e-3)
    D = data["docs"]
    for k in range(V.shape[1]):
        top, bottom = D["ends"][k]
        top_docs = [D["ids"][top[i]] for i in range(0, len(top), 2)]
        assert top_docs == [docs[j]["id"] for j in np.argsort(-V[:, k], kind="stable")[:3] if V[j, k] > 0]
        bottom_docs = [D["ids"][bottom[i]] for i in range(0, len(bottom), 2)]
        assert bottom_docs == [docs[j]["id"] for j in np.argsort(V[:, k], kind="stable")[:3] if V[j, k] < 0]
    assert D["map"]["n_drawn"] == 40 and len(set(D["map"]["doc"])) == 40
    end = D["ends"][0][0][0]
    assert D["titles"][end].endswith(docs[int(D["ids"][end][1:])]["title"]) and D["snippets"][end]
    # strongest topic of each drawn document
    for i, d in zip(D["map"]["topic"], D["map"]["doc"]):
        assert i == int(np.argmax(np.abs(V[int(D["ids"][d][1:])])))


def test_same_inputs_give_the_same_bytes(themed, tmp_path):
    docs, vec, X, counts, y = themed
    model = fit_kind("BatchRLSI", X, counts, y)
    a = explore(model, vectorizer=vec, docs=docs, max_map_docs=50)
    b = explore(model, vectorizer=vec, docs=docs, max_map_docs=50)
    assert a.to_bytes() == b.to_bytes()
    a.save(tmp_path / "a.html")
    assert (tmp_path / "a.html").read_bytes() == a.to_bytes()
    other = explore(model, vectorizer=vec, docs=docs, max_map_docs=50, random_state=1)
    assert other.to_bytes() != a.to_bytes()  # another sample of the document map


def test_the_page_loads_nothing_and_escapes_what_it_shows(themed):
    docs, vec, X, counts, y = themed
    model = fit_kind("NMF", X, counts, y)
    names = vec.get_feature_names_out().astype(object)
    names[int(np.argmax(np.abs(model.components_[0])))] = "</script><script>alert(1)</script>"
    hostile = [dict(d) for d in docs]
    for d in hostile:
        d["title"] = "<img src=x onerror=alert(2)> & \u2028"
    page = explore(model, feature_names=names, X=X, docs=hostile)
    html = page.html
    assert html.count("</script>") == 2 and "<img" not in html and "\u2028" not in html
    assert "</script><script>alert(1)</script>" in page_json(html)["terms"]["names"]
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", html)
    assert not re.search(r"\bfetch\s*\(|XMLHttpRequest|import\s*\(|WebSocket|sendBeacon", html)
    assert "default-src 'none'" in html  # the page's own policy forbids every request
    assert script_json({"a": "</SCRIPT>"}) == '{"a":"\\u003c/SCRIPT\\u003e"}'


def test_the_size_budget_at_500_topics():
    rng = np.random.default_rng(0)
    K, M, nnz, n_docs = 500, 40_000, 300, 6_000
    rows = np.repeat(np.arange(K), nnz)
    cols = rng.integers(0, M, size=K * nnz)
    vals = rng.normal(size=K * nnz) * np.where(rng.random(K * nnz) < 0.8, 1, -0.3)
    C = sp.csr_matrix((vals, (rows, cols)), shape=(K, M))

    class Model:
        components_ = C

    names = np.array([f"term{j:05d}" for j in range(M)], dtype=object)
    V = sp.random(n_docs, K, density=0.02, random_state=0, format="csr")
    V.data -= 0.3
    docs = [{"id": f"doc{i}", "title": f"A title of about forty characters, {i}", "text": "word " * 80}
            for i in range(n_docs)]
    page = explore(Model(), feature_names=names, doc_topics=V, docs=docs, n_terms=30)
    assert page.size <= 1_500_000, page.size
    assert len(page.data["docs"]["map"]["x"]) <= 2000


def test_size_does_not_depend_on_the_vocabulary():
    rng = np.random.default_rng(1)
    C = rng.normal(size=(20, 500)) * (rng.random((20, 500)) < 0.2)

    class Small:
        components_ = C

    class Big:
        components_ = sp.hstack([sp.csr_matrix(C), sp.csr_matrix((20, 200_000))]).tocsr()

    small = explore(Small(), feature_names=[f"w{j:06d}" for j in range(500)])
    big = explore(Big(), feature_names=[f"w{j:06d}" for j in range(200_500)])
    # the same terms and numbers; only the figures that divide by the vocabulary (compactness) differ
    assert small.data["terms"] == big.data["terms"]
    assert small.data["topics"]["entries"] == big.data["topics"]["entries"]
    assert abs(small.size - big.size) < 0.002 * small.size


def test_bad_inputs_are_one_line_errors(themed):
    docs, vec, X, counts, y = themed
    model = fit_kind("LSI", X, counts, y)
    with pytest.raises(RLSIError, match="6 term names for a model of"):
        explore(model, feature_names=["a"] * 6)
    with pytest.raises(RLSIError, match="docs has 3 documents but X has 96 rows"):
        explore(model, vectorizer=vec, X=X, docs=docs[:3])
    with pytest.raises(RLSIError, match="docs needs X"):
        _docs_without_vectors(model, vec, docs)
    with pytest.raises(RLSIError, match="n_terms=0 must be >= 1"):
        explore(model, vectorizer=vec, n_terms=0)
    with pytest.raises(RLSIError, match="no topics"):
        explore(object())
    with pytest.raises(RLSIError, match="labels are used by the group models"):
        explore(model, vectorizer=vec, X=X, y=y)
    with pytest.raises(RLSIError, match="docs\\[0\\] is a int"):
        explore(model, vectorizer=vec, docs=[1, 2])


def _docs_without_vectors(model, vec, docs):
    from rlsi.explorer.data import explorer_data

    return explorer_data(model, vec.get_feature_names_out(), docs=docs)


def test_a_page_without_documents_and_its_notebook_view(themed):
    docs, vec, X, counts, y = themed
    model = fit_kind("OnlineRLSI", X, counts, y)
    page = explore(model, vectorizer=vec)
    assert isinstance(page, Page) and page.data["docs"] is None and page.data["topics"]["share"] is None
    assert page.data["topics"]["npmi"] is None
    frame = page._repr_html_()
    assert frame.startswith("<iframe srcdoc=") and "&lt;script" in frame and "<script" not in frame
    assert "bytes of HTML" in repr(page)
    assert rlsi.explore is explore  # the top-level name


def test_seed_words_names_label_the_topics(themed, tmp_path):
    docs, vec, X, counts, y = themed
    model = rlsi.BatchRLSI(4, lambda1=0.05, max_iter=10, random_state=0,
                           seed_terms={"space": ["rocket", "orbit"], "fruit": ["apple"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few iterations on purpose
        model.fit(X, feature_names=vec.get_feature_names_out())
    rlsi.save(tmp_path / "m", model=model, vectorizer=vec)
    page = explore(rlsi.load(tmp_path / "m")["model"], vectorizer=vec)
    assert page_json(page.html)["topics"]["names"] == ["space", "fruit", None, None]
    unnamed = rlsi.BatchRLSI(4, lambda1=0.05, max_iter=3, random_state=0, seed_terms=[["rocket"]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unnamed.fit(X, feature_names=vec.get_feature_names_out())
    assert unnamed.topic_names_ == [None] * 4 and explore(unnamed, vectorizer=vec).data["topics"]["names"] is None
