"""What ``rlsi serve`` accepts and where it listens: one named value each, overridable by the options of
the command (``--max-k``, ``--max-query``, ``--max-batch``, ``--max-body-mb``) or by :class:`Limits`.

Each cap is generous for a person or a program that searches and feeds an index, and small enough that
one request cannot hold the server: a search of ``k`` = 100 with its snippets answers in milliseconds; a
batch of 1,000 documents of a few kilobytes each is one commit of a few hundred milliseconds; a body of
8 MiB is read into memory once (the documents are parsed from it).

This module imports nothing: the server, the command line (through copies in :mod:`rlsi.cli._choices`) and
the tests read the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Limits", "DEFAULT_HOST", "DEFAULT_PORT", "LOOPBACK_HOSTS", "MAX_K", "MAX_QUERY_CHARS",
           "MAX_BATCH_DOCS", "MAX_BODY_BYTES", "DEFAULT_K", "MAX_TOPIC_TERMS", "MAX_QUEUED_WRITES",
           "GROUP_COMMIT_DOCS", "REFRESH_SECONDS", "SHUTDOWN_GRACE_SECONDS"]

#: Where the server listens unless ``--host`` / ``--port`` say otherwise: this machine only.
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Hosts that reach this machine only (any other ``--host`` is warned about).
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")

#: Results of one search (``k``), and the default.
MAX_K = 100
DEFAULT_K = 10
#: Characters of one query (a query is a few words; a pasted page is refused).
MAX_QUERY_CHARS = 1_000
#: Documents of one ``POST /documents``.
MAX_BATCH_DOCS = 1_000
#: Bytes of one request body (8 MiB).
MAX_BODY_BYTES = 8 * 2**20
#: Terms per topic ``GET /topics`` lists at most.
MAX_TOPIC_TERMS = 50
#: Write requests waiting for the writer; more are answered 503 with ``Retry-After`` (back-pressure).
MAX_QUEUED_WRITES = 256
#: Documents the writer gathers from waiting requests into one commit (a group commit: one fsync for all).
GROUP_COMMIT_DOCS = 5_000
#: How often a read-only server looks for a newer commit of the index (seconds).
REFRESH_SECONDS = 1.0
#: Seconds a stopping server waits for requests in flight before it closes the index.
SHUTDOWN_GRACE_SECONDS = 30


@dataclass(frozen=True)
class Limits:
    """The caps of one server (see the module docstring); every value a positive integer."""

    max_k: int = MAX_K
    max_query_chars: int = MAX_QUERY_CHARS
    max_batch_docs: int = MAX_BATCH_DOCS
    max_body_bytes: int = MAX_BODY_BYTES

    def __post_init__(self):
        for name in ("max_k", "max_query_chars", "max_batch_docs", "max_body_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                from ..errors import RLSIError

                raise RLSIError(f"Limits({name}={value!r}): must be a positive integer")
