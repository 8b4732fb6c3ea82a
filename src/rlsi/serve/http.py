"""What every request goes through before and after its route: the guard (a Host header of this server,
security headers, an unexpected exception answered as a JSON 500 and logged here), the errors as JSON with
one-line messages, the write token and the capped body.

* **Host.** A server on the loopback interface answers only requests whose ``Host`` is a loopback name
  (``127.0.0.1``, ``localhost``, ``[::1]``): a web page of another site that a browser resolves to
  127.0.0.1 (DNS rebinding) is refused with 400 before any route runs.
* **Writes from other sites.** ``POST /documents`` takes ``application/json`` or JSON lines
  (``application/x-ndjson``) only (415 otherwise): a browser sends neither from a form of another site
  without asking the server first (a CORS preflight this server never grants), nor ``DELETE``.
* **Token.** With a token, a write needs ``Authorization: Bearer TOKEN``; the comparison takes the same
  time whatever the token sent (:func:`hmac.compare_digest`), and the token is never logged.
* **Errors.** ``{"error": "<one line>"}`` with the status: 400 bad input, 401 no or a wrong token, 403
  read-only, 404 unknown id or path, 405 wrong method, 413 body over the cap, 415 wrong body type, 503
  stopping or busy (``Retry-After``), 500 anything unexpected (a traceback goes to the server's log only).
"""

from __future__ import annotations

import hmac
import logging

from ..errors import RLSIError
from .errors import BadRequest, RequestError, TooLarge, Unauthorized

__all__ = ["Guard", "error_handlers", "check_token", "read_body", "json_error", "one_line", "media_type",
           "DOCUMENT_TYPES", "SECURITY_HEADERS"]

log = logging.getLogger("rlsi.serve")

#: Media types of ``POST /documents``.
DOCUMENT_TYPES = ("application/json", "application/x-ndjson", "application/jsonl", "application/json-lines")
#: Headers on every answer.
SECURITY_HEADERS = ((b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer"),
                    (b"cross-origin-resource-policy", b"same-origin"))


def one_line(text, limit=500):
    """``text`` on one line, at most ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def json_error(status, message, headers=None):
    from starlette.responses import JSONResponse

    return JSONResponse({"error": one_line(message)}, status_code=status, headers=headers)


def _host(value):
    """The host name of a Host header (port and IPv6 brackets removed), lower case."""
    value = value.strip().lower()
    if value.startswith("["):
        return value[1:value.find("]")] if "]" in value else value
    return value.rsplit(":", 1)[0] if value.count(":") == 1 else value


class Guard:
    """The outermost ASGI middleware (see the module docstring): ``hosts`` the Host names answered (None:
    any)."""

    def __init__(self, app, hosts=None):
        self.app = app
        self.hosts = None if hosts is None else {h.strip("[]").lower() for h in hosts}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        if self.hosts is not None:
            host = next((v.decode("latin-1") for k, v in scope["headers"] if k == b"host"), "")
            if _host(host) not in self.hosts:
                shown = ", ".join(sorted(self.hosts))
                return await json_error(400, f"the Host header {host[:80]!r} is not this server's ({shown}): it "
                                             f"answers requests addressed to it only")(scope, receive, send)
        started = False

        async def send_with_headers(message):
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message["headers"] = list(message.get("headers", [])) + list(SECURITY_HEADERS)
            await send(message)

        try:
            await self.app(scope, receive, send_with_headers)
        except Exception as exc:  # noqa: BLE001 - a bug: one line to the client, the traceback to the log
            log.error("%s %s failed: %s", scope.get("method"), scope.get("path"), one_line(exc) or type(exc).__name__,
                      exc_info=True)
            if not started:
                await json_error(500, f"internal error ({type(exc).__name__}); the server logged it")(
                    scope, receive, send_with_headers)


def _validation_message(exc):
    errors = exc.errors()
    if not errors:  # pragma: no cover - FastAPI always lists one
        return "the request is not valid"
    e = errors[0]
    name = ".".join(str(p) for p in e.get("loc", ())[1:]) or "the request"
    got = e.get("input")
    shown = f" (got {one_line(repr(got), 60)})" if isinstance(got, (str, int, float)) else ""
    return f"{name}: {one_line(e.get('msg', 'not valid'))}{shown}"


def error_handlers():
    """``{exception class: handler}`` for the app: each answers ``{"error": ...}`` with its status."""
    from fastapi.exceptions import RequestValidationError
    from starlette.exceptions import HTTPException

    async def request_error(request, exc):
        return json_error(exc.status, str(exc), exc.headers or None)

    async def bad_input(request, exc):
        return json_error(400, str(exc))

    async def http_error(request, exc):
        if exc.status_code == 404:
            message = f"no such page: {request.url.path} (the API: /search, /documents/ID, /topics, /health)"
        elif exc.status_code == 405:
            allowed = (exc.headers or {}).get("Allow", "")
            message = f"{request.method} is not allowed on {request.url.path}" + (f" (use {allowed})" if allowed
                                                                                    else "")
        else:
            message = str(exc.detail)
        return json_error(exc.status_code, message, exc.headers)

    async def validation_error(request, exc):
        return json_error(400, _validation_message(exc))

    return {RequestError: request_error, RLSIError: bad_input, HTTPException: http_error,
            RequestValidationError: validation_error}


def check_token(request, token):
    """Unauthorized unless the request carries ``token`` (None: no token needed)."""
    if token is None:
        return
    sent = request.headers.get("authorization", "")
    scheme, _, value = sent.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise Unauthorized("this server takes writes with a token: send the header 'Authorization: Bearer TOKEN'")
    if not hmac.compare_digest(value.strip().encode("utf-8", "surrogateescape"), token.encode("utf-8")):
        raise Unauthorized("the token is not this server's")


async def read_body(request, limit):
    """The body of ``request``, refused with 413 as soon as it passes ``limit`` bytes (before reading it all
    when the Content-Length says so)."""
    declared = request.headers.get("content-length")
    if declared is not None:
        try:
            size = int(declared)
        except ValueError:
            raise BadRequest(f"the Content-Length {declared[:20]!r} is not a number") from None
        if size > limit:
            raise TooLarge(f"the body has {size:,} bytes; the limit is {limit:,} (--max-body-mb)")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise TooLarge(f"the body is over the limit of {limit:,} bytes (--max-body-mb)")
        chunks.append(chunk)
    return b"".join(chunks)


def media_type(request):
    return request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
