"""Ratcheting baselines: a file of expected failures (check ids) a project
accepts for now. Against a baseline a run passes when every broken check is
listed; a broken check that is not listed is a regression, and a listed check
that now holds is *stale* (the file must be tightened), so the list can only
shrink."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vistalab._core import DomainError, atomic_write

__all__ = ["BASELINE_TAG", "Baseline", "BaselineVerdict", "read_baseline", "write_baseline"]

#: Type tag of a baseline file (its ``kind``).
BASELINE_TAG = "vista-lab/conformance-baseline"


@dataclass(frozen=True)
class BaselineVerdict:
    """A run judged against a baseline.

    Attributes
    ----------
    expected : tuple of str
        Broken checks the baseline lists (accepted).
    regressions : tuple of str
        Broken checks it does not list (the run fails).
    stale : tuple of str
        Listed checks that now hold (the run fails until the file drops them).
    """

    expected: tuple[str, ...]
    regressions: tuple[str, ...]
    stale: tuple[str, ...]

    @property
    def ok(self) -> bool:
        """True when there is neither a regression nor a stale entry."""
        return not self.regressions and not self.stale

    def lines(self, path: str) -> list[str]:
        """One line per check judged, then the verdict (for the report).

        Parameters
        ----------
        path : str
            The baseline file's name, quoted in the lines.

        Returns
        -------
        list of str
            The lines.
        """
        out = [f"  expected failure (listed in {path}): {c}" for c in self.expected]
        out += [f"  REGRESSION (broken, not listed in {path}): {c}" for c in self.regressions]
        out += [f"  STALE (listed in {path}, holds now; remove it or rewrite the file with "
                f"--write-baseline): {c}" for c in self.stale]
        if self.ok:
            out.append(f"baseline {path}: every broken check is an expected failure")
        else:
            out.append(f"baseline {path}: {len(self.regressions)} regression(s), "
                       f"{len(self.stale)} stale entr{'y' if len(self.stale) == 1 else 'ies'}")
        return out


@dataclass(frozen=True)
class Baseline:
    """The expected failures of one manager.

    Attributes
    ----------
    checks : frozenset of str
        Check ids (:data:`~vistalab.conformance.CHECKS`) expected to break.
    """

    checks: frozenset[str]

    def judge(self, broken: Iterable[str]) -> BaselineVerdict:
        """Judge the broken check ids of a run.

        Parameters
        ----------
        broken : iterable of str
            The check ids the run broke.

        Returns
        -------
        BaselineVerdict
        """
        seen = sorted(set(broken))
        return BaselineVerdict(
            expected=tuple(c for c in seen if c in self.checks),
            regressions=tuple(c for c in seen if c not in self.checks),
            stale=tuple(sorted(self.checks - set(seen))),
        )


def _bad(path: str, rule: str) -> DomainError:
    return DomainError("--baseline", path, rule,
                       "pass a file written by `vista-lab conformance --write-baseline FILE`")


def read_baseline(path: str | os.PathLike[str]) -> Baseline:
    """Read a baseline file (JSON: ``{"kind": BASELINE_TAG, "expected":
    [{"check": id, ...}]}``; a bare check id string is accepted as an entry).

    Parameters
    ----------
    path : str or os.PathLike
        The file.

    Returns
    -------
    Baseline

    Raises
    ------
    DomainError
        The file cannot be read, is not a baseline, or lists an unknown check id.
    """
    from vistalab._core._limits import loads_bounded, read_bounded

    from ._ids import CHECKS

    where = os.fspath(path)
    raw = read_bounded("--baseline", where, what="JSON baseline file")
    try:
        doc = loads_bounded("--baseline", raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise _bad(where, f"must be a JSON baseline file ({exc})") from None
    if not isinstance(doc, Mapping) or doc.get("kind") != BASELINE_TAG:
        raise _bad(where, f"must be a JSON object of kind {BASELINE_TAG!r}")
    entries = doc.get("expected")
    if not isinstance(entries, list):
        raise _bad(where, "must hold an 'expected' list of check ids")
    known = {c.id for c in CHECKS}
    checks = set()
    for e in entries:
        cid = e.get("check") if isinstance(e, Mapping) else e
        if not isinstance(cid, str) or cid not in known:
            raise _bad(where, f"lists {str(cid)[:60]!r}, which is not a check id (known: "
                       "protocol.*, budget.*, fidelity.*, ...; see `vistalab.conformance.CHECKS`)")
        checks.add(cid)
    return Baseline(frozenset(checks))


def write_baseline(path: str | os.PathLike[str], report: Any) -> str:
    """Write the broken checks of ``report`` as a baseline file (atomically).

    Parameters
    ----------
    path : str or os.PathLike
        The file to write.
    report : ConformanceReport
        The run whose failures become the expected ones.

    Returns
    -------
    str
        The path written.
    """
    doc = {
        "kind": BASELINE_TAG,
        "manager": report.manager,
        "protocol": report.protocol,
        "pinned": report.pinned,
        "seed": report.seed,
        "examples": report.examples,
        "expected": [{"check": v.check, "message": v.message} for v in report.violations],
    }
    return str(atomic_write(path, (json.dumps(doc, indent=2) + "\n").encode("utf-8")))
