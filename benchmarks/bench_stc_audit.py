"""Audit of STC against the paper, on the calibration subset of 20 Newsgroups (issue 12; stc_audit.md).

Four small experiments, each printing markdown lines (about 3 minutes in all at one thread):

* ``perplexity``: Eq. (19) of online STC (batch 64, one pass) for ε = 1e-4 / 1e-3 and the paper's / the
  released code's scales of γ, λ; the document-completion split by tokens and by terms; the ε floor
  (θ = 0), the share of held-out terms with θᵀβ_n < ε, Eq. (19) under uniform topics and under LDA's
  topics (the Appendix's bases), a per-token multinomial reading ``p(n) = θᵀβ_n / Σθ``; scikit-learn's
  online LDA (Eq. 18) on the same splits.
* ``coding``: is the per-document coding converged at ``max_sweeps=10``? (objective and θ against 200
  sweeps without the tolerance).
* ``dictionary``: one majorise–minimise step per coding pass (ours) against ten (problem (10) solved
  further with the word codes fixed, as the released code's L-BFGS loop does): objective and accuracy.
* ``accuracy``: batch STC (3 iterations) + the bench's SVM for ε = 1e-4 and 1e-3.
* ``step``: online STC with our MM blend against Eq. (12) as printed (raw mean gradient, several τ0) and
  the ℓ1-normalised projected step: accuracy, Eq. (19), sparsity, topic support.
* ``reading``: Eq. (19) with the held-out terms' word codes fitted to their held-out counts (θ fixed), or
  sampled from ``p(s | θ)`` (Eq. 3), instead of ``s_n = θ`` — other readings of "sample word codes for the
  other half".

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=src \\
        python benchmarks/bench_stc_audit.py perplexity coding dictionary accuracy reading
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from numba import njit  # noqa: E402
from scipy.special import gammaln, logsumexp, ndtr, ndtri  # noqa: E402
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402

from bench_stc import DATA, load, svm_on_codes  # noqa: E402
from bench_stc_calibrate import subset  # noqa: E402
from rlsi.models.stc import OnlineSTC, SparseTopicalCoding, kernels, lda_perplexity, split_counts, stc_perplexity  # noqa: E402,E501

RHO = 0.1  # the paper's ρ; ``--rho`` changes it for every experiment
SETTINGS = [("paper (γ = λ = 0.01), ε = 1e-4", dict(eps=1e-4)),
            ("paper (γ = λ = 0.01), ε = 1e-3", dict(eps=1e-3)),
            ("released scales (our γ = λ = 0.02), ε = 1e-3", dict(eps=1e-3, gamma=0.02, lam=0.02))]


def multinomial_reading(model, X1, X2):
    """Per-token perplexity of ``p(n | d) = θᵀβ_n / Σ_k θ_k`` (rows of β sum to 1): Eq. (18)'s form."""
    theta = model.transform(X1)
    rows = np.repeat(np.arange(X2.shape[0]), np.diff(X2.indptr))
    p = np.einsum("pk,kp->p", theta[rows], np.asarray(model.components_)[:, X2.indices])
    p = p / np.maximum(theta.sum(axis=1)[rows], 1e-300)
    return float(np.exp(-np.sum(X2.data * np.log(np.maximum(p, 1e-300))) / X2.data.sum()))


def perplexity(Xtr, Xte, out):
    splits = {u: split_counts(Xte, seed=0, unit=u) for u in ("tokens", "terms")}
    t = time.process_time()
    lda = LatentDirichletAllocation(60, learning_method="online", batch_size=64, max_iter=1, random_state=0).fit(Xtr)
    lda_p = {u: lda_perplexity(lda, *s) for u, s in splits.items()}
    out.append(f"scikit-learn online LDA (K = 60, batch 64, one pass; {time.process_time() - t:.0f} s CPU), Eq. (18): "
               f"token split **{lda_p['tokens']:.0f}**, term split {lda_p['terms']:.0f}.")
    out.append("")
    out.append("| online STC (batch 64, one pass) | Eq. 19, token split | Eq. 19, term split | floor θ = 0 (tokens) "
               "| held-out terms with θᵀβ < ε | Eq. 19 with uniform β | Eq. 19 with LDA's β | per-token multinomial "
               "| word-code sparsity | CPU s |")
    out.append("|---|---|---|---|---|---|---|---|---|---|")
    lda_beta = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    for name, kw in SETTINGS:
        t = time.process_time()
        m = OnlineSTC(60, rho=RHO, max_sweeps=10, batch_size=64, random_state=0, **kw).fit(Xtr)
        cpu = time.process_time() - t
        p_tok, info = stc_perplexity(m, *splits["tokens"], details=True)
        p_term = stc_perplexity(m, *splits["terms"])
        multi = multinomial_reading(m, *splits["tokens"])
        sparsity = m.word_code_sparsity(Xte)
        learned = m.components_
        m.components_ = np.full_like(learned, 1.0 / learned.shape[1])
        p_uni = stc_perplexity(m, *splits["tokens"])
        m.components_ = lda_beta
        p_lda_beta = stc_perplexity(m, *splits["tokens"])
        m.components_ = learned
        out.append(f"| {name} | **{p_tok:.0f}** | {p_term:.0f} | {info['floor']:.0f} | "
                   f"{100 * info['share_below_eps']:.1f} % | {p_uni:.0f} | {p_lda_beta:.0f} | {multi:.0f} | "
                   f"{sparsity:.3f} | {cpu:.0f} |")
        print(out[-1], flush=True)


def coding(Xtr, Xte, out):
    m = OnlineSTC(60, rho=RHO, max_sweeps=10, batch_size=64, random_state=0).fit(Xtr)
    beta = np.asarray(m.components_)
    out.append("| coding of the test documents | objective Σ_d f_d | mean sweeps | word-code sparsity |")
    out.append("|---|---|---|---|")
    thetas = {}
    for sweeps, tol in [(10, 1e-3), (200, 0.0)]:
        m.max_sweeps, m.tol = sweeps, tol
        theta = np.zeros((Xte.shape[0], 60))
        _, _, f, sw, zeros, _ = m._code(Xte, beta, theta, want_grad=False)
        thetas[sweeps] = theta
        out.append(f"| max_sweeps = {sweeps}, tol = {tol:g} | {f.sum():.7g} | {sw.mean():.1f} | "
                   f"{zeros.sum() / (Xte.nnz * 60):.4f} |")
    rel = np.linalg.norm(thetas[10] - thetas[200], axis=1) / np.maximum(np.linalg.norm(thetas[200], axis=1), 1e-12)
    out.append("")
    out.append(f"θ after 10 sweeps against 200: median relative row difference {np.median(rel):.1e}, "
               f"99th percentile {np.quantile(rel, 0.99):.1e}.")


@njit(cache=True)
def _codes_given_theta(indptr, indices, data, betaT, theta, eps, gamma, rho, sweeps):
    """Poisson means ``s_nᵀβ_n + ε`` of word codes fitted to the given counts with θ held fixed (the
    word-code updates of §3.3 only)."""
    K = betaT.shape[1]
    out = np.empty(data.shape[0])
    s = np.zeros(K)
    for d in range(indptr.shape[0] - 1):
        for p in range(indptr[d], indptr[d + 1]):
            row = betaT[indices[p]]
            s[:] = theta[d]
            recon = 0.0
            for k in range(K):
                recon += s[k] * row[k]
            for _ in range(sweeps):
                for k in range(K):
                    mu = max(recon - s[k] * row[k], 0.0) + eps
                    x = kernels.word_code_update(data[p], row[k], mu, gamma, gamma * theta[d, k], rho)
                    recon += (x - s[k]) * row[k]
                    s[k] = x
            out[p] = recon + eps
    return out


def sampled_codes_perplexity(model, X1, X2, n_samples=20, seed=0):
    """Eq. (19) with the held-out word codes *sampled* from ``p(s | θ)`` of Eq. (3) — per topic the normal
    N(θ_k, 1/γ) times the Laplace factor exp(−ρ s) on s ≥ 0, i.e. a normal with mean θ_k − ρ/γ truncated at
    0 — and ``p(w₂n)`` the Monte Carlo mean of Poisson(w₂n; sᵀβ_n + ε) over ``n_samples`` draws."""
    rng = np.random.default_rng(seed)
    theta = model.transform(X1)
    beta = np.asarray(model.components_)
    rows = np.repeat(np.arange(X2.shape[0]), np.diff(X2.indptr))
    sd = 1.0 / np.sqrt(model.gamma)
    total = 0.0
    for lo in range(0, X2.nnz, 5000):
        hi = min(lo + 5000, X2.nnz)
        mu = theta[rows[lo:hi]] - model.rho / model.gamma
        below = ndtr(-mu / sd)  # P(s < 0) under the untruncated normal
        u = below[None] + (1.0 - below[None]) * rng.random((n_samples,) + mu.shape)
        s = np.maximum(mu[None] + sd * ndtri(np.clip(u, 1e-300, 1.0 - 1e-16)), 0.0)
        mean = np.einsum("snk,kn->sn", s, beta[:, X2.indices[lo:hi]]) + model.eps
        w = X2.data[lo:hi]
        loglik = w * np.log(mean) - mean - gammaln(w + 1.0)
        total += float(np.sum(logsumexp(loglik, axis=0) - np.log(n_samples)))
    return float(np.exp(-total / X2.nnz))


def reading(Xtr, Xte, out):
    """Eq. (19) when the held-out terms' word codes are *fitted to their held-out counts* with θ fixed
    (a reading that uses w₂ — the paper says w₂ is not used for inference — kept as a bound)."""
    X1, X2 = split_counts(Xte, seed=0)
    out.append("| online STC (batch 64, one pass) | Eq. 19, s_n = θ (ours) | Eq. 19, s_n fitted to w₂ given θ "
               "| Eq. 19, s_n sampled from p(s \\| θ) (20 draws) |")
    out.append("|---|---|---|---|")
    for name, kw in SETTINGS:
        m = OnlineSTC(60, rho=RHO, max_sweeps=10, batch_size=64, random_state=0, **kw).fit(Xtr)
        theta = m.transform(X1)
        mean = _codes_given_theta(X2.indptr.astype(np.int64), X2.indices.astype(np.int64), X2.data,
                                  np.ascontiguousarray(np.asarray(m.components_).T), theta, float(m.eps),
                                  float(m.gamma), float(m.rho), 5)
        w = X2.data
        fitted = float(np.exp(-np.sum(w * np.log(mean) - mean - gammaln(w + 1.0)) / X2.nnz))
        out.append(f"| {name} | {stc_perplexity(m, X1, X2):.0f} | {fitted:.0f} | "
                   f"{sampled_codes_perplexity(m, X1, X2):.0f} |")
        print(out[-1], flush=True)
    T1, T2 = split_counts(Xte, seed=0, unit="terms")
    for eps in (1e-4, 1e-3):
        m.eps = eps
        out.append("")
        out.append(f"Term split, ε = {eps:g}: the floor (θ = 0) is {stc_perplexity(m, T1, T2, details=True)[1]['floor']:.0f}; "
                   f"held-out terms {T2.nnz} with mean count {T2.data.mean():.2f} (token split: {X2.nnz} terms, "
                   f"mean count {X2.data.mean():.2f}).")


class _MultiMM(SparseTopicalCoding):
    """Batch STC whose dictionary step repeats the majorise–minimise step ``n_mm`` times with the word
    codes of the pass fixed (B recomputed from the kept codes): problem (10) solved further."""

    n_mm = 1

    def _step(self, X, beta, G, B, S, cols):
        new = self._dictionary_step(beta, G, B, X.shape[0], 1.0, cols)
        A = G + B  # the code mass Σ_d s_dnk: does not depend on β
        P = sp.csr_matrix((np.ones(X.nnz), (np.arange(X.nnz), X.indices)), shape=(X.nnz, X.shape[1]))[:, cols]
        for _ in range(self.n_mm - 1):
            ratio = X.data / (np.einsum("pk,kp->p", S, new[:, X.indices]) + self.eps)
            Bn = np.asarray((P.T @ (S * ratio[:, None])).T)
            new = self._dictionary_step(new, A - Bn, Bn, X.shape[0], 1.0, cols)
        args = (X.indptr.astype(np.int64), X.indices.astype(np.int64), X.data)
        self.loss_.append(kernels.poisson_loss(*args, np.ascontiguousarray(new.T), S, float(self.eps)))
        return new


def dictionary(Xtr, ytr, Xte, yte, out):
    out.append("| MM steps per coding pass (batch, 3 passes, word codes kept) | ℓ(S, β) after each step | "
               "objective (4) after each pass | terms per topic (median) | accuracy (%) | CPU s |")
    out.append("|---|---|---|---|---|---|")
    for n_mm in (1, 10):
        t = time.process_time()
        m = _MultiMM(60, rho=RHO, max_sweeps=10, max_iter=3, keep_word_codes=True, random_state=0)
        m.n_mm, m.loss_ = n_mm, []
        m.fit(Xtr)
        acc, c = svm_on_codes(m.transform(Xtr), ytr, m.transform(Xte), yte)
        out.append(f"| {n_mm} | {', '.join(f'{v:,.0f}' for v in m.loss_)} | "
                   f"{', '.join(f'{v:,.0f}' for v in m.objective_)} | {np.median((m.components_ > 0).sum(1)):.0f} | "
                   f"{100 * acc:.1f} (C = {c:g}) | {time.process_time() - t:.0f} |")
        print(out[-1], flush=True)


def accuracy(Xtr, ytr, Xte, yte, out):
    out.append("| batch STC, 3 iterations | accuracy (%) | test word-code sparsity | CPU s |")
    out.append("|---|---|---|---|")
    for eps in (1e-4, 1e-3):
        t = time.process_time()
        m = SparseTopicalCoding(60, rho=RHO, max_sweeps=10, max_iter=3, eps=eps, random_state=0).fit(Xtr)
        acc, c = svm_on_codes(m.transform(Xtr), ytr, m.transform(Xte), yte)
        out.append(f"| ε = {eps:g} | {100 * acc:.1f} (C = {c:g}) | {m.word_code_sparsity(Xte):.3f} | "
                   f"{time.process_time() - t:.0f} |")
        print(out[-1], flush=True)


def step(Xtr, ytr, Xte, yte, out):
    """Online STC (batch 64, one pass): our default MM blend against Eq. (12) as printed (projected gradient
    of the mean mini-batch gradient, ``normalize_gradient=False``) for a few τ0, and the ℓ1-normalised
    projected step."""
    X1, X2 = split_counts(Xte, seed=0)
    out.append("| online STC, batch 64, one pass, ε = 1e-3 | accuracy (%) | Eq. 19 | test word-code sparsity "
               "| terms per topic (median) | CPU s |")
    out.append("|---|---|---|---|---|---|")
    variants = [("MM blend (default), τ0 = 1", dict())]
    variants += [(f"Eq. (12) as printed, τ0 = {t:g}", dict(dictionary_step="projected", normalize_gradient=False,
                                                         tau0=t)) for t in (1e-6, 1e-5, 1e-4)]
    variants += [("projected, ℓ1-normalised gradient, τ0 = 0.3", dict(dictionary_step="projected", tau0=0.3))]
    for name, kw in variants:
        t = time.process_time()
        m = OnlineSTC(60, rho=RHO, max_sweeps=10, batch_size=64, random_state=0, **kw).fit(Xtr)
        cpu = time.process_time() - t
        acc, c = svm_on_codes(m.transform(Xtr), ytr, m.transform(Xte), yte)
        out.append(f"| {name} | {100 * acc:.1f} (C = {c:g}) | {stc_perplexity(m, X1, X2):.0f} | "
                   f"{m.word_code_sparsity(Xte):.3f} | {np.median((np.asarray(m.components_) > 0).sum(1)):.0f} | "
                   f"{cpu:.0f} |")
        print(out[-1], flush=True)


def main(argv=None):
    global RHO
    ap = argparse.ArgumentParser()
    ap.add_argument("experiments", nargs="+", choices=["perplexity", "coding", "dictionary", "accuracy", "reading", "step"])
    ap.add_argument("--subset", default="3000,2000")
    ap.add_argument("--rho", type=float, default=RHO, help="ρ for every model (paper: 0.1)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    RHO = args.rho
    Xtr, ytr, Xte, yte = subset(*load(DATA), args.subset)
    out = [f"Command: `benchmarks/bench_stc_audit.py {' '.join(argv if argv is not None else sys.argv[1:])}`",
           "", f"Subset: {Xtr.shape[0]} training / {Xte.shape[0]} test documents, {Xtr.shape[1]} terms, "
           f"K = 60, ρ = {RHO:g}, max sweeps 10, one seed (0).", ""]
    for name in args.experiments:
        out.append(f"### {name}")
        out.append("")
        if name == "perplexity":
            perplexity(Xtr, Xte, out)
        elif name == "coding":
            coding(Xtr, Xte, out)
        elif name == "dictionary":
            dictionary(Xtr, ytr, Xte, yte, out)
        elif name == "reading":
            reading(Xtr, Xte, out)
        elif name == "step":
            step(Xtr, ytr, Xte, yte, out)
        else:
            accuracy(Xtr, ytr, Xte, yte, out)
        out.append("")
    text = "\n".join(out)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
