"""Items moved to the card ahead of use: one background thread, one long-lived copy stream, events both ways.

:class:`Prefetcher` runs ``make(i)`` (compact a mini-batch, copy a block of rows to the card) for item ``i + 1``
in a background thread while the caller uses item ``i``. On a card every item is made on the prefetcher's one
copy stream, which lives as long as the prefetcher (a matrix's row blocks for the whole fit, a stream of
mini-batches for the whole ``fit``):

* after an item is made, an event is recorded on the copy stream and the caller's stream waits for it before
  the item is used (no host synchronisation per item);
* when the caller has finished with an item (it asks for the next one), an event is recorded on the caller's
  stream, and the copy stream waits for it before it makes the item after next.

Why: CuPy's memory pool keeps freed memory per stream (the arena of the stream that allocated it). An item
made on a new stream each time leaves its memory in an arena no later stream reuses, so the pool grows over a
streamed fit; and memory freed into the copy stream's arena is handed out to the next copy at once, while
the caller's kernels may still read it. With one copy stream the pool holds about three items' worth, and
the release event orders each reuse after the caller's last read. On numpy the items are made one after the
other, in the caller's thread.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor


class Prefetcher:
    """Make items ahead of use on backend ``be`` (see the module docstring); ``streams_made`` counts the copy
    streams this prefetcher created (one at most)."""

    def __init__(self, be):
        self.be = be
        self._stream = None
        self.streams_made = 0

    def _copy_stream(self):
        if self._stream is None:
            self._stream = self.be.xp.cuda.Stream(non_blocking=True)
            self.streams_made += 1
        return self._stream

    def items(self, make, n):
        """``make(0), ..., make(n - 1)``, each made while the previous one is used (on a card)."""
        if not self.be.is_cuda:
            for i in range(n):
                yield make(i)
            return
        cuda = self.be.xp.cuda
        copy = self._copy_stream()
        caller = cuda.get_current_stream()

        def job(i, released):
            with copy:
                if released is not None:  # the memory the pool may hand out again is no longer read
                    copy.wait_event(released)
                item = make(i)
                ready = copy.record()
            return item, ready

        released = None
        with ThreadPoolExecutor(max_workers=1) as pool:
            nxt = pool.submit(job, 0, None) if n else None
            for i in range(n):
                item, ready = nxt.result()
                caller.wait_event(ready)
                nxt = pool.submit(job, i + 1, released) if i + 1 < n else None
                yield item
                item = None
                released = caller.record()  # after every use of item i the caller has queued
