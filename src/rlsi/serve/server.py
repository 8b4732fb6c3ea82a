"""Running the app: :func:`serve` binds the socket, opens the index, and runs uvicorn until SIGTERM or
Ctrl-C.

* **The socket first.** The address is bound before the index is opened, so a port in use or a host that
  does not resolve is one line at once (``--port 0``: any free port, the one taken is announced). Unless
  ``--host`` names another address the server listens on 127.0.0.1 and answers only requests addressed
  to a loopback name (:class:`rlsi.serve.http.Guard`); another host is warned about.
* **Ready.** The address is announced (``announce``) once uvicorn accepts connections.
* **Threads.** Searches run on the thread pool, several at once; BLAS runs one thread in each (set for the
  process from the main thread), so that concurrent searches do not start a BLAS team each on the same
  cores.
* **Stopping.** SIGTERM or Ctrl-C (uvicorn's handlers) stops taking connections, lets the requests in
  flight finish (up to :data:`~rlsi.serve.limits.SHUTDOWN_GRACE_SECONDS`), then the app's shutdown closes
  the service: queued writes are committed, the writer lock released. A second Ctrl-C stops at once; the
  index is still closed, and every document acknowledged was committed before its answer anyway. The
  signal is not raised again afterwards (uvicorn would): a stopped server is a server that did its job,
  status 0.
* **Killed** (``kill -9``, a power cut): every acknowledged document was committed before its answer
  (durable), the writer lock dies with the process, and the next start cleans what the writer left.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import socket
import threading

from ..errors import RLSIError
from .limits import DEFAULT_HOST, DEFAULT_PORT, LOOPBACK_HOSTS, SHUTDOWN_GRACE_SECONDS

__all__ = ["serve", "require_stack", "bind", "MAX_CONNECTIONS", "INSTALL_HINT"]

log = logging.getLogger("rlsi.serve")

#: Connections served at once; more are answered 503 by uvicorn.
MAX_CONNECTIONS = 1000
#: What to run when the serving stack is missing.
INSTALL_HINT = 'pip install "rlsi[serve]"'


def require_stack():
    """RLSIError (one line: how to install it) unless FastAPI and uvicorn import."""
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as exc:
        raise RLSIError(f"rlsi serve needs FastAPI and uvicorn ({exc.name or 'a module'} is missing): "
                        f"{INSTALL_HINT}") from None


def bind(host, port):
    """A TCP socket bound to ``host``:``port`` (RLSIError, one line, when it cannot be)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (socket.gaierror, UnicodeError) as exc:
        raise RLSIError(f"--host {host!r}: {getattr(exc, 'strerror', None) or exc}") from None
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart reuses the port at once
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise RLSIError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (--port: another one, or 0 for any "
                        f"free port)") from None
    return sock


def is_loopback(host):
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def _server_class():
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, announcing its address when ready and not raising the stopping signal again."""

        announce = None

        async def startup(self, sockets=None):
            await super().startup(sockets=sockets)
            if self.started and self.announce is not None:
                self.announce()

        @contextlib.contextmanager
        def capture_signals(self):
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            handled = (signal.SIGINT, signal.SIGTERM)
            original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
            try:
                yield
            finally:
                for sig, handler in original.items():
                    signal.signal(sig, handler)

    return Server


def serve(path, *, host=DEFAULT_HOST, port=DEFAULT_PORT, read_only=False, token=None, corpus=None,
          text_fields=("title", "text"), limits=None, access_log=False, announce=None):
    """Serve the index folder ``path`` until SIGTERM or Ctrl-C (see the module docstring); returns what
    stopped it and the index's last state: ``{"signal", "generation", "documents", "url"}``.

    announce : called with the service and the URL once the server accepts connections (the command prints
    it). The other parameters are :class:`~rlsi.serve.service.SearchService`'s and
    :func:`~rlsi.serve.app.create_app`'s.
    """
    require_stack()
    import uvicorn

    from .app import create_app
    from .service import SearchService

    sock = bind(host, port)
    try:
        service = SearchService(path, read_only=read_only, corpus=corpus, text_fields=text_fields, limits=limits)
    except BaseException:
        sock.close()
        raise
    try:
        bound = sock.getsockname()
        shown = f"[{bound[0]}]" if ":" in bound[0] else bound[0]
        url = f"http://{shown}:{bound[1]}/"
        app = create_app(service, token=token, hosts=LOOPBACK_HOSTS if is_loopback(host) else None)
        config = uvicorn.Config(app, log_config=None, log_level=None, access_log=access_log, lifespan="on",
                                limit_concurrency=MAX_CONNECTIONS, timeout_graceful_shutdown=SHUTDOWN_GRACE_SECONDS,
                                server_header=False, proxy_headers=False)
        server = _server_class()(config)
        if announce is not None:
            server.announce = lambda: announce(service, url)
        from ..kernels.blas_rows import one_blas_thread

        with one_blas_thread():  # the requests are the concurrency: a BLAS team per search would oversubscribe
            server.run(sockets=[sock])
        if not server.started:
            raise RLSIError("the server did not start (see the messages above)")
        stopped = [signal.Signals(s).name for s in getattr(server, "_captured_signals", [])]
        snap = service.index.snapshot()
        return {"signal": stopped[0] if stopped else None, "generation": snap.generation, "documents": snap.n_docs,
                "url": url}
    finally:
        service.close()  # the app's shutdown closed it already, unless the server failed before
        sock.close()
