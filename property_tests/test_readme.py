"""The README is short and runs as written, from a checkout or an installed wheel.

The README is the package's long description, so an installed wheel carries it in
its metadata: these tests read it from the checkout when there is one and from
``importlib.metadata`` otherwise. The manual moved to the documentation site
(``docs/``); the counts it quotes are tied to the code here too, where the docs
sources are at hand (a checkout).
"""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest
from hypothesis import settings
from hypothesis.stateful import run_state_machine_as_test

import vistalab

_REPO = Path(__file__).resolve().parent.parent
_README_LINES_MAX = 160


def _readme() -> str:
    path = _REPO / "README.md"
    if path.is_file() and (_REPO / "pyproject.toml").is_file():
        return path.read_text(encoding="utf-8")
    body = importlib.metadata.metadata("vista-lab").get_payload()
    assert isinstance(body, str) and body.startswith("# vista-lab"), \
        "the installed distribution's metadata lost its long description (README.md)"
    return body


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, re.S)


def _docs(name: str) -> str:
    path = _REPO / "docs" / name
    if not path.is_file():
        pytest.skip(f"needs the documentation sources (docs/{name}): run from a checkout")
    return path.read_text(encoding="utf-8")


def test_readme_is_short():
    """The README says what vista-lab is, how to install it, the two commands, three
    examples and where the manual is; everything else lives on the docs site."""
    lines = _readme().splitlines()
    assert len(lines) <= _README_LINES_MAX, f"README.md has {len(lines)} lines"
    assert len(_python_blocks(_readme())) == 3


def test_readme_has_exactly_two_setup_commands():
    """Exactly two set-up commands: one runs the main job, one runs the tests."""
    text = _readme()
    block = text[text.index("## The two commands"):]
    commands = re.findall(r"^make (\w+)", block.split("```bash\n", 1)[1].split("```")[0], re.M)
    assert commands == ["reproduce", "test"]


@pytest.mark.parametrize("index", range(3))
def test_readme_python_blocks_run(index, tmp_path, monkeypatch, capsys):
    """Every Python block of the README runs as written in a fresh namespace and an
    empty folder, with only the package installed."""
    monkeypatch.chdir(tmp_path)
    code = _python_blocks(_readme())[index]
    exec(compile(code, f"README.md python block {index + 1}", "exec"),  # noqa: S102
         {"__name__": "readme_example"})
    assert capsys.readouterr().out.strip(), "each README example prints its result"


def test_readme_wheel_name_matches_the_version():
    """The README's wheel file name carries the installed version."""
    names = re.findall(r"vista_lab-([0-9][^-]*)-py3-none-any\.whl", _readme())
    assert names and set(names) == {vistalab.__version__}


def test_versions_agree():
    """pyproject, the installed metadata, CITATION.cff and the newest CHANGELOG heading
    carry one version (the release policy stated in CHANGELOG.md)."""
    changelog = _REPO / "CHANGELOG.md"
    if not changelog.is_file():
        pytest.skip("needs CHANGELOG.md and CITATION.cff: run from a checkout")
    newest = re.search(r"^## (\d+\.\d+\.\d+) - \d{4}-\d{2}-\d{2}$",
                       changelog.read_text(encoding="utf-8"), re.M)
    cff = re.search(r'^version: "([^"]+)"$',
                    (_REPO / "CITATION.cff").read_text(encoding="utf-8"), re.M)
    project = re.search(r'^version = "([^"]+)"$',
                        (_REPO / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert newest and cff and project
    assert {newest.group(1), cff.group(1), project.group(1), vistalab.__version__} == \
        {project.group(1)}


def test_guide_counts_match_the_code():
    """The counts the user guide quotes come from the code: the number of named proof
    steps (`verify --list`) and the number of figures (report line and figure list)."""
    from vistalab.figures import FIGURE_NAMES
    from vistalab.theory import list_steps

    proofs = _docs("guide/proofs.md")
    steps = re.search(r"encoded as (\d+) named steps", proofs)
    assert steps is not None and int(steps.group(1)) == len(list_steps())
    reproduce = _docs("guide/reproduce.md")
    report = re.search(r"and the (\d+) figures with captions", reproduce)
    assert report is not None and int(report.group(1)) == len(FIGURE_NAMES)
    listed = reproduce[reproduce.index("The figures:\n"):].split("\n\n")[1]
    numbers = [int(m) for m in re.findall(r"^(\d+)\. ", listed, re.M)]
    assert numbers == list(range(1, len(FIGURE_NAMES) + 1))


def test_testing_kit_guide_example_runs(capsys):
    """The testing-kit page's example runs: its assertions hold, its printed first
    problem is the one the page shows, and the machine it defines passes a few
    examples."""
    text = _docs("guide/testing-kit.md")
    mark = "<!-- test-your-own:"
    assert mark in text, "the testing-kit page lost its test-your-own example"
    block = re.search(r"```python\n(.*?)```", text[text.index(mark):], re.S)
    assert block is not None
    code = block.group(1)
    namespace: dict = {"__name__": "guide_example"}
    exec(compile(code, "docs/guide/testing-kit.md", "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out.strip()
    shown = re.search(r"print\(check_store.*\n# (.*)\n", code)
    assert shown is not None and printed == shown.group(1)
    run_state_machine_as_test(namespace["MyMachine"],
                              settings=settings(max_examples=5, deadline=None))
