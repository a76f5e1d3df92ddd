"""The make-room instance M_{n,L,l} run through the reference workspace engine:
calibrated block texts, a budget over by exactly L, archives through the agent's
tool until preflight reports normal mode, byte-exact read-back of every archived
load-bearing block, cross-checked with the array simulator.

Each trial is a real :class:`workspace.Workspace`: a pinned task and n user
blocks whose net archive sizes (block tokens minus the tokens of the handle
that replaces it, under the engine's tokenizer) are exactly l, and L for the
bulky block J*. The policy sees the instance only through the engine:

- ``ledger``: parses the ~Tok column of the dashboard the engine renders;
- ``buckets``: sees a coarsening of that dashboard that only names which of M
  position buckets holds the largest block;
- ``gaussian``: reads the block texts (the content channel): a perceived
  log size ``ln(net tokens) + sigma * N(0, 1)`` per block, no dashboard;
- ``blind``: sees neither.

This module runs the trials; the calibration is in ``_engine_makeroom_layout``, the
observations in ``_engine_makeroom_observe``, the result record in
``_engine_makeroom_result``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int
from vistalab.workspace import ARCHIVE_TOOL, Rendering, Workspace, WorkspaceError

from ._engine_common import StoreSpec, remove_trial_payloads, store_iv, tokenizer_iv
from ._engine_makeroom_layout import (
    _FIRST_BLOCK,
    MAX_ENGINE_N,
    MakeRoomLayout,
    _calibrate_auto,
    _Forks,
)
from ._engine_makeroom_observe import _observe
from ._engine_makeroom_result import EngineMakeRoomResult, _result, _Tally
from ._interfaces import Interface
from ._interfaces_registry import make_interface
from ._makeroom import simulate_makeroom
from ._policies import Policy, make_policy
from ._seeding import MAX_ENGINE_TRIALS, SeedInfo, block_sizes, root_seed, stream, trials_iv
from ._seeding import stream_seq as _stream_seq
from ._stats import confidence_iv

__all__ = [
    "ENGINE_INTERFACES",
    "ENGINE_BLOCK",
    "simulate_makeroom_engine",
    "EventCounters",
    "makeroom_event_counters",
]

#: Interfaces with an engine observation (the gibbs frontier interface announces
#: an abstract order and has no engine counterpart).
ENGINE_INTERFACES: tuple[str, ...] = ("ledger", "gaussian", "buckets", "blind")
ENGINE_BLOCK = 64
"""Trials per random-stream block (the unit of reproducibility)."""
DEFAULT_ARRAY_TRIALS = 200_000


# --------------------------------------------------------------------------- trials


@dataclass
class _Template:
    """A built workspace kept across the trials of one block (``reuse=True``): its bulky
    position, first rendering and canonical state hash, to which every trial returns."""

    ws: Workspace
    j: int
    rendering: Rendering
    state: str
    events: int


def _new_workspace(layout: MakeRoomLayout, j: int, forks: _Forks, spec: StoreSpec,
                   tally: _Tally) -> tuple[Workspace, Rendering]:
    budget = layout.budget + layout.budget_offsets[j]
    ws = forks.new(j, budget, spec.new())
    r = ws.render()
    if r.candidate_tokens != budget + layout.L_tokens:
        tally.budget_mismatches += 1
    return ws, r


def _trial(layout: MakeRoomLayout, name: str, iface: Interface, pol: Policy, forks: _Forks,
           spec: StoreSpec, gen: np.random.Generator, tally: _Tally, *, verify: bool,
           template: _Template | None = None) -> None:
    """One trial: a fresh workspace with J* drawn here, or (``template``) the block's
    workspace, which the trial restores to its initial state afterwards."""
    n, kappa = layout.n, layout.kappa
    if template is None:
        j = int(gen.integers(n))
        ws, r = _new_workspace(layout, j, forks, spec, tally)
        first_event = ws.event_count
    else:
        # The trial starts in the template's canonical state (checked after every
        # trial), of which the template's rendering is the engine's rendering.
        ws, j, r, first_event = template.ws, template.j, template.rendering, template.events
    y = _observe(name, layout, ws, r, iface, gen)
    order = np.asarray(pol.order(iface, y, gen))
    ids = layout.ids
    paths: dict[int, str] = {}
    call = ws.call_tool
    for p in order:
        p = int(p)
        out = call(ARCHIVE_TOOL, {"block_id": ids[p]})
        if not out.ok:
            raise DomainError("engine", out.text, "must accept every archive of a visible block",
                              "report this as a workspace bug")
        paths[p] = out.text
        if ws.mode == "normal":
            break
    else:
        raise DomainError("engine", "overflow", "must reach normal mode once every block is "
                          "archived", "check the budget calibration")
    tally.archive_events += len(paths)
    z = len(paths) - (1 if j in paths else 0)
    tally.bulky_archived += j in paths
    # The instance's arithmetic: archives needed in this order with exact sizes.
    ideal = min(int(np.flatnonzero(order == j)[0]) + 1, kappa)
    if len(paths) != ideal:
        tally.stop_mismatches += 1
    # Z > kappa only if preflight outlasted the exact sizes; counted, then clipped
    # so z_counts keeps the array simulator's shape.
    tally.z_excess += z > kappa
    tally.counts[min(z, kappa)] += 1
    if verify:
        freed = [int(ev.effects.get("freed_tokens", -1)) for ev in ws.events_since(first_event)
                 if ev.op == "archive" and ev.ok]
        want = [layout.L_tokens if p == j else layout.l_tokens for p in paths]
        for got, exp in zip(freed, want, strict=True):
            if got != exp:
                tally.size_mismatches += 1
                tally.size_residual_max = max(tally.size_residual_max, abs(got - exp))
    # Every load-bearing block is queried: archived ones are read back by path,
    # the others are answered from the prompt (their text, compared in one pass).
    light_bytes = layout.light_bytes
    read = ws.read_path
    expected = list(layout.light)
    for p in paths:
        expected[p] = None  # type: ignore[call-overload]
    expected[j] = None  # type: ignore[call-overload]
    # An archived block's record keeps no content (its bytes are in the store).
    shown = [b.content for b in ws.blocks[_FIRST_BLOCK - 1:]]
    shown[j] = None
    if shown == expected:
        tally.queries_ok += n - 1 - len(paths) + (j in paths)
    else:
        tally.queries_ok += sum(1 for p, (a, b) in enumerate(zip(shown, expected, strict=True))
                                if p != j and p not in paths and a == b)
    tally.queries += n - 1
    for p, path in paths.items():
        if p == j:
            continue
        tally.read_events += 1
        try:
            ok = read(path) == light_bytes[p]
        except WorkspaceError:
            ok = False
        tally.byte_exact += ok
        tally.byte_mismatches += not ok
        tally.queries_ok += ok
    if template is None and spec.kind == "disk":
        # The run shares one payload folder and the engine never overwrites a
        # payload it did not write, so a finished trial removes its payloads
        # (the next trial writes the same IDs with other bytes).
        remove_trial_payloads(ws)
    if template is not None:
        # Undo (the paper's Q_undo): restoring every archive must give back the
        # template's canonical state, so the next trial starts from the same workspace.
        for p in paths:
            ws.restore(ids[p])
        if ws.state_hash() != template.state:
            tally.undo_mismatches += 1
            template.state = ws.state_hash()
        template.events = ws.event_count


# --------------------------------------------------------------------------- driver


def _engine_iv(n: Any, kappa: Any, interface: Any, policy: Any, trials: Any,
               array_trials: Any, confidence: Any, params: dict[str, Any]
               ) -> tuple[Interface, Policy, int, int, float]:
    trials = trials_iv(trials, hi=MAX_ENGINE_TRIALS)
    if not isinstance(interface, str):
        raise DomainError("interface", interface, "must be an interface name in engine mode",
                          f"use one of {', '.join(ENGINE_INTERFACES)}")
    if interface not in ENGINE_INTERFACES:
        from vistalab.theory import UnknownNameError

        raise UnknownNameError("engine interface", interface, ENGINE_INTERFACES)
    iface = make_interface(interface, n=n, kappa=kappa, **params)
    if iface.n > MAX_ENGINE_N:
        raise DomainError("n", iface.n, f"must be at most {MAX_ENGINE_N} in engine mode",
                          "use the array simulator for larger instances")
    if policy is None or isinstance(policy, str):
        pol = make_policy(policy)
    else:
        raise DomainError("policy", policy, "must be a policy name in engine mode",
                          "use 'bayes' or 'random'")
    array_trials = trials_iv(array_trials, name="array_trials", lo=2,
                             fix="trials of the array simulator cross-check")
    return iface, pol, trials, array_trials, confidence_iv(confidence)


def simulate_makeroom_engine(
    n: int,
    kappa: int,
    interface: str,
    *,
    policy: str | None = None,
    trials: int,
    rng: Any = None,
    store: str = "memory",
    store_dir: Any = None,
    tokenizer: str = "cl100k_base",
    l_tokens: int | None = None,
    array_trials: int = DEFAULT_ARRAY_TRIALS,
    rate_trials: int | None = None,
    confidence: float = 0.95,
    verify: bool = True,
    reuse: bool = False,
    **params: Any,
) -> EngineMakeRoomResult:
    """Run M_{n,L,l} through the workspace engine and compare with the theory
    and with the array simulator.

    Parameters
    ----------
    n, kappa : int
        The instance, ``2 <= kappa < n <= 10000``.
    interface : {"ledger", "gaussian", "buckets", "blind"}
        What the policy sees (see the module docstring); ``sigma`` for
        gaussian and ``buckets`` for buckets as keyword arguments.
    policy : {"bayes", "random"}, optional
        Order by the posterior of the observation (default) or at random.
    trials : int
        Engine trials, each on a fresh workspace of its own J*: the instance
        is registered once per budget with load-bearing texts everywhere, and
        each trial forks it with the bulky text at J*
        (``Workspace.fork(substitute=...)``, the exact state of registering
        that instance from scratch; with ``verify`` the run's first fork is
        compared with such a build).
    rng : None, int, SeedSequence or Generator
        Seed of the run; recorded in the result.
    store : {"memory", "disk"}
        Payload store. Handles show the payload path, so the calibrated texts
        depend on the folder (the law of Z does not).
    store_dir : str or PathLike, optional
        The disk store's folder (default: a temporary folder removed at the end).
    tokenizer : {"cl100k_base", "approx"}
        The engine's tokenizer, in which the sizes are calibrated.
    l_tokens : int, optional
        Net tokens of a load-bearing block (see :func:`calibrate_makeroom`).
    array_trials : int
        Trials of the array simulator run for the cross-check.
    rate_trials : int, optional
        Gaussian: Monte Carlo trials of the rate (as in the array simulator).
    confidence : float
        Level of ``mean_z_ci``.
    verify : bool
        Also check each archive's freed tokens in the engine's event log and
        the first fork against a from-scratch build (default True).
    reuse : bool
        Build one workspace per block of 64 trials (J* drawn once for the
        block) and return it to its initial state after each trial by
        restoring every archive; each return is checked against the initial
        canonical state hash (``undo_mismatches``). It exercises restore (the
        paper's Q_undo) in every trial. It gives the same law of Z only
        where that law does not depend on J*'s position (ledger, gaussian,
        blind, the random policy, and buckets of equal size), so other cases
        are refused. Default False: a fresh workspace and J* per trial.
    **params
        The interface's parameters when ``interface`` is a name.

    Returns
    -------
    EngineMakeRoomResult
    """
    iface, pol, trials, array_trials, confidence = _engine_iv(
        n, kappa, interface, policy, trials, array_trials, confidence, params)
    for flag, value in (("verify", verify), ("reuse", reuse)):
        if not isinstance(value, (bool, np.bool_)):
            raise DomainError(flag, value, "must be True or False", f"pass {flag}=True")
    n, kappa = iface.n, iface.kappa
    _reuse_iv(reuse, iface, pol)
    seed = root_seed(rng)
    spec = store_iv(store, store_dir)
    try:
        tok = tokenizer_iv(tokenizer)
        if l_tokens is not None:
            l_tokens = as_int("l_tokens", l_tokens, lo=1, hi=100_000,
                              fix="the net tokens a load-bearing block frees when archived")
        layout = _calibrate_auto(n, kappa, l_tokens, tok, spec.root, seed)
        tally = _Tally(np.zeros(kappa + 1, dtype=np.int64))
        forks = _Forks(layout, tok, check=verify)
        t0, c0 = time.perf_counter(), time.process_time()
        for i, size in enumerate(block_sizes(trials, ENGINE_BLOCK)):
            gen = stream(seed, 0, i)
            template = None
            if reuse:
                j = int(gen.integers(n))
                ws, r = _new_workspace(layout, j, forks, spec, tally)
                template = _Template(ws, j, r, ws.state_hash(), ws.event_count)
            tally.workspaces += 1 if reuse else size
            for _ in range(size):
                _trial(layout, iface.name, iface, pol, forks, spec, gen, tally, verify=verify,
                       template=template)
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0
    finally:
        spec.close()

    fast = getattr(pol, "fast_sampler", None)
    mode = "fast" if callable(fast) and fast(iface) is not None else "literal"
    array = simulate_makeroom(n, kappa, iface, policy=pol, trials=array_trials,
                              rng=stream_seq(seed, 3), mode=mode, rate_trials=rate_trials,
                              confidence=confidence)
    return _result(layout, iface, pol, tally, array, seed, spec, trials, elapsed, confidence,
                   reuse, cpu)


@dataclass(frozen=True)
class EventCounters:
    """Archive and read events of one batch of engine runs per interface, the counters the
    paper's ablation reports for the full dashboard versus no dashboard (Section 3.7).

    Attributes
    ----------
    n, kappa, trials : int
        The instance and the engine trials per interface.
    rows : tuple of dict
        One per interface, in decreasing rate: ``interface``, ``params``, ``rate_bits``,
        ``archive_events``, ``read_events``, ``recovery_obligations`` (sum of Z),
        ``byte_exact_recoveries``, ``mean_z``, ``mean_z_se``, ``archives_per_trial``,
        ``reads_per_trial``.
    results : tuple of EngineMakeRoomResult
        The runs behind the rows.
    """

    n: int
    kappa: int
    trials: int
    rows: tuple[dict[str, Any], ...]
    results: tuple[EngineMakeRoomResult, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the table: ``n``, ``kappa``, ``trials`` and the
        ``rows`` (one dict per interface); the underlying runs are left out.

        Returns
        -------
        dict
            The table's fields, with ``rows`` as a list of dicts.
        """
        return {"n": self.n, "kappa": self.kappa, "trials": self.trials,
                "rows": [dict(r) for r in self.rows]}


#: The interfaces of :func:`makeroom_event_counters` by default: full ledger, a coarse
#: dashboard, the dashboard-free content channel, and nothing.
COUNTER_INTERFACES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("ledger", {}), ("buckets", {"buckets": 4}), ("gaussian", {"sigma": 1.0}), ("blind", {}))


def makeroom_event_counters(
    n: int, kappa: int, *, trials: int, rng: Any = None,
    interfaces: Any = COUNTER_INTERFACES, **engine_kwargs: Any,
) -> EventCounters:
    """Run :func:`simulate_makeroom_engine` once per interface (seeds spawned from ``rng``)
    and tabulate total archive and read events, as the paper's ablation does.

    Theorem 1 predicts that the lower the rate, the more load-bearing blocks are archived
    and must be read back (the ledger owes none; the blind order is what every Bayes order
    improves on).

    Parameters
    ----------
    n : int
        Blocks of the make-room instance.
    kappa : int
        Size ratio L/l.
    trials : int
        Engine trials per interface.
    rng : None, int, SeedSequence or Generator
        Root seed; each interface's run gets a spawned child.
    interfaces : sequence of (str, dict)
        The interfaces and their parameters, in table order.
    **engine_kwargs
        Passed to :func:`simulate_makeroom_engine` (``store``, ``tokenizer`` ...).

    Returns
    -------
    EventCounters
        Archive and read events per interface, with each run's E[Z].
    """
    seq = root_seed(rng).seq
    specs = _interfaces_iv(interfaces)
    if not specs:
        raise DomainError("interfaces", interfaces, "must name at least one interface",
                          "e.g. (('ledger', {}), ('blind', {}))")
    results = [simulate_makeroom_engine(n, kappa, name, trials=trials, rng=child,
                                        **engine_kwargs, **kw)
               for (name, kw), child in zip(specs, seq.spawn(len(specs)), strict=True)]
    results.sort(key=lambda r: -r.rate_bits)
    rows = tuple({
        "interface": r.interface, "params": dict(r.params), "rate_bits": r.rate_bits,
        "archive_events": r.archive_events, "read_events": r.read_events,
        "recovery_obligations": r.recovery_obligations,
        "byte_exact_recoveries": r.byte_exact_recoveries, "mean_z": r.mean_z,
        "mean_z_se": r.mean_z_se, "archives_per_trial": r.archive_events / r.trials,
        "reads_per_trial": r.read_events / r.trials,
    } for r in results)
    return EventCounters(n=results[0].n, kappa=results[0].kappa, trials=results[0].trials,
                         rows=rows, results=tuple(results))


def _interfaces_iv(interfaces: Any) -> list[tuple[str, dict[str, Any]]]:
    """``((name, params), ...)`` pairs: a name of ENGINE_INTERFACES and a dict."""
    rule = "must be a sequence of (interface name, params dict) pairs"
    fix = "e.g. (('ledger', {}), ('buckets', {'buckets': 4}))"
    if isinstance(interfaces, (str, bytes)) or not isinstance(interfaces, (list, tuple)):
        raise DomainError("interfaces", interfaces, rule, fix)
    specs = []
    for item in interfaces:
        if (not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[0], str)
                or not isinstance(item[1], dict)):
            raise DomainError("interfaces", interfaces, rule, fix, context=f"item {item!r}")
        if item[0] not in ENGINE_INTERFACES:
            raise DomainError("interfaces", interfaces, f"must name engine interfaces "
                              f"({', '.join(ENGINE_INTERFACES)})", fix,
                              context=f"unknown {item[0]!r}")
        specs.append((item[0], dict(item[1])))
    return specs


def _reuse_iv(reuse: Any, iface: Interface, pol: Policy) -> None:
    if not isinstance(reuse, bool):
        raise DomainError("reuse", reuse, "must be True or False")
    if not reuse or pol.name == "random" or iface.name != "buckets":
        return
    M = int(iface.params["buckets"])
    if iface.n % M:
        raise DomainError("reuse", reuse, "needs buckets of equal size (n divisible by M): "
                          "otherwise Z's law depends on J*'s bucket",
                          "pass reuse=False or choose M dividing n",
                          context=f"n={iface.n}, buckets={M}")


def stream_seq(seed: SeedInfo, *key: int) -> np.random.SeedSequence:
    """The SeedSequence of sub-stream ``key`` (:func:`vistalab._core.child_seq`)."""
    return _stream_seq(seed, *key)
