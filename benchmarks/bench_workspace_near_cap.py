"""A tool result just over the per-result cap, for every shipped tokenizer and
text shape (paper, "Implementation Details": the budget guard refuses a result
over the cap before it enters the context).

Far over the cap a result is refused from a lower bound on its tokens
(``bench_workspace_scaling.py --big-mb``); at 1.05 times the cap no cheap
bound reaches it, so the guard counts the result until its count passes the
cap. Each row prints that refusal (fastest of ``--repeats``) beside the
tokenizer's own ``count`` of the whole text, the cost of counting it with no
bound at all. Exit status 1 when a refusal misses the 50 ms target.

    python benchmarks/bench_workspace_near_cap.py [--tokenizers deepseek_v4]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine_line  # noqa: E402
from _workspace_refusal import near_cap_rows  # noqa: E402
from _workspace_sweep import TOKENIZER_NAMES  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tokenizers", default=",".join(TOKENIZER_NAMES))
    p.add_argument("--budget", type=int, default=128_000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    args = argparse.Namespace(
        big_tokenizers=a.tokenizers, big_budget=a.budget, big_repeats=a.repeats, seed=a.seed
    )
    print(f"# {machine_line()}")
    failures: list[str] = []
    near_cap_rows(args, failures)
    print(f"# {machine_line()}")
    if failures:
        print("MISS: " + ", ".join(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
