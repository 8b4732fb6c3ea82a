"""The table of contents of rlsi's registries: which module provides each named part.

Two registries resolve names that come from outside the code — a class name read from a saved folder
(:func:`rlsi.io.load`) and a placement name given as a parameter (``BatchRLSI(placement="cuda")``,
:mod:`rlsi.models.placement`). The parts register themselves when their module is imported (``@register`` of
:mod:`rlsi.io`, ``register_placement`` of :mod:`rlsi.models.placement`); this module says which module that is,
so that a registry can import the one it needs by name. It imports nothing: the registries sit low in the
house (``rlsi.io``, ``rlsi.models``) and never import the packages above them; they import a provider from
this table on first use of its name. A test (``tests/structure``) holds the table equal to what the modules
register.
"""

from __future__ import annotations

import importlib

__all__ = ["DEVICES", "PERSISTED", "PLACEMENTS", "import_provider"]

#: Class name (as saved in a folder's manifest) -> the module that registers it with ``rlsi.io.register``.
PERSISTED = {
    "BatchRLSI": "rlsi.models.batch",
    "OnlineRLSI": "rlsi.models.online",
    "TopicStatistics": "rlsi.models.stats",
    "GroupRLSI": "rlsi.models.group",
    "CRLSI": "rlsi.models.group",
    "GroupNMF": "rlsi.models.group_nmf",
    "CNMF": "rlsi.models.group_nmf",
    "LSI": "rlsi.models.baselines",
    "LDA": "rlsi.models.baselines",
    "NMF": "rlsi.models.baselines",
    "PLSI": "rlsi.models.plsi",
    "SparseTopicalCoding": "rlsi.models.stc.batch",
    "OnlineSTC": "rlsi.models.stc.online",
    "MedSTC": "rlsi.models.stc.medstc",
    "OnlineMedSTC": "rlsi.models.stc.medstc",
    "DaskRLSI": "rlsi.distributed.learner",
    "DaskOnlineRLSI": "rlsi.distributed.online",
    "DistributedArrays": "rlsi.distributed.checkpoint",
    "CorpusMatrix": "rlsi.io.matrix",
    "TfidfVectorizer": "rlsi.text.vectorize",
    "StreamingTfidf": "rlsi.text.stream",
    "RidgeFolding": "rlsi.retrieval.topic",
    "Searcher": "rlsi.retrieval.searcher",
}

#: Placement name (the part before a ``:``) -> the module that registers it with ``register_placement``.
PLACEMENTS = {
    "local": "rlsi.models.local",
    "numpy": "rlsi.gpu.placement",
    "cuda": "rlsi.gpu.placement",
    "dask": "rlsi.distributed.placement",
}

#: The ``device`` values of the RLSI learners (strings, so that a model's parameters stay JSON): ``"cpu"`` is the
#: local placement, the others name a device placement (:mod:`rlsi.gpu`).
DEVICES = {
    "cpu": "the host path (numba kernels)",
    "cuda": "CuPy on the CUDA card, float32",
    "cuda:float32": "CuPy on the CUDA card, float32",
    "cuda:float64": "CuPy on the CUDA card, float64",
    "numpy": "the device code path on numpy/scipy, float32 (tests)",
    "numpy:float32": "the device code path on numpy/scipy, float32 (tests)",
    "numpy:float64": "the device code path on numpy/scipy, float64 (tests)",
}


def import_provider(table, name):
    """Import the module that provides ``name`` in ``table`` (a key of the table, never a module path given from
    outside); returns whether there is one. An optional part that cannot be imported raises its ImportError."""
    module = table.get(name) if isinstance(name, str) else None
    if module is None:
        return False
    importlib.import_module(module)
    return True
