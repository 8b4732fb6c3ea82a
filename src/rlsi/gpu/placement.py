"""The device placement: RLSI with its arrays on a card (``placement="cuda"``, ``device="cuda"``; ``"numpy"`` is the
same code on numpy/scipy, what the test suite runs).

:class:`DevicePlacement` implements the placement contract of :mod:`rlsi.models.placement` and registers itself
under ``"cuda"`` and ``"numpy"`` (``"cuda:float64"``, ``"numpy:float32"`` ...) when this package is imported;
the learners never import it. A batch fit is the one skeleton and the one start of every placement
(:mod:`rlsi.models.skeleton`, :mod:`rlsi.models.start`) over :class:`DeviceCorpus`, whose problem is
:class:`rlsi.gpu.batch.DeviceRLSIProblem` — the same problem (objective, initialisation, sweeps, screening) with
its arrays on the card; an online stream is :class:`rlsi.gpu.online.DeviceStream`; ``transform`` folds in on the
card (:func:`rlsi.gpu.batch.fold_in`).

Input: a scipy sparse matrix (moved to the card block by block, or streamed: its initialisation and λ₁ search
run on the host, as the local placement's, so a device fit starts from the host fit's W₀), or a CuPy sparse
matrix already on the card (kept there: the initialisation runs on the card too, with the draws of
``random_state`` made on the host by :mod:`rlsi.models.seeding`, and ``fit_transform`` returns W as a CuPy
array). The problem's ways of doing the work (Φ products, blocks, kernels, the memory budget, streaming) are
keyword arguments of :class:`rlsi.gpu.batch.DeviceRLSIProblem`, which the device script and the tests pass to
it directly.
"""

from __future__ import annotations

import numpy as np

from ..models.local import LocalCorpus
from ..models.placement import Placement, register_placement
from ..models.seeding import seed_topics
from ..models.spec import RLSISpec
from ..models.start import initial_doc_vectors as start_vectors
from .backend import resolve
from .batch import DeviceRLSIProblem, fold_in, gram_blocks, project
from .corpus import RowBlocks, on_card
from .memory import DOC_ROWS

__all__ = ["DeviceCorpus", "DevicePlacement", "initial_doc_vectors"]


class DeviceCorpus:
    """The documents of one batch fit on a device (a :class:`rlsi.models.placement.PlacedCorpus`): a host X,
    whose start is the local placement's (:class:`rlsi.models.local.LocalCorpus`), or a CuPy X on the card."""

    def __init__(self, be, X):
        self.be, self.X = be, X
        self.card = on_card(be, X)
        self.shape = X.shape
        self.dtype = be.dtype if self.card else X.dtype
        self.host = None if self.card else LocalCorpus(X)
        self._D = None

    def x_sqnorm(self):
        if self.host is not None:
            return self.host.x_sqnorm()
        return float(self.be.xp.square(self.X.data.astype(np.float64)).sum())

    def seed_topics(self, k, rng):
        if self.host is not None:
            return self.host.seed_topics(k, rng)
        be = self.be  # the draw on the host's row pointers, the rows scaled on the card
        return seed_topics(self.X, k, rng, be.dtype, xp=be.xp, sparse=be.sparse, indptr=np.asarray(be.to_host(self.X.indptr)))

    def project(self, U, spec):
        if self.host is not None:
            return self.host.project(U, spec)
        return project(self.be, RowBlocks(self.be, self.X, DOC_ROWS), U, spec.doc_pen, spec.lambda2,
                       max_iter=spec.inner_max_iter, tol=spec.inner_tol)

    def place(self, W):
        return W if self.host is not None else self.be.asarray(W)

    def search_rows(self, W, rows):
        if self.host is not None:
            return self.host.search_rows(W, rows)
        be = self.be
        if self._D is None:
            self._D = self.X.T.tocsr()
        W = be.asarray(W)
        R = np.asarray(be.to_host(self._D[be.xp.asarray(rows)] @ W), dtype=np.float64)
        return R, gram_blocks(be, W)

    def problem(self, W, lam, spec):
        return DeviceRLSIProblem.of_spec(self.be, self.X, W, lam, spec)

    def resume(self, spec):
        return None


def initial_doc_vectors(be, params, X, V_init=None):
    """W₀ of a fit of ``params`` (an :class:`rlsi.models.spec.RLSISpec`, or an RLSI estimator whose parameters are
    read) for X on backend ``be`` — on the card for a CuPy X (the draws made on the host), the host's for a host X
    (:func:`rlsi.models.start.initial_doc_vectors` on a :class:`DeviceCorpus`)."""
    spec = params if isinstance(params, RLSISpec) else RLSISpec.of(params)
    return start_vectors(spec, DeviceCorpus(be, X), V_init)


class DevicePlacement(Placement):
    """RLSI on a device (see the module docstring). ``device``: ``"cuda"``, ``"cuda:float64"``, ``"numpy"``, ...
    (:data:`rlsi.registry.DEVICES`), resolved to its backend (:func:`rlsi.gpu.backend.resolve`: one clear error
    without CuPy or a card) when the placement first needs it, or a :class:`rlsi.gpu.backend.Backend`;
    ``term_rows``: rows per block of an online stream's M x K passes (None: :data:`rlsi.gpu.memory.TERM_ROWS`)."""

    name = "device"

    def __init__(self, device, *, term_rows=None):
        self.device = device  # a name, or a Backend object (tests: a stand-in card)
        self.term_rows = term_rows
        self._be = None

    @property
    def be(self):
        if self._be is None:
            self._be = resolve(self.device)
        return self._be

    @property
    def saved_as(self):
        return self.device if isinstance(self.device, str) else f"{self.be.name}:{self.be.dtype.name}"

    @property
    def stream_key(self):
        return f"{self.be.name}:{self.be.dtype.name}"

    def check_input(self, X, check):
        """A CuPy sparse matrix stays on the card (CSR); anything else is checked as on the host."""
        return X.tocsr() if on_card(self.be, X) else check(X)

    def check_stream_input(self, X, check):
        """A stream on the card is read through its host copy (mini-batches are compacted on the host)."""
        return check(self.be.to_host(X) if self.be.holds(X) else X)

    def corpus(self, X, spec, executor):
        return DeviceCorpus(self.be, X)

    def stream(self, spec, stats, topics=None, *, n_inner=1, first=None):
        from .online import DeviceStream

        from .memory import TERM_ROWS

        return DeviceStream.open(self.be, spec, stats, topics, n_inner=n_inner, first=first,
                                 term_rows=self.term_rows or TERM_ROWS)

    def fold_in(self, X, topics, *, penalty, lam, max_iter, tol, n_jobs=None):
        return fold_in(self.be, X, topics=topics, penalty=penalty, lam=lam, max_iter=max_iter, tol=tol)

    def __repr__(self):
        return f"DevicePlacement({self.device!r})"


def _device(name, **options):
    return DevicePlacement(name)


register_placement("cuda", _device)
register_placement("numpy", _device)
