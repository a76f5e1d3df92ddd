"""Statistical acceptance tests shared by the sims conformance checks (fixed
seeds, level 1e-4, so a conforming implementation passes deterministically)."""

from __future__ import annotations

import numpy as np

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

    counts = np.asarray(counts, dtype=float)
    expected = counts.sum() * np.asarray(pmf, dtype=float)
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

    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=1 - level,
                                                          method="exact")
    return float(ci.low), float(ci.high)
