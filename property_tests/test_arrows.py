"""The layers import each other only along DESIGN.md's arrows, with plain import
statements.

The checker reads every first-party module's imports with ``ast`` (including the
imports inside functions) and enforces:

- ``vistalab._core`` imports nothing first-party; ``vistalab/__init__.py`` too
  (it must stay import-light);
- ``theory`` and ``workspace`` import only the core;
- ``sims`` imports theory and workspace (engine mode);
- ``paper_checks`` and ``figures`` import theory, sims and workspace; figures
  also read the paper's tables from ``paper_checks`` (fig6; a sideways arrow
  that cannot form a cycle, since paper_checks never imports figures);
- the conformance suite ``vistalab.conformance`` imports the core and workspace;
- the testing kit ``vistalab.testing`` may import the layers (its pytest
  fixtures run the conformance suite too), not the application;
- the application layer (the rest of ``vistalab``) and the shipped tests
  import everything.

It also refuses first-party imports by name string (``importlib.import_module``,
``importlib.util.find_spec``, ``__import__``) outside the few places that import
a *user's* module by name, each listed below with its reason.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

import vistalab
from vistalab import figures, paper_checks, sims, theory, workspace

LAYERS = ("core", "theory", "workspace", "sims", "paper_checks", "figures", "testing",
          "conformance", "app", "tests", "root")

#: Which layers each layer may import (itself always allowed).
ALLOWED: dict[str, frozenset[str]] = {
    "root": frozenset(),
    "core": frozenset(),
    "theory": frozenset({"core"}),
    "workspace": frozenset({"core"}),
    "sims": frozenset({"core", "theory", "workspace"}),
    "paper_checks": frozenset({"core", "theory", "sims", "workspace"}),
    "figures": frozenset({"core", "theory", "sims", "workspace", "paper_checks"}),
    # the kit's pytest fixtures include the conformance suite's (a sideways arrow that
    # cannot form a cycle: conformance never imports the kit)
    "testing": frozenset({"core", "theory", "sims", "workspace", "conformance", "root"}),
    # the conformance suite checks context managers against the workspace's invariants
    "conformance": frozenset({"core", "workspace", "root"}),
    "app": frozenset(LAYERS) - {"tests"},
    "tests": frozenset(LAYERS),
}

#: Modules allowed to import by name string, and why: each imports a *user's*
#: module (or an optional third-party package), never first-party code.
STRING_IMPORTS_ALLOWED = {
    "vistalab._core._optional": "optional third-party packages (names the extra)",
    "vistalab.paper_checks._registry": "a user's claim module passed to add_plugin",
    "vistalab._sweep._schema": "a user's experiment run function given as 'module:function'",
    "vistalab._sweep._task": "a user's run function / warm-up modules in a worker process",
    "vistalab._commands": "the CLI's lazy command registry (a command's module is imported "
                          "only when it runs; test_cli_lazy loads every entry)",
    "vistalab.tests._api_fuzz": "discovers every public package (a new one is fuzzed without "
                                "being listed)",
    "vistalab.conformance._registry": "a user's context manager given as 'module:function'",
    "vistalab.tests.test_docstrings": "resolves the dotted names of the public API it "
                                      "checks (every public package, found by name)",
    "vistalab.conformance._peers": "whether an optional third-party peer is installed "
    "(find_spec, which does not import it)",
    "vistalab.tests.test_api_fuzz": "resolves the classes the fuzzer's factory table "
                                    "names (every public package, found by name)",
    "vistalab.conformance._repro": "the folder of a user's manager given as 'module:function' "
                                   "(find_spec, which does not import it), for its reproducer",
}

_STRING_IMPORT_CALLS = {"import_module", "find_spec", "__import__"}


def layer_of(module: str) -> str | None:
    """The layer of a dotted module name, or None if it is not first-party."""
    parts = module.split(".")
    if parts[0] != "vistalab":
        return None
    if len(parts) == 1:
        return "root"
    head = parts[1]
    if head == "_core":
        return "core"
    if head in {"theory", "workspace", "sims", "paper_checks", "figures", "testing", "tests",
                "conformance"}:
        return head
    if head == "_pytest_plugin":
        # the kit's pytest plugin, kept outside vistalab.testing so that pytest loading
        # it does not run the kit's heavy __init__
        return "testing"
    return "app"


def _modules(packages: Mapping[str, Path]) -> dict[str, Path]:
    """Every ``.py`` file of each package, by dotted module name."""
    out: dict[str, Path] = {}
    for pkg, base in packages.items():
        for path in sorted(Path(base).rglob("*.py")):
            rel = path.relative_to(base).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([pkg, *parts])
            # A nested mapped package (vistalab.theory inside vistalab/ in a wheel) is
            # named by its own, longer mapping.
            out.setdefault(name, path)
    return out


def _imports(module: str, path: Path, is_package: bool) -> list[tuple[int, str]]:
    """(line, absolute module) of every import statement in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from pkg import sub` may import a subpackage: check both.
            found.append((node.lineno, target))
            found += [(node.lineno, f"{target}.{a.name}") for a in node.names if a.name != "*"]
    return found


def _string_imports(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in _STRING_IMPORT_CALLS:
                lines.append(node.lineno)
    return lines


def arrow_problems(packages: Mapping[str, Path]) -> list[str]:
    """Every import that runs against the arrows, and every first-party import by name
    string, in the packages ``{dotted name: folder}``; [] when the tree conforms."""
    mods = _modules(packages)
    problems = []
    for module, path in sorted(mods.items()):
        src_layer = layer_of(module)
        if src_layer is None:
            continue
        reported: set[int] = set()
        for line, target in _imports(module, path, path.name == "__init__.py"):
            if line in reported:
                continue
            dst_layer = layer_of(target)
            if dst_layer is None or dst_layer == src_layer:
                continue
            if target == "vistalab" and src_layer != "root":
                # `from vistalab import sims` is recorded as both vistalab and vistalab.sims;
                # the bare root only carries __version__.
                continue
            if dst_layer not in ALLOWED[src_layer]:
                reported.add(line)
                problems.append(f"{path}:{line}: {module} ({src_layer}) imports {target} "
                                f"({dst_layer}), against the arrows")
        if module not in STRING_IMPORTS_ALLOWED:
            for line in _string_imports(path):
                problems.append(f"{path}:{line}: {module} imports by name string; "
                                "use an import statement")
    return problems


def _installed_packages() -> dict[str, Path]:
    pkgs: dict[str, Path] = {}
    import vistalab.tests as shipped_tests  # property_tests/ in a checkout, inside the wheel

    for mod in (theory, sims, workspace, paper_checks, figures, vistalab, shipped_tests):
        for p in mod.__path__:
            pkgs.setdefault(mod.__name__, Path(p))
    return pkgs


def test_the_project_follows_the_arrows():
    """DESIGN.md 'Arrows point one way'; no back-arrow, no string import."""
    assert arrow_problems(_installed_packages()) == []


def _tree(tmp_path: Path, files: Mapping[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(text))
    return {"vistalab": tmp_path / "vistalab"}


_CLEAN = {
    "vistalab/__init__.py": "",
    "vistalab/_core/__init__.py": "import os\n",
    "vistalab/theory/__init__.py": "from vistalab._core import DomainError\n",
    "vistalab/workspace/__init__.py": "from .._core import atomic_write\n",
    "vistalab/sims/__init__.py": "from vistalab import theory, workspace\n",
    "vistalab/figures/__init__.py": "from vistalab import paper_checks, sims\n",
    "vistalab/paper_checks/__init__.py": "from vistalab.sims import x\n",
    "vistalab/cli.py": "from vistalab import figures\nfrom . import _commands\n",
}


def test_checker_accepts_a_conforming_tree(tmp_path):
    """The checker returns [] for a synthetic tree that follows the arrows."""
    assert arrow_problems(_tree(tmp_path, _CLEAN)) == []


@pytest.mark.parametrize(
    ("rel", "line", "needle"),
    [
        ("vistalab/theory/_x.py", "from vistalab import sims\n", "vistalab.theory._x (theory)"),
        ("vistalab/theory/_y.py", "def f():\n    from ..sims import g\n", "imports vistalab.sims"),
        ("vistalab/workspace/_z.py", "import vistalab.theory\n", "(workspace) imports"),
        ("vistalab/sims/_a.py", "from vistalab.paper_checks import c\n", "(sims) imports"),
        ("vistalab/paper_checks/_b.py", "from vistalab.figures import f\n", "(paper_checks)"),
        ("vistalab/_core/_c.py", "from vistalab.theory import t\n", "(core) imports"),
        ("vistalab/theory/_d.py", "from vistalab.cli import main\n", "(app)"),
        ("vistalab/__init__.py", "from vistalab import theory\n", "(root) imports"),
        ("vistalab/figures/_e.py",
         "import importlib\nm = importlib.import_module('vistalab.sims')\n", "name string"),
    ],
)
def test_checker_fails_on_a_back_arrow(tmp_path, rel, line, needle):
    """Adding one arrow that runs back up (or a string import) makes the check fail."""
    files = dict(_CLEAN)
    files[rel] = files.get(rel, "") + line
    problems = arrow_problems(_tree(tmp_path, files))
    assert len(problems) == 1 and needle in problems[0], problems


def test_figure_catalog_matches_the_report_order():
    """figures._catalog imports every figure module statically, in FIGURE_NAMES order."""
    from vistalab.figures._catalog import FIGURES

    assert tuple(FIGURES) == figures.FIGURE_NAMES
