"""Progress bars for long work (tqdm), silent unless asked; one helper for every learner and command.

The first step of a bar is not used for its time estimate: it carries one-off work (the numba kernels
compile on their first use in an installation, 20-40 s), and a rate measured on it would promise hours.
While the kernels compile, a bar's first appearance is preceded by one line saying so
(:func:`compile_notice`).

A bar over iterations that stop at convergence (``bound=True``) counts towards ``max_iter``, an upper
bound: it shows the iteration, the bound, the time spent and the time per iteration, but no time left,
which would be the time of ``max_iter`` iterations where a fit stops at a fraction of them.

``TQDM_DISABLE=1`` in the environment (tqdm's own switch) turns every bar off: the bars are then inert
objects and the work runs as with ``-q``.
"""

from __future__ import annotations

import os
import sys

_NOTICE = ("rlsi: compiling the numba kernels on first use (20-40 s, once: they are cached for later "
           "runs) ...")
_noticed = set()  # ids of the dispatchers announced (one notice per kernel and process)


def kernels_cold(dispatcher):
    """True when ``dispatcher`` (a numba function with ``cache=True``) will compile on its next call: not
    compiled in this process and no on-disk cache index for it."""
    if getattr(dispatcher, "signatures", None):
        return False
    try:
        index = dispatcher._cache._cache_file._index_path
    except AttributeError:  # not a cached numba dispatcher (or another numba layout): say nothing
        return False
    return not os.path.exists(index)


def compile_notice(dispatcher=None, file=None):
    """Print the one-line compilation notice when ``dispatcher`` (default: the lasso kernel of the RLSI
    learners) is cold, once per process; returns whether it printed."""
    if dispatcher is None:
        try:
            from .kernels.lasso import _lasso_cd_rows as dispatcher
        except ImportError:  # the kernels reorganised: no notice rather than a failed fit
            return False
    if id(dispatcher) in _noticed or not kernels_cold(dispatcher):
        return False
    _noticed.add(id(dispatcher))
    print(_NOTICE, file=sys.stderr if file is None else file, flush=True)
    return True


def _bar_class():
    from tqdm.auto import tqdm  # imported on demand: tqdm.auto probes for notebooks at import
    from tqdm.std import EMA

    class Bar(tqdm):
        """A tqdm bar that times from its second step on (the first includes one-off work)."""

        _restarted = False

        def update(self, n=1):
            if self._restarted or self.disable:  # a disabled bar (TQDM_DISABLE) has no clock to restart
                return super().update(n)
            self._restarted = True  # the clock (elapsed, rate, remaining) starts after the first step
            self.n = self.last_print_n = self.initial = self.n + n
            self.start_t = self.last_print_t = self._time()
            self._ema_dn, self._ema_dt = EMA(self.smoothing), EMA(self.smoothing)
            self.refresh()
            return True

    return Bar


#: The format of a bar whose total is an upper bound (iterations that stop at convergence): no time left.
BOUND_FORMAT = "{desc}: iteration {n_fmt} of at most {total_fmt} [{elapsed}, {rate_fmt}{postfix}]"


def progress_bar(total, desc, *, verbose=1, unit="it", bound=False, kernels=True, **kwargs):
    """A tqdm bar of ``total`` steps when ``verbose`` is truthy, else None (callers test for None).

    ``bound``: ``total`` is an upper bound (``max_iter`` of a fit that stops at convergence), shown without
    a time left (:data:`BOUND_FORMAT`). ``kernels``: the work runs the numba kernels (the compilation
    notice is printed first when they are cold)."""
    if not verbose:
        return None
    if kernels:
        compile_notice(file=kwargs.get("file"))
    if bound:
        kwargs.setdefault("bar_format", BOUND_FORMAT)
    return _bar_class()(total=total, desc=desc, unit=unit, leave=False, **kwargs)


def progress_iter(items, desc, *, verbose=1, unit="doc", **kwargs):
    """``items`` (a sized iterable) with a bar of its length when ``verbose`` is truthy (the documents a
    vectorizer reads: 20 Newsgroups takes 20 s to tokenize), else ``items`` itself."""
    if not verbose:
        return items
    return _iterate(items, progress_bar(len(items), desc, verbose=verbose, unit=unit, unit_scale=True, kernels=False,
                                        **kwargs))


def _iterate(items, bar):
    try:
        for item in items:
            yield item
            bar.update(1)
    finally:
        bar.close()
