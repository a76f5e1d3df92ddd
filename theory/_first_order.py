"""First-order tightness of Theorem 1: ``R*(delta kappa)/nu -> 1 - delta``,
the exact second-order term, and a two-level interface that attains the
first order (proofs: theory/BEYOND.md, section 3 "First-order tightness of the
frontier"; the identity is its paragraph "The second-order term").

Notation: ``nu = log2((n-kappa)/kappa)``, ``R* = optimal_rate(n, kappa,
delta kappa)`` (bits), ``h2`` the binary entropy in bits, and on the Gibbs
law of that frontier point ``lam`` its inverse temperature,
``A = sum_{r<kappa} e^{-lam r}`` the head's partition function and
``w = (n-kappa) e^{-lam kappa} / Z`` the tail's total mass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

from vistalab._core import PlainRecord, to_plain

from ._bounds import _delta_iv, _log2_ratio, _makeroom_iv, bucket_ledger_for_mean_z
from ._errors import DomainError
from ._frontier import _lam_for_mean

__all__ = [
    "FirstOrderPoint",
    "FirstOrderBounds",
    "SecondOrderIdentity",
    "first_order_point",
    "second_order_identity",
    "second_order_approx",
    "two_level_rate",
    "first_order_bounds",
    "head_interface_bound",
]

_LN2 = math.log(2.0)


def _h2(p: float) -> float:
    if p <= 0.0 or p >= 1.0:
        return 0.0
    return -(p * math.log2(p)) - (1.0 - p) * math.log1p(-p) / _LN2


def _first_iv(n: Any, kappa: Any, delta: Any) -> tuple[int, int, float]:
    n, kappa = _makeroom_iv(n, kappa)
    return n, kappa, _delta_iv(delta)


class SecondOrderIdentity(NamedTuple):
    """Both sides of the second-order identity at ``E[Z] = delta kappa`` (bits).

    A named tuple, so ``rate, second, ident = second_order_identity(...)`` works.

    Attributes
    ----------
    rate : float
        ``R*(delta kappa)``, the Gibbs interface's rate.
    second_order : float
        ``R* - (1-delta) nu``.
    identity : float
        The exact expression for ``second_order`` (equal to it up to rounding).
    """

    rate: float
    second_order: float
    identity: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the fields.

        Returns
        -------
        dict
            One key per field (:func:`to_plain`: NaN and infinities become None).
        """
        out: dict[str, Any] = to_plain(self._asdict())
        return out


class FirstOrderBounds(NamedTuple):
    """Proved bounds on ``R*(delta kappa) - (1 - delta) nu`` (bits).

    A named tuple, so ``lo, hi = first_order_bounds(...)`` works.

    Attributes
    ----------
    lo : float
        ``-1`` (Theorem 1, C-ii).
    hi : float
        The better of the two two-level interfaces, minus ``(1-delta) nu``.
    """

    lo: float
    hi: float

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the fields.

        Returns
        -------
        dict
            One key per field (:func:`to_plain`: NaN and infinities become None).
        """
        out: dict[str, Any] = to_plain(self._asdict())
        return out


def second_order_identity(n: int, kappa: int, delta: float) -> SecondOrderIdentity:
    """``(rate, second_order, identity)`` at ``E[Z] = delta kappa`` (bits).

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    delta : float or array_like
        Target fraction: ``E[Z] <= delta kappa``, ``0 < delta < 1``.

    Returns
    -------
    SecondOrderIdentity
        ``rate = R*``, ``second_order`` and ``identity`` (a named tuple).

    ``second_order = R* - (1-delta) nu`` and ``identity`` is the exact
    expression

        log2(n/(n-kappa)) + (1-delta) log2(kappa/A) + (1-delta) log2(1-w) + delta log2 w,

    derived in theory/BEYOND.md, section 3 ("The second-order term: an exact
    identity"), from ``H = ln Z + lam D`` and
    ``T = (n-kappa) e^{-lam kappa} = w Z``; both are computed at 40+ digits
    from the same Gibbs root, so they agree to rounding.
    """
    n, kappa, delta = _first_iv(n, kappa, delta)
    fam, lam = _lam_for_mean(n, kappa, delta * kappa)
    c = fam.ctx
    ln_z, mean, _ = fam.state(lam)
    rate = (fam.ln_n - ln_z - lam * mean) / c.ln2
    nu = c.log(c.mpf(n - kappa) / kappa) / c.ln2
    ln_a = c.log(-c.expm1(-lam * kappa)) - c.log(-c.expm1(-lam))
    ln_t = fam.ln_tail - lam * kappa
    w = 1 / (1 + c.exp(ln_a - ln_t))
    one_w = 1 / (1 + c.exp(ln_t - ln_a))
    d = c.mpf(delta)
    ident = (
        c.log(c.mpf(n) / (n - kappa)) + (1 - d) * (c.log(kappa) - ln_a)
        + (1 - d) * c.log(one_w) + d * c.log(w)
    ) / c.ln2
    return SecondOrderIdentity(float(rate), float(rate - (1 - d) * nu), float(ident))


def second_order_approx(n: int, kappa: int, delta: float) -> float:
    """Closed-form approximation of ``R* - (1-delta) nu`` (bits).

    Sets ``w = delta`` in the identity (the head's share of the mean cost
    is at most ``1/Lambda``) and solves ``Lambda = ln((n-kappa)/A(Lambda/kappa))
    + ln((1-delta)/delta)`` for ``Lambda = lam kappa`` by fixed-point
    iteration; returns ``log2(n/(n-kappa)) + (1-delta) log2(kappa/A) - h2(delta)``.
    Limits: ``(1-delta) log2 kappa - h2(delta)`` at fixed kappa, and
    ``(1-delta) log2 ln((n-kappa)/kappa) - h2(delta) + o(1)`` when
    ``ln(n/kappa) = o(kappa)``.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    delta : float or array_like
        Target fraction: ``E[Z] <= delta kappa``, ``0 < delta < 1``.

    Returns
    -------
    float
        The approximation in bits.
    """
    n, kappa, delta = _first_iv(n, kappa, delta)
    base = math.log((n - kappa) / 1.0) + math.log((1.0 - delta) / delta)
    lam_k = max(base - math.log(kappa), 1.0)

    def ln_head(big: float) -> float:
        lam = big / kappa
        return math.log(-math.expm1(-big)) - math.log(-math.expm1(-lam))

    for _ in range(200):
        new = base - ln_head(lam_k)
        if new <= 0:
            new = 1e-6
        if abs(new - lam_k) < 1e-13 * max(1.0, new):
            lam_k = new
            break
        lam_k = new
    ln_a = ln_head(lam_k)
    return (
        math.log(n / (n - kappa)) / _LN2
        + (1.0 - delta) * (math.log(kappa) - ln_a) / _LN2
        - _h2(delta)
    )


def two_level_rate(n: int, kappa: int, delta: float, m: int = 1) -> float:
    """Rate (bits) of the two-level ranking interface reaching ``E[Z] = delta kappa``.

    The interface announces an order in which J* sits at a uniform rank in
    ``1..m`` with probability ``1 - d`` and at a uniform tail rank in
    ``kappa+1..n`` with probability ``d``, ``d = (delta kappa - (m-1)/2) /
    (kappa - (m-1)/2)`` (FRONTIER.md, achievability, for any rank law).
    Its rate is ``log2 n - h2(d) - (1-d) log2 m - d log2(n-kappa)``.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    delta : float or array_like
        Target fraction: ``E[Z] <= delta kappa``, ``0 < delta < 1``.
    m : int
        Head size, ``1 <= m <= min(kappa, 2 delta kappa + 1)``.

    Returns
    -------
    float
        The rate in bits.
    """
    n, kappa, delta = _first_iv(n, kappa, delta)
    from ._validate import as_int

    top = min(kappa, int(math.floor(2 * delta * kappa + 1)))
    m = as_int(
        "m", m, lo=1, hi=top, rule=f"must be an integer head size with 1 <= m <= {top}",
        context=f"kappa={kappa}, delta={delta}", fix="the head's mean cost (m-1)/2 must fit",
    )
    d = (delta * kappa - (m - 1) / 2.0) / (kappa - (m - 1) / 2.0)
    return (
        math.log2(n) - _h2(d) - (1.0 - d) * math.log2(m) - d * math.log2(n - kappa)
    )


def first_order_bounds(n: int, kappa: int, delta: float) -> FirstOrderBounds:
    """Proved bounds ``(lo, hi)`` on ``R*(delta kappa) - (1 - delta) nu`` (bits),
    returned as a :class:`FirstOrderBounds` named tuple.

    ``lo = -1`` (Theorem 1, C-ii). ``hi`` is the smaller rate, minus
    ``(1-delta) nu``, of two explicit two-level interfaces (each is an
    upper bound on R* because it reaches the target): m = 1, whose value is
    ``log2(n/(n-kappa)) + (1-delta) log2 kappa - h2(delta)``, and
    ``m = ceil(kappa/nu)``, whose value is at most ``2 + log2 nu`` when
    ``nu >= max(1, 1/(2 delta))`` (BEYOND.md). Hence
    ``|R*/nu - (1-delta)| <= (2 + log2 nu)/nu -> 0`` whenever nu -> inf.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    delta : float or array_like
        Target fraction: ``E[Z] <= delta kappa``, ``0 < delta < 1``.

    Returns
    -------
    FirstOrderBounds
        ``(lo, hi)`` in bits.
    """
    n, kappa, delta = _first_iv(n, kappa, delta)
    nu = _log2_ratio(n - kappa, kappa)
    hi = two_level_rate(n, kappa, delta, 1)
    m = math.ceil(kappa / nu)
    if 1 <= m <= min(kappa, math.floor(2 * delta * kappa + 1)):
        hi = min(hi, two_level_rate(n, kappa, delta, m))
    return FirstOrderBounds(lo=-1.0, hi=hi - (1.0 - delta) * nu)


def head_interface_bound(n: int, kappa: int, delta: float) -> float:
    """The analytic bound ``2 + log2 nu`` on ``R* - (1-delta) nu``.

    Infinite when ``nu < max(1, 1/(2 delta))``, outside its hypothesis.

    Parameters
    ----------
    n : int or array_like
        Blocks of the make-room instance.
    kappa : int or array_like
        Size ratio L/l of the bulky block.
    delta : float or array_like
        Target fraction: ``E[Z] <= delta kappa``, ``0 < delta < 1``.

    Returns
    -------
    float
        The bound in bits."""
    n, kappa, delta = _first_iv(n, kappa, delta)
    nu = _log2_ratio(n - kappa, kappa)
    return 2.0 + math.log2(nu) if nu >= max(1.0, 1.0 / (2.0 * delta)) else math.inf


@dataclass(frozen=True)
class FirstOrderPoint(PlainRecord):
    """Rates (bits) for ``E[Z] <= delta kappa`` at one (n, kappa), scaled by nu.

    Attributes
    ----------
    n, kappa : int
        Instance.
    delta : float
        Target fraction.
    nu : float
        ``log2((n-kappa)/kappa)``.
    exact_rate : float
        ``R*(delta kappa)`` (the Gibbs interface's rate).
    fano_rate : float
        ``(1-delta) nu - 1`` (necessary).
    bucket_rate : float
        Cheapest balanced bucket ledger reaching the target.
    two_level_rate : float
        Two-level interface with m = 1.
    second_order : float
        ``exact_rate - (1-delta) nu``.
    second_order_identity : float
        The exact identity (equal to ``second_order`` up to rounding).
    second_order_approx : float
        :func:`second_order_approx`.
    bound_lo, bound_hi : float
        :func:`first_order_bounds`.
    """

    n: int
    kappa: int
    delta: float
    nu: float
    exact_rate: float
    fano_rate: float
    bucket_rate: float
    two_level_rate: float
    second_order: float
    second_order_identity: float
    second_order_approx: float
    bound_lo: float
    bound_hi: float

    @property
    def exact_over_nu(self) -> float:
        """``exact_rate / nu``: the optimal rate R*(delta kappa) as a share of
        nu (it tends to 1 - delta, Theorem "Information--recovery tradeoff").
        """
        return self.exact_rate / self.nu

    @property
    def bucket_over_nu(self) -> float:
        """``bucket_rate / nu``: the cheapest balanced bucket ledger's rate as a
        share of nu.
        """
        return self.bucket_rate / self.nu


def first_order_point(
    n: int, kappa: int, delta: float, *, with_buckets: bool = True
) -> FirstOrderPoint:
    """All first-order quantities at ``(n, kappa, delta)``.

    Parameters
    ----------
    n : int
        Blocks (any size: the frontier is evaluated in mpmath).
    kappa : int
        Size ratio, ``2 <= kappa < n/2``.
    delta : float
        Target fraction in (0, 1).
    with_buckets : bool
        Compute the bucket ledger's rate (NaN otherwise).

    Returns
    -------
    FirstOrderPoint
    """
    n, kappa, delta = _first_iv(n, kappa, delta)
    if not isinstance(with_buckets, bool):
        raise DomainError("with_buckets", with_buckets, "must be True or False",
                          "pass with_buckets=False to skip the bucket construction")
    so = second_order_identity(n, kappa, delta)
    nu = _log2_ratio(n - kappa, kappa)
    bounds = first_order_bounds(n, kappa, delta)
    bucket = (
        bucket_ledger_for_mean_z(n, kappa, delta * kappa).rate_bits if with_buckets else math.nan
    )
    return FirstOrderPoint(
        n=n, kappa=kappa, delta=delta, nu=nu, exact_rate=so.rate,
        fano_rate=(1.0 - delta) * nu - 1.0, bucket_rate=bucket,
        two_level_rate=two_level_rate(n, kappa, delta, 1), second_order=so.second_order,
        second_order_identity=so.identity, second_order_approx=second_order_approx(n, kappa, delta),
        bound_lo=bounds.lo, bound_hi=bounds.hi,
    )
