"""What a claim's check receives (:class:`CheckContext`): the paper's data, a random generator
seeded from the claim's id, a run-wide cache and theory's proof-step certificates."""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
from vistalab.theory import DomainError, UnknownNameError, VistaLabError

from vistalab._core import child_seq

from ._data import (
    PaperTable,
    Quote,
    Statement,
    load_quotes,
    load_statements,
    load_table,
)

__all__ = ["DEFAULT_ENTROPY", "Unavailable", "CheckContext"]

#: Root seed entropy of the Monte Carlo checks, so a run is reproducible by default.
DEFAULT_ENTROPY = 0x5EED_0715_2026


class Unavailable(VistaLabError):
    """Raised inside a check when something it needs (a theory/sims function, run logs) is
    not available; the runner turns it into status ``not_checkable`` with this reason."""


class CheckContext:
    """What a check function receives: cached access to the paper's data, a per-claim
    random generator, and theory/'s proof-step certificates.

    Parameters
    ----------
    data_dir : path
        Folder of the paper's data files.
    seed_seq : numpy.random.SeedSequence
        Root of the Monte Carlo seeds; each claim derives its own child from its id, so a
        claim's numbers do not depend on which other claims run.
    shared : dict
        A cache shared by every claim of one run (parsed tables, certificates).
    certificates : object
        theory/'s proof-step certificates: True to compute them on first use, or the
        verify stage's report, so the proof steps run once per ``reproduce``.

    Attributes
    ----------
    claim_id : str
        The claim being checked (set by the runner).
    """

    def __init__(
        self,
        data_dir: Path,
        seed_seq: np.random.SeedSequence,
        shared: dict[str, Any],
        *,
        certificates: Any = True,
    ):
        self.data_dir = data_dir
        self._seed_seq = seed_seq
        self._shared = shared
        self._certificates = certificates
        self.claim_id = ""

    def table(self, key: str) -> PaperTable:
        """A table of the paper (see :func:`paper_checks.load_table`), parsed once
        per run.

        Parameters
        ----------
        key : str
            The table's key.

        Returns
        -------
        PaperTable
            The table.

        Raises
        ------
        UnknownNameError
            If the paper has no table ``key``.
        """
        cache = self._shared.setdefault("tables", {})
        if key not in cache:
            cache[key] = load_table(key, data_dir=self.data_dir)
        return cache[key]

    def quote(self, quote_id: str) -> Quote:
        """A sentence of the text with its numbers (see :func:`paper_checks.load_quote`).

        Parameters
        ----------
        quote_id : str
            The quote's id.

        Returns
        -------
        Quote
            The quote.

        Raises
        ------
        UnknownNameError
            If there is no such quote.
        """
        if "quotes" not in self._shared:
            self._shared["quotes"] = load_quotes(data_dir=self.data_dir)
        quotes = self._shared["quotes"]
        if quote_id not in quotes:
            raise UnknownNameError("text quote", quote_id, quotes)
        return quotes[quote_id]

    def statement(self, statement_id: str) -> Statement:
        """A theoretical statement as formulas (see :func:`paper_checks.load_statement`).

        Parameters
        ----------
        statement_id : str
            The statement's id.

        Returns
        -------
        Statement
            The statement.

        Raises
        ------
        UnknownNameError
            If there is no such statement.
        """
        if "statements" not in self._shared:
            self._shared["statements"] = load_statements(data_dir=self.data_dir)
        statements = self._shared["statements"]
        if statement_id not in statements:
            raise UnknownNameError("theory statement", statement_id, statements)
        return statements[statement_id]

    def seed_seq(self, name: str | None = None) -> np.random.SeedSequence:
        """A seed sequence derived from the root and ``name`` (default: this claim's id), so
        a claim's random numbers do not depend on which other claims run. Pass a ``name``
        for draws shared between claims through :meth:`cached`.

        Parameters
        ----------
        name : str, optional
            A shared name; None for this claim's own sequence.

        Returns
        -------
        numpy.random.SeedSequence
            A child of the root, keyed by the CRC-32 of the id or name.
        """
        key = zlib.crc32((self.claim_id if name is None else f"shared:{name}").encode("utf-8"))
        return child_seq(self._seed_seq, key)

    def rng(self) -> np.random.Generator:
        """A generator seeded from :meth:`seed_seq`.

        Returns
        -------
        numpy.random.Generator
            A fresh generator on this claim's own sequence.
        """
        return np.random.default_rng(self.seed_seq())

    def certificates(self, claim_ids: Sequence[str]) -> tuple[bool | None, str]:
        """theory/'s proof-step certificates for ``claim_ids`` (e.g. ``("thm1.A",)``).

        Parameters
        ----------
        claim_ids : sequence of str
            The theory claims whose proof steps back this check.

        Returns
        -------
        tuple of (bool or None, str)
            ``(ok, summary)``: ``ok`` is True when every linked step passed, False
            when one failed or a claim has no steps, None when certificates were
            not run or are not available; the summary says how far the passes
            reach (proved for all parameters, checked on a finite domain, sampled).

        Raises
        ------
        DomainError
            ``claim_ids`` is one text (its characters are not claims) or holds
            something other than a non-empty claim id without glob characters
            (``*``, ``?``, ``[``: a pattern would run theory's steps of every
            matching claim, then keep none of them).
        """
        if isinstance(claim_ids, (str, bytes)) or not isinstance(claim_ids, Iterable):
            raise DomainError("claim_ids", claim_ids, "must be a sequence of claim ids, "
                              "not one text", "pass e.g. ('thm1.A',) or ()")
        claim_ids = tuple(claim_ids)
        for cid in claim_ids:
            if not isinstance(cid, str) or not cid or any(c in cid for c in "*?["):
                raise DomainError("claim_ids", claim_ids, "must hold non-empty claim ids "
                                  "without glob characters (* ? [)",
                                  "name each theory claim, e.g. ('thm1.A', 'prop2')",
                                  context=f"item={cid!r}")
        if not claim_ids:
            return None, ""
        source = self._certificates
        if source is False:
            return None, "certificates not run"
        parts, ok = [], True
        for cid in claim_ids:
            if source is True:
                try:
                    steps = self.cached(f"certificate:{cid}", partial(_certify, cid))
                except Unavailable as exc:
                    return None, f"certificates unavailable ({exc})"
            else:
                steps = tuple(st for st in getattr(source, "steps", ()) if st.claim == cid)
            if not steps:
                parts.append(f"{cid}: no proof steps registered")
                ok = False
                continue
            bad = [st.step for st in steps if st.status != "pass"]
            # Say how far the passes reach: only generality "all" is a proof.
            reach = [getattr(st, "generality", None) for st in steps]
            how = ", ".join(f"{reach.count(g)} {word}" for g, word in (
                ("all", "proved for all parameters"), ("finite", "checked on a finite domain"),
                ("sampled", "sampled")) if reach.count(g))
            parts.append(f"{cid} {len(steps) - len(bad)}/{len(steps)} steps pass"
                         + (f" ({how})" if how else "")
                         + (f" (failed: {', '.join(bad)})" if bad else ""))
            ok = ok and not bad
        return ok, "certificates: " + "; ".join(parts)

    def cached(self, key: str, compute: Callable[[], Any]) -> Any:
        """Compute once per run (e.g. theory.certify_all()) and share between claims.

        Parameters
        ----------
        key : str
            The cache key, shared by every claim of the run.
        compute : callable
            Called with no argument on the first request for ``key``.

        Returns
        -------
        object
            The value computed for ``key``.
        """
        if key not in self._shared:
            self._shared[key] = compute()
        return self._shared[key]


def _certify(claim_id: str) -> tuple[Any, ...]:
    """Run theory's proof steps of one claim (``theory.certify_all(only=...)``)."""
    from vistalab import theory

    try:
        report = theory.certify_all(only=f"{claim_id}:*")
    except DomainError:  # pattern matched nothing: no steps for this claim yet
        return ()
    return tuple(st for st in report.steps if st.claim == claim_id)
