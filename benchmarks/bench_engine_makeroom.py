"""Engine-backed make-room throughput ("Speed").

Target: at n = 1000, at least 200 trials/s with the in-memory payload store and 50 trials/s
with the on-disk store, on this machine, each printed as a ratio against the array simulator
(sims.simulate_makeroom in literal mode: per trial the full observation, the Bayes order and
the archiving process, on arrays) measured in the same run.

The targets are judged on the default mode of simulate_makeroom_engine: a fresh workspace
and J* per trial. The instance is registered once (pinned task + n calibrated blocks) and
every trial forks it with the bulky text at J* (Workspace.fork(substitute=...): the exact
state of registering that instance, checked against a from-scratch build once per run).
Each trial renders the observation, archives through the agent's tool with a preflight
after each archive until normal mode, and reads back every archived load-bearing block.
Calibration (once per run) is excluded and printed; the one build and the check are
included. Both targets are judged on CPU time of the benchmark process (user + system,
so the disk store's own write/fsync/rename system calls count): the machine and its disk
are shared, and wall time also measures the scheduler and other jobs' fsync traffic (an
audit saw the disk row at 45.5 trials/wall-s when the durable-write floor's p95 was 8.24 ms,
20 times its usual 0.4 ms, and at 169/wall-s on a rerun). The disk rows also print the wall
throughput and the durable-write floor (median and p95) measured in the same folder right
after, so the fsync cost stays visible; it is not a target because it is not this code's.

Also printed: the reuse mode (one workspace per 64 trials, archives restored after each
trial, Q_undo hash check), the same runs with payloads on tmpfs (/dev/shm), the disk's
durable-write floor measured in the same folder (temporary file, fsync, rename, folder
fsync: what the DiskStore does per archive) with the throughput that floor alone allows,
and the time of each engine call (fork vs. building, the incremental preflight vs. the full
candidate walk).

    .venv/bin/python benchmarks/bench_engine_makeroom.py [--n 1000] [--kappa 4] [--quick]

Exit status 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))

from _common import Report, best_of, durable_write, run  # noqa: E402

from vistalab import sims  # noqa: E402

INTERFACES = [("ledger", {}), ("buckets", {"buckets": 8}), ("gaussian", {"sigma": 1.0}),
              ("blind", {})]
TARGETS = {"memory": 200.0, "disk": 50.0}


def _engine(n: int, kappa: int, name: str, kw: dict, trials: int, store: str,
            store_dir: str | None, reuse: bool = False) -> object:
    return sims.simulate_makeroom_engine(n, kappa, name, trials=trials, rng=1, store=store,
                                         store_dir=store_dir, array_trials=2000,
                                         rate_trials=64, reuse=reuse, **kw)


def _array_rate(n: int, kappa: int, name: str, kw: dict, trials: int) -> float:
    def go():
        return sims.simulate_makeroom(n, kappa, name, trials=trials, mode="literal", rng=2,
                                      rate_trials=2, **kw)

    best_of(go, 1)
    _, cpu, _ = best_of(go, 2)
    return trials / cpu


def _durable_floor(folder: str, count: int = 40, size: int = 300) -> dict[str, float]:
    """Milliseconds per durable write in ``folder`` (median, p95): the DiskStore's protocol
    (temporary file, fsync, rename, folder fsync) without the engine; and, for comparison
    only, a new file created in place (O_EXCL, fsync, folder fsync), one journal commit but
    not atomic (a crash can leave a torn file under the final name)."""
    data = b"x" * size

    def dir_sync() -> None:
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def atomic(i: int) -> None:
        durable_write(folder, f"floor{i}", data)

    def in_place(i: int) -> None:
        fd = os.open(os.path.join(folder, f"excl{i}"), os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                     0o644)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        dir_sync()

    out = {}
    for label, fn in (("atomic", atomic), ("in_place", in_place)):
        times = []
        for i in range(count):
            t0 = time.perf_counter()
            fn(i)
            times.append(time.perf_counter() - t0)
        times.sort()
        out[label] = 1e3 * statistics.median(times)
        out[label + "_p95"] = 1e3 * times[int(0.95 * (len(times) - 1))]
    for name in os.listdir(folder):
        if name.startswith(("floor", "excl", ".floor")):
            os.unlink(os.path.join(folder, name))
    return out


def _phases(n: int, kappa: int) -> dict[str, float]:
    """Milliseconds per engine call in blind trials at this n (memory store)."""
    import numpy as np
    from vistalab.sims import _engine_makeroom_layout as em
    from vistalab.sims._engine_common import store_iv, tokenizer_iv
    from vistalab.sims._seeding import root_seed

    tok, spec = tokenizer_iv("cl100k_base"), store_iv("memory")
    lay = em._calibrate(n, kappa, max(4, min(40, 900 // kappa)), tok, spec.root, root_seed(3))
    gen = np.random.default_rng(4)
    keys = ("build", "fork", "render", "archive", "preflight", "full candidate", "read",
            "restore")
    t = dict.fromkeys(keys, 0.0)
    calls = dict.fromkeys(keys, 0)

    def timed(key, fn, *args, **kwargs):
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        t[key] += time.perf_counter() - t0
        calls[key] += 1
        return out

    light = None
    for _ in range(5):
        j = int(gen.integers(n))
        budget = lay.budget + lay.budget_offsets[j]
        timed("build", em._build, lay, budget, j, tok, spec.new())
        if light is None:
            light = em._build(lay, budget, None, tok, spec.new())
        ws = timed("fork", light.fork, substitute={lay.ids[j]: lay.heavy[j]})
        timed("render", ws.render)
        done = []
        for p in gen.permutation(n):
            path = timed("archive", ws.context_workspace_archive, lay.ids[p])
            mode = timed("preflight", getattr, ws, "mode")
            ws._touch()  # the same state, counted by walking every unit (the old preflight)
            timed("full candidate", ws._candidate)
            done.append((p, path))
            if mode == "normal":
                break
        for _p, path in done:
            timed("read", ws.read_path, path)
        for p, _ in done:
            timed("restore", ws.restore, lay.ids[p])
    return {k: 1e3 * t[k] / max(1, calls[k]) for k in keys}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--kappa", type=int, default=4)
    ap.add_argument("--trials", type=int, default=256, help="memory trials per cell")
    ap.add_argument("--quick", action="store_true", help="n=200, fewer trials")
    args = ap.parse_args()
    n, kappa, trials = (200, args.kappa, 128) if args.quick else (args.n, args.kappa,
                                                                  args.trials)
    rep = Report(f"engine-backed make-room, n={n}, kappa={kappa}")
    disk_dir = tempfile.mkdtemp(prefix="vista-bench-")
    shm = tempfile.mkdtemp(prefix="vista-bench-", dir="/dev/shm") \
        if os.path.isdir("/dev/shm") else None
    worst_floor = worst_p95 = 0.0
    try:
        for name, kw in INTERFACES:
            base = _array_rate(n, kappa, name, kw, 400)
            res = _engine(n, kappa, name, kw, trials, "memory", None)
            rate = res.trials / res.cpu_seconds
            rep.row(f"{name:<9} fresh workspace per trial, memory",
                    f"{rate:8.1f} trials/CPU-s ({res.trials_per_second:.1f}/wall-s) = "
                    f"{rate / base:.2e} x array literal ({base:,.0f}/s); E[Z]={res.mean_z:.2f},"
                    f" byte-exact {res.all_recoveries_byte_exact}", ">= 200/CPU-s",
                    rate >= TARGETS["memory"])
            reuse = _engine(n, kappa, name, kw, trials, "memory", None, True)
            rr = reuse.trials / reuse.cpu_seconds
            rep.row(f"{name:<9} reuse (restore after each trial), memory",
                    f"{rr:8.1f} trials/CPU-s = {rr / base:.2e} x array literal; "
                    f"undo ok {reuse.undo_mismatches == 0}")
            for label, where in (("disk", disk_dir), ("disk on tmpfs", shm)):
                if where is None:
                    continue
                folder = os.path.join(where, f"{name}-archive")
                d = _engine(n, kappa, name, kw, max(32, trials // 4), "disk", folder)
                floor = _durable_floor(folder)
                per_trial = d.archive_events / d.trials
                bound = 1e3 / (per_trial * floor["atomic"])
                wall = d.trials_per_second
                cpu_rate = d.trials / d.cpu_seconds
                judged = label == "disk"
                if judged:
                    worst_floor = max(worst_floor, floor["atomic"])
                    worst_p95 = max(worst_p95, floor["atomic_p95"])
                rep.row(f"{name:<9} fresh workspace per trial, {label}",
                        f"{cpu_rate:8.1f} trials/CPU-s ({wall:.1f}/wall-s) = "
                        f"{cpu_rate / base:.2e} x array literal; {per_trial:.2f} durable writes "
                        f"per trial, floor {floor['atomic']:.2f} ms (p95 "
                        f"{floor['atomic_p95']:.2f}) -> at most {bound:,.0f} trials/s from the "
                        f"disk alone; in-place O_EXCL write {floor['in_place']:.2f} ms",
                        ">= 50/CPU-s" if judged else None,
                        cpu_rate >= TARGETS["disk"] if judged else None)
    finally:
        shutil.rmtree(disk_dir, ignore_errors=True)
        if shm is not None:
            shutil.rmtree(shm, ignore_errors=True)
    ph = _phases(n, kappa)
    rep.note("per engine call, blind trials, memory store (ms): "
             + ", ".join(f"{k} {v:.3f}" for k, v in ph.items()))
    rep.note(f"fork / build = {ph['fork'] / ph['build']:.3f}; incremental preflight / full "
             f"candidate walk = {ph['preflight'] / ph['full candidate']:.3f}")
    rep.note("the disk store writes each payload durably before its block leaves the prompt "
             "(temporary file, fsync, rename, folder fsync): one or more durable writes per "
             "trial; the floor line says what that alone allows on this disk now "
             f"(per write, worst median {worst_floor:.2f} ms, worst p95 {worst_p95:.2f} ms; "
             "the /wall-s figures include those waits and are not judged)")
    return rep.finish()


if __name__ == "__main__":
    run(main)
