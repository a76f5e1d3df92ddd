"""Results are identical cell for cell whatever the backend (in-process,
local processes, a Dask LocalCluster) and the number of workers, because each
cell's seed is spawned from the config seed by its canonical index (issue
"Sweeps that scale"; DESIGN rule 2; cells are Proposition 1 recovery runs)."""

from __future__ import annotations

import pytest
from vistalab.theory import DomainError

from vistalab._sweep import Backend, DaskBackend, LocalBackend, parse_config, run_sweep

DOC = {
    "experiment": "recovery",
    "seed": 99,
    "params": {"N": 32, "k": 16, "trials": 300, "budget": [32, 128, 256]},
    "grid": [{"strategy": ["keep-blocks", "keep-bits", "random-subset"]},
             {"strategy": "recover", "handle_cost": [1.0, 3.0]}],
}


@pytest.fixture(scope="module")
def reference():
    cfg = parse_config(DOC)
    res = run_sweep(cfg, backend=LocalBackend(1))
    assert res.table is not None
    return cfg, res.table


def test_two_local_processes_equal_in_process(reference):
    """joblib/loky with 2 worker processes reproduces the in-process table
    exactly (Proposition 1 grid, 15 cells, any finish order)."""
    cfg, table = reference
    res = run_sweep(cfg, backend=LocalBackend(2))
    assert res.summary.workers == 2 and res.summary.backend == "local"
    assert res.table is not None and res.table.equals(table)


@pytest.mark.slow
def test_dask_local_cluster_equals_local_run(reference):
    """A Dask LocalCluster (through distributed.Client) gives the local run's
    results cell for cell (Proposition 1 grid)."""
    distributed = pytest.importorskip("distributed")
    cfg, table = reference
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        backend = DaskBackend(client=client)
        res = run_sweep(cfg, backend=backend)
        assert res.summary.backend == "dask" and res.summary.workers == 2
        assert res.table is not None
        assert res.table.to_pylist() == table.to_pylist()
        assert res.table.equals(table)
        # the scheduler address path: a second Client through --scheduler's code
        by_address = DaskBackend(cluster.scheduler_address)
        res2 = run_sweep(cfg, backend=by_address)
        assert res2.table is not None and res2.table.equals(table)


def test_backends_conform_to_protocol():
    """Both backends implement the one Backend protocol (DESIGN rule 3)."""
    assert isinstance(LocalBackend(1), Backend)
    assert isinstance(DaskBackend("tcp://127.0.0.1:1"), Backend)


def test_unreachable_scheduler_is_a_clear_error():
    """--scheduler pointing at nothing fails with the address, the rule and the
    fix (issue: Dask for clusters, local by default)."""
    backend = DaskBackend("tcp://127.0.0.1:9", timeout=1.0)
    with pytest.raises(DomainError, match=r"`--scheduler` must be the address of a running Dask "
                                          r"scheduler.*omit --scheduler to run locally"):
        backend.start()
