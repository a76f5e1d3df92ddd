"""One vocabulary of result column names, units and meanings, shared by the
sweep tables (``vista-lab sweep``) and the figure tables (``reproduce``).

A column name means the same quantity, in the same unit, in every table that
uses it; the README's "Result columns" table is generated from :data:`COLUMNS`
(``python -m vistalab.figures._vocabulary``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["Column", "COLUMNS", "describe", "markdown_table"]


@dataclass(frozen=True)
class Column:
    """One column of the shared vocabulary.

    Attributes
    ----------
    name : str
        The column name, in every table that has the quantity.
    unit : str
        Unit of the values (``"1"`` for dimensionless numbers and probabilities,
        ``""`` for labels, flags and identifiers).
    description : str
        What the column holds.
    """

    name: str
    unit: str
    description: str


_ENTRIES: tuple[Column, ...] = (
    # identifiers
    Column("cell", "", "content key of the cell's parameters (sha256, 32 hex digits); "
           "its seed is SeedSequence(seed_entropy, spawn_key=four 32-bit words of the key)"),
    Column("seed_entropy", "", "root seed entropy of the sweep (text: may exceed 64 bits)"),
    Column("series", "", "which curve or method a row belongs to"),
    Column("panel", "", "which panel of the figure a row belongs to"),
    # make-room instance M_{n,L,l} (Theorem 1)
    Column("n", "blocks", "number of blocks in the working set"),
    Column("kappa", "1", "size ratio L/l of the bulky block"),
    Column("interface", "", "observation interface (what the archive policy sees)"),
    Column("sigma", "1 (log-size)", "noise standard deviation of the gaussian size channel, "
           "on the log-size scale"),
    Column("buckets", "buckets", "number of buckets M of the bucket ledger"),
    Column("lam", "1/bit", "inverse temperature of the gibbs interface"),
    Column("rate", "bits", "target rate of the gibbs interface (a parameter; the measured "
           "rate is rate_bits)"),
    Column("policy", "", "archive policy"),
    Column("mode", "", "simulator mode"),
    Column("tokenizer", "", "engine tokenizer"),
    Column("l_tokens", "tokens", "net tokens of a load-bearing block (engine)"),
    Column("l_tokens_used", "tokens", "net tokens of a load-bearing block actually used"),
    Column("array_trials", "trials", "trials of the array-simulator cross-check"),
    Column("reuse", "", "one workspace per 64 trials, restored after each trial"),
    Column("trials", "trials", "Monte Carlo trials"),
    Column("mean_z", "blocks", "mean of Z, the load-bearing blocks archived"),
    Column("mean_z_se", "blocks", "standard error of mean_z"),
    Column("mean_z_ci_low", "blocks", "lower end of the 95% confidence interval of E[Z]"),
    Column("mean_z_ci_high", "blocks", "upper end of the 95% confidence interval of E[Z]"),
    Column("rate_bits", "bits", "rate I(J*;Y) of the interface (measured or exact)"),
    Column("rate_bits_se", "bits", "standard error of rate_bits (0 when exact)"),
    Column("rate_exact", "", "whether rate_bits is exact (else a Monte Carlo estimate)"),
    Column("lower_bound", "blocks", "Theorem 1 lower bound on E[Z] (null outside "
           "2 <= kappa < n/2)"),
    Column("exact_mean_z", "blocks", "exact E[Z] of this interface and policy, when known"),
    Column("optimal_mean_z", "blocks", "exact optimal frontier: smallest E[Z] at this rate"),
    Column("array_mean_z", "blocks", "the array simulator's E[Z] (engine cross-check)"),
    Column("nu", "bits", "nu = log2((n - kappa)/kappa) (null outside the theorem's domain)"),
    Column("z_score", "1", "(engine - array) / combined standard error"),
    Column("agrees_with_exact", "", "the estimate agrees with exact_mean_z"),
    Column("agrees_with_array", "", "engine and array agree within 4 standard errors"),
    Column("consistent_with_theory", "", "the estimate is not below Theorem 1's bound or the "
           "frontier beyond its interval"),
    Column("archive_events", "calls", "archive tool calls over the cell's trials"),
    Column("read_events", "calls", "payload reads over the cell's trials"),
    Column("delete_events", "calls", "delete tool calls over the cell's trials"),
    Column("recovery_obligations", "blocks", "sum of Z over the cell's trials"),
    Column("byte_exact_recoveries", "reads", "reads that returned the original bytes"),
    Column("all_recoveries_byte_exact", "", "every read and query returned the original bytes"),
    Column("budget_tokens", "tokens", "engine budget B (a parameter of engine runs)"),
    Column("budget_used_tokens", "tokens", "engine budget B the make-room trials ran at "
           "(the rendering is over it by exactly L)"),
    Column("size_mismatches", "archives", "archives freeing other than the calibrated size"),
    Column("budget_mismatches", "trials", "trials not over budget by exactly L"),
    Column("stop_mismatches", "trials", "trials where preflight cleared after a different "
           "number of archives than exact sizes predict"),
    # recovery task T_{N,k} (Proposition 1)
    Column("N", "blocks", "number of evidence blocks"),
    Column("k", "bits", "bits per evidence block"),
    Column("budget", "bits", "prompt budget B (array simulator)"),
    Column("budget_bits", "bits", "prompt budget B (figure tables; the sweep column is budget)"),
    Column("strategy", "", "in-prompt strategy"),
    Column("handle_cost", "bits per log2 N", "handle cost factor c0"),
    Column("success", "1", "success rate (probability)"),
    Column("success_ci_low", "1", "lower end of the exact binomial 95% interval of success"),
    Column("success_ci_high", "1", "upper end of the exact binomial 95% interval of success"),
    Column("successes", "trials", "number of successful trials"),
    Column("bound", "1", "upper bound on the success probability at the same budget: "
           "Proposition 1's B/(Nk) + 1/k, not capped at 1 (figure 8's optimum rows: the "
           "sharper converse)"),
    Column("exact_success", "1", "exact success probability, when a closed form exists"),
    Column("consistent_with_bound", "", "the estimate is consistent with Proposition 1"),
    Column("entropy_bits", "bits", "declared entropy H(R) of the in-prompt state"),
    Column("feasible", "", "recovering strategies: instruction + handles + one block fit "
           "the budget"),
    Column("engine_feasible", "1", "recover: fraction of trials whose read-back fit"),
    Column("handle_tokens", "tokens", "mean tokens of one archive handle"),
    Column("instruction_tokens", "tokens", "fixed prompt tokens beside the handles"),
    Column("read_tokens", "tokens", "tokens one read-back adds to the prompt"),
    Column("raw_history_tokens", "tokens", "rendering with every block visible"),
    Column("kept", "bits or blocks", "b (keep-bits, bits) or s (keep-blocks, blocks)"),
    # figure tables
    Column("budget_share", "1", "budget as a share of the evidence: B/(Nk) for bit budgets, "
           "(B - fixed prompt)/(raw history - fixed prompt) for token budgets"),
    Column("fit_share", "1", "share of engine trials whose handles and read-back fit the "
           "budget"),
    Column("byte_exact", "", "every payload read returned the original bytes"),
    Column("c", "1", "budget constant of the separation: B = c N log2 N"),
    Column("used_share", "1", "(N handles + one block) / B for the recovering method"),
    Column("delta", "1", "target E[Z] <= delta kappa, as a fraction of kappa"),
    Column("table", "", "paper_checks table key a value comes from"),
    Column("label", "", "method or variant as printed in the paper"),
    Column("id", "", "stable method or variant identifier"),
    Column("group", "", "row group of the paper's Table 1"),
    Column("context_k_tokens", "K tokens", "context-growth setting of the LOCA pressure runs"),
    Column("metric", "", "column of the paper's table a value comes from"),
    Column("derived", "", "True when computed from printed numbers, False when printed"),
    Column("log10_n", "1", "log10 of the number of blocks n"),
    Column("run", "", "replication index"),
    Column("turn", "turns", "trajectory turn (one search call and one result)"),
    Column("registered_blocks", "blocks", "cumulative registered blocks N of a trajectory"),
    Column("dashboard_tokens", "tokens", "net dashboard message tokens"),
    Column("visible_blocks", "blocks", "blocks whose content is in the prompt"),
    Column("ledger_rows", "rows", "actionable units the dashboard lists"),
    Column("render_tokens", "tokens", "tokens of the rendering sent to the model"),
    Column("candidate_tokens", "tokens", "tokens of the ordinary (pre-preflight) rendering"),
    Column("render_mode", "", "normal or overflow, after the turn's management actions"),
    Column("archive_actions", "calls", "archive calls so far in a replication"),
    Column("ci_low", "as value", "lower end of the 95% interval of value"),
    Column("ci_high", "as value", "upper end of the 95% interval of value"),
    Column("se", "as value", "standard error of value"),
    Column("exact", "as value", "exact value at the same point, where an evaluator exists"),
    Column("value", "see the table's sidecar", "the plotted quantity; its meaning per series "
           "is in the figure's results/<figure>.json"),
)

#: Every column of the shared vocabulary, by name (read-only).
COLUMNS: Mapping[str, Column] = MappingProxyType({c.name: c for c in _ENTRIES})


def describe(name: str, fallback: str = "") -> dict[str, str]:
    """``{"unit": ..., "description": ...}`` of a column (``fallback`` when not listed)."""
    col = COLUMNS.get(name)
    if col is None:
        return {"unit": "", "description": fallback}
    return {"unit": col.unit, "description": col.description}


def markdown_table() -> str:
    """The README's table of result columns."""
    lines = ["| column | unit | meaning |", "|---|---|---|"]
    for c in _ENTRIES:
        unit = c.unit or "-"
        lines.append(f"| `{c.name}` | {unit} | {c.description.replace('|', '/')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m vistalab.figures._vocabulary
    print(markdown_table(), end="")
