"""No shipped file cites the project's issue tracker, which readers cannot see.

Code, docstrings, tests, data and docs cite the paper (section, equation, table) or
a docs page instead. Runs on the installed package (so a wheel is checked too) and,
in a checkout, on the README, the docs sources, the changelog and the benchmarks.
"""

from __future__ import annotations

import re
from pathlib import Path

import vistalab

#: The word followed by a number ("<word> 15", "<Word> 17 item 3", "<words> 13 and
#: 15", "<word> #4"); not the verb ("the blind order issues 255 archives").
TRACKER_REF = re.compile(r"\b[Ii]ssue\s+#?\d+\b|\b[Ii]ssues\s+#?\d+\s*(?:,|and|/)\s*#?\d+")
_SUFFIXES = {".py", ".md", ".toml", ".v", ".txt", ".json", ".cfg", ".cff", ".rst", ""}
_REPO = Path(__file__).resolve().parent.parent


def _files() -> list[Path]:
    roots = [Path(vistalab.__file__).resolve().parent]
    if (_REPO / "pyproject.toml").is_file():
        roots += [_REPO / name for name in ("theory", "sims", "workspace", "paper_checks",
                                            "figures", "property_tests", "examples", "docs",
                                            "benchmarks", ".ci")]
        roots += [_REPO / name for name in ("README.md", "CHANGELOG.md", "Makefile",
                                            "pyproject.toml")]
    files = []
    for root in roots:
        if root.is_file():
            files.append(root)
        elif root.is_dir():
            files += [p for p in root.rglob("*") if p.is_file() and p.suffix in _SUFFIXES
                      and "_build" not in p.parts and "__pycache__" not in p.parts
                      and "node_modules" not in p.parts]  # npm packages are not ours
    return sorted(set(files))


def tracker_refs(text: str) -> list[str]:
    """The tracker references in ``text``."""
    return [m.group(0) for m in TRACKER_REF.finditer(text)]


def test_no_shipped_file_cites_the_tracker():
    hits = []
    for path in _files():
        if path == Path(__file__).resolve():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        hits += [f"{path}: {ref}" for ref in tracker_refs(text)]
    assert hits == []


def test_the_pattern_finds_references_and_spares_the_verb():
    word = "iss" + "ue"  # spelt apart so this probe is not itself a reference
    probe = f"as {word} 15 asks; {word.title()} 17 item 3; {word}s 13 and 15"
    assert tracker_refs(probe) == [f"{word} 15", f"{word.title()} 17", f"{word}s 13 and 15"]
    assert tracker_refs("the blind order issues 255 archives; an issue with 3 parts") == []
