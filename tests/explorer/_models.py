"""A small labelled text corpus and fitted models of every kind rlsi saves, for the explorer's tests."""

import numpy as np

THEMES = {
    "fruit": "apple banana cherry mango orchard harvest juice pear".split(),
    "cars": "engine wheel brake gearbox diesel motor garage tyre".split(),
    "space": "rocket orbit launch satellite astronaut moon mission comet".split(),
    "music": "guitar drum melody concert violin chorus rhythm piano".split(),
}


def themed_docs(n=96, seed=0):
    """Documents as dicts (id, title, text, label): each mostly one theme, with a word of another."""
    rng = np.random.default_rng(seed)
    names = list(THEMES)
    docs = []
    for i in range(n):
        theme = names[i % len(names)]
        other = names[(i + 1 + i // len(names)) % len(names)]
        words = list(rng.choice(THEMES[theme], size=6, replace=False)) + [str(rng.choice(THEMES[other]))]
        docs.append({"id": f"d{i}", "title": f"{theme} note {i}", "text": " ".join(words), "label": theme})
    return docs


def as_class(model, cls):
    """``model``'s fitted state loaded as ``cls`` (a Dask learner of the same family): parameters and
    fitted values that ``cls`` keeps."""
    meta, arrays = model._to_state()
    known = set(cls().get_params(deep=False))
    meta = dict(meta, params={k: v for k, v in meta["params"].items() if k in known},
                fitted={k: v for k, v in meta["fitted"].items() if k in cls._state_scalars})
    return cls._from_state(meta, arrays)


def fit_kind(kind, X, counts, y):
    """A fitted model of ``kind`` (a class name) on the corpus (tf-idf X, word counts, labels y)."""
    from rlsi.models import (CNMF, CRLSI, LDA, LSI, NMF, PLSI, BatchRLSI, GroupNMF, GroupRLSI, MedSTC,
                             OnlineMedSTC, OnlineRLSI, OnlineSTC, SparseTopicalCoding)

    rlsi_kw = dict(lambda1=0.05, lambda2=1.0, random_state=0)
    if kind == "BatchRLSI":
        return BatchRLSI(4, max_iter=8, tol=1e-2, **rlsi_kw).fit(X)
    if kind == "OnlineRLSI":
        return OnlineRLSI(4, batch_size=32, **rlsi_kw).fit(X)
    if kind in ("DaskRLSI", "DaskOnlineRLSI"):
        from rlsi.distributed import DaskOnlineRLSI, DaskRLSI

        cls = DaskRLSI if kind == "DaskRLSI" else DaskOnlineRLSI
        return as_class(fit_kind(kind[4:] if kind == "DaskOnlineRLSI" else "BatchRLSI", X, counts, y), cls)
    if kind == "GroupRLSI":
        return GroupRLSI(2, 1, max_iter=8, tol=1e-2, random_state=0).fit(X, y)
    if kind == "CRLSI":
        return CRLSI(n_class_topics=1, max_iter=8, tol=1e-2, random_state=0).fit(X, y)
    if kind == "GroupNMF":
        return GroupNMF(2, 1, max_iter=20, random_state=0).fit(X, y)
    if kind == "CNMF":
        return CNMF(n_class_topics=1, max_iter=20, random_state=0).fit(X, y)
    if kind == "SparseTopicalCoding":
        return SparseTopicalCoding(4, max_iter=3, random_state=0).fit(counts)
    if kind == "OnlineSTC":
        return OnlineSTC(4, batch_size=32, random_state=0).fit(counts)
    if kind == "MedSTC":
        return MedSTC(4, max_iter=2, refit_C=0.5, random_state=0).fit(counts, y)
    if kind == "OnlineMedSTC":
        return OnlineMedSTC(4, batch_size=32, refit_C=0.5, random_state=0).fit(counts, y)
    if kind == "LSI":
        return LSI(4).fit(X)
    if kind == "NMF":
        return NMF(4, max_iter=100).fit(X)
    if kind == "LDA":
        return LDA(4, max_iter=10, random_state=0).fit(counts)
    if kind == "PLSI":
        return PLSI(4, max_iter=20, random_state=0).fit(counts)
    raise ValueError(kind)


KINDS = ["BatchRLSI", "OnlineRLSI", "DaskRLSI", "DaskOnlineRLSI", "GroupRLSI", "CRLSI", "GroupNMF", "CNMF",
         "SparseTopicalCoding", "OnlineSTC", "MedSTC", "OnlineMedSTC", "LSI", "NMF", "LDA", "PLSI"]
