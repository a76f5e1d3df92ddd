"""The suite's result records: one :class:`Violation` per broken invariant (with
its shrunk counterexample) and the :class:`ConformanceReport` of a run, plus the
counterexample file that ``vista-lab conformance --replay`` and ``vista-lab
workspace replay`` read back."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vistalab._core import DomainError, atomic_write
from vistalab.workspace import INVARIANTS

__all__ = [
    "CHECKED",
    "FORMAT_TAG",
    "ConformanceReport",
    "Violation",
    "read_violation",
]

#: The invariants of :data:`vistalab.workspace.INVARIANTS` this suite checks, in
#: report order. ``stable_ids`` and ``dashboard`` concern engines that show the
#: agent block IDs and a dashboard; a trimmer has neither.
CHECKED: tuple[str, ...] = (
    "budget",
    "protocol",
    "pinned",
    "fidelity",
    "recoverability",
    "batch",
    "coupling",
    "closure",
    "pending",
    "crash",
    "determinism",
)
assert set(CHECKED) <= {inv.name for inv in INVARIANTS}

#: Type tag of a counterexample file (the ``conformance`` object's ``kind``).
FORMAT_TAG = "vista-lab/conformance-counterexample"


def _plain(obj: Any) -> Any:
    """JSON-ready copy of a conversation or a manager's output (tuples become
    lists; anything JSON cannot hold becomes its bounded repr)."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    if obj is None or isinstance(obj, (str, int, float, bool)):
        return obj
    return repr(obj)[:200]


def _unit_key(unit: Any) -> str:
    return json.dumps(_plain(unit), sort_keys=True, ensure_ascii=False)


@dataclass(frozen=True)
class Violation:
    """One invariant a manager broke, with a minimal counterexample.

    Attributes
    ----------
    invariant : str
        A name from :data:`CHECKED` (the vocabulary of
        :data:`vistalab.workspace.INVARIANTS`).
    message : str
        What went wrong on the counterexample, in one or two sentences.
    budget : int
        The budget the manager was given.
    conversation : object
        The input: a list of OpenAI chat messages, or for ``protocol="anthropic"``
        a ``{"system": ..., "messages": [...]}`` document. Shrunk by Hypothesis:
        no smaller conversation the suite can generate shows the same failure.
    output : object
        What the manager returned for it (None when it raised or hung).
    protocol : str
        ``"openai"`` or ``"anthropic"``.
    confirmed : bool
        True when running the manager again on ``conversation`` (a fresh call,
        checked by a fresh run of the checker) shows the same check broken.
    check : str
        The check id (:data:`~vistalab.conformance.CHECKS`, ``<invariant>.<rule>``);
        defaults to the invariant's catch-all check.
    pinned : str
        The pinned rule it was found under (``"system"`` or ``"none"``).
    declarations : tuple of dict
        What the manager declared about its output on the counterexample:
        ``{"unit": unit, "payloads": [ids]}`` for each unit its
        ``placeholder(unit)`` hook called a placeholder (a summary, a dashboard
        or an archived payload's stand-in). Saved in the case file, so
        ``--replay`` without the manager judges fidelity as the run did.
    counter : str or None
        The tokenizer the budget was counted with (a registry name; None for
        the default cl100k_base or a user's callable counter).
    """

    invariant: str
    message: str
    budget: int
    conversation: Any
    output: Any
    protocol: str = "openai"
    confirmed: bool = False
    check: str = ""
    pinned: str = "system"
    declarations: tuple[dict[str, Any], ...] = ()
    counter: str | None = None

    def placeholder(self, unit: Any) -> tuple[str, ...] | None:
        """The payload ids the manager declared for ``unit`` on this
        counterexample (None: ordinary content), from :attr:`declarations`.

        Parameters
        ----------
        unit : object
            A unit of the output (:func:`~vistalab.conformance.units`).

        Returns
        -------
        tuple of str or None
            The declared ids, or None when the unit was not declared.
        """
        key = _unit_key(unit)
        for d in self.declarations:
            if _unit_key(d.get("unit")) == key:
                return tuple(str(i) for i in d.get("payloads") or ())
        return None

    def __post_init__(self) -> None:
        if not self.check:
            from ._ids import FALLBACK

            object.__setattr__(self, "check", FALLBACK.get(self.invariant, self.invariant))

    @property
    def counterexample(self) -> dict[str, Any]:
        """The input conversation and the manager's output, as plain data."""
        return {"conversation": _plain(self.conversation), "output": _plain(self.output)}

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data of the violation, with its counterexample.

        Returns
        -------
        dict
            ``invariant``, ``check``, ``pinned``, ``message``, ``budget``,
            ``protocol``, ``confirmed`` and ``counterexample``.
        """
        return {
            "invariant": self.invariant,
            "check": self.check,
            "pinned": self.pinned,
            "message": self.message,
            "budget": self.budget,
            "protocol": self.protocol,
            "confirmed": self.confirmed,
            "counterexample": self.counterexample,
            "declarations": [_plain(d) for d in self.declarations],
            "counter": self.counter,
        }

    def to_trace(self) -> dict[str, Any]:
        """The counterexample as a trace document.

        Its ``messages`` (and, for Anthropic, ``system``) are the input
        conversation, so ``vista-lab workspace replay FILE --budget B`` replays
        it through the reference workspace; the ``conformance`` object holds
        the rest (read back by :func:`read_violation`).

        Returns
        -------
        dict
            The trace document.
        """
        conv = _plain(self.conversation)
        doc: dict[str, Any]
        if self.protocol == "anthropic":
            doc = {"system": conv.get("system"), "messages": conv.get("messages", [])}
        elif self.protocol == "gemini":
            # messages: the engine's projection (what `workspace replay` reads);
            # gemini: the conversation itself (what --replay reads back)
            from ._gemini import to_chat

            doc = {"messages": to_chat(conv), "gemini": conv}
        else:
            doc = {"messages": conv}
        doc["conformance"] = {
            "kind": FORMAT_TAG,
            "invariant": self.invariant,
            "check": self.check,
            "pinned": self.pinned,
            "message": self.message,
            "budget": self.budget,
            "protocol": self.protocol,
            "confirmed": self.confirmed,
            "output": _plain(self.output),
            "declarations": [_plain(d) for d in self.declarations],
            "counter": self.counter,
        }
        return doc

    def write(self, path: str | os.PathLike[str]) -> str:
        """Write :meth:`to_trace` as a JSON file (atomically); returns the path.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write.

        Returns
        -------
        str
            The path written.
        """
        if not isinstance(path, (str, os.PathLike)) or not str(path) or "\0" in str(path):
            raise DomainError("path", path, "must be a non-empty file path without NUL",
                              "pass e.g. 'violation.json'")
        data = json.dumps(self.to_trace(), indent=2, ensure_ascii=False) + "\n"
        try:
            return str(atomic_write(path, data.encode("utf-8")))
        except (OSError, ValueError) as exc:
            raise DomainError("path", path, f"must name a writable file ({exc.strerror or exc})"
                              if isinstance(exc, OSError) else f"must be a usable path ({exc})",
                              "pass a file path in a writable folder, not a folder or a "
                              "pseudo file system") from exc


def read_violation(source: str | os.PathLike[str] | Mapping[str, Any]) -> Violation:
    """A :class:`Violation` from a file written by :meth:`Violation.write` (or its
    parsed JSON).

    Parameters
    ----------
    source : path or dict
        The file, or its parsed JSON document.

    Returns
    -------
    Violation

    Raises
    ------
    DomainError
        If the file cannot be read or is not a counterexample file.
    """
    if isinstance(source, Mapping):
        doc: Any = source
        where = "source"
    else:
        where = os.fspath(source)
        from vistalab._core._limits import loads_bounded, read_bounded

        # never opened blind: a FIFO, a device or a /proc file is refused, not waited
        # on; nesting is bounded before parsing
        raw = read_bounded("FILE", where, what="JSON counterexample file")
        try:
            doc = loads_bounded("FILE", raw.decode("utf-8"))
        except DomainError as exc:  # the depth or size limit: name the file, not its text
            raise DomainError("FILE", where, f"{exc.rule} in its JSON",
                              "pass a file written by `vista-lab conformance --out DIR`") from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise DomainError(
                "FILE", where, f"must be a readable JSON counterexample file ({exc})",
                "pass a file written by `vista-lab conformance --out DIR`",
            ) from None
    meta = doc.get("conformance") if isinstance(doc, Mapping) else None
    if not isinstance(meta, Mapping) or meta.get("kind") != FORMAT_TAG:
        raise DomainError(
            "FILE", where, f"must hold a 'conformance' object of kind {FORMAT_TAG!r}",
            "pass a file written by `vista-lab conformance --out DIR`",
        )
    protocol = meta.get("protocol")
    budget = meta.get("budget")
    inv = meta.get("invariant")
    if protocol not in ("openai", "anthropic", "responses", "gemini") or inv not in CHECKED:
        raise DomainError(
            "FILE", where, "must name a protocol (openai, anthropic, responses, gemini) and a "
            "checked "
            f"invariant ({', '.join(CHECKED)})",
            "pass a file written by `vista-lab conformance --out DIR`",
        )
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise DomainError("FILE", where, "must record a positive integer budget",
                          "pass a file written by `vista-lab conformance --out DIR`")
    messages = doc.get("messages")
    if not isinstance(messages, list):
        raise DomainError("FILE", where, "must hold the conversation's 'messages' list",
                          "pass a file written by `vista-lab conformance --out DIR`")
    conv: Any = (
        {"system": doc.get("system"), "messages": messages} if protocol == "anthropic"
        else messages
    )
    if protocol == "gemini":
        conv = doc.get("gemini")
        if not isinstance(conv, dict) or not isinstance(conv.get("contents"), list):
            raise DomainError("FILE", where, "must hold the Gemini conversation's 'gemini' "
                              "object with its 'contents' list",
                              "pass a file written by `vista-lab conformance --out DIR`")
    from ._ids import CHECKS

    check = meta.get("check") or ""
    pinned = meta.get("pinned", "system")
    if check and check not in {c.id for c in CHECKS if c.invariant == inv}:
        raise DomainError("FILE", where, f"names check {str(check)[:60]!r}, which is not a check "
                          f"of the invariant {inv}",
                          "pass a file written by `vista-lab conformance --out DIR`")
    if pinned not in ("system", "none"):
        raise DomainError("FILE", where, "must record pinned as 'system' or 'none'",
                          "pass a file written by `vista-lab conformance --out DIR`")
    declarations = meta.get("declarations") or []
    if not isinstance(declarations, list) or not all(
            isinstance(d, Mapping) and isinstance(d.get("payloads", []), list)
            and all(isinstance(i, str) for i in d.get("payloads", [])) for d in declarations):
        raise DomainError("FILE", where, "must record declarations as a list of "
                          "{\"unit\", \"payloads\": [ids]} objects",
                          "pass a file written by `vista-lab conformance --out DIR`")
    counter = meta.get("counter")
    if counter is not None and not isinstance(counter, str):
        raise DomainError("FILE", where, "must record counter as a tokenizer name or null",
                          "pass a file written by `vista-lab conformance --out DIR`")
    return Violation(
        check=str(check),
        pinned=str(pinned),
        invariant=str(inv),
        message=str(meta.get("message", "")),
        budget=budget,
        conversation=conv,
        output=meta.get("output"),
        protocol=str(protocol),
        confirmed=bool(meta.get("confirmed", False)),
        declarations=tuple(dict(d) for d in declarations),
        counter=counter,
    )


@dataclass(frozen=True)
class ConformanceReport:
    """The result of :func:`~vistalab.conformance.check`.

    Attributes
    ----------
    ok : bool
        True when no invariant was broken on any conversation tried.
    violations : tuple of Violation
        At most one per check id (its minimal counterexample), in the order of
        :data:`~vistalab.conformance.CHECKS`; an invariant broken in two ways
        has two.
    conversations : int
        How many conversations the manager was run on (sampled by Hypothesis;
        a pass is evidence on this sample, not a proof).
    seed : int
        The Hypothesis seed: the same seed and manager give the same report.
    protocol : str
        ``"openai"`` or ``"anthropic"``.
    strict : bool
        Whether the stricter adjacency rules were checked.
    budgets : tuple of int or None
        The budgets given to ``check`` (None: drawn near each conversation's
        boundaries).
    examples : int
        The number of conversations asked for.
    timeout : float
        The per-call timeout in seconds (a call that takes longer is a hang).
    counter : str
        The token counter's name.
    manager : str
        What was checked (its qualified name).
    checked : tuple of str
        The invariants checked.
    pinned : str
        The pinned rule: ``"system"`` (the system prompt is pinned) or ``"none"``.
    """

    ok: bool
    violations: tuple[Violation, ...]
    conversations: int
    seed: int
    protocol: str
    strict: bool
    budgets: tuple[int, ...] | None
    examples: int
    timeout: float
    counter: str
    manager: str
    checked: tuple[str, ...] = field(default=CHECKED)
    pinned: str = "system"

    def violation(self, name: str) -> Violation | None:
        """The first violation of invariant (or check id) ``name``, or None.

        Parameters
        ----------
        name : str
            An invariant's name or a check id.

        Returns
        -------
        Violation or None
            The first violation found, or None if it held.
        """
        return next((v for v in self.violations if name in (v.invariant, v.check)), None)

    def violations_of(self, invariant: str) -> tuple[Violation, ...]:
        """Every violation of ``invariant`` (one per check id broken).

        Parameters
        ----------
        invariant : str
            An invariant's name.

        Returns
        -------
        tuple of Violation
            Empty when the invariant held.
        """
        return tuple(v for v in self.violations if v.invariant == invariant)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data of the report: the run's settings, per checked
        invariant its statement, source, verdict and broken check ids, and every
        violation.

        Returns
        -------
        dict
            The report as JSON data.
        """
        by_name = {inv.name: inv for inv in INVARIANTS}
        return {
            "ok": self.ok,
            "manager": self.manager,
            "protocol": self.protocol,
            "strict": self.strict,
            "pinned": self.pinned,
            "conversations": self.conversations,
            "examples": self.examples,
            "seed": self.seed,
            "budgets": list(self.budgets) if self.budgets is not None else None,
            "timeout_s": self.timeout,
            "counter": self.counter,
            "invariants": [
                {
                    "name": name,
                    "statement": by_name[name].statement,
                    "source": by_name[name].source,
                    "ok": self.violation(name) is None,
                    "broken_checks": [v.check for v in self.violations_of(name)],
                }
                for name in self.checked
            ],
            "violations": [v.to_dict() for v in self.violations],
        }
