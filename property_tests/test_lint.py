""""Lint/type config (ruff, mypy) in pyproject; code passes them".
Run as tests so the README's one test command checks them too."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Lint and type checks read the source tree: from an installed wheel (pytest --pyargs
# vistalab.tests) there is none, so they skip and say what to provide.
pytestmark = pytest.mark.skipif(
    not ((ROOT / "pyproject.toml").is_file() and (ROOT / "theory").is_dir()),
    reason="needs the repository checkout (ruff and mypy run over the source tree): run "
           "`python -m pytest` from a clone of vista-lab",
)


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    found = str(exe) if exe.exists() else shutil.which(name)
    if found is None:
        pytest.fail(f"{name} is not installed: install the test extra (pip install -e '.[test]')")
    return found


def test_ruff_passes():
    proc = subprocess.run([_tool("ruff"), "check", "--no-cache", "."], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


#: The layer folders that pyproject's ``package-dir`` maps into ``vistalab``.
LAYERS = ("theory", "sims", "workspace", "paper_checks", "figures")


def _namespace_tree(dest: Path) -> Path:
    """A link tree laid out as the installed ``vistalab`` package, for mypy, which
    cannot follow setuptools' ``package-dir`` mapping of the source folders."""
    pkg = dest / "vistalab"
    pkg.mkdir(parents=True)
    for entry in (ROOT / "vistalab").iterdir():
        if entry.name != "__pycache__":
            (pkg / entry.name).symlink_to(entry)
    for layer in LAYERS:
        (pkg / layer).symlink_to(ROOT / layer)
    return dest


@pytest.mark.slow
def test_mypy_passes(tmp_path):
    tree = _namespace_tree(tmp_path / "src")
    proc = subprocess.run([_tool("mypy"), "--cache-dir", str(tmp_path / "cache"),
                           "--config-file", str(ROOT / "pyproject.toml"), "-p", "vistalab"],
                          cwd=tree, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
