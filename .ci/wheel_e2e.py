#!/usr/bin/env python3
"""Packaging check, run by .ci/run after the test suite ("everything
runnable from an installed wheel").

Builds the wheel from this checkout (``pip wheel . --no-deps``), installs it
with ``--no-deps --no-index`` into a fresh venv created with
``--system-site-packages`` (the third-party dependencies come from the system
Python; nothing is downloaded for the install), and, from a folder outside the
repository, checks that:

1. the wheel holds exactly one top-level package, ``vistalab`` (plus its
   dist-info), including the example files and the shipped tests;
2. ``vista-lab reproduce --quick --out DIR`` succeeds and writes the report;
3. ``vista-lab examples DIR`` then ``vista-lab sweep DIR/sweeps/small.toml
   --workers 2`` succeed;
4. every requirement of ``vista-lab[all]`` (the wheel's own metadata) is installed
   (``.ci/extra_sizes.py --check all``), and every tutorial of ``docs/tutorials``,
   its code cells run as one script, exits 0 there with ``[all]`` alone to import;
5. a new author's path: in a folder outside the repository, a five-line test file of
   the ``conformance`` fixture and ``pytest`` run the conformance suite on a trimmer;
   the failure prints a shrunk counterexample and its check id and writes a standalone
   reproducer, which reproduces the failure when run alone;
6. the whole shipped suite passes with ``python -m pytest --pyargs vistalab.tests
   -n 2`` (in parallel, as ``make test`` runs it), and the tests that need the
   repository or the paper skip with a reason that says what to provide.

It is a script, not a test of the suite: it exercises the packaging of the
checkout rather than a property of the code, it takes as long as the
suite plus about two minutes, and as a shipped test it would have
to skip itself in every installed copy. Usage: ``python .ci/wheel_e2e.py``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: The shipped suite, all of it, from the installed wheel (test_lint and
#: test_paper_checks_data skip there, naming what to provide).
PYARGS = ("vistalab.tests",)


def tutorial_scripts(folder: Path) -> dict[str, str]:
    """Each tutorial (a MyST notebook) as one Python script: its code cells in order."""
    cell = re.compile(r"^```\{code-cell\}[^\n]*\n(.*?)^```", re.S | re.M)
    scripts = {}
    for page in sorted(folder.glob("*.md")):
        cells = cell.findall(page.read_text(encoding="utf-8"))
        if cells:
            scripts[page.stem] = "\n".join(cells)
    return scripts


def run(cmd: list[str], cwd: Path, *, expect: int = 0,
        env: dict[str, str] | None = None) -> str:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True,
                          env=None if env is None else {**os.environ, **env})
    took = time.perf_counter() - t0
    print(f"$ {' '.join(str(c) for c in cmd)}  [{took:.0f} s, exit {proc.returncode}]",
          flush=True)
    if proc.returncode != expect:
        sys.stderr.write(proc.stdout[-4000:] + proc.stderr[-4000:])
        raise SystemExit(f"FAILED: exit status {proc.returncode}, expected {expect}")
    return proc.stdout + proc.stderr


def check(cond: bool, what: str) -> None:
    if not cond:
        raise SystemExit(f"FAILED: {what}")
    print(f"ok: {what}")


#: A trimmer a new author might write: it drops the oldest messages one by one, blind
#: to tool calls (it orphans tool results).
AUTHOR_TRIM = '''
def trim(messages, budget, count):
    system = [m for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    while rest and count(system + rest) > budget:
        rest = rest[1:]
    return system + rest
'''

#: The five-line test file of the documented path (docs/guide/conformance-workflow.md).
AUTHOR_TEST = '''from mytrim import trim


def test_trim(conformance):
    conformance.check(trim, protocol="openai", examples=40)
'''


def author_path(py: Path, folder: Path) -> None:
    """The five-line test fails with a counterexample; its reproducer reproduces it
    when run alone (from another folder)."""
    folder.mkdir()
    (folder / "mytrim.py").write_text(AUTHOR_TRIM)
    (folder / "test_trim.py").write_text(AUTHOR_TEST)
    check(len(AUTHOR_TEST.strip().splitlines()) == 5, "the author's test file has five lines")
    out = run([str(py), "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=folder, expect=1)
    check("[protocol.orphan-result]" in out and "shrunk counterexample: [" in out,
          "the failing test prints the check id and the shrunk counterexample")
    # one distinct path: under CI=true pytest prints the failure text a second time,
    # untruncated, in its short test summary
    scripts = sorted({line.split("python ", 1)[1].strip() for line in out.splitlines()
                      if "reproduce alone: python" in line and "orphan_result" in line})
    check(len(scripts) == 1 and Path(scripts[0]).is_file(), "it wrote a standalone reproducer")
    alone = run([str(py), scripts[0]], cwd=folder.parent, expect=1)
    check("REPRODUCED: protocol.orphan-result is still broken" in alone,
          "the reproducer, run alone, reproduces the failure")


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="vista-wheel-") as tmp_name:
        tmp = Path(tmp_name)
        dist = tmp / "dist"
        run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-q", "-w",
             str(dist)], cwd=tmp)
        wheels = sorted(dist.glob("vista_lab-*.whl"))
        check(len(wheels) == 1, f"one wheel built ({[w.name for w in wheels]})")
        names = zipfile.ZipFile(wheels[0]).namelist()
        top = {n.split("/")[0] for n in names}
        dist_info = {t for t in top if t.endswith(".dist-info")}
        check(top - dist_info == {"vistalab"} and len(dist_info) == 1,
              f"exactly one top-level package, vistalab (wheel holds {sorted(top)})")
        for must in ("vistalab/examples/sweeps/small.toml",
                     "vistalab/examples/traces/ops_agent.json", "vistalab/tests/conftest.py",
                     "vistalab/paper_checks/data/main_results.toml",
                     "vistalab/testing/plugin.py", "vistalab/_pytest_plugin.py",
                     "vistalab/examples/conformance/trim.mjs",
                     "vistalab/examples/conformance/run_corpus.mjs"):
            check(must in names, f"the wheel ships {must}")

        venv = tmp / "venv"
        run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], cwd=tmp)
        py, cli = venv / "bin" / "python", venv / "bin" / "vista-lab"
        if sys.prefix != sys.base_prefix:
            # Run from a venv (e.g. the one `make test` creates): its third-party
            # packages are not the base interpreter's "system" site-packages, so list
            # them in a .pth file (a path line; the editable install's own .pth hooks in
            # that folder are not run, so vistalab still comes from the wheel).
            site = run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                       cwd=tmp).strip()
            deps = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
            (Path(site) / "_vista_lab_deps.pth").write_text("\n".join(sorted(deps)) + "\n")
        run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheels[0])],
            cwd=tmp)
        where = run([str(py), "-c", "import vistalab.theory as t; print(t.__file__)"], cwd=tmp)
        check(str(venv) in where and str(REPO) not in where,
              f"vistalab is imported from the venv ({where.strip()})")

        work = tmp / "user"
        work.mkdir()
        run([str(cli), "reproduce", "--quick", "--out", str(work / "out")], cwd=work)
        check((work / "out" / "report.md").is_file(), "reproduce --quick wrote report.md")
        names = run([str(py), "-c", "from vistalab.figures import FIGURE_NAMES as F; "
                     "print(' '.join(F))"], cwd=work).split()
        drawn = sorted(p.stem for p in (work / "out" / "figures").glob("*.png"))
        check(drawn == sorted(names), f"reproduce --quick drew every figure ({len(names)})")

        run([str(cli), "examples", str(work / "ex")], cwd=work)
        run([str(cli), "examples", str(work / "ex")], cwd=work, expect=2)
        run([str(cli), "sweep", str(work / "ex" / "sweeps" / "small.toml"), "--workers", "2",
             "--out", str(work / "sweep")], cwd=work)
        check((work / "sweep" / "results.parquet").is_file(), "the example sweep ran")

        run([str(py), str(REPO / ".ci" / "extra_sizes.py"), "--check", "all"], cwd=work)
        for name, script in tutorial_scripts(REPO / "docs" / "tutorials").items():
            folder = work / "tutorials" / name
            folder.mkdir(parents=True)
            (folder / f"{name}.py").write_text(script, encoding="utf-8")
            run([str(py), f"{name}.py"], cwd=folder, env={"MPLBACKEND": "Agg"})
        check(True, "every tutorial ran as a script from outside the repository")

        author_path(py, work / "author")

        # no:benchmark: the venv sees the system's site-packages, where pytest-benchmark
        # (not used here) warns at the end that xdist disables it
        out = run([str(py), "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:benchmark",
                   "-q", "-rs", "-n", "2", "--dist", "worksteal", "--pyargs", *PYARGS], cwd=work)
        check(" passed" in out and " failed" not in out, "the shipped tests pass from the wheel")
        check("needs the repository checkout" in out, "lint/type tests skip, naming a clone")
        check("VISTA_LAB_PAPER" in out, "paper tests skip, naming VISTA_LAB_PAPER")
        print(next(line for line in reversed(out.splitlines()) if " passed" in line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
