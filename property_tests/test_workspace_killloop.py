"""Kill loop: a child process doing random archive, delete, restore,
registration (with budget-guard offloads) and save is SIGKILLed at random
points, 320 times; after every kill the saved state loads (verified: fields,
content hashes, canonical hash, every payload) and is the last acknowledged
save or the one in flight, so no acknowledged payload is lost; and every later
operation of the restarted run works (a refusal of a bad selection is fine; a
store error, a payload conflict or a checksum failure is counted as a failure).
The counts (unloadable, lost, wrong bytes, failing operations) must all be 0.

Children are forked from the test process (the engine already imported), so
a kill round costs milliseconds and the 500 kills stay well under a minute."""

from __future__ import annotations

import os
import random
import select
import signal
import time

import pytest
from vistalab.workspace import (
    DiskStore,
    PayloadIntegrityError,
    Workspace,
    WorkspaceError,
)

KILLS = 320


def _child(folder: str, state: str, seed: int, wfd: int) -> None:  # pragma: no cover - child
    rng = random.Random(seed)
    ws = Workspace.load(state, store=DiskStore(os.path.join(folder, "archive")))
    n = len(ws.blocks)
    os.write(wfd, b"L\n")  # loaded: the operations start
    while True:
        op = rng.random()
        live = [
            b.id for b in ws.blocks if b.status.value in ("visible", "archived", "offloaded")
        ]
        try:
            if op < 0.25 or len(live) < 4:
                n += 1
                cid = f"c{n}"
                ws.register_tool_call(
                    [{"id": cid, "type": "function", "function": {"name": "f", "arguments": "{}"}}]
                )
                ws.register_tool_result(cid, f"result {n} " * rng.randint(5, 60))
            elif op < 0.45:
                ws.archive(",".join(rng.sample(live, rng.randint(1, 2))))
            elif op < 0.55 or len(live) > 30:  # deletes keep the restarts' loads short
                ws.delete(",".join(rng.sample(live, 1 if len(live) <= 30 else 8)), "stale")
            elif op < 0.72:
                ws.restore(rng.choice(live))
            elif op < 0.85:
                os.write(wfd, f"S {ws.state_hash()}\n".encode())
                ws.save(state)
                os.write(wfd, f"A {ws.state_hash()}\n".encode())
            else:  # unsaved work numbered past the snapshot: offloads and an archive
                n += 1
                call = {"id": f"c{n}", "type": "function", "function": {"name": "f"}}
                ws.register_tool_call([call])
                ws.register_tool_result(f"c{n}", f"late {n} " * rng.randint(100, 300))
                ws.archive(f"B{len(ws.blocks)}")
        except PayloadIntegrityError as exc:  # wrong bytes in the store
            os.write(wfd, f"W {exc}\n".encode()[:2000])
        except WorkspaceError:
            pass  # a refused selection changes nothing
        except Exception as exc:  # noqa: BLE001 - a store error or conflict: counted
            os.write(wfd, f"E {type(exc).__name__}: {exc}\n".encode()[:2000])


def _read_all(rfd: int) -> str:
    chunks = []
    while True:
        try:
            chunk = os.read(rfd, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks).decode()


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_random_sigkills_leave_every_saved_state_loadable(tmp_path):
    """320 SIGKILLs at random points of registration / archive / delete /
    restore / save: every time, the snapshot on disk loads with every payload
    verified, its hash is the last acknowledged save or the save in flight, and
    the restarted run's operations never fail."""
    folder, state = str(tmp_path), str(tmp_path / "state.json")
    rng = random.Random(20261124)
    acked: str | None = None
    loads = set_aside = started = 0
    counts = dict.fromkeys(("unloadable", "lost", "wrong bytes", "failing operations"), 0)
    examples: list[str] = []
    # The first snapshot (every child restarts from a saved state; a fresh
    # workspace on a folder a killed run wrote to is refused, by design).
    first = Workspace(3_000, tokenizer="approx", store=DiskStore(tmp_path / "archive"),
                      protocol=False, hard_limit=3_600)
    first.register_user("task")
    first.save(state)
    acked = first.state_hash()
    for k in range(KILLS):
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            os.close(rfd)
            try:
                _child(folder, state, rng.randrange(1 << 30), wfd)
            finally:
                os._exit(0)
        os.close(wfd)
        head = b""
        if rng.random() < 0.8:  # mostly at a random point of the operations after the load
            deadline = time.monotonic() + 10
            while b"L\n" not in head and time.monotonic() < deadline:
                ready, _, _ = select.select([rfd], [], [], 0.5)
                if ready:
                    head += os.read(rfd, 1 << 16)
            time.sleep(rng.uniform(0.0, 0.04))
        else:  # anywhere, the load (temp-file cleanup, files set aside) included
            time.sleep(rng.uniform(0.0, 0.05))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        lines = (head.decode() + _read_all(rfd)).splitlines()
        os.close(rfd)
        in_flight = None
        for line in lines:
            if line.startswith("A "):
                acked, in_flight = line[2:], None
            elif line.startswith("S "):
                in_flight = line[2:]
        started += "L" in lines
        counts["failing operations"] += sum(line.startswith("E ") for line in lines)
        counts["wrong bytes"] += sum(line.startswith("W ") for line in lines)
        examples += [line for line in lines if line[:2] in ("E ", "W ")][:1]
        try:
            ws = Workspace.load(state, store=DiskStore(tmp_path / "archive"))
        except PayloadIntegrityError as exc:
            counts["wrong bytes"] += 1
            examples.append(f"load: {exc}")
            continue
        except Exception as exc:  # noqa: BLE001 - counted and shown below
            counts["unloadable"] += 1
            examples.append(f"load: {type(exc).__name__}: {exc}")
            continue
        loads += 1
        if ws.state_hash() not in {acked, in_flight}:
            counts["lost"] += 1
            examples.append(f"kill {k}: loaded {ws.state_hash()[:12]}, not the acked save")
        set_aside += len(ws.set_aside_payloads)
        acked = ws.state_hash()  # what the next child starts from
        leftovers = [n for n in os.listdir(tmp_path / "archive") if n.endswith(".tmp")]
        assert leftovers == []  # removed when the store was opened
    print(f"kill loop: {KILLS} kills ({started} after the restart's load), {loads} loads, "
          f"{set_aside} payload files set aside; "
          + ", ".join(f"{v} {k}" for k, v in counts.items()))
    assert counts == dict.fromkeys(counts, 0), (counts, examples[:5])
    assert loads == KILLS and started >= KILLS // 2 and set_aside > 0
