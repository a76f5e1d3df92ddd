"""The one dependency-free core: one error root with its
did-you-mean helper, one atomic write whose files honour the umask, one seed
normaliser; and the old private import paths that now re-export it."""

from __future__ import annotations

import os
import stat

import numpy as np
import pytest

from vistalab import _core
from vistalab._core import (
    DomainError,
    UnknownNameError,
    VistaLabError,
    atomic_write,
    child_seq,
    seed_sequence,
    suggest,
)


@pytest.fixture
def umask():
    """Set the process umask for one test and restore it afterwards."""
    old = os.umask(0o022)
    os.umask(old)

    def set_(mask: int) -> None:
        os.umask(mask)

    yield set_
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_one_error_root_across_layers():
    """Every layer's errors derive from the one core root; the old paths re-export it."""
    from vistalab.theory import _errors as theory_errors

    from vistalab import theory, workspace
    from vistalab._errors import CliUsageError

    assert theory.VistaLabError is _core.VistaLabError is theory_errors.VistaLabError
    assert theory.DomainError is DomainError and theory.UnknownNameError is UnknownNameError
    assert issubclass(workspace.WorkspaceError, VistaLabError)
    assert issubclass(workspace.WorkspaceArgumentError, DomainError)
    assert issubclass(workspace.UnknownNameError, UnknownNameError)
    assert issubclass(CliUsageError, VistaLabError)
    with pytest.raises(UnknownNameError, match="Did you mean 'cl100k_base'"):
        workspace.get_tokenizer("cl100k_bse")


def test_domain_error_and_suggest_messages():
    """Messages name the parameter, value, rule and fix (DESIGN.md style 6)."""
    err = DomainError("kappa", 6, "must be an integer with 2 <= kappa < n/2", "lower it",
                      context="n=10")
    assert str(err) == ("`kappa` must be an integer with 2 <= kappa < n/2 "
                        "(got kappa=6, n=10); lower it")
    assert isinstance(err, ValueError) and err.parameter == "kappa" and err.value == 6
    unk = UnknownNameError("interface", "gausian", ["gaussian", "bucket"])
    assert str(unk).startswith("Unknown interface 'gausian'. Did you mean 'gaussian'?")
    assert isinstance(unk, KeyError)
    assert suggest("zzz", ["gaussian"]) is None


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_atomic_write_honours_umask(tmp_path, umask, mask):
    """Files get 0o666 & ~umask (mkstemp would force 0600); no temp file is left."""
    umask(mask)
    target = atomic_write(tmp_path / "sub" / "out.txt", b"hello")
    assert target.read_bytes() == b"hello"
    assert _mode(target) == 0o666 & ~mask
    atomic_write(target, b"again")
    assert target.read_bytes() == b"again"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.txt"]


def test_atomic_write_failure_keeps_old_file(tmp_path):
    """A write that fails mid-way leaves the previous content and no temp file."""
    target = atomic_write(tmp_path / "out.txt", b"old")

    with pytest.raises(TypeError):
        atomic_write(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.txt"]


def test_output_files_honour_umask(tmp_path, umask):
    """Results, figures, sweep stores and workspace payloads are readable under umask 022."""
    from vistalab.figures._style import new_figure, save_figure
    from vistalab.workspace import DiskStore

    from vistalab._provenance import atomic_write_json, atomic_write_text
    from vistalab._sweep import DirectoryStore

    umask(0o022)
    report = atomic_write_text(tmp_path / "report.md", "# report\n")
    results = atomic_write_json(tmp_path / "results" / "run.json", {"a": 1})
    fig, _ = new_figure()
    png, pdf = save_figure(fig, tmp_path / "figures", "fig")
    with DirectoryStore(tmp_path / "sweep") as store:
        store.save_manifest({"format": "x"})
    payload = DiskStore(tmp_path / "archive").put("B1.txt", b"payload")
    for path in (report, results, png, pdf, tmp_path / "sweep" / "manifest.json",
                 payload.path):
        assert _mode(path) == 0o644, path


def test_seed_sequence_accepts_and_refuses():
    """rng=1 equals rng=SeedSequence(1); a Generator has one child spawned (documented)."""
    assert seed_sequence(1).entropy == np.random.SeedSequence(1).entropy
    assert seed_sequence(1).spawn_key == ()
    ss = np.random.SeedSequence(7)
    assert seed_sequence(ss) is ss
    gen = np.random.default_rng(1)
    first, second = seed_sequence(gen), seed_sequence(gen)
    expected = np.random.SeedSequence(1).spawn(2)
    assert (first.entropy, first.spawn_key) == (expected[0].entropy, expected[0].spawn_key)
    assert (second.entropy, second.spawn_key) == (expected[1].entropy, expected[1].spawn_key)
    # Spawning consumes no draws of the caller's generator.
    assert gen.integers(2**32) == np.random.default_rng(1).integers(2**32)
    assert seed_sequence(None, default_entropy=5).entropy == 5
    for bad in (True, -1, 1.5, "1"):
        with pytest.raises(DomainError, match="`rng`"):
            seed_sequence(bad)


def test_child_seq_is_spawn_position():
    """child_seq(root, i) is the i-th child SeedSequence.spawn would give, root untouched."""
    root = np.random.SeedSequence(123)
    kids = np.random.SeedSequence(123).spawn(4)
    for i, kid in enumerate(kids):
        c = child_seq(root, i)
        assert c.generate_state(4).tolist() == kid.generate_state(4).tolist()
    assert root.n_children_spawned == 0


def test_rng_semantics_through_a_simulator():
    """A simulator follows the one rule: rng=1 == SeedSequence(1); default_rng(1) ==
    SeedSequence(1).spawn(1)[0] (sims.simulate_recovery, Proposition 1's task)."""
    from vistalab.sims import simulate_recovery

    def run(rng):
        return simulate_recovery(64, 4, 0.5, "random-subset", trials=200, rng=rng).successes

    assert run(1) == run(np.random.SeedSequence(1))
    assert run(np.random.default_rng(1)) == run(np.random.SeedSequence(1).spawn(1)[0])


def test_old_private_paths_still_work(tmp_path):
    """Parallel branches import the old private names; they re-export the core."""
    from vistalab.sims._engine_makeroom import stream_seq
    from vistalab.sims._engine_recovery import stream_seed
    from vistalab.sims._seeding import root_seed
    from vistalab.workspace._store import atomic_write as ws_atomic_write
    from vistalab.workspace._store import fsync_dir

    assert ws_atomic_write is atomic_write and fsync_dir is _core.fsync_dir
    seed = root_seed(3)
    assert stream_seq(seed, 2).spawn_key == stream_seed(seed, 2).spawn_key == (2,)


def test_top_level_import_is_light():
    """`import vistalab` pulls in no heavy dependency (numpy, scipy, matplotlib, dask)."""
    import subprocess
    import sys

    code = ("import sys, vistalab; heavy = {'numpy', 'scipy', 'matplotlib', 'dask', 'sympy'}; "
            "print(sorted(heavy & set(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_atomic_write_never_replaces_a_device_pipe_or_folder(tmp_path):
    """A rename over a non-regular file would replace it (as root, over /dev/null:
    the device becomes a plain file for the whole machine). A named pipe and a
    folder stand in for a device here: each is refused with EINVAL and left as it
    was, with no temp file behind; a regular file and a symlink are replaced."""
    import errno
    import stat

    from vistalab._core import atomic_write

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    for target, is_kind in ((fifo, stat.S_ISFIFO), (folder, stat.S_ISDIR)):
        with pytest.raises(OSError) as info:
            atomic_write(target, b"x")
        assert info.value.errno == errno.EINVAL
        assert is_kind(os.lstat(target).st_mode)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder", "pipe"]
    (tmp_path / "plain").write_bytes(b"old")
    os.symlink(tmp_path / "plain", tmp_path / "link")
    atomic_write(tmp_path / "plain", b"new")
    atomic_write(tmp_path / "link", b"link")
    assert (tmp_path / "plain").read_bytes() == b"new"
    assert not (tmp_path / "link").is_symlink() and (tmp_path / "link").read_bytes() == b"link"
