"""The claim runner: checks the selected claims of :mod:`._registry` against the paper's
data (the shipped folder or a user's copy), each with its own child seed, and links the
theory claims to their proof-step certificates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from vistalab.theory import DomainError

from vistalab._core import seed_sequence
from vistalab._core._limits import toml_loads

from ._context import DEFAULT_ENTROPY, CheckContext, Unavailable
from ._data import DATA_DIR
from ._records import Claim, ClaimResult, Outcome, PaperCheckReport
from ._registry import select_claims

__all__ = ["data_dir_iv", "run_claims"]


def _root_seed(rng: Any) -> np.random.SeedSequence:
    # What rng= accepts and how a Generator is treated: vistalab._core.seed_sequence.
    return seed_sequence(rng, default_entropy=DEFAULT_ENTROPY)


def run_claims(
    only: str | None = None,
    *,
    data_dir: str | Path | None = None,
    rng: Any = None,
    claims: Sequence[Claim] | None = None,
    certificates: Any = True,
    progress: Callable[[ClaimResult], None] | None = None,
) -> PaperCheckReport:
    """Run the registered checks.

    Parameters
    ----------
    only : str, optional
        Filter (see :func:`select_claims`).
    data_dir : path, optional
        Folder of paper data to check instead of the shipped one (tests pass a perturbed
        copy).
    rng : None, int, SeedSequence or Generator, keyword-only
        Root of the Monte Carlo seeds; None means :data:`DEFAULT_ENTROPY`, so the report is
        reproducible by default. Otherwise as documented in
        :func:`vistalab._core.seed_sequence` (a Generator has one child spawned from it).
    claims : sequence of Claim, optional
        Run exactly these (overrides ``only``).
    certificates : bool or VerificationReport, keyword-only
        theory/'s proof-step certificates linked to the theory claims: True runs them
        (``theory.certify_all``, once per linked claim id), False skips them (the claims
        then rest on their numerical checks alone), or pass the report of an earlier
        ``theory.certify_all()`` run to reuse it.
    progress : callable, keyword-only, optional
        Called with each :class:`ClaimResult` as soon as its claim is checked
        (for a progress bar).

    Returns
    -------
    PaperCheckReport
    """
    path, chosen, root = _run_claims_iv(only, data_dir, rng, claims, certificates)
    if progress is not None and not callable(progress):
        raise DomainError("progress", progress, "must be a callable taking each ClaimResult",
                          "pass a function, or omit it")
    shared: dict[str, Any] = {}
    ctx = CheckContext(path, root, shared, certificates=certificates)
    results = []
    for c in chosen:
        ctx.claim_id = c.id
        t0 = time.perf_counter()
        outcome = _run_one(c, ctx)
        results.append(
            ClaimResult(
                id=c.id, section=c.section, where=c.where, statement=c.statement,
                tolerance=c.tolerance, kind=c.kind, data=c.data, certificates=c.certificates,
                status=outcome.status, detail=outcome.detail, numbers=outcome.numbers,
                seconds=time.perf_counter() - t0,
            )
        )
        if progress is not None:
            progress(results[-1])
    entropy = root.entropy if isinstance(root.entropy, int) else 0
    return PaperCheckReport(results=tuple(results), data_dir=str(path), seed_entropy=entropy,
                            only=only)


def data_dir_iv(data_dir: Any) -> Path:
    """The data folder to read (the shipped one for None), or a DomainError naming it."""
    if data_dir is not None and (not isinstance(data_dir, (str, Path)) or not str(data_dir)
                                 or "\0" in str(data_dir)):
        raise DomainError("data_dir", data_dir, "must be a folder path",
                          "omit it to check the shipped data")
    path = DATA_DIR if data_dir is None else Path(data_dir)
    if not path.is_dir():
        raise DomainError("data_dir", str(path), "must be an existing folder of paper data files",
                          "omit it to check the shipped data")
    return path


def _run_claims_iv(
    only: str | None, data_dir: str | Path | None, rng: Any,
    claims: Sequence[Claim] | None, certificates: Any,
) -> tuple[Path, tuple[Claim, ...], np.random.SeedSequence]:
    path = data_dir_iv(data_dir)
    if data_dir is not None:
        _data_files_iv(path)
    chosen: tuple[Claim, ...] = ()
    if claims is not None:
        if isinstance(claims, (str, bytes)) or not isinstance(claims, Iterable):
            raise DomainError("claims", claims, "must be a sequence of registered Claim objects",
                              "take them from all_claims() or select_claims()")
        chosen = tuple(claims)
        if not all(isinstance(c, Claim) for c in chosen):
            raise DomainError("claims", claims, "must be a sequence of registered Claim objects",
                              "take them from all_claims() or select_claims()")
    if not isinstance(certificates, bool) and not hasattr(certificates, "steps"):
        raise DomainError("certificates", certificates,
                          "must be True, False or a theory VerificationReport (with .steps)")
    root = _root_seed(rng)
    if claims is None:
        chosen = select_claims(only)
    return path, chosen, root


def _data_files_iv(path: Path) -> None:
    """Another data folder must hold every file of the shipped one, each valid
    TOML: a bad folder is bad input (exit 2 from the CLI), not nine failed claims."""
    import tomllib

    needed = sorted(p.name for p in DATA_DIR.glob("*.toml"))
    missing = [name for name in needed if not (path / name).is_file()]
    if missing:
        shown = ", ".join(missing[:4]) + (f" and {len(missing) - 4} more" if len(missing) > 4
                                          else "")
        raise DomainError("data_dir", str(path), "must hold every paper data file",
                          f"missing {shown}; start from a copy of {DATA_DIR}")
    for name in needed:
        try:
            with (path / name).open("rb") as fh:
                toml_loads(fh.read().decode("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError, RecursionError) as exc:
            raise DomainError("data_dir", str(path), "must hold valid TOML data files",
                              f"fix {name}: {exc}") from None
        except OSError as exc:
            raise DomainError("data_dir", str(path), "must hold readable data files",
                              f"{name}: {exc.strerror}") from None


def _run_one(c: Claim, ctx: CheckContext) -> Outcome:
    try:
        outcome = c.check(ctx)
    except Unavailable as exc:
        return Outcome.not_checkable(str(exc))
    except Exception as exc:  # a crashing check is reported, not hidden
        return Outcome.failed(f"check raised {type(exc).__name__}: {exc}")
    if not isinstance(outcome, Outcome):
        return Outcome.failed(f"check returned {type(outcome).__name__}, not an Outcome")
    if c.certificates and outcome.status != "not_checkable":
        # A claim linked to proof steps holds only if its steps are certified too.
        ok, summary = ctx.certificates(c.certificates)
        status = "fail" if ok is False else outcome.status
        numbers = dict(outcome.numbers)
        numbers["certificates_ok"] = ok
        return Outcome(status, f"{outcome.detail}; {summary}", numbers)
    return outcome
