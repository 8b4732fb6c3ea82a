"""``rlsi serve [INDEX_OR_MODEL]``: the search engine as a service — a JSON API and a search page.

The server (:mod:`rlsi.serve`) runs FastAPI under uvicorn, the optional ``serve`` extra (``pip install
"rlsi[serve]"``); without it the command says so in one line. Without a folder it serves a demo: the MED
abstracts shipped with rlsi in a temporary live index (removed when the server stops).

This module only parses and prints; it imports nothing heavy before the command runs.
"""

from __future__ import annotations

import sys

from ._choices import SERVE_HOST, SERVE_LIMITS, SERVE_PORT


def _port(text):
    from ._bounds import integer

    return integer(text, 0, 65535, "TCP ports end at 65535")


def _count(text):
    from ._bounds import integer

    return integer(text, 1, 10**9, "a cap that large is no cap")


def register(sub):
    max_k, max_query, max_batch, max_body_mb = SERVE_LIMITS
    p = sub.add_parser("serve", help="serve a live index: a JSON API and a search page (needs rlsi[serve])",
                       description="Serve a live index (rlsi index MODEL --live --corpus FILE) over HTTP: a search "
                                   "page at /, the JSON API (/search, /documents, /topics, /health; /openapi.json "
                                   "describes it) and the topic explorer at /explore. Documents POSTed are "
                                   "acknowledged after their commit (durable). A model folder without documents "
                                   "becomes an empty live index that POST /documents fills. Without a folder: a "
                                   "demo of the MED abstracts shipped with rlsi. SIGTERM or Ctrl-C stops it "
                                   "cleanly; -v logs every request. Needs FastAPI and uvicorn: pip install "
                                   "\"rlsi[serve]\".")
    p.add_argument("index", nargs="?", metavar="INDEX_OR_MODEL",
                   help="live index or model folder (default: a demo of the MED abstracts, in a temporary folder)")
    p.add_argument("--host", default=SERVE_HOST,
                   help=f"address to listen on (default {SERVE_HOST}: this machine only; any other is warned about)")
    p.add_argument("--port", type=_port, default=SERVE_PORT, help=f"TCP port (default {SERVE_PORT}; 0: any free one)")
    p.add_argument("--read-only", action="store_true",
                   help="search only: no writes, no writer lock (another process may write the index; the server "
                        "follows its commits)")
    p.add_argument("--token-file", metavar="FILE",
                   help="writes need 'Authorization: Bearer TOKEN', TOKEN being this file's content")
    p.add_argument("--corpus", metavar="FILE",
                   help="the documents' texts (JSON lines), for the titles and snippets of documents indexed "
                        "without the server (rlsi index --live --corpus); the topic explorer shows them too")
    p.add_argument("--text-fields", default="title,text", help="JSON fields joined as a document's text (title,text)")
    g = p.add_argument_group("limits")
    for flag, default, what in (("--max-k", max_k, "results of one search"),
                                ("--max-query", max_query, "characters of one query"),
                                ("--max-batch", max_batch, "documents of one POST /documents"),
                                ("--max-body-mb", max_body_mb, "MiB of one request body")):
        g.add_argument(flag, type=_count, default=default, metavar="N", help=f"{what} (default {default:,})")
    p.set_defaults(func=run)


def _note(text, args):
    if not getattr(args, "quiet", False):
        print(f"rlsi: note: {text}", file=sys.stderr, flush=True)


def read_token(path):
    """The token in the file ``path`` (white space around it removed)."""
    import os
    import stat

    from ..errors import RLSIError

    try:
        with open(path, "rb") as f:
            raw = f.read(4097)
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise RLSIError(f"cannot read the token file {path}: {exc.strerror or exc}") from None
    try:
        token = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise RLSIError(f"the token file {path} is not UTF-8 text") from None
    if len(raw) > 4096:
        raise RLSIError(f"the token file {path} is over 4096 bytes: it should hold one token")
    if not token or any(c.isspace() for c in token):
        raise RLSIError(f"the token file {path} must hold one token (no white space inside), e.g. from "
                        f"'python -c \"import secrets; print(secrets.token_urlsafe(32))\"'")
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        print(f"rlsi: warning: the token file {path} can be read by other users (chmod 600 {path})",
              file=sys.stderr)
    return token


def run(args):
    from ..errors import RLSIError
    from ..serve.limits import Limits
    from ..serve.server import is_loopback, require_stack, serve
    from . import _common

    require_stack()
    if args.read_only and args.token_file:
        raise RLSIError("--read-only and --token-file: a read-only server takes no writes, so it needs no token")
    token = read_token(args.token_file) if args.token_file else None
    limits = Limits(max_k=args.max_k, max_query_chars=args.max_query, max_batch_docs=args.max_batch,
                    max_body_bytes=args.max_body_mb * 2**20)
    if not is_loopback(args.host):
        writes = "" if args.read_only or token else " and add and delete documents (--token-file or --read-only)"
        print(f"rlsi: warning: listening on {args.host}, beyond this machine: anyone who can reach it can search"
              f"{writes}", file=sys.stderr)

    def announce(service, url):
        snap = service.index.snapshot()
        facts = [f"{snap.n_docs:,} documents", f"generation {snap.generation}"]
        if snap.model_version is not None:
            facts.append(f"model version {snap.model_version}")
        if service.read_only:
            facts.append("read-only")
        if service.converted:
            _note(f"{service.path} had no documents: it is now an empty live index (POST /documents fills it)", args)
        print(f"serving {service.path} ({', '.join(facts)}) at {url} (Ctrl-C stops it)", flush=True)

    options = dict(host=args.host, port=args.port, read_only=args.read_only, token=token, corpus=args.corpus,
                   text_fields=_common.text_fields(args), limits=limits, access_log=args.verbose > 0,
                   announce=announce)
    if args.index is None:
        return _serve_demo(args, options)
    _note(f"opening {args.index}" + (f" and reading {args.corpus}" if args.corpus else ""), args)
    return _report(serve(args.index, **options), args)


def _serve_demo(args, options):
    import shutil
    import tempfile
    from pathlib import Path

    from ..serve.demo import DEMO_TOPICS, build_demo
    from ..serve.server import serve

    if options["read_only"]:
        from ..errors import RLSIError

        raise RLSIError("--read-only needs a folder to serve (the demo is built for this run)")
    folder = Path(tempfile.mkdtemp(prefix="rlsi-serve-demo-")) / "med"
    try:
        _note(f"no folder given: serving a demo, the MED abstracts and {DEMO_TOPICS} topics of batch RLSI, in "
              f"{folder} (removed when the server stops)", args)
        build_demo(folder, verbose=0 if getattr(args, "quiet", False) else 1)
        return _report(serve(folder, **options), args)
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


def _report(result, args):
    how = {"SIGINT": "Ctrl-C", "SIGTERM": "SIGTERM"}.get(result["signal"], "the server")
    _note(f"stopped by {how}: the index is closed at generation {result['generation']} ({result['documents']:,} "
          f"documents)", args)
    return 0
