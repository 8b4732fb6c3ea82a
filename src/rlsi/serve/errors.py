"""The server's answers to a request it cannot serve: an :class:`~rlsi.errors.RLSIError` with the HTTP
status it means. The app turns each into ``{"error": "<one line>"}`` with that status; any other
:class:`~rlsi.errors.RLSIError` (bad input found by the library: an id, α out of range) is a 400."""

from __future__ import annotations

from ..errors import RLSIError

__all__ = ["RequestError", "BadRequest", "Unauthorized", "Forbidden", "NotFound", "TooLarge", "Unavailable"]


class RequestError(RLSIError):
    """A request the server refuses; ``status`` is its HTTP status, ``headers`` extra response headers."""

    status = 400
    headers: dict = {}


class BadRequest(RequestError):
    status = 400


class Unauthorized(RequestError):
    status = 401
    headers = {"WWW-Authenticate": "Bearer"}


class Forbidden(RequestError):
    status = 403


class NotFound(RequestError):
    status = 404


class TooLarge(RequestError):
    status = 413


class Unavailable(RequestError):
    """The server cannot take the request now (stopping, or too many writes waiting): retry later."""

    status = 503
    headers = {"Retry-After": "1"}
