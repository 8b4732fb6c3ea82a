"""The web app of ``rlsi serve``: FastAPI routes over a :class:`~rlsi.serve.service.SearchService`.

FastAPI (on Starlette) gives the OpenAPI description of the API at ``/openapi.json`` from the routes'
signatures; its interactive pages are left out (they load their scripts from a CDN). A route parses the
request, checks the write permission and the caps (:mod:`rlsi.serve.http`), and hands the work to the
service: searches and look-ups on the thread pool (``starlette.concurrency.run_in_threadpool``: the event
loop never waits for an index), writes to the service's one writer thread, whose future the route awaits,
so a ``POST /documents`` answers after the commit that makes its documents durable. Routes answer with a
``JSONResponse`` of the service's dict (plain JSON types): FastAPI's ``jsonable_encoder`` walk over the
~500 values of a 10-hit answer cost 0.4 ms of the event loop per search (2.9 ms a request against 2.5 ms,
20 Newsgroups, K = 100, measured in process).

No ``from __future__ import annotations`` here: FastAPI reads the routes' annotations (``Request``) at
run time.
"""

import asyncio
import contextlib
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from .http import DOCUMENT_TYPES, Guard, check_token, error_handlers, json_error, media_type, read_body
from .limits import LOOPBACK_HOSTS
from .page import ASSETS, PAGE_CSP, asset, render_page

__all__ = ["create_app"]

_DOCUMENTS_BODY = {
    "required": True,
    "content": {t: {"schema": {"oneOf": [
        {"type": "array", "items": {"$ref": "#/components/schemas/Document"}},
        {"type": "string", "description": "JSON lines: one Document object a line"}]}} for t in DOCUMENT_TYPES[:2]},
}
_DOCUMENT_SCHEMA = {"type": "object", "required": ["id"], "properties": {
    "id": {"type": ["string", "integer"]}, "title": {"type": "string"}, "text": {"type": "string"}}}


def create_app(service, *, token=None, hosts=LOOPBACK_HOSTS, close_service=True):
    """The ASGI app serving ``service``.

    token : the write token (None: writes need none). hosts : the Host names the app answers (None: any;
    the default, the loopback names, suits a server on 127.0.0.1). close_service : close the service when
    the app shuts down (the app owns it).
    """
    from .. import __version__
    from .documents import parse_documents
    from .errors import NotFound

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            if close_service:
                await run_in_threadpool(service.close)

    app = FastAPI(title="rlsi", version=__version__, lifespan=lifespan, docs_url=None, redoc_url=None,
                  description="Search an rlsi live index: BM25 and topics, documents added while it serves.")
    for cls, handler in error_handlers().items():
        app.add_exception_handler(cls, handler)
    app.add_middleware(Guard, hosts=hosts)
    app.state.service = service
    name = Path(service.path).resolve().name

    def writes_allowed(request):
        service.check_writable()
        check_token(request, token)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page():
        health = await run_in_threadpool(service.health)
        config = dict(health, k=10, explorer=health["topics"])
        html = render_page(f"rlsi · {name}", config, max_query=service.limits.max_query_chars)
        return HTMLResponse(html, headers={"Content-Security-Policy": PAGE_CSP, "Cache-Control": "no-store"})

    @app.get("/static/{file}", include_in_schema=False)
    async def static(file: str):
        if file not in ASSETS:
            raise NotFound(f"no such file: /static/{file[:80]}")
        return Response(asset(file), media_type=ASSETS[file], headers={"Cache-Control": "no-cache"})

    @app.get("/search", summary="the k best documents for a query (BM25, topic and fused scores)")
    async def search(q: str | None = None, k: int | None = None, alpha: float | None = None):
        """Each hit: ``doc_id``, ``score`` (fused), ``term_score`` (BM25), ``topic_score`` (cosine of the topic
        vectors), ``title`` and ``snippet`` (when the server has the text), ``topics`` (the topics that
        matched: ``topic``, ``label`` (``T20``, or ``T1 [hockey]`` for a topic that seed words named), signed
        ``weight``, top ``terms``). α is the weight of the topic score (default: the index's)."""
        return JSONResponse(await run_in_threadpool(service.search, q, k, alpha))

    @app.post("/documents", summary="add or replace documents (answers after the commit)",
              openapi_extra={"requestBody": _DOCUMENTS_BODY})
    async def add_documents(request: Request):
        """A JSON list of documents or JSON lines, each ``{"id": ..., "title": ..., "text": ...}``. A document
        whose id is in the index replaces it (a retried request is harmless). The answer comes after the
        commit: an acknowledged document survives a crash."""
        writes_allowed(request)
        if media_type(request) not in DOCUMENT_TYPES:
            return json_error(415, f"send the documents as application/json (a list) or application/x-ndjson (JSON "
                                   f"lines), not {media_type(request)[:60] or 'a body without a Content-Type'}")
        body = await read_body(request, service.limits.max_body_bytes)
        ids, texts = await run_in_threadpool(parse_documents, body, text_fields=service.text_fields,
                                             max_docs=service.limits.max_batch_docs)
        return JSONResponse(await asyncio.wrap_future(service.put(ids, texts)))

    @app.delete("/documents/{doc_id:path}", summary="delete a document (answers after the commit)")
    async def delete_document(doc_id: str, request: Request):
        writes_allowed(request)
        result = await asyncio.wrap_future(service.delete(doc_id))
        if not result["deleted"]:
            raise NotFound(f"no document {doc_id[:80]!r} in the index")
        return JSONResponse({"deleted": doc_id, "generation": result["generation"]})

    @app.get("/documents/{doc_id:path}", summary="what the index holds about a document, and its text")
    async def get_document(doc_id: str):
        return JSONResponse(await run_in_threadpool(service.document, doc_id))

    @app.get("/topics", summary="the serving model's topics with their top terms")
    async def topics(n: int = 10):
        return JSONResponse(await run_in_threadpool(service.topics, n))

    @app.get("/health", summary="the index's generation, documents, segments and model version")
    async def health():
        return JSONResponse(await run_in_threadpool(service.health), headers={"Cache-Control": "no-store"})

    @app.get("/explore", response_class=HTMLResponse, include_in_schema=False)
    async def explore():
        return HTMLResponse(await run_in_threadpool(service.explorer_html))

    _openapi = app.openapi

    def openapi():
        if app.openapi_schema is None:
            schema = _openapi()
            schema.setdefault("components", {}).setdefault("schemas", {})["Document"] = _DOCUMENT_SCHEMA
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi
    return app
