"""Recovery-task simulator throughput (Proposition 1's T_{N,k}).

No target in the issue; this prints trials per CPU-second of
``sims.simulate_recovery`` (packed bits, trials vectorised in blocks) against
a naive per-trial implementation measured in the same run (Python integers
as k-bit blocks, one trial at a time), for every registered strategy.

    .venv/bin/python benchmarks/bench_sims_recovery.py
"""

from __future__ import annotations

import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))

from _common import Report, best_of, run  # noqa: E402

from vistalab import sims  # noqa: E402

N, K = 64, 4096
BUDGET = N * K // 4


def _naive(name: str, trials: int, seed: int = 1) -> int:
    """One trial at a time with Python ints; same strategies, same budget."""
    rnd = random.Random(seed)
    h = math.ceil(math.log2(N))
    wins = 0
    for _ in range(trials):
        blocks = [rnd.getrandbits(K) for _ in range(N)]
        i = rnd.randrange(N)
        if name == "keep-blocks":
            s = BUDGET // K
            guess = blocks[i] if i < s else rnd.getrandbits(K)
        elif name == "keep-bits":
            b = BUDGET // N
            kept = [x >> (K - b) for x in blocks]
            guess = (kept[i] << (K - b)) | rnd.getrandbits(K - b)
        elif name == "random-subset":
            s = BUDGET // (K + h)
            chosen = dict.fromkeys(rnd.sample(range(N), s))
            store = {j: blocks[j] for j in chosen}
            guess = store[i] if i in store else rnd.getrandbits(K)
        else:  # recover: archive everything, read back the revealed block
            archive = dict(enumerate(blocks))
            guess = archive[i]
        wins += guess == blocks[i]
    return wins


def main() -> int:
    rep = Report(f"recovery task T_(N={N}, k={K}), budget {BUDGET} bits")
    rep.note("trials per CPU-second; ratio = vectorised / naive per-trial Python")
    fast_trials, naive_trials = 4000, 200
    for name in sims.STRATEGIES:
        budget = BUDGET if name != "recover" else N * K
        wall, cpu, res = best_of(lambda name=name, budget=budget: sims.simulate_recovery(
            N, K, budget, name, trials=fast_trials, rng=1), 2)
        nwall, ncpu, _ = best_of(lambda name=name: _naive(name, naive_trials), 1)
        fast, naive = fast_trials / cpu, naive_trials / ncpu
        rep.row(f"{name:<14} trials/s", f"{fast:.3g} vs naive {naive:.3g}  ratio "
                f"{fast / naive:.3g}x  (success {res.success:.4f}, exact {res.exact_success})")
    return rep.finish()


if __name__ == "__main__":
    run(main)
