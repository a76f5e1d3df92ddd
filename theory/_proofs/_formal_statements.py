"""The Coq development's main theorems as the checker reports them: for each, the
paper result it proves, its name in ``Statements.v`` (or the engine model's
``engine/Statements.v``), the statement in words and its scope (the paper's
statement, or a named weaker form). :mod:`._formal` compiles the development
and checks these rows.
"""

from __future__ import annotations

import dataclasses

__all__ = [
    "COQ_COVERAGE",
    "ENGINE_DIR",
    "ENGINE_STATEMENTS_FILE",
    "ENGINE_THEOREMS",
    "MAIN_THEOREMS",
    "SCOPES",
    "STATEMENTS_FILE",
    "MainTheorem",
]


#: What a proved row establishes: the paper's statement itself, the paper's statement
#: where it is definitional (true by its premise, as the paper's sentence is), a step of
#: a proof, or one of the weaker forms of Proposition 2 proved before its Gaussian
#: channel was formalised (kept: they hold for other channels too).
SCOPES = {
    "paper": "the paper's statement",
    "definitional": "the paper's statement, true by its premise as the paper's sentence "
    "is (App. B: a lossless store read back by handle returns the block), not a further "
    "result",
    "finite-channel": "finite observation alphabet only, with the Gaussian divergence as a "
    "'<=' premise (the continuous Gaussian channel is proposition2_gaussian)",
    "kl-premise": "any observation, but with the Gaussian divergence of every finite "
    "quantisation as a '<=' premise",
    "likelihood-ratio": "any observation in a measurable space (I = sup over finite "
    "measurable quantisations), the divergence of every quantisation proved (data "
    "processing), each likelihood ratio dP_k/dP_j = exp(-L_jk) with "
    "E_{P_j}[L_jk] <= (ln kappa)^2/sigma^2 a premise (proposition2_gaussian proves it "
    "for the paper's channel)",
    "proof-step": "a step of the proof, not the paper's result",
}


@dataclasses.dataclass(frozen=True)
class MainTheorem:
    result: str
    theorem: str
    statement: str
    scope: str = "paper"


# One row per main theorem of Statements.v. `result` names the paper result.
MAIN_THEOREMS: tuple[MainTheorem, ...] = (
    MainTheorem(
        "lemma1",
        "lemma1_list_fano",
        "J* uniform on [n], U indep. of (J*,Y), any (Y,U)-measurable list of size "
        "1 <= m <= n-1: log2 n - I <= 1 + Pc log2 m + (1-Pc) log2(n-m)",
    ),
    MainTheorem(
        "lemma1",
        "lemma1_any_observation",
        "any observation W (values in any space; I(J*;W) = sup of I(J*;q(W)) over finite "
        "measurable quantisations q), any (W,U)-measurable list of size m: "
        "log2 n - I <= 1 + Pc log2 m + (1-Pc) log2(n-m)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_any_observation",
        "any observation W (values in any space; I(J*;W) = sup over finite measurable "
        "quantisations), any (W,U)-measurable archive order: E[Z] >= kappa [1 - (I+1)/nu]_+",
    ),
    MainTheorem(
        "thm1",
        "theorem1_tradeoff",
        "2 <= kappa < n/2, any finite interface Y, any (Y,U)-measurable archive order: "
        "E[Z] >= kappa [1 - (I+1)/nu]_+, nu = log2((n-kappa)/kappa)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_tail_sum",
        "(B) E[Z] = sum_{m=1}^{kappa} (1 - Pc(m)), Z = min(tau-1, kappa)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_adaptive_prefix",
        "(E) a flag-reading adaptive policy archives exactly a prefix of the fixed "
        "all-'over' order and Z = min(tau-1, kappa)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_adaptive_nonrepeating",
        "(E) every adaptive policy that never re-archives along the all-'over' history "
        "obeys E[Z] >= kappa [1 - (I+1)/nu]_+",
    ),
    MainTheorem(
        "thm1",
        "theorem1_adaptive",
        "(E) every adaptive policy, no premise (a repeat frees nothing and is a wasted "
        "step, counted; the run stops when the flag clears or after F >= kappa steps): "
        "E[Z] >= kappa [1 - (I+1)/nu]_+",
    ),
    MainTheorem(
        "thm1",
        "theorem1_adaptive_repeating",
        "(E) instance: the policy that always picks one block repeats (not injective along "
        "the all-'over' history) and the bound applies to it",
    ),
    MainTheorem(
        "thm1",
        "theorem1_batch",
        "(E) a batch policy archiving a (Y,U)-measurable set that clears the overflow almost "
        "surely has E[|S minus J*|] >= kappa [1 - (I+1)/nu]_+",
    ),
    MainTheorem(
        "thm1",
        "theorem1_batch_full_ledger",
        "(E) the full-ledger batch S = {Y} is an instance: it clears the overflow almost "
        "surely (not surely), costs E[|S minus J*|] = 0, and the bound applies",
    ),
    MainTheorem(
        "thm1",
        "theorem1_low_rate",
        "(C)(i) 1 - (I+1)/nu <= E[Z]/kappa <= 1: E[Z]/kappa -> 1 when (I+1)/nu -> 0",
    ),
    MainTheorem(
        "thm1",
        "theorem1_low_rate_limit",
        "(C)(i) the limit: along any sequence of instances (any interfaces and orders), "
        "(I+1)/nu -> 0 implies E[Z]/kappa -> 1",
    ),
    MainTheorem(
        "thm1",
        "theorem1_low_rate_limit_instance",
        "(C)(i) instance: the size-blind interface (I = 0), kappa = 2, n_i = 2^(i+2)+2 has "
        "(I+1)/nu -> 0",
    ),
    MainTheorem(
        "thm1",
        "theorem1_threshold",
        "(C)(ii) E[Z] <= delta kappa implies I >= (1-delta) nu - 1",
    ),
    MainTheorem(
        "thm1",
        "theorem1_price",
        "(C)(iii) E[Z] <= kappa - Delta implies I >= Delta nu / kappa - 1",
    ),
    MainTheorem(
        "thm1",
        "theorem1_unavailable",
        "(C) at most r restorations leave >= [E[Z] - r]_+ blocks unavailable in expectation",
    ),
    MainTheorem(
        "thm1",
        "theorem1_full_ledger",
        "(C)(i) full ledger Y = J* with an archive order putting J* first: I = log2 n "
        "and E[Z] = 0",
    ),
    MainTheorem(
        "thm1",
        "theorem1_full_ledger_order_exists",
        "(C)(i) an injective archive order putting the reported block first exists "
        "(cyclic shift)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_buckets",
        "(D) M balanced buckets of size <= ceil(n/M): E[Z] < n/(2M), I = H(Y) <= log2 M",
    ),
    MainTheorem(
        "thm1",
        "theorem1_buckets_random",
        "(D) the paper's order: the reported bucket probed in uniformly random order "
        "(U a uniform permutation of [n]): E[Z] < n/(2M), I = H(Y) <= log2 M",
    ),
    MainTheorem(
        "thm1",
        "theorem1_buckets_random_exist",
        "(D) for every 1 <= M <= n a balanced M-bucket partition exists and its "
        "random-order probe has E[Z] < n/(2M)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_buckets_exist",
        "(D) for every 1 <= M <= n a balanced M-bucket interface exists with "
        "E[Z] < n/(2M) and I <= log2 M",
    ),
    MainTheorem(
        "thm1",
        "theorem1_sufficient_rate",
        "(D) any M <= n with M >= n/(2 delta kappa) gives rate I <= log2 M and "
        "E[Z] < delta kappa",
    ),
    MainTheorem(
        "thm1",
        "theorem1_rates_theta",
        "(D) fixed delta in (0,1): the sufficient rate min(log2 n, log2 ceil(n/(2 delta "
        "kappa))) and the necessary rate (1-delta) nu - 1 are both Theta(log2(n/kappa)) "
        "(constants c1, c2 > 0 and a threshold on log2(n/kappa), depending on delta only)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_rates_theta_instance",
        "(D) instance: delta = 1/2, kappa = 2, n = 2^(m+3) meets the premises with "
        "log2(n/kappa) above any threshold",
    ),
    MainTheorem(
        "thm1",
        "theorem1_rates_matching",
        "(D) delta_i -> 0 with log2(1/delta_i)/nu_i -> 0: both rates are (1+o(1)) nu, "
        "i.e. Rnec_i/nu_i -> 1 and Rsuf_i/nu_i -> 1",
    ),
    MainTheorem(
        "thm1",
        "theorem1_rates_matching_instance",
        "(D) instance: kappa = 2, delta_i = 2^-(i+1), n_i = 2^((i+1)^2+2) meets the premises "
        "(delta_i -> 0, log2(1/delta_i)/nu_i <= 1/(i+1) -> 0)",
    ),
    MainTheorem(
        "prop1",
        "proposition1",
        "N independent uniform k-bit blocks, any state with H(R) <= B: "
        "Pr[correct] <= B/(Nk) + 1/k",
    ),
    MainTheorem(
        "prop1",
        "proposition1_recovering",
        "payloads in a lossless store read back by h-bit handles, instruction + N handles "
        "+ one block fit in B: the prompt stays within B and the method is correct with "
        "probability 1 (definitional: correctness is the lossless premise, as in the paper)",
        "definitional",
    ),
    MainTheorem(
        "prop1",
        "proposition1_recovering_store",
        "h-bit handles name N blocks apart iff N <= 2^h, and then a lossless store "
        "(archive indexed by the decoded handle) exists",
    ),
    MainTheorem(
        "prop1",
        "proposition1_k_ceil_sqrt",
        "asymptotic separation: k = ceil(sqrt N), i.e. k - 1 < sqrt N <= k",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation_feasible",
        "asymptotic separation (i): 0 <= c0 < c, k = ceil(sqrt N), B = c N log2 N: "
        "c0 N log2 N + s0 + k <= B for all large N (VISTA stays feasible)",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation_lossy",
        "asymptotic separation (ii): k = ceil(sqrt N), B = c N log2 N: "
        "B/(Nk) + 1/k -> 0 as N -> oo",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation_rate",
        "asymptotic separation: c > 0, N >= 2: (c/2) log2 N / sqrt N <= B/(Nk) + 1/k "
        "<= (c+1) log2 N / sqrt N, i.e. Theta(log N / sqrt N)",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation",
        "asymptotic separation, 1 <= c0 < c (c0 set by the handle encoding): for all large "
        "N the recovering method fits floor(B) and Pr[correct] = 1, every lossy method has "
        "Pr[correct] <= eps, and 1 - (B/(Nk) + 1/k) -> 1 (the gap tends to 1)",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation_nonvacuous",
        "asymptotic separation is not vacuous for c0 >= 1: for every N0 some N >= N0 "
        "(N = 2^m) has a lossless store with h-bit handles, N h <= c0 N log2 N",
    ),
    MainTheorem(
        "prop2",
        "proposition2_gaussian",
        "the paper's channel: given J* = j, W in R^n has independent coordinates "
        "W_i ~ N(m_i, sigma^2) (density exp(-(x-m_i)^2/(2 sigma^2))/Z w.r.t. Lebesgue "
        "measure, 0 < Z < oo), m_j = ln L, m_i = ln l (i != j), kappa = L/l (l, L > 0); "
        "I(J*;W) = sup over finite measurable quantisations: "
        "I(J*;W) <= (log2 kappa)^2 ln 2 / sigma^2 bits",
    ),
    MainTheorem(
        "prop2",
        "proposition2_gaussian_step3",
        "the paper's Gaussian channel (as above), Step 3 before its last inequality: "
        "I(J*;W) <= (1-1/n) (log2 kappa)^2 ln 2 / sigma^2 (the factor n(n-1)/n^2 kept)",
    ),
    MainTheorem(
        "prop2",
        "gaussian_pairwise_divergence",
        "Step 2 for that channel: dP_k/dP_j = exp(-L_jk) with "
        "E_{P_j}[L_jk] = KL(P_j||P_k) = (ln kappa)^2/sigma^2 for j != k (proved, not assumed)",
        "proof-step",
    ),
    MainTheorem(
        "prop2",
        "proposition2_mixture",
        "finite W: I(J*;W) = 1/(n ln 2) sum_j KL(P_j || Pbar)",
        "finite-channel",
    ),
    MainTheorem(
        "prop2",
        "proposition2_content",
        "finite W only, premise KL(P_j||P_k) <= (ln kappa)^2/sigma^2 for j != k: "
        "I(J*;W) <= (log2 kappa)^2 ln 2 / sigma^2 (the continuous channel: proposition2_gaussian)",
        "finite-channel",
    ),
    MainTheorem(
        "prop2",
        "proposition2_any_observation",
        "any observation W (I = sup over finite quantisations), premise: every finite "
        "quantisation has KL(P_j||P_k) <= (ln kappa)^2/sigma^2: "
        "I(J*;W) <= (log2 kappa)^2 ln 2 / sigma^2",
        "kl-premise",
    ),
    MainTheorem(
        "prop2",
        "kl_data_processing",
        "Q = exp(-L) P with L P-integrable: every finite measurable quantisation q has "
        "KL(q#P || q#Q) <= E_P[L] (data processing of the divergence, any measurable space)",
        "proof-step",
    ),
    MainTheorem(
        "prop2",
        "proposition2_measurable",
        "W in any measurable space (I = sup over finite measurable quantisations), premise "
        "dP_k/dP_j = exp(-L_jk) with E_{P_j}[L_jk] <= (ln kappa)^2/sigma^2 for j != k: "
        "I(J*;W) <= (log2 kappa)^2 ln 2 / sigma^2 (for the paper's channel the premise "
        "is proved: gaussian_pairwise_divergence)",
        "likelihood-ratio",
    ),
    MainTheorem(
        "prop2-tight",
        "proposition2_gaussian_tight",
        "the paper's Gaussian channel (as above), against the product Gaussian Q with "
        "every mean (ln L + (n-1) ln l)/n: I(J*;W) <= (1-1/n) ln 2 (log2 kappa)^2 / (2 sigma^2)",
    ),
    MainTheorem(
        "prop2-tight",
        "proposition2_measurable_tight",
        "W in any measurable space, same premise: "
        "I(J*;W) <= (1-1/n) (log2 kappa)^2 ln 2 / sigma^2 (Step 3's n(n-1)/n^2 kept)",
        "likelihood-ratio",
    ),
    MainTheorem(
        "prop2-tight",
        "proposition2_tight",
        "finite W, every Q covering Pbar: I(J*;W) <= 1/(n ln 2) sum_j KL(P_j || Q)",
        "finite-channel",
    ),
    MainTheorem(
        "prop2-tight",
        "proposition2_tight_gaussian",
        "finite W only, premise KL(P_j||Q) <= (1-1/n)(ln kappa)^2/(2 sigma^2): "
        "I <= (1-1/n) ln 2 (log2 kappa)^2 / (2 sigma^2) (finite channels only)",
        "finite-channel",
    ),
    MainTheorem(
        "frontier",
        "frontier_rank",
        "any (Y,U)-measurable order: I(J*;Y) >= log2 n - H(rank)",
    ),
    MainTheorem(
        "frontier",
        "frontier_gibbs_maxent",
        "the Gibbs law p_r ~ exp(-lambda c_r), lambda >= 0, maximises entropy among laws "
        "with mean cost at most its own",
    ),
    MainTheorem(
        "frontier",
        "frontier_converse_gibbs",
        "c_r = min(r-1, kappa): E[Z] <= D_lambda implies I(J*;Y) >= log2 n - H(g_lambda)",
    ),
    MainTheorem(
        "frontier",
        "frontier_achievable",
        "every rank law p is attained (cyclic-shift interface): I = log2 n - H(p), "
        "E[Z] = sum_r p_r min(r-1, kappa)",
    ),
)

STATEMENTS_FILE = "Statements.v"

#: Per main result of the Python proof steps (theory/_proofs/_registry.MAIN_RESULTS),
#: the Coq theorems of Statements.v that prove it for every parameter. A Python
#: chain whose weakest link is finite is "proved in Coq; checked in Python" when
#: these are proved with the paper's scope.
COQ_COVERAGE: dict[str, tuple[str, ...]] = {
    "prop1": ("proposition1", "proposition1_recovering", "proposition1_recovering_store",
              "proposition1_separation"),
    "prop2": ("proposition2_gaussian",),
    "prop2-tight": ("proposition2_gaussian_tight",),
    "lemma1": ("lemma1_list_fano", "lemma1_any_observation"),
    "thm1.A": ("lemma1_list_fano", "theorem1_tradeoff"),
    "thm1.B": ("theorem1_tradeoff", "theorem1_tail_sum", "theorem1_any_observation"),
    "thm1.C": ("theorem1_low_rate", "theorem1_low_rate_limit", "theorem1_threshold",
               "theorem1_price", "theorem1_unavailable", "theorem1_full_ledger"),
    "thm1.D": ("theorem1_buckets_random", "theorem1_buckets", "theorem1_buckets_exist",
               "theorem1_sufficient_rate", "theorem1_rates_theta", "theorem1_rates_matching"),
    "thm1.E": ("theorem1_adaptive_prefix", "theorem1_adaptive", "theorem1_batch",
               "theorem1_batch_full_ledger"),
}

# The engine model's theorems (theory/coq/engine/Statements.v), one per
# workspace invariant of the paper, named after vistalab.workspace.INVARIANTS.
ENGINE_DIR = "engine"
ENGINE_STATEMENTS_FILE = "engine/Statements.v"
ENGINE_THEOREMS: tuple[MainTheorem, ...] = (
    MainTheorem(
        "engine",
        "workspace_budget",
        "budget: |C_t| <= B after preflight and final assembly -- for every sequence of "
        "operations, the management floor (fixed overhead + pinned + worst-case management "
        "dashboard) stays <= B and every rendering, ordinary or management, fits B; |C_t| "
        "is the fixed overhead plus the cost of every form the specification (Spec.v) "
        "requires",
    ),
    MainTheorem(
        "engine",
        "workspace_fidelity",
        "fidelity: visible blocks appear in the active prompt with exact content; archived "
        "blocks are replaced by compact handles -- the rendering is, message for message, the "
        "one Spec.v defines over the state (normal mode: every position in order in its "
        "defined form, each visible or pinned block with its exact registered bytes, handles "
        "and placeholders naming key, level and stored payload, stubs, tombstones, pending "
        "placeholders, the dashboard; management mode: every pinned block and the dashboard)",
    ),
    MainTheorem(
        "engine",
        "workspace_ledger",
        "ledger: the dashboard is a factual ledger of block IDs, token estimates, recency, "
        "block type, archive level, status, and remaining budget -- every row is Spec.v's row "
        "of its unit (ID, ~Tok, age in root turns, type, level, parent, status, one per live "
        "top-level unit by first block) and the budget line's overhead + conversation + "
        "dashboard is the total preflight compares with B",
    ),
    MainTheorem(
        "engine",
        "workspace_ledger_levels",
        "ledger_levels: the ledger's archive level and token estimate of an archived block "
        "are the ones its archiving recorded -- archiving one block on its own makes it "
        "archived at level 1 if it was in the prompt and one level above its own otherwise, "
        "with the ~Tok its ledger row showed just before",
    ),
    MainTheorem(
        "engine",
        "workspace_guard",
        "guard: a new tool result that still cannot fit is rejected with a compact notice "
        "(Algorithm 1: admit fitting results; offload eligible visible raw results or reject) "
        "-- the result's block holds its bytes if admitted, the notice's if rejected; the cap "
        "rejects exactly the results no normal rendering of B could hold; an admitted result "
        "leaves the candidate within the hard limit; with one dashboard figure the offloaded "
        "results are the shortest oldest-first prefix of the eligible ones whose gains cover "
        "the excess (none, and a rejection, when all of them do not)",
    ),
    MainTheorem(
        "engine",
        "workspace_deletion",
        "deletion: delete removes the selected content permanently -- after a delete, and "
        "after any later operations, the store holds nothing under a deleted unit's key (a "
        "block's raw bytes, a group's payload) and every leaf of a deleted unit (a group's "
        "blocks, nested groups included) is a tombstone recover refuses, with no store entry "
        "(its own key or inlined in a group payload) holding its bytes",
    ),
    MainTheorem(
        "engine",
        "workspace_archive_contract",
        "archive_contract: read_path(h) == payload(S) (eq. archive-contract), for every "
        "handle either rendering shows -- a block's own handle or offload placeholder, or a "
        "(top-level) group's handle: it shows its unit's store key, archive level and stored "
        "payload, the store holds that key, and reading it, following the references nested "
        "in group payloads, yields exactly the unit's leaves with their registered bytes, in "
        "member order",
    ),
    MainTheorem(
        "engine",
        "workspace_protocol",
        "protocol: tool results stay linked to their calls and archived results render in "
        "protocol-valid form -- every rendering satisfies the OpenAI pairing rule and, as an "
        "Anthropic request, alternates user/assistant with each tool_use answered by the "
        "tool_results leading the next user turn and every tool_use id unique in the request "
        "(a reused call id renamed per assistant turn)",
    ),
    MainTheorem(
        "engine",
        "workspace_recoverability",
        "recoverability: archived payload bytes remain recoverable unless the agent "
        "explicitly deletes them -- recover returns the registered bytes of every live block "
        "(in the prompt, archived, offloaded or inside nested groups)",
    ),
    MainTheorem(
        "engine",
        "workspace_stable_ids",
        "stable_ids: every actionable unit has a stable block ID or handle -- IDs are B1..Bn "
        "in registration order, never change meaning, and no block or group ID is reused",
    ),
    MainTheorem(
        "engine",
        "workspace_dashboard",
        "dashboard: the dashboard reports the same token estimates used by these checks -- "
        "overhead + conversation + dashboard = the total preflight compares with B = the "
        "ordinary rendering's cost",
    ),
)
