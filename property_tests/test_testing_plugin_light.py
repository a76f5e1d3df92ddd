"""The pytest plugin costs nothing until used: pytest loads it in every session of
an environment where vista-lab is installed, so a run that requests no vista-lab
fixture must not import numpy or Hypothesis through it (the kit loads on use)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

_UNRELATED = '''
import sys

def test_unrelated():
    print("LOADED", sorted(m for m in ("numpy", "hypothesis", "vistalab.testing")
                           if m in sys.modules))
'''


def _run(tmp_path, plugin: str) -> str:
    """Run pytest on an unrelated test file with only ``plugin`` loaded (autoload off,
    so no other installed plugin can import numpy or Hypothesis), in a folder outside
    this suite (no conftest)."""
    (tmp_path / "test_unrelated.py").write_text(_UNRELATED)
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-p", plugin,
         "--rootdir", str(tmp_path), str(tmp_path / "test_unrelated.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return next(line for line in proc.stdout.splitlines() if "LOADED" in line)


def test_plugin_imports_neither_numpy_nor_hypothesis(tmp_path):
    """The registered entry point (``pytest11: vistalab``) loaded alone: nothing heavy."""
    from importlib.metadata import entry_points

    (entry,) = [e for e in entry_points(group="pytest11") if e.name == "vistalab"]
    assert entry.value == "vistalab._pytest_plugin"
    assert _run(tmp_path, entry.value).endswith("LOADED []")


def test_the_check_sees_a_heavy_plugin(tmp_path):
    """The check can fail: the kit's own package as a plugin imports both."""
    line = _run(tmp_path, "vistalab.testing.plugin")
    assert "'numpy'" in line and "'hypothesis'" in line


@pytest.mark.parametrize("name", ["Conformance", "ConformanceSuite", "conformance",
                                  "vista_conformance", "vista_workspace"])
def test_documented_module_reexports_the_fixtures(name):
    """``vistalab.testing.plugin`` (the documented name) is the same plugin."""
    import vistalab._pytest_plugin as light
    import vistalab.testing.plugin as documented

    assert getattr(documented, name) is getattr(light, name)
