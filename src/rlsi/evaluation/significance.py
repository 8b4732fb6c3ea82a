"""Paired significance tests over per-query scores (is system A better than system B?).

Both tests work on the per-query differences ``d_i = a_i - b_i`` (i = 1..n, aligned by query).

* :func:`paired_ttest` -- Student's paired t-test, the test of the paper (one-sided, p < 0.05):
  ``t = mean(d) / (sd(d) / sqrt(n))`` with ``sd`` the sample standard deviation (ddof=1), ``n - 1``
  degrees of freedom; ``p = P(T >= t)`` for ``alternative="greater"`` (H1: A > B), ``P(T <= t)`` for
  ``"less"``, ``2 P(T >= |t|)`` for ``"two-sided"``. Same values as ``scipy.stats.ttest_rel``, except for
  all-zero differences, where scipy returns NaN: we return ``t = 0, p = 1`` (no evidence of any
  difference -- the conservative choice). Constant non-zero differences give ``t = +-inf`` as in scipy.
* :func:`randomization_test` -- paired sign-flip permutation test with statistic ``mean(d)``: under H0
  each difference is as likely to have either sign. With ``2**n <= n_resamples`` all sign vectors are
  enumerated (exact p-value); otherwise ``p = (1 + #{resampled statistic >= observed}) / (1 + n_resamples)``
  (for ``"greater"``; ``<=`` for ``"less"``, absolute values for ``"two-sided"``), which is never 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .._validation import check_choice, check_number, check_random_state
from ..errors import RLSIError

__all__ = ["paired_ttest", "randomization_test", "compare", "Comparison"]

_ALTERNATIVES = ("greater", "less", "two-sided")


def _differences(a, b):
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.shape != b.shape:
        raise RLSIError(f"paired test needs as many values for A as for B, got {a.size} and {b.size}")
    if a.size < 2:
        raise RLSIError(f"paired test needs at least 2 paired values, got {a.size}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise RLSIError("paired test values contain NaN or infinite values")
    return a - b


def paired_ttest(a, b, alternative: str = "greater") -> tuple[float, float]:
    """One-sided (by default) paired t-test of H1: mean(a) > mean(b); returns ``(t, p)``."""
    check_choice("alternative", alternative, _ALTERNATIVES)
    d = _differences(a, b)
    n = d.size
    mean = d.mean()
    sd = d.std(ddof=1)
    if sd == 0.0:
        if mean == 0.0:
            return 0.0, 1.0
        t = np.inf if mean > 0 else -np.inf
    else:
        t = mean / (sd / np.sqrt(n))
    df = n - 1
    if alternative == "greater":
        p = stats.t.sf(t, df)
    elif alternative == "less":
        p = stats.t.cdf(t, df)
    else:
        p = min(1.0, 2.0 * stats.t.sf(abs(t), df))
    return float(t), float(p)


def randomization_test(a, b, n_resamples: int = 10000, random_state=0, alternative: str = "greater"
                       ) -> tuple[float, float]:
    """Paired sign-flip randomization test of H1: A > B; returns ``(mean(a - b), p)``."""
    check_choice("alternative", alternative, _ALTERNATIVES)
    check_number("n_resamples", n_resamples, low=1, integer=True)
    d = _differences(a, b)
    n = d.size
    observed = float(d.mean())
    # Tolerance so that resamples equal to the observed statistic up to rounding count as "as extreme".
    tol = 1e-9 * float(np.abs(d).sum()) / n
    exact = n < 63 and 2 ** n <= n_resamples
    if exact:
        total = 2 ** n
    else:
        rng = check_random_state(random_state)
        total = n_resamples
    block = max(1, 2 ** 22 // n)  # resamples per block: bounded memory
    count = 0
    for start in range(0, total, block):
        stop = min(total, start + block)
        if exact:  # bit j of the resample index decides the sign of d_j
            bits = (np.arange(start, stop, dtype=np.int64)[:, None] >> np.arange(n, dtype=np.int64)) & 1
            signs = 1.0 - 2.0 * bits
        else:
            signs = rng.integers(0, 2, size=(stop - start, n), dtype=np.int8) * 2.0 - 1.0
        resampled = signs @ d / n
        if alternative == "greater":
            count += int(np.count_nonzero(resampled >= observed - tol))
        elif alternative == "less":
            count += int(np.count_nonzero(resampled <= observed + tol))
        else:
            count += int(np.count_nonzero(np.abs(resampled) >= abs(observed) - tol))
    p = count / total if exact else (count + 1) / (total + 1)
    return observed, float(min(1.0, p))


@dataclass(frozen=True)
class Comparison:
    """Result of :func:`compare` for one metric.

    ``statistic`` is t for the t-test, mean(a - b) for the randomization test.
    """

    n: int
    mean_a: float
    mean_b: float
    statistic: float
    p_value: float

    @property
    def difference(self) -> float:
        return self.mean_a - self.mean_b

    def significant(self, level: float = 0.05) -> bool:
        """True when the p-value is below ``level``."""
        return self.p_value < level


def compare(per_query_a: Mapping, per_query_b: Mapping, test: str = "ttest", alternative: str = "greater",
            **options):
    """Test A against B over per-query scores aligned by query id.

    ``per_query_a``/``per_query_b`` are ``{qid: value}`` (returns one :class:`Comparison`) or
    :func:`~rlsi.evaluation.metrics.evaluate` results ``{metric: {qid: value}}`` (returns
    ``{metric: Comparison}`` for the metrics of A). Both must cover the same queries. ``test`` is
    ``"ttest"`` or ``"randomization"``; ``options`` go to :func:`randomization_test`.
    """
    check_choice("test", test, ("ttest", "randomization"))
    nested = [isinstance(v, Mapping) for v in (*per_query_a.values(), *per_query_b.values())]
    if nested and all(nested):
        missing = [m for m in per_query_a if m not in per_query_b]
        if missing:
            raise RLSIError(f"metric {missing[0]!r} of A is missing from B")
        return {m: compare(per_query_a[m], per_query_b[m], test, alternative, **options) for m in per_query_a}
    if any(nested):
        raise RLSIError("compare needs two {qid: value} dicts or two {metric: {qid: value}} dicts")
    only_a = [q for q in per_query_a if q not in per_query_b]
    only_b = [q for q in per_query_b if q not in per_query_a]
    if only_a or only_b:
        examples = ", ".join(repr(q) for q in (only_a + only_b)[:5])
        raise RLSIError(f"A and B are not scored on the same queries: {len(only_a)} only in A, "
                        f"{len(only_b)} only in B (e.g. {examples})")
    qids = list(per_query_a)
    a = np.array([per_query_a[q] for q in qids], dtype=np.float64)
    b = np.array([per_query_b[q] for q in qids], dtype=np.float64)
    if test == "ttest":
        statistic, p = paired_ttest(a, b, alternative=alternative)
    else:
        statistic, p = randomization_test(a, b, alternative=alternative, **options)
    return Comparison(len(qids), float(a.mean()), float(b.mean()), statistic, p)
