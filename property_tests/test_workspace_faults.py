"""Every operation is atomic with its event-log record, under injected faults.

In the manner of SQLite's I/O-error tests: a scripted session (registration,
budget-guard offloads, archive, restore, delete, save) is run once per k with the
k-th write failing, for every k until the session completes with no fault left to
inject. A "write" is a payload put or delete (through a fault-injecting wrapper
of either store), an event-log append (a torn partial write, then the error) or
a snapshot write. After each fault: the error is a vista-lab one, the state
equals the replay of the in-memory log and of the log file, every registered
block is still there with its bytes, every live payload verifies, and the failed
operation succeeds when retried. The real cases (a full tmpfs, a read-only
folder, RLIMIT_FSIZE) follow; they need root (to mount) and skip with a line
otherwise.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import shutil
import signal
import subprocess
import types
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from vistalab.workspace import (
    DiskStore,
    MemoryStore,
    StorageError,
    Workspace,
    _events,
    _persist,
    read_event_log,
)
from vistalab.workspace._events import TornLogWarning

from vistalab._core import VistaLabError


class Faults:
    """Counts writes; the ``fail_at``-th one raises ENOSPC (0: never)."""

    def __init__(self, fail_at: int) -> None:
        self.fail_at = fail_at
        self.count = 0
        self.fired = False

    def tick(self) -> bool:
        self.count += 1
        if self.count == self.fail_at:
            self.fired = True
            return True
        return False


def _enospc() -> OSError:
    return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class FaultyStore:
    """Wraps a store; the faulting put fails before writing (``after=False``) or
    after the bytes are in place (``after=True``: a folder fsync that failed)."""

    def __init__(self, inner: Any, faults: Faults, *, after: bool) -> None:
        self.inner, self.faults, self.after = inner, faults, after
        self.root = inner.root

    def put(self, key: str, data: bytes) -> Any:
        if self.faults.tick():
            if self.after:
                self.inner.put(key, data)
            raise _enospc()
        return self.inner.put(key, data)

    def delete(self, key: str) -> None:
        if self.faults.tick():
            raise _enospc()
        self.inner.delete(key)

    def get(self, key: str, *, sha256: str | None = None) -> bytes:
        return self.inner.get(key, sha256=sha256)

    def contains(self, key: str) -> bool:
        return self.inner.contains(key)

    def keys(self) -> list[str]:
        return self.inner.keys()

    def key_of(self, path: str) -> str:
        return self.inner.key_of(path)

    def claim(self, keys: Any) -> None:
        getattr(self.inner, "claim", lambda _k: None)(keys)


@contextlib.contextmanager
def _faulty_log_and_save(monkeypatch: pytest.MonkeyPatch, faults: Faults) -> Iterator[None]:
    """Event-log appends write half their bytes, then fail; snapshot writes fail."""
    real_write = os.write

    def write(fd: int, data: Any) -> int:
        if faults.tick():
            real_write(fd, bytes(data[: max(1, len(data) // 2)]))
            raise _enospc()
        return real_write(fd, data)

    proxy = types.SimpleNamespace(**{k: getattr(os, k) for k in dir(os) if not k.startswith("__")})
    proxy.write = write
    monkeypatch.setattr(_events, "os", proxy)
    real_atomic = _persist.atomic_write

    def atomic_write(path: Any, data: bytes, **kw: Any) -> Any:
        if faults.tick():
            raise _enospc()
        return real_atomic(path, data, **kw)

    monkeypatch.setattr(_persist, "atomic_write", atomic_write)
    yield


def _call(n: int) -> list[dict[str, Any]]:
    return [{"id": f"c{n}", "type": "function", "function": {"name": "f", "arguments": "{}"}}]


def _steps(state: str) -> list[tuple[str, Callable[[Workspace], Any]]]:
    """The scripted session: every kind of write, guard offloads included."""
    steps: list[tuple[str, Callable[[Workspace], Any]]] = [
        ("system", lambda ws: ws.register_system("rules")),
        ("user", lambda ws: ws.register_user("the task")),
    ]
    for n in range(1, 9):  # results big enough that the guard offloads older ones
        steps.append((f"call{n}", lambda ws, n=n: ws.register_tool_call(_call(n))))
        steps.append(
            (f"result{n}", lambda ws, n=n: ws.register_tool_result(f"c{n}", f"out{n} " * 250))
        )
    steps += [
        ("archive", lambda ws: ws.archive("B4", "first result")),
        ("archive-group", lambda ws: ws.archive("B15-B16", "two")),
        ("save1", lambda ws: ws.save(state)),
        ("restore", lambda ws: ws.restore("B4")),
        ("delete", lambda ws: ws.delete("G1", "stale")),
        ("assistant", lambda ws: ws.register_assistant("noted")),
        ("call9", lambda ws: ws.register_tool_call(_call(9))),
        ("result9", lambda ws: ws.register_tool_result("c9", "out9 " * 250)),
        ("archive-again", lambda ws: ws.archive("B4")),
        ("restore-offloaded", lambda ws: ws.restore("B10")),
        ("save2", lambda ws: ws.save(state)),
        ("delete2", lambda ws: ws.delete("B4", "done")),
        ("read", lambda ws: ws.read_path(ws.payload_path("B12.txt"))),
        ("save3", lambda ws: ws.save(state)),
    ]
    return steps


def _check(ws: Workspace, log: str, registered: dict[str, bytes], deleted: set[str]) -> None:
    """state == replay(log) (memory and file), nothing registered missing, every
    live payload verifies."""
    assert Workspace.replay(ws.events).state_hash() == ws.state_hash()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TornLogWarning)
        from_file = list(read_event_log(log))
    assert [e.to_plain() for e in from_file] == [e.to_plain() for e in ws.events]
    assert ws.recompute_state_hash() == ws.state_hash()
    for bid, digest in registered.items():
        b = ws.block(bid)
        if bid in deleted:
            continue
        assert b.status.value != "deleted", bid
        assert b.sha256 == digest.decode(), bid
    for key, uid in ws._payload_owner.items():
        ws.store.get(key, sha256=ws._unit_payload(uid).sha256)


def _run_session(tmp: Path, store: Any, faults: Faults, log: str) -> tuple[str | None, Workspace]:
    """Run the session; returns (the faulted step or None, the workspace)."""
    try:
        ws = Workspace(2_400, tokenizer="approx", store=store, protocol=False, log_path=log,
                       hard_limit=2_600)
    except Exception as exc:  # noqa: BLE001 - the assertion names it
        assert faults.fired and isinstance(exc, StorageError), repr(exc)
        assert Path(log).read_bytes() == b""  # the torn init record was cut back
        faults.fail_at = 0
        ws = Workspace(2_400, tokenizer="approx", store=store, protocol=False, log_path=log,
                       hard_limit=2_600)
        ws.close()
        return "init", ws
    registered: dict[str, bytes] = {}
    deleted: set[str] = set()
    failed: str | None = None
    for name, step in _steps(str(tmp / "state.json")):
        count = len(ws.blocks)
        try:
            out = step(ws)
        except Exception as exc:  # noqa: BLE001 - the assertion names it
            assert faults.fired and failed is None, (name, exc)
            assert isinstance(exc, VistaLabError) and isinstance(exc, OSError), (name, repr(exc))
            failed = name
            faults.fail_at = 0  # the retry below sees no fault
            _check(ws, log, registered, deleted)
            assert len(ws.blocks) == count
            out = step(ws)  # the same operation, retried, succeeds
        if name.startswith(("system", "user", "call", "result", "assistant")):
            b = ws.block(out)
            registered[b.id] = b.sha256.encode()
        if name.startswith("delete"):
            deleted.update(out.blocks)
    _check(ws, log, registered, deleted)
    return failed, ws


def _make_store(kind: str, tmp: Path) -> Any:
    return DiskStore(tmp / "archive") if kind == "disk" else MemoryStore("mem://archive")


@pytest.mark.slow
@pytest.mark.parametrize("after", [False, True], ids=["fail-before", "fail-after"])
@pytest.mark.parametrize("kind", ["memory", "disk"])
def test_kth_write_fault_for_every_k(tmp_path, monkeypatch, kind, after):
    """Fail the k-th write for every k: each fault is a vista-lab error, rolls
    its operation back completely (state == replay(log)), and the retry works."""
    faulted: list[str] = []
    k = 0
    while True:
        k += 1
        tmp = tmp_path / f"k{k}"
        tmp.mkdir()
        faults = Faults(k)
        with monkeypatch.context() as m, _faulty_log_and_save(m, faults):
            store = FaultyStore(_make_store(kind, tmp), faults, after=after)
            failed, ws = _run_session(tmp, store, faults, str(tmp / "events.jsonl"))
        if not faults.fired:
            break
        # None: the fault hit a deletion after its operation committed (the file
        # stays, removed at the next save), which is no error.
        faulted.append(failed or "absorbed")
        # The snapshot on disk (if any) still loads, every payload verified.
        if (tmp / "state.json").exists() and kind == "disk":
            Workspace.load(tmp / "state.json", store=DiskStore(tmp / "archive"))
        ws.close()
        shutil.rmtree(tmp)
    # Every kind of write in the session was failed at least once.
    kinds = {f.rstrip("0123456789") for f in faulted}
    assert {"init", "system", "user", "call", "result", "archive", "archive-group", "save",
            "restore", "delete", "assistant", "archive-again", "restore-offloaded",
            "read", "absorbed"} <= kinds, kinds
    print(f"{kind}-{'after' if after else 'before'}: {k - 1} faults injected, "
          f"{len(set(faulted))} distinct steps")
    assert k > 40


def test_guard_offload_fault_rolls_the_registration_back():
    """The budget guard's offload failing inside register_tool_result: the result
    is not registered, nothing is logged, and the retry registers it."""
    faults = Faults(0)
    store = FaultyStore(MemoryStore(), faults, after=False)
    ws = Workspace(2_400, tokenizer="approx", store=store, protocol=False, hard_limit=2_600)
    ws.register_user("task")
    n, rolled_back = 0, False
    while not rolled_back:
        n += 1
        ws.register_tool_call(_call(n))
        before, events = ws.state_hash(), len(ws.events)
        faults.fail_at, faults.count, faults.fired = 1, 0, False
        try:
            ws.register_tool_result(f"c{n}", f"out{n} " * 250)
        except StorageError as exc:
            assert faults.fired and "register_tool_result failed" in str(exc)
            assert ws.state_hash() == before and len(ws.events) == events
            assert ws.pending_calls == (f"c{n}",)
            faults.fail_at = 0
            bid = ws.register_tool_result(f"c{n}", f"out{n} " * 250)
            assert ws.events[-1].effects["offloaded"]  # the retry offloaded
            assert ws.block(bid).status.value == "visible"
            rolled_back = True
        else:
            assert not faults.fired  # admitted without a write
    assert Workspace.replay(ws.events).state_hash() == ws.state_hash()


@pytest.mark.parametrize("answer", ["c1", "c3", "c4"])
def test_a_failed_answer_in_a_batch_rolls_back_to_the_call_order(monkeypatch, answer):
    """A result of a parallel batch whose registration fails (its log append
    raises) leaves the pending calls as they were, in the calls' order, and the
    retry answers it; the transaction logs the answer, it does not copy the
    pending calls (answering one of N stays O(1))."""
    ws = Workspace(100_000, tokenizer="approx", store=MemoryStore(), protocol=False)
    ws.register_user("task")
    ids = ("c1", "c2", "c3", "c4", "c5")
    ws.register_tool_call([_call(i)[0] | {"id": cid} for i, cid in enumerate(ids)])
    ws.register_tool_result("c2", "two")
    before, pending = ws.state_hash(), ws.pending_calls
    assert pending == ("c1", "c3", "c4", "c5")
    real = ws._log

    def full_disk(*args: Any, **kwargs: Any) -> None:
        raise _enospc()

    monkeypatch.setattr(ws, "_log", full_disk)
    with pytest.raises(StorageError):
        ws.register_tool_result(answer, "the answer")
    monkeypatch.setattr(ws, "_log", real)
    assert ws.pending_calls == pending
    assert ws.state_hash() == before
    ws.register_tool_result(answer, "the answer")
    assert ws.pending_calls == tuple(c for c in pending if c != answer)
    assert Workspace.replay(ws.events).state_hash() == ws.state_hash()


def test_torn_last_log_line_is_recovered(tmp_path):
    """A torn last line: reading yields the intact prefix and warns with the
    tail's bytes; re-opening the log for append moves the tail aside, so new
    records never join it and the whole log replays."""
    log = tmp_path / "events.jsonl"
    ws = Workspace(5_000, tokenizer="approx", protocol=False, log_path=log)
    ws.register_user("task")
    ws.register_assistant("ok")
    ws.close()
    intact = log.read_bytes()
    with log.open("ab") as fh:
        fh.write(b'{"seq": 3, "op": "regis')
    with pytest.warns(TornLogWarning, match="line 4") as rec:
        events = list(read_event_log(log))
    assert rec[0].message.tail == b'{"seq": 3, "op": "regis'  # type: ignore[union-attr]
    assert [e.op for e in events] == ["init", "register", "register"]
    with pytest.warns(TornLogWarning):
        assert Workspace.replay(log).state_hash() == ws.state_hash()
    # A record whole but for its newline is kept, not reported.
    log.write_bytes(intact.rstrip(b"\n"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", TornLogWarning)
        assert len(list(read_event_log(log))) == 3
    # Appending: the torn tail is set aside first.
    log.write_bytes(intact + b'{"seq": 3, "op"')
    with pytest.warns(TornLogWarning, match="moved to"):
        fh = _events.EventLogFile(log)
    fh.close()
    assert log.read_bytes() == intact
    aside = list(tmp_path.glob("events.jsonl.torn-*"))
    assert [p.read_bytes() for p in aside] == [b'{"seq": 3, "op"']
    # A torn line that is not the last one stays an error.
    log.write_bytes(b'{"seq": 0, "op"\n' + intact)
    with pytest.raises(VistaLabError, match="line 1"):
        list(read_event_log(log))


def test_checker_catches_a_non_atomic_engine(tmp_path, monkeypatch):
    """The fault checks fail on an engine that commits before it logs and does not
    roll back (the behaviour the atomic layer replaced)."""
    from vistalab.workspace import _state

    monkeypatch.setattr(_state.StateCore, "_abort_txn", lambda self, txn: None)
    faults = Faults(0)
    tmp = tmp_path / "x"
    tmp.mkdir()
    with monkeypatch.context() as m, _faulty_log_and_save(m, faults):
        store = FaultyStore(MemoryStore(), faults, after=False)
        faults.fail_at = 12  # a registration's log append
        with pytest.raises(AssertionError):
            _run_session(tmp, store, faults, str(tmp / "events.jsonl"))


# ------------------------------------------------------------------ real faults

def _need_root_mount() -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("the tmpfs cases need root (mount -t tmpfs); run make test as root")


@contextlib.contextmanager
def _tmpfs(path: Path, size: str) -> Iterator[Path]:
    path.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                         capture_output=True, text=True, check=False)
    if res.returncode != 0:
        pytest.skip(f"mount -t tmpfs failed here ({res.stderr.strip()})")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)


def _fill_until_error(ws: Workspace, start: int) -> tuple[int, BaseException]:
    n = start
    while True:
        n += 1
        ws.register_tool_call(_call(n))
        try:
            ws.register_tool_result(f"c{n}", f"out{n} " * 400)
        except Exception as exc:  # noqa: BLE001 - returned to the caller's assertions
            return n, exc
        if n > start + 5_000:  # pragma: no cover - the disk never filled
            raise AssertionError("no error from a 256 kB store")


@pytest.mark.parametrize("what", ["store", "log"])
def test_full_tmpfs(tmp_path, what):
    """A 256 kB tmpfs as the store (guard offloads fail) or as the event log's
    folder: the failing registration raises StorageError, changes nothing, and
    the log still replays to the live state."""
    _need_root_mount()
    with _tmpfs(tmp_path / "small", "256k") as small:
        store_dir = small / "archive" if what == "store" else tmp_path / "archive"
        log = (small if what == "log" else tmp_path) / "events.jsonl"
        ws = Workspace(4_000, tokenizer="approx", store=DiskStore(store_dir), protocol=False,
                       log_path=log)
        ws.register_user("task")
        before_len = None
        n, exc = _fill_until_error(ws, 0)
        assert isinstance(exc, StorageError), repr(exc)
        assert exc.errno in (errno.ENOSPC, errno.EFBIG)
        before_len = len(ws.events)
        assert ws.pending_calls == (f"c{n}",)
        assert Workspace.replay(ws.events).state_hash() == ws.state_hash()
        ws.close()
        events = list(read_event_log(log))
        assert len(events) == before_len
        assert Workspace.replay(log).state_hash() == ws.state_hash()


def test_read_only_store(tmp_path):
    """The store's folder made read-only: archive raises StorageError (EACCES
    or EROFS) and changes nothing; made writable again, the retry works."""
    _need_root_mount()
    with _tmpfs(tmp_path / "ro", "1m") as ro:
        store = DiskStore(ro / "archive")
        ws = Workspace(50_000, tokenizer="approx", store=store, protocol=False)
        ws.register_user("task")
        ws.register_assistant("some text to archive")
        before = ws.state_hash()
        subprocess.run(["mount", "-o", "remount,ro", str(ro)], check=True)
        try:
            with pytest.raises(StorageError) as info:
                ws.archive("B2")
            assert info.value.errno == errno.EROFS
            assert ws.state_hash() == before
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(ro)], check=True)
        ws.archive("B2")
        assert Workspace.replay(ws.events).state_hash() == ws.state_hash()


def _fsize_child(folder: str, wfd: int) -> None:  # pragma: no cover - child process
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (2048, 2048))
    out: dict[str, Any] = {}
    ws = Workspace(50_000, tokenizer="approx", store=DiskStore(os.path.join(folder, "a")),
                   protocol=False)
    ws.register_user("task")
    ws.register_assistant("x " * 1_500)  # 3 kB: its payload exceeds the limit
    before = ws.state_hash()
    try:
        ws.archive("B2")
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        out["archive"] = [type(exc).__name__, getattr(exc, "errno", None)]
    out["unchanged"] = ws.state_hash() == before
    out["replays"] = Workspace.replay(ws.events).state_hash() == ws.state_hash()
    log = os.path.join(folder, "events.jsonl")
    ws = Workspace(50_000, tokenizer="approx", protocol=False, log_path=log)
    size = os.path.getsize(log)
    try:  # its log record exceeds the limit
        ws.register_user("y " * 1_500)
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        out["register"] = [type(exc).__name__, getattr(exc, "errno", None)]
    out["log_unchanged"] = os.path.getsize(log) == size and len(ws.blocks) == 0
    os.write(wfd, json.dumps(out).encode())


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_rlimit_fsize(tmp_path):
    """RLIMIT_FSIZE (a per-process file-size limit, no root needed): the archive
    whose payload exceeds it raises StorageError (EFBIG) and changes nothing."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            os.close(rfd)
            _fsize_child(str(tmp_path), wfd)
        finally:
            os._exit(0)
    os.close(wfd)
    os.waitpid(pid, 0)
    with os.fdopen(rfd) as fh:
        out = json.loads(fh.read())
    efbig = ["StorageError", errno.EFBIG]
    assert out == {"archive": efbig, "unchanged": True, "replays": True, "register": efbig,
                   "log_unchanged": True}
