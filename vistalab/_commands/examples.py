"""``vista-lab examples DIR``: copy the shipped example files (sweep configs,
sample traces) into a new or empty folder."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from vistalab._core import DomainError, atomic_write

from .._examples import example_files


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "examples",
        help="copy the example sweep configs and sample traces into DIR",
        description=(
            "Copy the example files shipped with vista-lab into DIR: sweeps/*.toml "
            "(for `vista-lab sweep DIR/sweeps/small.toml`) and traces/* (for "
            "`vista-lab workspace replay`). DIR must be new or empty."
        ),
    )
    parser.add_argument("dir", metavar="DIR", help="destination folder (new or empty)")
    parser.set_defaults(func=run, _parser=parser)


def copy_examples(dest: str | Path) -> list[Path]:
    """Copy every shipped example into ``dest`` (created if missing); return the new files.

    Raises
    ------
    DomainError
        If ``dest`` exists and is not an empty folder (nothing is overwritten).
    """
    target = Path(dest)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        what = "a file" if not target.is_dir() else "a folder that is not empty"
        raise DomainError("DIR", str(target), f"must be a new or empty folder (it is {what})",
                          "choose another folder; nothing is overwritten")
    written = []
    for name, src in example_files().items():
        written.append(atomic_write(target / name, src.read_bytes()))
    return written


def run(args: argparse.Namespace) -> int:
    from .._paths import output_dir

    for path in copy_examples(output_dir("DIR", args.dir)):
        print(path)
    return 0
