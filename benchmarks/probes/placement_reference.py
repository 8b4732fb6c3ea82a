"""The fits of every learner on small data, saved from one source tree and compared with another: the check
that a refactoring of where the work runs leaves the numbers as they are.

Usage (from the repository root; each tree in its own process)::

    PYTHONPATH=OLD_TREE/src python benchmarks/probes/placement_reference.py save /tmp/ref.npz
    PYTHONPATH=src          python benchmarks/probes/placement_reference.py compare /tmp/ref.npz

``save`` fits BatchRLSI (sparse, dense and switching topics, ℓ2 and non-negative penalties, ℓ1 documents, the
random and given starts, the λ₁ search, screening off, small blocks, float32, threads, exact U-steps),
OnlineRLSI (ξ = 5 on the compact block, ξ = 1, ρ > 0, CSR topics, the scattered rows, re-seeding, a growing
vocabulary, float32 statistics, given topics), DaskRLSI and DaskOnlineRLSI on one and two workers, the group
models, the STC family and the numpy device path, and saves every fitted array (topics, document vectors,
objectives, statistics). ``compare`` fits the same in this tree and prints, per fit, ``identical`` or the
largest absolute and relative difference; it exits 1 when a fit differs by more than its tolerance (0: bit
for bit; 1e-10 relative for two Dask workers against one, whose sums run in another order).
Only the public estimator API is used, so that both trees run the same calls.
"""

import sys
import warnings

import numpy as np
import scipy.sparse as sp

warnings.simplefilter("ignore")
np.seterr(all="ignore")


def corpus(dtype=np.float64):
    from rlsi.datasets.synthetic import make_corpus

    c = make_corpus(500, 1200, 40, n_topics=12, topic_vocab=120, seed=3, norm="l2")
    return c.X.astype(dtype), c.counts


def _arrays(prefix, model, W=None):
    out = {}
    comp = model.components_
    out[prefix + "/components"] = comp.toarray() if sp.issparse(comp) else np.asarray(comp)
    for name in ("objective_", "lambda1_effective_", "n_iter_", "n_rows_screened_"):
        if hasattr(model, name):
            out[prefix + "/" + name] = np.asarray(getattr(model, name), dtype=np.float64)
    if W is not None:
        out[prefix + "/W"] = np.asarray(W, dtype=np.float64)
    stats = getattr(model, "stats_", None)  # the public attribute (on a device: copied from the card)
    if stats is not None:
        out[prefix + "/S"] = np.asarray(stats.S)
        out[prefix + "/R"] = np.asarray(stats.R, dtype=np.float64)
    return out


def batch_fits(X, X32):
    from rlsi.models import BatchRLSI

    base = dict(n_components=8, max_iter=6, tol=0.0, random_state=0)
    cases = {
        "batch/sparse": (dict(lambda1=0.3), X),
        "batch/dense": (dict(lambda1=0.3, topic_representation="dense"), X),
        "batch/auto_switch": (dict(lambda1=0.002), X),
        "batch/l2_topics": (dict(lambda1=5.0, topic_penalty="l2"), X),
        "batch/nonneg": (dict(lambda1=0.1, topic_penalty="nonneg_l1", doc_penalty="nonneg_l2"), X),
        "batch/l1_docs": (dict(lambda1=0.2, doc_penalty="l1", lambda2=0.05), X),
        "batch/random_init": (dict(lambda1=0.2, init="random"), X),
        "batch/target": (dict(target_terms_per_topic=30), X),
        "batch/exact_sweeps": (dict(lambda1=0.05, topic_sweeps=None), X),
        "batch/threads": (dict(lambda1=0.05, executor="threads"), X),
        "batch/float32": (dict(lambda1=0.05), X32),
        "batch/paper_scale": (dict(lambda1=0.4, lambda1_scale="paper", lambda2=1.0), X),
    }
    out = {}
    for name, (params, data) in cases.items():
        m = BatchRLSI(**base, **params)
        W = m.fit_transform(data)
        out.update(_arrays(name, m, W))
        out[name + "/fold"] = m.transform(data[:20])
    tuned = {"batch/no_screen": dict(screen=False), "batch/small_blocks": dict(block_entries=8 * 40),
             "batch/dense_copy": dict(sparse_work_share=0.0)}
    for name, changes in tuned.items():
        m = BatchRLSI(**base, lambda1=0.05).with_tuning(**changes)
        out.update(_arrays(name, m, m.fit_transform(X)))
    V0 = np.random.default_rng(5).standard_normal((X.shape[0], 8))
    m = BatchRLSI(**base, lambda1=0.2)
    out.update(_arrays("batch/V_init", m, m.fit_transform(X, V_init=V0)))
    return out


def online_fits(X, X32):
    from rlsi.models import BatchRLSI, OnlineRLSI

    base = dict(n_components=8, lambda1=0.05, batch_size=100, random_state=0)
    cases = {
        "online/default": dict(),
        "online/xi1": dict(n_inner=1),
        "online/rho": dict(rho=1.0, n_inner=3),
        "online/exact": dict(topic_sweeps=None, n_passes=2, shuffle=True),
        "online/reseed": dict(reseed_dead=True, lambda1=0.5),
        "online/l2": dict(topic_penalty="l2", lambda1=1.0),
        "online/stats32": dict(stats_dtype="float32"),
        "online/random_init": dict(init="random"),
    }
    out = {}
    for name, params in cases.items():
        m = OnlineRLSI(**{**base, **params}).fit(X)
        out.update(_arrays(name, m))
    for name, changes in {"online/csr_topics": dict(dense_max_bytes=0),
                          "online/scattered": dict(online_compact=False)}.items():
        m = OnlineRLSI(**base).with_tuning(**changes).fit(X)
        out.update(_arrays(name, m))
    m = OnlineRLSI(**base).fit(X32)
    out.update(_arrays("online/float32", m))
    # partial_fit on a growing vocabulary, with the vectors it returns
    m = OnlineRLSI(**base)
    Ws = [m.partial_fit_transform(X[a:a + 100, :400 + a]) for a in range(0, 500, 100)]
    out.update(_arrays("online/growing", m, np.concatenate([np.pad(w, ((0, 0), (0, 0))) for w in Ws])))
    init = BatchRLSI(8, lambda1=0.1, max_iter=3, random_state=0).fit(X)
    m = OnlineRLSI(**base, topic_init=init).fit(X)
    out.update(_arrays("online/topic_init", m))
    return out


def dask_fits(X):
    from rlsi.distributed import DaskOnlineRLSI, DaskRLSI, open_cluster

    out = {}
    for n in (1, 2):
        handle = open_cluster(n_workers=n)
        try:
            for name, params in {"sparse": dict(lambda1=0.3), "dense": dict(lambda1=0.002),
                                 "target": dict(target_terms_per_topic=30)}.items():
                m = DaskRLSI(8, max_iter=6, tol=0.0, random_state=0, client=handle.client, **params)
                out.update(_arrays(f"dask{n}/{name}", m, m.fit_transform(X)))
            m = DaskOnlineRLSI(8, lambda1=0.05, batch_size=100, random_state=0, client=handle.client).fit(X)
            out.update(_arrays(f"dask{n}/online", m))
        finally:
            handle.close()
    return out


def group_fits(X):
    from rlsi.models import CNMF, CRLSI, GroupNMF, GroupRLSI

    y = np.arange(X.shape[0]) % 3
    out = {}
    for name, m in {"group/grlsi": GroupRLSI(4, 2, max_iter=5, tol=0.0, random_state=0),
                    "group/crlsi": CRLSI(0, 3, max_iter=5, tol=0.0, random_state=0),
                    "group/gnmf": GroupNMF(4, 2, max_iter=8, tol=0.0, random_state=0),
                    "group/cnmf": CNMF(0, 3, max_iter=8, tol=0.0, random_state=0)}.items():
        W = m.fit_transform(X, y)
        out.update(_arrays(name, m, W))
        out[name + "/fold"] = m.transform(X[:20])
    return out


def stc_fits(counts):
    from rlsi.models.stc import MedSTC, OnlineMedSTC, OnlineSTC, SparseTopicalCoding

    C = counts.astype(np.float64)[:200]
    keep = np.flatnonzero(np.asarray(C.sum(axis=0)).ravel() > 0)
    C = sp.csr_matrix(C[:, keep])
    y = np.arange(C.shape[0]) % 3
    common = dict(random_state=0, dictionary_init="documents")
    fits = {
        "stc/mm": (SparseTopicalCoding(6, max_iter=3, dictionary_step="mm", **common), None),
        "stc/projected": (SparseTopicalCoding(6, max_iter=3, dictionary_step="projected", step_size=0.5,
                                              **common), None),
        "stc/lbfgs": (SparseTopicalCoding(6, max_iter=2, dictionary_step="lbfgs", keep_word_codes=True, **common),
                      None),
        "stc/collapsed": (SparseTopicalCoding(6, max_iter=3, collapsed=True, **common), None),
        "stc/medstc": (MedSTC(6, max_iter=3, **common), y),
        "stc/online_projected": (OnlineSTC(6, batch_size=50, **common), None),
        "stc/online_mm": (OnlineSTC(6, batch_size=50, dictionary_step="mm", **common), None),
        "stc/online_lbfgs": (OnlineSTC(6, batch_size=50, dictionary_step="lbfgs", **common), None),
        "stc/online_medstc": (OnlineMedSTC(6, batch_size=50, **common), y),
    }
    out = {}
    for name, (m, labels) in fits.items():
        m.fit(C, labels)
        out.update(_arrays(name, m))
        out[name + "/fold"] = m.transform(C[:20])
    return out


def device_fits(X):
    from rlsi.models import BatchRLSI, OnlineRLSI

    out = {}
    for device in ("numpy:float64", "numpy"):
        for name, params in {"sparse": dict(lambda1=0.3), "dense": dict(lambda1=0.002),
                             "target": dict(target_terms_per_topic=30)}.items():
            m = BatchRLSI(8, max_iter=6, tol=0.0, random_state=0, device=device, **params)
            out.update(_arrays(f"device-{device}/{name}", m, m.fit_transform(X)))
        m = OnlineRLSI(8, lambda1=0.05, batch_size=100, random_state=0, device=device).fit(X)
        out.update(_arrays(f"device-{device}/online", m))
        m = OnlineRLSI(8, lambda1=0.05, batch_size=100, random_state=0, device=device)
        W = np.concatenate([m.partial_fit_transform(X[a:a + 100]) for a in range(0, 300, 100)])
        out.update(_arrays(f"device-{device}/online_partial", m, W))
    return out


def run_all():
    X, counts = corpus()
    X32 = X.astype(np.float32)
    out = {}
    for part in (batch_fits(X, X32), online_fits(X, X32), group_fits(X), stc_fits(counts), device_fits(X),
                 dask_fits(X)):
        out.update(part)
    return out


def tolerance(key):
    """0 (bit for bit), or the relative tolerance of a fit whose sums run in another order."""
    return 1e-10 if key.startswith("dask2/") else 0.0


def compare(ref_path):
    ref = dict(np.load(ref_path))
    new = run_all()
    bad = 0
    names = sorted({k.rsplit("/", 1)[0] for k in ref} | {k.rsplit("/", 1)[0] for k in new})
    for name in names:
        keys = sorted(k for k in set(ref) | set(new) if k.rsplit("/", 1)[0] == name)
        worst, rel, missing = 0.0, 0.0, []
        for k in keys:
            if k not in ref or k not in new:
                missing.append(k.rsplit("/", 1)[1])
                continue
            a, b = ref[k], new[k]
            if a.shape != b.shape:
                missing.append(f"{k.rsplit('/', 1)[1]} shape {a.shape} != {b.shape}")
                continue
            d = float(np.max(np.abs(a - b), initial=0.0))
            worst = max(worst, d)
            rel = max(rel, d / max(float(np.max(np.abs(a), initial=0.0)), 1e-300))
        if missing:
            status = "MISSING " + ", ".join(missing)
            bad += 1
        elif worst == 0.0:
            status = "identical"
        else:
            status = f"max |diff| {worst:.3g} (relative {rel:.3g})"
            if rel > tolerance(keys[0]):
                status += "  DIFFERS"
                bad += 1
        print(f"{name:32s} {status}")
    print(f"{len(names) - bad} of {len(names)} fits as the reference")
    return 1 if bad else 0


if __name__ == "__main__":
    if sys.argv[1:2] in (["-h"], ["--help"]):  # no argparse: the usage is the docstring
        sys.exit(print(__doc__))
    if len(sys.argv) != 3 or sys.argv[1] not in ("save", "compare"):
        sys.exit(__doc__)
    if sys.argv[1] == "save":
        np.savez_compressed(sys.argv[2], **run_all())
        print(f"saved to {sys.argv[2]}")
    else:
        sys.exit(compare(sys.argv[2]))
