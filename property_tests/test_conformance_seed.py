"""The same seed and manager give the same report, whatever else the process
has imported: Hypothesis's constants from loaded local modules stay out of the
suite's draws (``vistalab.conformance._seeded``)."""

from __future__ import annotations

import json
import subprocess
import sys

SCRIPT = """
import json, sys
if sys.argv[1] == "extra":
    sys.path.insert(0, sys.argv[2])
    import manyconst  # noqa: F401  (a local module full of constants)
from vistalab.conformance import check, tail_trimmer

def reversing(messages, budget, count):
    out = tail_trimmer(messages, budget, count)
    return out[::-1] if len(out) > 2 else out

report = check(reversing, protocol="openai", examples=30, seed=3)
print(json.dumps({"conversations": report.conversations,
                  "violations": [v.to_dict() for v in report.violations]},
                 sort_keys=True, default=repr))
"""


def _report(tmp_path, mode: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, mode, str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_a_report_does_not_depend_on_the_modules_loaded(tmp_path):
    """Two processes, one of which has imported a module of 400 integers and 350
    strings Hypothesis would mix into its draws: the same conversations are
    tried and the same counterexamples reported. (Without the guard the second
    process tried 264 conversations instead of 285 and reported other
    counterexamples: checked by hand by replacing ``seed_only`` with
    ``contextlib.nullcontext``.)"""
    ints = list(range(0, 2800, 7))
    strs = [f"w{i}" for i in range(300)] + [f"call_{i}" for i in range(50)]
    (tmp_path / "manyconst.py").write_text(f"A = {ints!r}\nS = {strs!r}\nF = [0.5, 1.5, 1e3]\n")
    plain, extra = _report(tmp_path, "plain"), _report(tmp_path, "extra")
    assert plain["violations"], "the reversing manager must be caught"
    assert extra == plain


def test_the_guard_restores_hypothesis_state():
    """Outside the block the caller's own Hypothesis runs see local constants
    again (the module function is put back)."""
    from hypothesis.internal.conjecture import providers

    from vistalab.conformance._seeded import seed_only

    before = providers._get_local_constants
    with seed_only():
        assert providers._get_local_constants is not before
        assert len(providers._get_local_constants()) == 0
    assert providers._get_local_constants is before
