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

__all__ = ["Conformance", "vista_conformance", "vista_workspace"]


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
