"""Results files carry their provenance and are written atomically (a JSON sidecar
of parameters, seed entropy, package versions and git commit)."""

import json
import os

import pytest

from vistalab import _provenance as prov


def test_sidecar_has_required_keys():
    side = prov.provenance({"n": 64, "sigma": 1.0}, seed_entropy=2**70 + 3)
    assert side["params"] == {"n": 64, "sigma": 1.0}
    assert side["seed_entropy"] == str(2**70 + 3)  # exact, even beyond float range
    assert side["packages"]["numpy"]
    assert len(side["code_fingerprint"]) == 64


def test_fingerprint_changes_when_code_changes(tmp_path, monkeypatch):
    pkg = tmp_path / "theory"
    pkg.mkdir()
    (pkg / "a.py").write_text("x = 1\n")
    monkeypatch.setattr(prov, "_package_dirs", lambda name: [pkg])
    before = prov.code_fingerprint(["theory"])
    (pkg / "a.py").write_text("x = 2\n")
    assert prov.code_fingerprint(["theory"]) != before


def test_atomic_write_replaces_and_leaves_no_temp(tmp_path):
    target = tmp_path / "sub" / "r.json"
    prov.atomic_write_json(target, {"a": 1})
    prov.atomic_write_json(target, {"a": 2})
    assert json.loads(target.read_text()) == {"a": 2}
    assert os.listdir(target.parent) == ["r.json"]


def test_failed_write_keeps_old_file(tmp_path):
    target = tmp_path / "r.txt"
    prov.atomic_write_text(target, "old")


    with pytest.raises(TypeError):
        prov.atomic_write_bytes(target, "not bytes")  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.txt"]
