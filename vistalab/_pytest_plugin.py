"""pytest plugin of vista-lab (entry point ``pytest11: vistalab``): fixtures for
testing your own tokenizer, store, interface, policy or strategy.

Import-light on purpose: pytest loads it in every session of an environment
where vista-lab is installed, so it imports only pytest and the standard library;
the kit (:mod:`vistalab.testing`: Hypothesis, numpy, the workspace engine) is
imported by the fixtures when a test requests one. It lives outside the
``vistalab.testing`` package because importing ``vistalab.testing.plugin`` would
first run that package's heavy ``__init__``; ``vistalab.testing.plugin`` re-exports
it for ``-p vistalab.testing.plugin`` and ``pytest_plugins = [...]`` users.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

__all__ = ["Conformance", "ConformanceSuite", "conformance", "vista_conformance",
           "vista_workspace"]


class Conformance:
    """The ``check_*`` functions of :mod:`vistalab.testing`, failing the test with the
    problems listed instead of returning them."""

    def _fail_on(self, what: str, problems: list[str]) -> None:
        if problems:
            pytest.fail(f"{what} does not conform:\n  " + "\n  ".join(problems), pytrace=False)

    def tokenizer(self, tok: Any, **kwargs: Any) -> None:
        from vistalab.testing import check_tokenizer

        self._fail_on(f"tokenizer {getattr(tok, 'name', tok)!r}", check_tokenizer(tok, **kwargs))

    def store(self, factory: Callable[[Path], Any], **kwargs: Any) -> None:
        from vistalab.testing import check_store

        self._fail_on("store", check_store(factory, **kwargs))

    def interface(self, iface: Any, **kwargs: Any) -> None:
        from vistalab.testing import check_interface

        self._fail_on(f"interface {getattr(iface, 'name', iface)!r}",
                      check_interface(iface, **kwargs))

    def policy(self, policy: Any, **kwargs: Any) -> None:
        from vistalab.testing import check_policy

        self._fail_on(f"policy {getattr(policy, 'name', policy)!r}", check_policy(policy, **kwargs))

    def strategy(self, strategy: Any, **kwargs: Any) -> None:
        from vistalab.testing import check_strategy

        self._fail_on(f"strategy {getattr(strategy, 'name', strategy)!r}",
                      check_strategy(strategy, **kwargs))


class ConformanceSuite:
    """The conformance suite of :mod:`vistalab.conformance` as a pytest helper
    (the ``conformance`` fixture): :meth:`check` fails the test with the report.

    Parameters
    ----------
    out : pathlib.Path
        The folder the reproducers of a failing check go to.
    baseline : str, optional
        The session's ``--conformance-baseline`` (a default for :meth:`check`).
    write_baseline : str, optional
        The session's ``--conformance-write-baseline``.
    """

    def __init__(self, out: Path, baseline: str | None = None,
                 write_baseline: str | None = None) -> None:
        self.out = out
        self.baseline = baseline
        self.write_baseline = write_baseline

    def check(self, manager: Any, *, baseline: str | None = None,
              write_baseline: str | None = None, **options: Any) -> Any:
        """Run the suite on ``manager``; fail the test when a check breaks.

        Each broken check is shrunk to a minimal counterexample and written
        (under :attr:`out`) as a case file and a standalone script that
        reproduces it when run alone; the failure shows the check id, the
        counterexample, the script and a ``--replay`` command.

        Parameters
        ----------
        manager : callable
            A trimmer ``(messages, budget, count)`` or an adapter factory.
        baseline : str, optional
            A baseline file: its listed check ids are expected failures; the
            test fails on a broken check it does not list, and on a listed
            one that now holds (stale).
        write_baseline : str, optional
            Write the broken checks as a baseline file (the test then passes).
        **options
            The options of :func:`vistalab.conformance.check` (``protocol``,
            ``examples``, ``seed``, ``budgets``, ``pinned``, ``strict``,
            ``counter``, ``timeout``).

        Returns
        -------
        ConformanceReport
            The report, when the test does not fail.
        """
        from vistalab.conformance import check
        from vistalab.conformance._repro import manager_spec, write_reproducer

        report = check(manager, **options)
        baseline = baseline if baseline is not None else self.baseline
        write_baseline = write_baseline if write_baseline is not None else self.write_baseline
        spec = manager_spec(manager)
        written = {v.check: write_reproducer(v, self.out, spec) for v in report.violations}
        lines: list[str] = []
        failed = not report.ok
        if baseline is not None:
            from vistalab.conformance._baseline import read_baseline

            verdict = read_baseline(baseline).judge(v.check for v in report.violations)
            lines += verdict.lines(str(baseline))
            failed = not verdict.ok
        if write_baseline is not None:
            from vistalab.conformance._baseline import write_baseline as write

            write(write_baseline, report)
            failed = failed and baseline is not None
        if failed:
            pytest.fail(_failure_text(report, written, spec, lines), pytrace=False)
        return report


def _failure_text(report: Any, written: dict[str, dict[str, str]], spec: str | None,
                  lines: list[str]) -> str:
    import json

    head = (f"{report.manager} breaks {len(report.violations)} conformance check(s) "
            f"({report.protocol}, {report.conversations} conversations, seed {report.seed}):")
    out = [head]
    for v in report.violations:
        files = written[v.check]
        conv = json.dumps(v.conversation, ensure_ascii=False)
        out += [
            f"[{v.check}] {v.message}",
            f"  budget {v.budget:,} tokens; shrunk counterexample: "
            f"{conv if len(conv) <= 1500 else conv[:1497] + '...'}",
            f"  reproduce alone: python {files['script']}",
            f"  replay: vista-lab conformance --replay {files['case']}"
            + (f" {spec}" if spec else " MODULE:FUNCTION"),
        ]
    return "\n".join(out + lines)


def _suite(config: Any, name: str) -> ConformanceSuite:
    import re

    # getoption with a default: the fixture also works where this module's options
    # were not added (``vistalab.testing.plugin`` loaded with autoload off)
    root = config.getoption("conformance_out", None) or str(Path(config.rootpath) /
                                                             ".vista-lab-conformance")
    folder = Path(root) / re.sub(r"[^A-Za-z0-9_.-]+", "_", name)[:120]
    return ConformanceSuite(folder, config.getoption("conformance_baseline", None),
                            config.getoption("conformance_write_baseline", None))


@pytest.fixture
def conformance(request: Any) -> ConformanceSuite:
    """``conformance.check(manager, protocol="openai", ...)``: run the conformance
    suite on a context manager and fail the test with the shrunk counterexample,
    its check id, a standalone reproducer and a replay command."""
    return _suite(request.config, request.node.nodeid)


def pytest_addoption(parser: Any) -> None:
    """The plugin's options (group ``vista-lab conformance``)."""
    group = parser.getgroup("vista-lab conformance")
    group.addoption("--conformance", action="append", default=[], metavar="MODULE:FN",
                    help="also run the conformance suite on this manager (one test each)")
    group.addoption("--conformance-protocol", default="openai",
                    choices=("openai", "anthropic", "responses", "gemini"),
                    help="wire format of --conformance runs (default openai)")
    group.addoption("--conformance-examples", default=200, type=int, metavar="N",
                    help="conversations per --conformance run (default 200)")
    group.addoption("--conformance-baseline", default=None, metavar="FILE",
                    help="expected failures (check ids) for conformance checks")
    group.addoption("--conformance-write-baseline", default=None, metavar="FILE",
                    help="write the broken checks as a baseline file")
    group.addoption("--conformance-out", default=None, metavar="DIR",
                    help="where reproducers go (default .vista-lab-conformance in the rootdir)")


class ConformanceItem(pytest.Item):
    """One ``--conformance MODULE:FN`` run as a test item."""

    def __init__(self, *, spec: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.spec = spec

    def runtest(self) -> None:
        """Resolve the manager (the current folder importable) and check it."""
        import os
        import sys

        if os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        from vistalab.conformance import resolve_manager

        manager = resolve_manager(self.spec)
        _suite(self.config, self.name).check(
            manager, protocol=self.config.getoption("conformance_protocol"),
            examples=self.config.getoption("conformance_examples"))

    def repr_failure(self, excinfo: Any, style: Any = None) -> Any:
        """The report text, not a traceback, for a failed check."""
        if excinfo.errisinstance(pytest.fail.Exception):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Any, int | None, str]:
        """Where the item comes from: the command line option."""
        return self.path, None, f"conformance of {self.spec}"


def pytest_collection_modifyitems(session: Any, config: Any, items: list[Any]) -> None:
    """Add one item per ``--conformance MODULE:FN``."""
    for spec in config.getoption("conformance") or ():
        items.append(ConformanceItem.from_parent(session, name=f"conformance[{spec}]",
                                                 spec=spec))


@pytest.fixture
def vista_conformance() -> Conformance:
    """``vista_conformance.store(factory)``, ``.tokenizer(tok)``, ``.interface(iface)``,
    ``.policy(policy)``, ``.strategy(strategy)``: fail the test with every problem found."""
    return Conformance()


@pytest.fixture
def vista_workspace(tmp_path: Path) -> Callable[..., Any]:
    """Factory ``vista_workspace(budget=4000, tokenizer="approx", store=None)`` of
    Workspaces; ``store=None`` means a DiskStore in the test's temporary folder."""
    from vistalab.workspace import DiskStore, Workspace

    def make(budget: int = 4000, *, tokenizer: Any = "approx", store: Any = None,
             **kwargs: Any) -> Any:
        if store is None:
            store = DiskStore(tmp_path / "archive")
        return Workspace(budget, tokenizer=tokenizer, store=store, **kwargs)

    return make
