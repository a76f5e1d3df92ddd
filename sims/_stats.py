"""Interval estimates used by the simulators: exact (Clopper-Pearson) binomial
intervals for success rates, normal intervals for means of bounded counts (with
an exact binomial bound when every trial gave the same value)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats
from vistalab.theory._validate import as_real

__all__ = ["clopper_pearson", "mean_from_counts", "mean_interval", "normal_quantile",
           "confidence_iv"]


def confidence_iv(confidence: object) -> float:
    return as_real("confidence", confidence, lo=0.0, hi=1.0, lo_open=True, hi_open=True,
                   fix="pass a level such as 0.95")


def normal_quantile(confidence: float) -> float:
    """Two-sided standard-normal quantile, e.g. 1.96 for 0.95."""
    return float(stats.norm.isf((1.0 - confidence) / 2.0))


def clopper_pearson(successes: int, trials: int, confidence: float) -> tuple[float, float]:
    """Exact two-sided binomial interval (inverts the binomial tail probabilities)."""
    alpha = 1.0 - confidence
    lo = 0.0 if successes == 0 else float(stats.beta.ppf(alpha / 2, successes,
                                                         trials - successes + 1))
    hi = 1.0 if successes == trials else float(stats.beta.isf(alpha / 2, successes + 1,
                                                              trials - successes))
    return lo, hi


def mean_from_counts(counts: np.ndarray) -> tuple[float, float]:
    """Mean and standard error of an integer variable from its value counts.

    Uses exact integer sums, so the result does not depend on the order in
    which trials were accumulated.
    """
    counts = np.asarray(counts, dtype=np.int64)
    trials = int(counts.sum())
    values = np.arange(counts.size, dtype=object)
    c_obj = counts.astype(object)
    s1 = int(np.dot(values, c_obj))
    s2 = int(np.dot(values * values, c_obj))
    mean = s1 / trials
    if trials < 2:
        return mean, math.inf
    # Var = (s2 - s1^2/T)/(T-1), with the numerator formed exactly in integers.
    num = s2 * trials - s1 * s1
    var = num / (trials * (trials - 1))
    return mean, math.sqrt(max(var, 0.0) / trials)


def mean_interval(mean: float, se: float, trials: int, confidence: float, *,
                  lo: float, hi: float) -> tuple[float, float]:
    """Two-sided interval for the mean of a variable bounded in ``[lo, hi]``.

    With a positive standard error: the normal interval ``mean +- z se``,
    clipped to ``[lo, hi]``. With a zero standard error (every trial gave the
    value ``mean``) the normal interval would be a point; then the exact
    Clopper-Pearson bound on the chance p of any other value (0 of ``trials``
    seen: ``p <= 1 - (alpha/2)^(1/trials)``) bounds the mean by
    ``[mean - (mean - lo) p, mean + (hi - mean) p]``, which has positive width.
    """
    if se > 0 or not math.isfinite(se):
        z = normal_quantile(confidence)
        return max(lo, mean - z * se), min(hi, mean + z * se)
    p = clopper_pearson(0, trials, confidence)[1]
    return mean - (mean - lo) * p, mean + (hi - mean) * p
