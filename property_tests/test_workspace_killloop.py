"""Kill loop (Done-when): a child process doing random archive,
delete, restore, registration and save is SIGKILLed at random points, at
least 500 times; after every kill the saved state loads (verified: fields,
content hashes, canonical hash, every payload) and is the last acknowledged
save or the one in flight, so no acknowledged payload is lost.

Children are forked from the test process (the engine already imported), so
a kill round costs milliseconds and the 500 kills stay well under a minute."""

from __future__ import annotations

import os
import random
import signal
import time

import pytest
from vistalab.workspace import DiskStore, Workspace, WorkspaceError

KILLS = 500


def _child(folder: str, state: str, seed: int, wfd: int) -> None:  # pragma: no cover - child
    rng = random.Random(seed)
    store = DiskStore(os.path.join(folder, "archive"))
    if os.path.exists(state):
        ws = Workspace.load(state, store=store)
    else:
        ws = Workspace(30_000, tokenizer="approx", store=store, protocol=False)
        ws.register_user("task")
    n = len(ws.blocks)
    while True:
        op = rng.random()
        live = [b.id for b in ws.blocks if b.status.value in ("visible", "archived")]
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
            elif op < 0.55:
                ws.delete(rng.choice(live), "stale")
            elif op < 0.70:
                ws.restore(rng.choice(live))
            else:
                os.write(wfd, f"S {ws.state_hash()}\n".encode())
                ws.save(state)
                os.write(wfd, f"A {ws.state_hash()}\n".encode())
        except WorkspaceError:
            pass  # a refused action changes nothing


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
    """500+ SIGKILLs at random points of archive / delete / restore / save:
    every time, the snapshot on disk loads with every payload verified, and its
    hash is the last acknowledged save or the save in flight."""
    folder, state = str(tmp_path), str(tmp_path / "state.json")
    rng = random.Random(20261124)
    acked: str | None = None
    loads = 0
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
        time.sleep(rng.uniform(0.0, 0.03))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        lines = _read_all(rfd).splitlines()
        os.close(rfd)
        in_flight = None
        for line in lines:
            if line.startswith("A "):
                acked, in_flight = line[2:], None
            elif line.startswith("S "):
                in_flight = line[2:]
        if not os.path.exists(state):
            assert acked is None
            continue
        ws = Workspace.load(state, store=DiskStore(tmp_path / "archive"))
        loads += 1
        assert ws.state_hash() in {acked, in_flight}, (k, lines[-3:])
        acked = ws.state_hash()  # what the next child starts from
        leftovers = [n for n in os.listdir(tmp_path / "archive") if n.endswith(".tmp")]
        assert leftovers == []  # removed when the store was opened
    assert loads >= KILLS // 2
