"""Pure mathematics of the VISTA paper: closed-form bounds, the exact optimal
information-recovery frontier, and machine-checked proof steps.

No I/O, no plotting, no randomness.
"""

from ._bounds import (
    AsymptoticPoint,
    BucketLedger,
    HandleCostModel,
    RecoveryFeasibility,
    asymptotic_separation,
    blind_mean_z,
    bucket_ledger,
    bucket_ledger_for_mean_z,
    bucket_sufficient_rate,
    content_rate_bound,
    content_rate_bound_tight,
    list_fano_pc_bound,
    makeroom_lower_bound,
    makeroom_nu,
    price_per_bit,
    rate_needed_for_reduction,
    recovery_feasibility,
    recovery_success_bound,
    threshold_rate,
)
from ._errors import DomainError, UnknownNameError, VistaLabError, suggest
from ._frontier import FRONTIER_REL_TOL, GibbsLaw, gibbs_law, optimal_mean_z, optimal_rate
from ._proofs import CLAIMS as PROOF_CLAIMS
from ._proofs import GENERALITIES as PROOF_GENERALITIES
from ._proofs import METHODS as PROOF_METHODS
from ._proofs import (
    ChainResult,
    ShannonProof,
    Step,
    StepCertificate,
    VerificationReport,
    certify_all,
    check_chains,
    conditional_independence,
    functional_dependence,
    independence,
    list_steps,
    prove_shannon_inequality,
)
from ._tightness import (
    CONTENT_RATE_ABS_TOL,
    CONTENT_SNR_MAX,
    ContentTightnessRow,
    MakeroomTightnessRow,
    ThresholdTightnessRow,
    TightnessReport,
    content_rate_exact,
    list_fano_mean_z_bound,
    tightness_report,
)

__all__ = [
    "DomainError",
    "UnknownNameError",
    "VistaLabError",
    "suggest",
    # Proposition 1
    "recovery_success_bound",
    "HandleCostModel",
    "RecoveryFeasibility",
    "recovery_feasibility",
    "AsymptoticPoint",
    "asymptotic_separation",
    # Proposition 2
    "content_rate_bound",
    "content_rate_bound_tight",
    # Lemma 1 and Theorem 1
    "list_fano_pc_bound",
    "makeroom_nu",
    "makeroom_lower_bound",
    "threshold_rate",
    "price_per_bit",
    "rate_needed_for_reduction",
    "BucketLedger",
    "bucket_ledger",
    "bucket_ledger_for_mean_z",
    "bucket_sufficient_rate",
    "blind_mean_z",
    # exact frontier
    "optimal_mean_z",
    "optimal_rate",
    "GibbsLaw",
    "gibbs_law",
    "FRONTIER_REL_TOL",
    # tightness findings
    "content_rate_exact",
    "CONTENT_RATE_ABS_TOL",
    "CONTENT_SNR_MAX",
    "list_fano_mean_z_bound",
    "ContentTightnessRow",
    "MakeroomTightnessRow",
    "ThresholdTightnessRow",
    "TightnessReport",
    "tightness_report",
    # machine-checked proof steps
    "certify_all",
    "list_steps",
    "Step",
    "StepCertificate",
    "VerificationReport",
    "PROOF_CLAIMS",
    "PROOF_METHODS",
    "PROOF_GENERALITIES",
    "ChainResult",
    "check_chains",
    "prove_shannon_inequality",
    "ShannonProof",
    "independence",
    "functional_dependence",
    "conditional_independence",
]
