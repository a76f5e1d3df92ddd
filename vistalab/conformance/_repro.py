"""Reproducers a maintainer can run: for each broken check, the JSON case file
(:meth:`Violation.write`, with the manager's declarations, read back by
``vista-lab conformance --replay``) and a standalone Python script that calls
the manager on the shrunk counterexample at its budget and prints what breaks,
without the suite's conversation generator (Hypothesis is never imported by
the script)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from vistalab._core import atomic_write

from ._model import Violation

__all__ = ["manager_spec", "write_reproducer", "import_root"]


def manager_spec(manager: Any) -> str | None:
    """``module:qualname`` of ``manager`` when that names it again on import
    (a module-level function or class), else None (a lambda, a local function,
    ``__main__``).

    Parameters
    ----------
    manager : object
        A trimmer or an adapter factory.

    Returns
    -------
    str or None
        The spec ``vista-lab conformance`` and the reproducer import.
    """
    mod = getattr(manager, "__module__", None)
    qual = getattr(manager, "__qualname__", None)
    if not isinstance(mod, str) or not isinstance(qual, str) or mod == "__main__":
        return None
    if "<" in qual:
        return None
    obj: Any = sys.modules.get(mod)
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    return f"{mod}:{qual}" if obj is manager else None


def import_root(spec: str | None) -> str | None:
    """The folder that makes ``spec``'s module importable (the parent of its
    top-level package, or the folder of a top-level module), or None."""
    if not spec or ":" not in spec:
        return None
    top = spec.partition(":")[0].split(".")[0]
    try:
        found = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    origin = getattr(found, "origin", None) if found is not None else None
    if not origin or origin in ("built-in", "frozen"):
        return None
    path = Path(origin).resolve()
    root = path.parent.parent if path.name == "__init__.py" else path.parent
    return str(root)


_SCRIPT = '''#!/usr/bin/env python3
"""Standalone reproducer: {manager} breaks the conformance check {check}.

{message}

Found by `vista-lab conformance` (vista-lab's suite of the paper's workspace
invariants, Methodology, "Workspace invariants"). This script calls the manager
on the shrunk counterexample below at its budget ({budget:,} tokens, counted with
{counter_text}) and prints what breaks; it does not use the suite's conversation
generator. Exit status 1 while the check is still broken, 0 once it holds.

    python {script_name} [--manager module:function]
"""

import argparse
import json
import os
import sys

CASE = json.loads({case_json!r})
MANAGER = {spec!r}
SEARCH_PATH = {search!r}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--manager", default=MANAGER, help="module:function to run "
                        "(default: the manager the case was found on)")
    args = parser.parse_args()
    if not args.manager:
        parser.error("--manager module:function is needed: the manager was not importable "
                     "by name (a lambda or a local function)")
    here = os.path.dirname(os.path.abspath(__file__))
    for folder in (os.getcwd(), here, *SEARCH_PATH):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    from vistalab.conformance import as_counter, read_violation, replay, resolve_manager

    case = read_violation(CASE)
    manager = resolve_manager(args.manager)
    count = as_counter(case.counter, case.protocol)
    conversation = case.conversation
    n = len(conversation.get("messages") or []) if isinstance(conversation, dict) \\
        else len(conversation)
    print(f"{{args.manager}} on a {{n}}-message {{case.protocol}} conversation, budget "
          f"{{case.budget:,}} tokens (pinned rule: {{case.pinned}})")
    print("conversation:", json.dumps(conversation, ensure_ascii=False)[:2000])
    broken = replay(case, manager, counter=case.counter)
    for check, message in broken.items():
        print(f"  FAIL {{check}}: {{message}}")
    if case.check in broken:
        print(f"REPRODUCED: {{case.check}} is still broken")
        return 1
    print(f"not reproduced: {{case.check}} holds now"
          + (f" (still broken: {{', '.join(broken)}})" if broken else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def write_reproducer(violation: Violation, folder: str | os.PathLike[str],
                     spec: str | None) -> dict[str, str]:
    """Write ``<check>.json`` (the case) and ``repro_<check>.py`` (the
    standalone script) into ``folder``.

    Parameters
    ----------
    violation : Violation
        The broken check and its shrunk counterexample.
    folder : str or os.PathLike
        Where to write (created if missing).
    spec : str or None
        The manager's ``module:function`` (None: the script asks for
        ``--manager``).

    Returns
    -------
    dict
        ``{"case": path, "script": path}``.
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    case = violation.write(out / f"{violation.check}.json")
    name = f"repro_{violation.check.replace('.', '_').replace('-', '_')}.py"
    root = import_root(spec)
    text = _SCRIPT.format(
        manager=spec or "the manager", check=violation.check,
        message=violation.message.replace('"""', "'''").replace("\\", "\\\\"),
        budget=violation.budget, script_name=name,
        counter_text=violation.counter or "cl100k_base",
        case_json=json.dumps(violation.to_trace(), ensure_ascii=False),
        spec=spec, search=[root] if root else [],
    )
    script = atomic_write(out / name, text.encode("utf-8"))
    os.chmod(script, 0o755)
    return {"case": str(case), "script": str(script)}
