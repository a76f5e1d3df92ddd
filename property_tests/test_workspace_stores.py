"""Conformance suite for the PayloadStore protocol, run over both stores and
against each other (paper, eq. archive-contract: exact bytes recoverable from the
payload path; "Meta Context Tool": the handle keeps path, level, size and
checksum; DESIGN.md rule 9)."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import (
    DiskStore,
    MemoryStore,
    PathEscapeError,
    PayloadIntegrityError,
    PayloadStore,
    WorkspaceArgumentError,
)

from vistalab.testing import check_store


@pytest.fixture(params=["disk", "memory"])
def store(request, tmp_path):
    if request.param == "disk":
        return DiskStore(tmp_path / "archive")
    return MemoryStore(str(tmp_path / "archive"))


def test_store_conforms(store):
    """DESIGN.md rule 9: both stores honour one contract (the public kit's
    vistalab.testing.check_store: contract, reference model, Workspace round trip)."""
    assert isinstance(store, PayloadStore)
    if isinstance(store, DiskStore):
        assert check_store(lambda d: DiskStore(d / "archive"), stateful_examples=0) == []
    else:
        assert check_store(lambda d: MemoryStore(str(d / "archive")), stateful_examples=0) == []


class _LossyStore(MemoryStore):
    def get(self, key, *, sha256=None):
        return super().get(key)[:-1]  # drops a byte and skips the checksum


def test_store_check_fails_on_a_lossy_store():
    """The conformance checker rejects a store that loses bytes."""
    problems = check_store(lambda d: _LossyStore(), {"B2.txt": b"abc"}, stateful_examples=0)
    assert "contract: get(B2.txt) did not return the exact bytes (2 bytes, expected 3)" \
        in problems


@given(data=st.binary(max_size=2000))
def test_disk_and_memory_agree(data, tmp_path_factory):
    """The two implementations give the same PayloadInfo and bytes (tested against each other)."""
    disk = DiskStore(tmp_path_factory.mktemp("a"))
    mem = MemoryStore(disk.root)
    assert disk.put("G7.txt", data) == mem.put("G7.txt", data)
    assert disk.get("G7.txt") == mem.get("G7.txt") == data


def test_checksum_mismatch_fails_loudly(store):
    """Reads verify the sha256 and refuse a modified payload."""
    info = store.put("B3.txt", b"original")
    if isinstance(store, DiskStore):
        (store.directory / "B3.txt").write_bytes(b"tampered")
    else:
        store._blobs["B3.txt"] = b"tampered"
    with pytest.raises(PayloadIntegrityError, match=r"checksum mismatch .* refusing to return it"):
        store.get("B3.txt", sha256=info.sha256)


def test_missing_payload_fails_loudly(store):
    with pytest.raises(PayloadIntegrityError, match=r"'B9.txt'.*missing"):
        store.get("B9.txt")


@pytest.mark.parametrize(
    "path",
    [
        "../../etc/passwd",
        "/etc/passwd",
        "B1.txt/../../x",
        "sub/B1.txt",
        "..",
        "",
        "B1.txt\x00",
        "notes.md",
        "B1.TXT",
        "../archive/../../G1.txt",
    ],
)
def test_paths_confined_to_the_archive(store, path):
    """Paths are confined to the archive folder: no traversal, no foreign names."""
    with pytest.raises(PathEscapeError):
        store.key_of(path)


def test_symlink_escape_refused(tmp_path):
    """A payload replaced by a symlink to a file outside the archive is refused,
    both when mapping the path and when reading."""
    store = DiskStore(tmp_path / "archive")
    secret = tmp_path / "secret.txt"
    secret.write_text("do not read")
    store.put("B1.txt", b"x")
    os.unlink(store.directory / "B1.txt")
    os.symlink(secret, store.directory / "B1.txt")
    with pytest.raises(PathEscapeError, match="symlink"):
        store.key_of(f"{store.root}/B1.txt")
    with pytest.raises(PathEscapeError, match="cannot be opened safely"):
        store.get("B1.txt")
    linked_dir = tmp_path / "elsewhere"
    linked_dir.mkdir()
    os.symlink(linked_dir, store.directory / "inner")
    with pytest.raises(PathEscapeError, match="outside the archive folder"):
        store.key_of(f"{store.root}/inner/B1.txt")


def test_disk_write_is_atomic_and_leaves_no_temp_files(tmp_path, monkeypatch):
    """Durability: temp file in the same folder, fsync, rename; a failed write
    leaves neither a torn payload nor a temp file."""
    store = DiskStore(tmp_path / "archive")
    store.put("B1.txt", b"first")
    calls = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (calls.append(fd), real_fsync(fd)))
    store.put("B1.txt", b"second")
    assert len(calls) >= 2  # the file, then the folder
    assert os.listdir(store.directory) == ["B1.txt"]

    def boom(src, dst, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        store.put("B1.txt", b"third")
    assert os.listdir(store.directory) == ["B1.txt"]
    assert store.get("B1.txt") == b"second"


@pytest.mark.parametrize("key", ["../B1.txt", "B1", "X1.txt", "B0.txt", "G1.txt/.."])
def test_store_refuses_foreign_keys(store, key):
    with pytest.raises(WorkspaceArgumentError, match="must look like 'B7.txt' or 'G2.txt'"):
        store.put(key, b"x")


def test_memory_root_rules():
    with pytest.raises(WorkspaceArgumentError, match="without a trailing slash"):
        MemoryStore("mem://x/")
