"""The server's one writer: a thread that applies the write requests to the live index, a group at a time.

Requests (``POST /documents``, ``DELETE /documents/{id}``) are queued as jobs; each waits on a future that
the writer resolves **after** the commit that holds its change has returned, so an acknowledged document
is durable (the live index's commit fsyncs; the texts are stored first, in one SQLite transaction). The
writer takes every job waiting, up to :data:`~rlsi.serve.limits.GROUP_COMMIT_DOCS` documents, stages them
in order (a document is put by deleting its id and adding it: a put replaces, so a retried request is
harmless), stores their texts, and commits once: a group commit, one set of fsyncs for all of them.

* A job the index refuses (found while staging) fails alone: the uncommitted changes are rolled back and
  the jobs staged before it are staged again.
* A failed commit (a full disk) fails the whole group with 503; the index keeps its last generation and
  the uncommitted changes are rolled back: nothing of the group is acknowledged. (Its texts may stay in the
  store; they are shown only for documents the index holds, and the retry replaces them.)
* Between groups, a model version waiting to be re-folded (``update_model``, or a writer killed
  mid-re-fold) advances by one segment per step (:meth:`LiveIndex.refold`), so adds go on during a
  re-fold and every query uses one model version until the switch.
* More than :data:`~rlsi.serve.limits.MAX_QUEUED_WRITES` jobs waiting, or a writer that is stopping,
  answers 503 with ``Retry-After``.

:meth:`Writer.close` stops taking jobs, finishes those queued (their commits), and returns.
"""

from __future__ import annotations

import collections
import logging
import threading
from concurrent.futures import Future

from ..errors import RLSIError
from .errors import Unavailable
from .limits import GROUP_COMMIT_DOCS, MAX_QUEUED_WRITES

__all__ = ["Writer"]

log = logging.getLogger(__name__)


class _Job:
    __slots__ = ("kind", "ids", "texts", "call", "future")

    def __init__(self, kind, ids=(), texts=(), call=None):
        self.kind, self.ids, self.texts, self.call = kind, list(ids), list(texts), call
        self.future = Future()
        self.future.set_running_or_notify_cancel()  # running: a request that goes away cannot cancel it

    @property
    def size(self):
        return max(1, len(self.ids))


class Writer:
    """The writer thread of ``index`` (a :class:`~rlsi.retrieval.live.LiveIndex`) and its text ``store``."""

    def __init__(self, index, store, *, max_queued=MAX_QUEUED_WRITES, group_docs=GROUP_COMMIT_DOCS):
        self.index, self.store = index, store
        self.max_queued, self.group_docs = int(max_queued), int(group_docs)
        self._jobs = collections.deque()
        self._wake = threading.Condition()
        self._stopping = False
        self._refold_failed = False  # a re-fold step that failed is not retried by this writer
        self.commits = 0  # group commits made (for /health and the tests)
        self._thread = threading.Thread(target=self._run, name="rlsi-serve-writer", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ requests (any thread)
    def put(self, ids, texts):
        """Add or replace documents; the future gives ``{"added", "replaced", "generation"}``."""
        return self._submit(_Job("put", ids, texts))

    def delete(self, doc_id):
        """Delete one document; the future gives ``{"deleted": 0 or 1, "generation"}``."""
        return self._submit(_Job("delete", [doc_id]))

    def call(self, fn):
        """Run ``fn(index)`` on the writer thread, between groups (``update_model``, ``merge``); the future
        gives what it returns."""
        return self._submit(_Job("call", call=fn))

    def _submit(self, job):
        with self._wake:
            if self._stopping:
                raise Unavailable("the server is stopping: retry the request when it is back")
            if len(self._jobs) >= self.max_queued:
                raise Unavailable(f"{len(self._jobs)} write requests are waiting for the writer: retry in a moment")
            self._jobs.append(job)
            self._wake.notify()
        return job.future

    @property
    def queued(self):
        return len(self._jobs)

    # ------------------------------------------------------------------ the thread
    def _next(self):
        """The next group of jobs (a call job alone), or [] to advance a re-fold, or None to stop."""
        with self._wake:
            while not self._jobs and not self._stopping and not self._refolding():
                self._wake.wait()
            if not self._jobs:
                return None if self._stopping else []
            if self._jobs[0].kind == "call":
                return [self._jobs.popleft()]
            group, docs = [], 0
            while self._jobs and self._jobs[0].kind != "call" and (not group or docs + self._jobs[0].size
                                                                     <= self.group_docs):
                job = self._jobs.popleft()
                group.append(job)
                docs += job.size
            return group

    def _run(self):
        while True:
            group = self._next()
            if group is None:
                return
            try:
                if group and group[0].kind == "call":
                    self._call(group[0])
                elif group:
                    self._commit(group)
                if self._refolding():
                    try:
                        self.index.refold(max_segments=1)
                    except BaseException:
                        self._refold_failed = True
                        raise
            except BaseException as exc:  # noqa: BLE001 - the writer must outlive one bad step
                log.error("the writer failed: %s", " ".join(str(exc).split()) or type(exc).__name__, exc_info=True)
                for job in group or ():
                    if not job.future.done():
                        job.future.set_exception(exc if isinstance(exc, RLSIError) else
                                                 Unavailable(f"the write failed: {type(exc).__name__}"))

    def _refolding(self):
        return self.index.pending_version is not None and not self._refold_failed

    def _call(self, job):
        try:
            job.future.set_result(job.call(self.index))
        except BaseException as exc:  # noqa: BLE001 - handed to the request
            job.future.set_exception(exc)

    def _stage(self, job):
        """Apply one job to the uncommitted state; its result (less the generation) and its text changes."""
        if job.kind == "put":
            replaced = self.index.delete(job.ids)
            self.index.add(job.texts, job.ids)
            return {"added": len(job.ids) - replaced, "replaced": replaced}, list(zip(job.ids, job.texts))
        found = self.index.delete(job.ids)
        return {"deleted": found}, [(d, None) for d in job.ids] if found else []

    def _commit(self, group):
        staged = []  # (job, result, text changes)
        for job in group:
            try:
                staged.append((job, *self._stage(job)))
            except BaseException as exc:  # noqa: BLE001 - this job fails; the others go on
                job.future.set_exception(exc)
                self.index.rollback()  # it may have staged a part: stage the others again
                for other, _, _ in staged:
                    self._stage(other)
        if not staged:
            return
        try:
            changes = [c for _, _, cs in staged for c in cs]
            if changes:
                self.store.apply(changes)
            generation = self.index.commit()
        except BaseException as exc:  # noqa: BLE001 - nothing of the group is acknowledged
            self.index.rollback()
            log.error("a commit failed: %s", " ".join(str(exc).split()))
            failure = Unavailable(f"the commit failed ({' '.join(str(exc).split()) or type(exc).__name__}); "
                                  f"nothing of this request was acknowledged: retry it")
            for job, _, _ in staged:
                job.future.set_exception(failure)
            return
        self.commits += 1
        for job, result, _ in staged:
            job.future.set_result(dict(result, generation=generation))

    # ------------------------------------------------------------------ stopping
    def close(self):
        """Take no more jobs, finish the queued ones (committed), stop the thread. A re-fold in progress
        stops between segments (the next writer resumes it)."""
        with self._wake:
            self._stopping = True
            self._wake.notify_all()
        self._thread.join()
