"""Write ``property_tests/data/traces/long_session.json``: a 67-message coding-agent
session (system prompt, task, 30 tool rounds, 2 context archives, answer), the
trace the prompt-cache benchmark replays.

The session is synthetic but shaped like a real debugging run: directory
listings and greps are short, source files a few hundred lines, test logs long
(a few thousand tokens each), so the conversation (~75k cl100k tokens) fits a
128k budget and overflows 8k / 16k / 32k. The agent archives two old test logs
midway, as the paper's agent would. Deterministic (fixed seed); rerun to
regenerate byte-identical output.

    .venv/bin/python benchmarks/make_long_session_trace.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

OUT = Path(__file__).resolve().parent.parent / "property_tests/data/traces/long_session.json"
_MODULES = ["parser", "scheduler", "cache", "storage", "auth", "metrics", "cli", "config"]
_WORDS = (
    "value index buffer retry timeout handler request response payload record batch "
    "window token offset cursor session worker queue lease shard replica checksum"
).split()


def _ident(rng: np.random.Generator) -> str:
    return "_".join(rng.choice(_WORDS, size=int(rng.integers(1, 3))))


def _source(rng: np.random.Generator, lines: int) -> str:
    out = []
    for i in range(lines):
        kind = rng.integers(0, 6)
        if kind == 0:
            out.append(f"def {_ident(rng)}({_ident(rng)}, {_ident(rng)}=None):")
        elif kind == 1:
            out.append(f"    if {_ident(rng)} > {int(rng.integers(0, 500))}:")
        elif kind == 2:
            out.append(f"        return self.{_ident(rng)}[{_ident(rng)}]")
        elif kind == 3:
            out.append(f"    {_ident(rng)} = {_ident(rng)}.get({_ident(rng)!r}, {i})")
        elif kind == 4:
            out.append(f"    # {' '.join(rng.choice(_WORDS, size=6))}")
        else:
            out.append("")
    return "\n".join(out)


def _test_log(rng: np.random.Generator, tests: int, failing: int) -> str:
    out = ["============================= test session starts =============================="]
    bad = set(rng.choice(tests, size=failing, replace=False).tolist())
    for t in range(tests):
        mod = rng.choice(_MODULES)
        name = f"tests/test_{mod}.py::test_{_ident(rng)}_{t}"
        out.append(f"{name} {'FAILED' if t in bad else 'PASSED'}")
        if t in bad:
            for _ in range(int(rng.integers(8, 20))):
                out.append(
                    f"E   AssertionError: {_ident(rng)}={int(rng.integers(0, 10**6))} "
                    f"!= {int(rng.integers(0, 10**6))} in {mod}.py:{int(rng.integers(1, 900))}"
                )
    out.append(
        f"======== {failing} failed, {tests - failing} passed in {rng.uniform(3, 40):.2f}s ========"
    )
    return "\n".join(out)


# A coding agent's system prompt is long and fixed (real ones run to thousands
# of tokens); this one is ~1k tokens of ordinary engineering rules.
_SYSTEM = "\n".join(
    [
        "You are a careful software engineer working in a repository on the user's behalf.",
        "",
        "# Working rules",
        "- Read the code before you change it; never guess an API you can look up.",
        "- Prefer the smallest change that fixes the cause, not the symptom.",
        "- Run the relevant tests after every edit and read their output in full.",
        "- Keep unrelated formatting untouched; match the surrounding style.",
        "- Never delete or rewrite tests to make them pass.",
        "- When a test fails intermittently, look for shared state, time and ordering.",
        "- Explain each fix in terms of the invariant that was broken.",
        "",
        "# Tools",
        "- list_dir(path): the entries of a folder.",
        "- grep(pattern, path): matching lines with file and line number.",
        "- read_file(path): the whole file.",
        "- run_tests(args): runs pytest with these arguments and returns its output.",
        "- edit_file(path, patch): applies a unified diff hunk.",
        "",
        "# Output",
        "- Be concise. Quote file paths and line numbers when you refer to code.",
        "- When you are done, summarise the cause, the fix and the evidence.",
    ]
    + [
        f"- Module {m}: owned by the {m} team; see docs/{m}.md for its invariants, "
        f"its public entry points and the tests that cover them (tests/test_{m}.py)."
        for m in _MODULES
    ]
    + ["", "# Style guide"]
    + [
        f"- Rule {i}: " + " ".join(_WORDS[(i * 7 + k) % len(_WORDS)] for k in range(12)) + "."
        for i in range(1, 41)
    ]
)


def build(seed: int = 0) -> list[dict]:
    rng = np.random.default_rng(seed)
    msgs: list[dict] = [
        {
            "role": "system",
            "content": _SYSTEM,
        },
        {
            "role": "user",
            "content": "The nightly build fails intermittently in the scheduler. Find the cause, "
            "fix it, and explain the fix. Keep the test suite green.",
        },
    ]
    call = 0

    def round_(name: str, args: dict, result: str) -> None:
        nonlocal call
        call += 1
        cid = f"call_{call:03d}"
        msgs.append(
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": cid,
                        "type": "function",
                        "function": {"name": name, "arguments": json.dumps(args)},
                    }
                ],
            }
        )
        msgs.append({"role": "tool", "tool_call_id": cid, "content": result})

    plan = ["ls", "grep", "read", "test", "read", "grep", "read", "test", "edit", "test"] * 3
    archive_after = {11: "B10", 21: "B18"}  # after these rounds, archive an old test log
    for r, kind in enumerate(plan):
        mod = str(rng.choice(_MODULES))
        if kind == "ls":
            listing = "\n".join(f"src/{m}/{_ident(rng)}.py" for m in _MODULES for _ in range(4))
            round_("list_dir", {"path": "src"}, listing)
        elif kind == "grep":
            hits = "\n".join(
                f"src/{rng.choice(_MODULES)}/{_ident(rng)}.py:{int(rng.integers(1, 800))}: "
                f"{_ident(rng)}({_ident(rng)})"
                for _ in range(int(rng.integers(10, 40)))
            )
            round_("grep", {"pattern": _ident(rng), "path": "src"}, hits)
        elif kind == "read":
            round_(
                "read_file",
                {"path": f"src/{mod}/core.py"},
                _source(rng, int(rng.integers(120, 320))),
            )
        elif kind == "test":
            round_(
                "run_tests",
                {"args": ["-x", f"tests/test_{mod}.py"]},
                _test_log(rng, int(rng.integers(150, 320)), int(rng.integers(2, 6))),
            )
        else:
            round_(
                "edit_file",
                {"path": f"src/{mod}/core.py", "patch": _source(rng, 12)},
                "ok: 1 hunk applied",
            )
        if r in archive_after:
            call += 1
            cid = f"call_{call:03d}"
            msgs.append(
                {
                    "role": "assistant",
                    "content": "The old test log is no longer needed in view; archiving it.",
                    "tool_calls": [
                        {
                            "id": cid,
                            "type": "function",
                            "function": {
                                "name": "context_workspace_archive",
                                "arguments": json.dumps(
                                    {"block_id": archive_after[r], "replacement": "old test log"}
                                ),
                            },
                        }
                    ],
                }
            )
            msgs.append(
                {"role": "tool", "tool_call_id": cid, "content": "(answered by the engine)"}
            )
    msgs.append(
        {
            "role": "assistant",
            "content": "The scheduler's lease renewal raced with shard rebalancing; the fix takes "
            "the lease lock before reading the replica map. All tests pass.",
        }
    )
    return msgs


def main() -> None:
    msgs = build()
    OUT.write_text(json.dumps(msgs, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT} ({len(msgs)} messages)")


if __name__ == "__main__":
    main()
