"""Statistical acceptance tests shared by the sims conformance checks (fixed
seeds, level 1e-4, so a conforming implementation passes deterministically)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from vistalab._core import DomainError

__all__ = ["LEVEL", "chi2_fits", "binomial_interval"]

#: Significance level of every statistical check of the kit.
LEVEL = 1e-4


def chi2_fits(counts: np.ndarray, pmf: np.ndarray, level: float = LEVEL) -> bool:
    """Pearson goodness of fit of ``counts`` to ``pmf`` at ``level``.

    Cells whose expectation is below 5 are pooled; an observed outcome of
    probability 0 fails.

    Parameters
    ----------
    counts : numpy.ndarray
        Observed counts per outcome.
    pmf : numpy.ndarray
        The hypothesised probabilities, same shape, summing to 1.
    level : float
        The test's size, in (0, 1) (default 1e-4).

    Returns
    -------
    bool
        True unless the chi-squared test rejects the fit at ``level``."""
    from scipy import stats

    _level_iv(level)
    counts = _finite_array("counts", counts)
    pmf = _finite_array("pmf", pmf)
    if counts.ndim != 1 or pmf.shape != counts.shape or counts.size == 0 or np.any(counts < 0) \
            or np.any(pmf < 0):
        raise DomainError("pmf", pmf, f"must be a non-negative 1-D array with the shape of "
                          f"counts {counts.shape}, and counts non-negative",
                          "pass one probability per count")
    expected = counts.sum() * pmf
    if np.any((expected <= 0) & (counts > 0)):
        return False  # an outcome the law calls impossible was observed
    keep = expected >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs[-2] += obs[-1]
        exp[-2] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    if obs.size < 2:
        return bool(np.all(obs == exp.round()))
    stat = float(((obs - exp) ** 2 / exp).sum())
    return stat <= stats.chi2.isf(level, obs.size - 1)


def binomial_interval(successes: int, trials: int, level: float = LEVEL) -> tuple[float, float]:
    """Exact (Clopper-Pearson) interval for a success probability at confidence 1 - level.

    Parameters
    ----------
    successes : int
        Successes observed, ``0 <= successes <= trials``.
    trials : int
        Trials, at least 1.
    level : float
        The probability, in (0, 1), that the interval misses the true value
        (default 1e-4, the suite's level for statistical tests).

    Returns
    -------
    low, high : float
        The interval's ends, within [0, 1].

    Examples
    --------
    >>> low, high = binomial_interval(50, 100, level=0.05)
    >>> round(low, 3), round(high, 3)
    (0.398, 0.602)
    """
    from scipy import stats

    _level_iv(level)
    for name, value in (("trials", trials), ("successes", successes)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise DomainError(name, value, "must be an integer", f"pass {name} as an int")
    if not 1 <= trials < 2**53:
        raise DomainError("trials", trials, "must be an integer with 1 <= trials < 2**53",
                          "pass a positive count")
    if not 0 <= successes <= trials:
        raise DomainError("successes", successes, "must satisfy 0 <= successes <= trials",
                          context=f"trials={trials}", fix="pass a count of successes")

    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=1 - level,
                                                          method="exact")
    return float(ci.low), float(ci.high)


def _level_iv(level: Any) -> None:
    if isinstance(level, bool) or not isinstance(level, numbers.Real) \
            or not (0 < float(level) < 1):
        raise DomainError("level", level, "must be a number with 0 < level < 1 (the "
                          "significance level)", "pass e.g. level=1e-4")


def _finite_array(name: str, value: Any) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise DomainError(name, value, "must be an array of numbers",
                          "pass a 1-D numpy array") from None
    if not np.all(np.isfinite(arr)):
        raise DomainError(name, value, "must hold finite numbers (no NaN or inf)",
                          "drop or fix the non-finite entries")
    return arr
