"""plot-sweep draws a results table with Theorem 1's lower bound and the exact
optimal frontier overlaid (make-room tables), or Proposition 1's bound
(recovery tables); the overlays are the theory functions' own values (paper
Theorem 1, Proposition 1; issue "Sweeps that scale")."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pytest
from vistalab.theory import DomainError, UnknownNameError

from vistalab import theory
from vistalab._sweep import LocalBackend, parse_config, plot_sweep, run_sweep
from vistalab.cli import main

N, KAPPA = 256, 4


def _exact_table() -> pa.Table:
    """A make-room results table built from exact values: buckets and gibbs
    interfaces at (n, kappa) = (256, 4), plus the ledger and blind endpoints."""
    rows = []
    for m in (1, 2, 4, 8, 16, 64, 256):
        b = theory.bucket_ledger(N, KAPPA, m)
        rows.append(("buckets", b.rate_bits, b.mean_z))
    for r in (0.5, 1.5, 3.0, 5.0, 7.0):
        g = theory.gibbs_law(N, KAPPA, rate=r)
        rows.append(("gibbs", g.rate_bits, g.mean_z))
    rows.append(("ledger", math.log2(N), 0.0))
    rows.append(("blind", 0.0, theory.blind_mean_z(N, KAPPA)))
    return pa.table({
        "n": [N] * len(rows), "kappa": [KAPPA] * len(rows),
        "interface": [r[0] for r in rows],
        "rate_bits": [r[1] for r in rows], "rate_bits_se": [0.0] * len(rows),
        "mean_z": [r[2] for r in rows],
        "mean_z_ci_low": [r[2] for r in rows], "mean_z_ci_high": [r[2] for r in rows],
    })


def test_makeroom_overlays_are_theorem1_and_exact_frontier(tmp_path):
    """The dashed curve is kappa*[1-(I+1)/nu]_+ and the solid one
    optimal_mean_z(n, kappa, I), both divided by kappa for y = mean_z/kappa
    (Theorem 1 and the exact frontier), over I in [0, log2 n]."""
    out = tmp_path / "fig.png"
    s = plot_sweep(_exact_table(), out, x="rate_bits", y="mean_z/kappa")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert s.x == "rate_bits" and s.y == "mean_z/kappa" and len(s.panels) == 1
    series = {x.label: x for x in s.panels[0].series}
    frontier, bound = series["exact optimal frontier"], series["Theorem 1 lower bound"]
    assert frontier.x[0] == 0.0 and frontier.x[-1] == pytest.approx(math.log2(N))
    for i in range(0, len(frontier.x), 20):
        r = frontier.x[i]
        assert frontier.y[i] == theory.optimal_mean_z(N, KAPPA, r) / KAPPA
        assert bound.y[i] == theory.makeroom_lower_bound(N, KAPPA, r) / KAPPA
    # the interfaces are drawn as data series, sorted by rate
    assert {"buckets", "gibbs", "ledger", "blind"} <= set(series)
    b = series["buckets"]
    assert list(b.x) == sorted(b.x)
    # gibbs achieves the frontier: its points sit on the frontier curve
    g = series["gibbs"]
    for x, y in zip(g.x, g.y, strict=True):
        assert y == pytest.approx(theory.optimal_mean_z(N, KAPPA, x) / KAPPA, rel=1e-6)
    # no data point is below the Theorem 1 bound
    for ser in (b, g, series["blind"], series["ledger"]):
        for x, y in zip(ser.x, ser.y, strict=True):
            assert y >= theory.makeroom_lower_bound(N, KAPPA, min(x, math.log2(N))) / KAPPA - 1e-12


def test_legend_sits_off_the_data(tmp_path, monkeypatch):
    """The legend of every panel is drawn off the data (below the axes): the
    project's clash finder finds no text over a line or marker, and no text past
    the figure's edge; the same finder reports the legend when it is put back over
    the data (so the check bites)."""
    from matplotlib.figure import Figure
    from vistalab.figures import find_text_clashes

    drawn = []
    real = Figure.savefig

    def keep(self, *args, **kwargs):
        drawn.append(self)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    plot_sweep(_exact_table(), tmp_path / "fig.png", x="rate_bits", y="mean_z/kappa")
    fig = drawn[-1]
    assert find_text_clashes(fig) == []
    ax = fig.axes[0]
    ax.legend(loc="center", frameon=False)
    assert any(c.text.startswith("legend") for c in find_text_clashes(fig))


def test_bound_not_drawn_outside_theorem_domain(tmp_path):
    """Theorem 1 needs 2 <= kappa < n/2; outside it only the frontier is drawn,
    with a note saying why."""
    t = pa.table({"n": [N], "kappa": [1], "interface": ["ledger"],
                  "rate_bits": [math.log2(N)], "mean_z": [0.0]})
    s = plot_sweep(t, tmp_path / "f.svg")
    labels = [x.label for x in s.panels[0].series]
    assert "exact optimal frontier" in labels and "Theorem 1 lower bound" not in labels
    assert any("needs 2 <= kappa < n/2" in n for n in s.notes)


def test_recovery_overlay_is_proposition1(tmp_path):
    """For recovery tables (x = budget, y = success) the overlay is
    min(1, B/(Nk) + 1/k), and the non-recovering strategies stay below it
    within their intervals (Proposition 1)."""
    cfg = parse_config({"experiment": "recovery", "seed": 1,
                        "params": {"N": 16, "k": 8, "trials": 400,
                                   "budget": [8, 32, 64, 128]},
                        "grid": [{"strategy": ["keep-blocks", "random-subset"]},
                                 {"strategy": "recover", "handle_cost": [1.0, 2.0]}]})
    res = run_sweep(cfg, backend=LocalBackend(1))
    s = plot_sweep(res.table, tmp_path / "rec.pdf", x="budget", y="success")
    series = {x.label: x for x in s.panels[0].series}
    bound = series["Proposition 1 bound (capped at 1)"]
    for b, v in zip(bound.x[::16], bound.y[::16], strict=True):
        assert v == min(1.0, theory.recovery_success_bound(16, 8, b))
    # recover at two handle costs are two series (grouped by the varying column)
    assert {"recover, handle_cost=1", "recover, handle_cost=2"} <= set(series)
    for name in ("keep-blocks", "random-subset"):
        ser = series[name]
        assert ser.yerr is not None
        for b, y, lo in zip(ser.x, ser.y, ser.yerr[0], strict=True):
            assert y - lo <= min(1.0, theory.recovery_success_bound(16, 8, b))


def test_bad_plot_requests_name_the_fix(tmp_path):
    """Unknown columns get a close match; filters that leave nothing and bad
    suffixes are rejected (the plot's own input checks)."""
    t = _exact_table()
    with pytest.raises(UnknownNameError, match=r"Unknown column for --y 'mean_zz'.*'mean_z'"):
        plot_sweep(t, tmp_path / "a.png", y="mean_zz")
    with pytest.raises(DomainError, match=r"`--where` must leave at least one row"):
        plot_sweep(t, tmp_path / "a.png", where=["n=5"])
    with pytest.raises(DomainError, match=r"`--out` must end in .png, .pdf or .svg"):
        plot_sweep(t, tmp_path / "a.jpeg")
    with pytest.raises(DomainError, match=r"`--y` must name numeric columns"):
        plot_sweep(t, tmp_path / "a.png", y="interface")


def test_where_filter_and_no_theory(tmp_path):
    """--where keeps matching rows; --no-theory draws the data only (Theorem 1 table)."""
    s = plot_sweep(_exact_table(), tmp_path / "w.png", where=["interface=gibbs"],
                   theory=False)
    assert [x.label for x in s.panels[0].series] == ["gibbs"] and s.rows == 5
    assert np.all(np.diff(s.panels[0].series[0].x) > 0)


def test_plot_sweep_cli_on_sweep_folder(tmp_path, capsys):
    """`vista-lab plot-sweep DIR` writes the PNG next to the results (Proposition 1
    sweep run through the CLI)."""
    cfg = tmp_path / "c.toml"
    cfg.write_text('experiment = "recovery"\nseed = 4\n[params]\nN = 8\nk = 4\ntrials = 50\n'
                   'budget = [4, 16]\nstrategy = ["keep-blocks", "recover"]\n')
    assert main(["sweep", str(cfg), "--out", str(tmp_path / "o"), "--workers", "1",
                 "--no-progress"]) == 0
    assert main(["plot-sweep", str(tmp_path / "o"), "--x", "budget", "--y", "success"]) == 0
    assert (tmp_path / "o" / "plot-success-vs-budget.png").exists()
    assert main(["plot-sweep", str(tmp_path / "o" / "results.csv"), "--x", "budgett",
                 "--y", "success"]) == 2
    assert "Did you mean 'budget'?" in capsys.readouterr().err


def test_ambiguous_or_empty_column_names_are_refused(tmp_path):
    """`--x rate` never silently plots `rate_bits`. Without a `rate`
    column it is refused with the close matches; with an all-empty `rate`
    column (the gibbs target rate of non-gibbs rows) it is refused too, naming
    rate_bits (Theorem 1 make-room table)."""
    table = _exact_table()
    with pytest.raises(UnknownNameError, match=r"'rate'.*Did you mean 'rate_bits'.*rate_bits_se"):
        plot_sweep(table, tmp_path / "a.png", x="rate", y="mean_z")
    with_rate = table.append_column("rate", pa.array([None] * table.num_rows, pa.float64()))
    with pytest.raises(DomainError, match=r"all 14 rows of 'rate' are empty; did you mean "
                                          r"rate_bits"):
        plot_sweep(with_rate, tmp_path / "b.png", x="rate", y="mean_z")
    assert not (tmp_path / "a.png").exists() and not (tmp_path / "b.png").exists()
