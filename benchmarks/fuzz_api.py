"""The Python API fuzzer's full run (the error contract, DESIGN rule 6): every
public callable of every public ``__all__`` called with every hostile value in
every parameter (functions, classes, and every public method a public class defines,
on a fresh instance); prints the counts (calls, callables, foreign exceptions, hangs
under the per-call timeout, undocumented NaN/inf, methods without an instance), the
same counts per public module, and examples. The test suite runs a seeded sample of the
same calls (``property_tests/test_api_fuzz.py``).

    python benchmarks/fuzz_api.py [--timeout 5] [--only NAME] [--examples 40] [--json]
                                  [--progress]

Exit status 1 if anything broke the contract.
"""

from __future__ import annotations

import argparse
import json
import sys

from vistalab.tests._api_fuzz import run_in_child


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--timeout", type=float, default=5.0, help="per-call timeout (s)")
    ap.add_argument("--only", default=None, help="fuzz callables whose name contains this")
    ap.add_argument("--sample", type=int, default=None, help="a seeded sample of calls")
    ap.add_argument("--examples", type=int, default=40, help="examples printed")
    ap.add_argument("--json", action="store_true", help="print the whole report as JSON")
    ap.add_argument("--progress", action="store_true",
                    help="print to stderr each call that breaks the contract, and "
                         "the counts every 1,000 calls")
    args = ap.parse_args()
    rep = run_in_child(timeout=args.timeout, only=args.only, sample=args.sample,
                       max_examples=100_000, progress=args.progress)
    if args.json:
        print(json.dumps(rep.as_dict(), indent=1))
    else:
        print(f"calls={rep.calls} callables={rep.callables} contract={rep.contract} "
              f"ok={rep.ok} foreign={rep.foreign} "
              f"(in {len(rep.foreign_callables)} callables) hangs={rep.hangs} "
              f"nan_inf={rep.nan_inf}")
        print("foreign by type:", rep.by_type)
        print(f"{'module':24} {'callables':>9} {'calls':>7} {'foreign':>7} {'hangs':>5} "
              f"{'nan_inf':>7} {'no_instance':>11}")
        for mod, c in rep.by_module.items():
            print(f"{mod:24} {c['callables']:>9} {c['calls']:>7} {c['foreign']:>7} "
                  f"{c['hangs']:>5} {c['nan_inf']:>7} {c['no_instance']:>11}")
        if rep.no_instance_classes:
            print("methods not called (no instance):", ", ".join(rep.no_instance_classes))
        for line in rep.examples[: args.examples]:
            print(" ", line)
    return 1 if rep.foreign or rep.hangs or rep.nan_inf or rep.no_instance else 0


if __name__ == "__main__":
    sys.exit(main())
