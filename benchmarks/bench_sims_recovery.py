"""Recovery-task simulator throughput (Proposition 1's T_{N,k}).

Prints trials per CPU-second of ``sims.simulate_recovery`` (packed bits,
trials vectorised in blocks) against a naive per-trial implementation
measured in the same run (Python integers as k-bit blocks, one trial at a
time), for every registered strategy, and each strategy's share of the
floor: drawing the trials' N*k random bits (plus the copy of the truth the
simulator keeps), timed alone in the same run.

Target, every row (CPU time, same run): at least 0.35 of the floor and at
least 1x the naive. Why these: the floor is the work no implementation can
skip (the trials' random bits, drawn vectorised, and the simulator's copy of
the truth), so the share of it measures how much a strategy adds on top;
0.35 lets encode + decode cost at most about twice the floor. It is also
the robust ratio: the floor and the strategies are both vectorised,
memory-bound numpy code, slowed alike by a busy machine, whereas the naive
baseline is almost all C-level ``getrandbits`` (the "naive draws alone"
note measures it) and is slowed less, so the naive ratio moves more with the
load. Not slower than the naive is kept as the second condition. Every row is
measured with the allocator warmed (``_common.warm_allocator``). The audit found
random-subset at 0.53x the naive; in the same warmed state it was 0.61x
(0.11 of the floor: an index-broadcast gather and a per-bit
unpack/concatenate/pack of the state) and is now 3.0x (0.54 of the floor);
the other strategies are at 0.68-0.79 of the floor.

    .venv/bin/python benchmarks/bench_sims_recovery.py

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(__file__))

import numpy as np  # noqa: E402
from _common import Report, best_of, run, warm_allocator  # noqa: E402
from vistalab.sims._recovery_bits import _random_blocks  # noqa: E402

from vistalab import sims  # noqa: E402

N, K = 64, 4096
BUDGET = N * K // 4
FLOOR_SHARE = 0.35
NAIVE_RATIO = 1.0


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

    def floor() -> None:
        gen = np.random.default_rng(1)
        for start in range(0, fast_trials, 256):
            _random_blocks(gen, (min(256, fast_trials - start), N), K).copy()

    def naive_draws() -> None:
        rnd = random.Random(1)
        for _ in range(naive_trials):
            [rnd.getrandbits(K) for _ in range(N)]

    # The same allocator state for every row (see _common.warm_allocator),
    # then an untimed pass of every timed path.
    warm_allocator()
    floor()
    for name in sims.STRATEGIES:
        sims.simulate_recovery(N, K, BUDGET if name != "recover" else N * K, name,
                               trials=fast_trials, rng=1)
    _, fcpu, _ = best_of(floor, 2)
    _, dcpu, _ = best_of(naive_draws, 1)
    floor_rate = fast_trials / fcpu
    rep.note(f"floor (draw N*k bits + copy, vectorised): {floor_rate:.3g} trials/s; "
             f"naive draws alone: {naive_trials / dcpu:.3g} trials/s")
    for name in sims.STRATEGIES:
        budget = BUDGET if name != "recover" else N * K
        wall, cpu, res = best_of(lambda name=name, budget=budget: sims.simulate_recovery(
            N, K, budget, name, trials=fast_trials, rng=1), 2)
        nwall, ncpu, _ = best_of(lambda name=name: _naive(name, naive_trials), 1)
        fast, naive = fast_trials / cpu, naive_trials / ncpu
        rep.row(f"{name:<14} trials/s", f"{fast:.3g} vs naive {naive:.3g}  ratio "
                f"{fast / naive:.3g}x  ({fast / floor_rate:.2f} of floor; success "
                f"{res.success:.4f}, exact {res.exact_success})",
                f">= {FLOOR_SHARE} of floor and >= {NAIVE_RATIO:g}x naive",
                fast / floor_rate >= FLOOR_SHARE and fast / naive >= NAIVE_RATIO)
    return rep.finish()


if __name__ == "__main__":
    run(main)
