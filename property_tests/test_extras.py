"""Optional dependencies are split into extras: with one
third-party package missing, the rest of vista-lab works and the feature that
needs it fails with an error naming the extra to install. Each case runs in a
fresh interpreter where the package is made unimportable."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from vistalab._core import DomainError, MissingExtraError, import_optional


def _run_without(package: str, code: str) -> subprocess.CompletedProcess[str]:
    prelude = f"import sys\nsys.modules[{package!r}] = None  # unimportable, as if not installed\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=300)


def test_bounds_need_no_extra_and_sweep_names_its_extra(tmp_path):
    """A bounds-only install: `vista-lab bound` works without pyarrow; `vista-lab sweep`
    says to install vista-lab[sweep] (one line, exit 2)."""
    proc = _run_without("pyarrow", f"""
        from vistalab.cli import main
        assert main(["bound", "recovery", "--N", "16", "--k", "8", "--budget", "40"]) == 0
        sys.exit(main(["sweep", {str(tmp_path / "x.toml")!r}]))
    """)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().count("\n") == 0
    assert "pip install 'vista-lab[sweep]'" in proc.stderr


@pytest.mark.parametrize(("package", "extra", "code"), [
    ("matplotlib", "figures", "from vistalab.figures import new_figure; new_figure()"),
    ("tiktoken", "workspace",
     "from vistalab.workspace import Workspace; Workspace(4000, tokenizer='cl100k_base')"),
    ("flint", "verify", "from vistalab import theory; theory.recovery_success_bound(16, 8, 40);"
                        " theory.certify_all(only='prop1:*')"),
    ("hypothesis", "testing", "import vistalab.testing"),
    ("hypothesis", "testing", "import vistalab.conformance"),
])
def test_missing_extra_is_named(package, extra, code):
    """figures, workspace (tiktoken), verify (python-flint) and testing (Hypothesis)."""
    proc = _run_without(package, code)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("vistalab._core._errors.MissingExtraError"), proc.stderr[-2000:]
    assert f"pip install 'vista-lab[{extra}]'" in last


def test_import_optional_is_only_for_third_party():
    """First-party code is never imported by name."""
    with pytest.raises(DomainError, match="import first-party code with an import statement"):
        import_optional("vistalab.sims")
    assert import_optional("matplotlib").__name__ == "matplotlib"
    err = MissingExtraError("pyarrow", "sweep", "sweeps")
    assert isinstance(err, ImportError) and "vista-lab[sweep]" in str(err)
