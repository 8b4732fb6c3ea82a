"""Fixtures of the server's tests (the helpers are in serve_helpers.py)."""

import warnings

import pytest
from serve.serve_helpers import build_index


@pytest.fixture
def index_dir(tmp_path):
    """A fresh live index of the themed notes, with their texts."""
    return build_index(tmp_path / "idx")


def _test_client():
    """Starlette's TestClient (its note that it prefers httpx2 to httpx is not about rlsi)."""
    pytest.importorskip("fastapi", reason="the serve extra is not installed (pip install '.[test]')")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*httpx2")
        from starlette.testclient import TestClient
    return TestClient


@pytest.fixture
def make_client(index_dir):
    """``make_client(**options)``: a test client of a fresh service on ``index_dir`` (closed after the test);
    options go to SearchService (read_only, limits, corpus) and create_app (token, hosts)."""
    from rlsi.serve import SearchService, create_app

    TestClient = _test_client()

    opened = []

    def make(path=None, *, token=None, hosts=("127.0.0.1",), raise_server_exceptions=True, **service):
        svc = SearchService(path or index_dir, **service)
        client = TestClient(create_app(svc, token=token, hosts=hosts), base_url="http://127.0.0.1",
                            raise_server_exceptions=raise_server_exceptions)
        client.__enter__()
        opened.append(client)
        return client

    yield make
    for client in opened:
        client.__exit__(None, None, None)
