"""``rlsi serve``: a live index as a search service — a JSON API and a search page, on FastAPI under uvicorn
(the optional ``serve`` extra: ``pip install "rlsi[serve]"``; the rest of rlsi never imports it).

* :mod:`~rlsi.serve.service` — :class:`SearchService`: the index folder opened for searching and writing,
  answers as JSON-ready dicts (no HTTP);
* :mod:`~rlsi.serve.writer` — the one writer thread: group commits, acknowledged after the commit;
  re-folds between them;
* :mod:`~rlsi.serve.texts` — the documents' texts beside the index (titles, snippets);
* :mod:`~rlsi.serve.documents` — the body of ``POST /documents``;
* :mod:`~rlsi.serve.app` — :func:`create_app`: the routes; :mod:`~rlsi.serve.http` — Host check, token,
  capped bodies, errors as JSON; :mod:`~rlsi.serve.page` — the search page;
* :mod:`~rlsi.serve.server` — :func:`serve`: uvicorn on a socket bound first, signals, shutdown;
  :mod:`~rlsi.serve.demo` — the demo index of ``rlsi serve`` without a folder;
* :mod:`~rlsi.serve.limits` — the caps and defaults, as named values.

See ``docs/serve.md``. Importing this package imports neither FastAPI nor uvicorn: :func:`create_app`
and :func:`serve` do when called.
"""

from .errors import RequestError
from .limits import Limits
from .service import SearchService

__all__ = ["SearchService", "Limits", "RequestError", "create_app", "serve"]


def create_app(service, **kwargs):
    """:func:`rlsi.serve.app.create_app`: the ASGI app of a :class:`SearchService`."""
    from .app import create_app as make

    return make(service, **kwargs)


def serve(path, **kwargs):
    """:func:`rlsi.serve.server.serve`: serve the index folder ``path`` until SIGTERM or Ctrl-C."""
    from .server import serve as run

    return run(path, **kwargs)
