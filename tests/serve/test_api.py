"""The JSON API in process (Starlette's test client): every endpoint, and every bad request answered with
its status and one line of JSON."""

import json

import pytest
from serve.serve_helpers import build_index, themed

from rlsi.retrieval.live import LiveIndex
from rlsi.serve import Limits, SearchService

JSON_LINES = {"content-type": "application/x-ndjson"}


def assert_error(response, status, *words):
    """``response`` is ``status`` with ``{"error": one line}`` naming ``words``, and no traceback."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert list(body) == ["error"] and body["error"].strip()
    message = body["error"]
    assert "\n" not in message and "Traceback" not in message and len(message) <= 500
    for word in words:
        assert word in message, message
    return message


# ---------------------------------------------------------------------------------------------- searching
def test_search_answers_the_library_s_ranking_with_titles_snippets_and_topics(make_client, index_dir):
    client = make_client()
    answer = client.get("/search", params={"q": "rocket orbit launch", "k": 5}).json()
    with LiveIndex.open(index_dir) as index:
        expected = index.search("rocket orbit launch", 5)
    assert [h["doc_id"] for h in answer["hits"]] == [h.doc_id for h in expected]
    for got, ref in zip(answer["hits"], expected):
        assert (got["score"], got["term_score"], got["topic_score"]) == (ref.score, ref.term_score, ref.topic_score)
        assert [t["topic"] for t in got["topics"]] == [t for t, _ in ref.topics]
        assert [t["weight"] for t in got["topics"]] == [w for _, w in ref.topics]
        assert all(t["label"] == f"T{t['topic'] + 1}" and len(t["terms"]) == 3 for t in got["topics"])
    top = answer["hits"][0]
    assert top["title"].startswith("space note") and "rocket" in top["snippet"] + top["title"]
    assert (answer["k"], answer["alpha"], answer["documents"], answer["model_version"]) == (5, 0.4, 96, 1)


def test_alpha_moves_the_ranking_between_bm25_and_topics(make_client, index_dir):
    client = make_client()
    with LiveIndex.open(index_dir) as index:
        for alpha in (0.0, 1.0):
            hits = client.get("/search", params={"q": "rocket melody", "k": 8, "alpha": alpha}).json()["hits"]
            assert [h["doc_id"] for h in hits] == [h.doc_id for h in index.search("rocket melody", 8, alpha=alpha)
                                                    if h.term_score or h.topic_score > 0]
    bm25 = client.get("/search", params={"q": "rocket melody", "alpha": 0}).json()["hits"]
    assert all(h["term_score"] > 0 for h in bm25)  # alpha 0: what matches no word is left out


def test_a_query_of_unknown_words_finds_nothing(make_client):
    answer = make_client().get("/search", params={"q": "xylophonezzz"}).json()
    assert answer["hits"] == [] and answer["documents"] == 96


def test_an_index_without_topics_serves_bm25_only(make_client, tmp_path):
    client = make_client(build_index(tmp_path / "bm25", model=False))
    hits = client.get("/search", params={"q": "rocket"}).json()["hits"]
    assert hits and all(h["topics"] == [] and h["topic_score"] == 0 for h in hits)
    assert client.get("/topics").json()["topics"] == []
    assert_error(client.get("/search", params={"q": "rocket", "alpha": 0.5}), 400, "no topic model")
    assert_error(client.get("/explore"), 404, "no topic model")
    assert client.get("/health").json()["topics"] is False


# ---------------------------------------------------------------------------------------------- writing
def test_added_documents_are_found_and_replaced_and_deleted(make_client):
    client = make_client()
    r = client.post("/documents", json=[{"id": "n1", "title": "Comet probe", "text": "a probe met the comet zorbex"},
                                        {"id": 7, "text": "engine zorbex valve"}])
    assert r.status_code == 200 and r.json() == {"added": 2, "replaced": 0, "generation": 2}
    hits = client.get("/search", params={"q": "zorbex"}).json()["hits"]
    assert {h["doc_id"] for h in hits} == {"n1", "7"}
    n1 = next(h for h in hits if h["doc_id"] == "n1")
    assert n1["title"] == "Comet probe" and "zorbex" in n1["snippet"]
    doc = client.get("/documents/n1").json()
    assert doc["text"] == "Comet probe\na probe met the comet zorbex" and doc["generation"] == 2
    assert doc["topics"] and all({"topic", "label", "weight", "terms"} <= set(t) for t in doc["topics"])

    r = client.post("/documents", content='{"id": "n1", "text": "now about a quokka"}\n\n', headers=JSON_LINES)
    assert r.json()["added"] == 0 and r.json()["replaced"] == 1 and r.json()["generation"] > 2
    assert [h["doc_id"] for h in client.get("/search", params={"q": "zorbex"}).json()["hits"]] == ["7"]
    assert client.get("/documents/n1").json()["text"] == "now about a quokka"

    generation = r.json()["generation"]
    r = client.delete("/documents/n1")
    assert r.status_code == 200 and r.json()["deleted"] == "n1" and r.json()["generation"] > generation
    assert_error(client.get("/documents/n1"), 404, "'n1'")
    assert_error(client.delete("/documents/n1"), 404, "'n1'")
    assert client.get("/health").json()["documents"] == 97


def test_ids_with_slashes_and_spaces_are_addressed_by_path(make_client):
    client = make_client()
    doc_id = "2024/01/news item #1"
    assert client.post("/documents", json=[{"id": doc_id, "text": "alpaca"}]).status_code == 200
    from urllib.parse import quote

    assert client.get("/documents/" + quote(doc_id)).json()["id"] == doc_id
    assert client.delete("/documents/" + quote(doc_id)).json()["deleted"] == doc_id


def test_acknowledged_documents_are_in_the_committed_index(make_client, index_dir):
    client = make_client()
    generation = client.post("/documents", json=[{"id": "durable", "text": "wombat"}]).json()["generation"]
    with LiveIndex.open(index_dir) as other:  # what another process reads from disk
        assert other.generation == generation and "durable" in other


# ---------------------------------------------------------------------------------------------- the rest
def test_topics_named_by_seed_words_carry_their_names(make_client, tmp_path):
    from rlsi.models import BatchRLSI

    ids, texts, vec, _ = themed()
    X = vec.transform(texts)
    model = BatchRLSI(4, lambda1=0.05, max_iter=10, tol=1e-3, random_state=0, seed_terms={"space": ["rocket", "orbit"]})
    model.fit(X, feature_names=vec.get_feature_names_out())
    with LiveIndex.create(tmp_path / "named", model, vec, alpha=0.4, durable=False) as index:
        index.add(texts, ids)
        index.commit()
    client = make_client(tmp_path / "named")
    labels = [t["label"] for t in client.get("/topics", params={"n": 3}).json()["topics"]]
    assert labels == ["T1 [space]", "T2", "T3", "T4"]
    hits = client.get("/search", params={"q": "rocket orbit", "k": 3}).json()["hits"]
    assert any(t["label"] == "T1 [space]" for h in hits for t in h["topics"])


def test_topics_health_and_openapi(make_client):
    client = make_client()
    topics = client.get("/topics", params={"n": 4}).json()
    _, _, vec, model = themed()
    assert len(topics["topics"]) == model.components_.shape[0] == 4
    for t in topics["topics"]:
        assert len(t["terms"]) == len(t["weights"]) == 4 and set(t["terms"]) <= set(vec.get_feature_names_out())
    health = client.get("/health").json()
    assert health["status"] == "ok" and health["generation"] == 1 and health["documents"] == 96
    assert (health["model_version"], health["pending_version"], health["read_only"]) == (1, None, False)
    paths = client.get("/openapi.json").json()["paths"]
    assert {"/search", "/documents", "/documents/{doc_id}", "/topics", "/health"} <= set(paths)
    assert "Document" in client.get("/openapi.json").json()["components"]["schemas"]


def test_the_page_its_assets_and_the_explorer(make_client):
    client = make_client()
    page = client.get("/")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    config = page.text.split('<script type="application/json" id="config">', 1)[1].split("</script>", 1)[0]
    config = json.loads(config)
    assert (config["documents"], config["topics"], config["explorer"], config["k"]) == (96, True, True, 10)
    assert "<script>" not in page.text  # no inline script: the CSP forbids it
    for name, kind in (("search.js", "javascript"), ("search.css", "css")):
        r = client.get(f"/static/{name}")
        assert r.status_code == 200 and kind in r.headers["content-type"] and len(r.text) > 500
    assert client.get("/static/favicon.svg").headers["content-type"] == "image/svg+xml"
    assert_error(client.get("/static/../service.py"), 404)
    assert_error(client.get("/static/app.py"), 404, "no such file")
    explorer = client.get("/explore")
    assert explorer.status_code == 200 and "Topic map" in explorer.text and "LSI" in explorer.text
    assert client.get("/explore").text == explorer.text  # built once per model version
    assert page.headers["x-content-type-options"] == "nosniff"


# ---------------------------------------------------------------------------------------------- bad requests
@pytest.mark.parametrize("params, words", [
    ({}, ["empty"]),
    ({"q": ""}, ["empty"]),
    ({"q": "   "}, ["empty"]),
    ({"q": "rocket", "k": 100_000}, ["k=100000", "100", "--max-k"]),
    ({"q": "rocket", "k": 0}, ["k=0"]),
    ({"q": "rocket", "k": "ten"}, ["k:", "integer", "'ten'"]),
    ({"q": "rocket", "alpha": 2}, ["alpha=2", "between 0 and 1"]),
    ({"q": "rocket", "alpha": "nan"}, ["alpha=nan"]),
    ({"q": "rocket", "alpha": "high"}, ["alpha:", "'high'"]),
    ({"q": "rocket " * 200}, ["1,400 characters", "1,000", "--max-query"]),
])
def test_bad_searches(make_client, params, words):
    assert_error(make_client().get("/search", params=params), 400, *words)


@pytest.mark.parametrize("body, words", [
    ("[{", ["the body", "not valid JSON"]),
    ("", ["empty"]),
    ("[]", ["no document"]),
    ('["text"]', ["document 1", "JSON object", "str"]),
    ('[{"text": "no id"}]', ["document 1", '"id"', "none"]),
    ('[{"id": true, "text": "x"}]', ["document 1", '"id"', "bool"]),
    ('[{"id": "", "text": "x"}]', ["document 1", "empty"]),
    ('[{"id": "a", "text": 5}]', ["document 1", "'text'", "string"]),
    ('[{"id": "a", "body": "x"}]', ["document 1", "none of the text fields"]),
    ('[{"id": "a", "text": "x"}, {"id": "a", "text": "y"}]', ["document 2", "document 1", "unique"]),
    ('{"id": "a", "text": "x"}\n{"id": "b", "text": ', ["document 2", "not valid JSON"]),
    ("[" * 100_000, ["nested too deeply"]),
])
def test_bad_documents_change_nothing(make_client, body, words):
    client = make_client()
    assert_error(client.post("/documents", content=body, headers={"content-type": "application/json"}), 400, *words)
    assert client.get("/health").json()["generation"] == 1


def test_caps_on_batches_and_bodies(make_client):
    client = make_client(limits=Limits(max_batch_docs=3, max_body_bytes=1000, max_k=5))
    docs = [{"id": str(i), "text": "x"} for i in range(4)]
    assert_error(client.post("/documents", json=docs), 400, "4 documents", "limit is 3", "--max-batch")
    big = json.dumps([{"id": "a", "text": "word " * 400}])
    assert_error(client.post("/documents", content=big, headers={"content-type": "application/json"}), 413,
                 "2,0", "1,000", "--max-body-mb")

    def chunks():  # no Content-Length: counted as it arrives
        for _ in range(40):
            yield b" " * 100

    assert_error(client.post("/documents", content=chunks(), headers={"content-type": "application/json"}), 413,
                 "over the limit of 1,000 bytes")
    assert_error(client.get("/search", params={"q": "rocket", "k": 6}), 400, "between 1 and 5")
    assert client.get("/health").json()["generation"] == 1


def test_bodies_that_are_not_json_or_not_utf8(make_client):
    client = make_client()
    assert_error(client.post("/documents", content=b'[{"id": "a", "text": "\xff"}]',
                             headers={"content-type": "application/json"}), 400, "not UTF-8")
    assert_error(client.post("/documents", content='{"id": "a", "text": "x"}', headers={"content-type": "text/plain"}),
                 415, "application/json", "text/plain")
    assert_error(client.post("/documents", content='{"id": "a", "text": "x"}', headers={"content-type": ""}), 415)


def test_unknown_paths_methods_and_hosts(make_client):
    client = make_client()
    assert_error(client.get("/nowhere"), 404, "/nowhere")
    assert_error(client.put("/documents", json=[]), 405, "PUT", "POST")
    assert_error(client.get("/documents/d1", headers={"host": "evil.example:8000"}), 400, "Host", "evil.example")
    assert client.get("/health", headers={"host": "127.0.0.1:8000"}).status_code == 200


def test_writes_need_the_token_and_reads_do_not(make_client):
    client = make_client(token="s3cret-token")
    doc = [{"id": "t1", "text": "llama"}]
    r = client.post("/documents", json=doc)
    assert_error(r, 401, "Authorization: Bearer")
    assert r.headers["www-authenticate"] == "Bearer"
    assert_error(client.post("/documents", json=doc, headers={"authorization": "Bearer s3cret-tokeN"}), 401,
                 "not this server's")
    assert_error(client.delete("/documents/d1", headers={"authorization": "Basic s3cret-token"}), 401)
    assert client.get("/health").json()["generation"] == 1
    assert client.post("/documents", json=doc, headers={"authorization": "Bearer s3cret-token"}).status_code == 200
    assert client.get("/search", params={"q": "llama"}).json()["hits"][0]["doc_id"] == "t1"


def test_a_read_only_server_refuses_writes(make_client):
    client = make_client(read_only=True)
    assert_error(client.post("/documents", json=[{"id": "a", "text": "x"}]), 403, "read-only")
    assert_error(client.delete("/documents/d1"), 403, "read-only")
    assert client.get("/health").json()["read_only"] is True
    assert client.get("/documents/d1").json()["id"] == "d1"


class _Broken(SearchService):
    def health(self):
        raise RuntimeError("a bug\nover two lines")


def test_an_unexpected_exception_is_a_500_of_one_line_and_logged(index_dir, caplog):
    from serve.conftest import _test_client

    from rlsi.serve import create_app

    with _test_client()(create_app(_Broken(index_dir)), base_url="http://127.0.0.1") as client:
        with caplog.at_level("ERROR", logger="rlsi.serve"):
            r = client.get("/health")
        assert_error(r, 500, "internal error", "RuntimeError")
        assert "a bug" not in r.text
        assert client.get("/search", params={"q": "rocket"}).status_code == 200
    assert any("a bug over two lines" in rec.getMessage() and rec.exc_info for rec in caplog.records)
