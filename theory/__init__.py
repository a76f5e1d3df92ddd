"""Pure mathematics of the VISTA paper: closed-form bounds, the exact optimal
information-recovery frontier, and machine-checked proof steps.

No I/O, no plotting, no randomness.
"""

from vistalab._core._door import install_contract as _install_contract

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
from ._certified import CertifiedValue
from ._content_sandwich import (
    CONTENT_N_MAX,
    ContentGapBounds,
    ContentSandwich,
    content_jensen_lower_bound,
    content_limit_gap_bound,
    content_product_bound,
    content_rate_certified,
    content_rate_limit,
    content_sandwich,
)
from ._errors import DomainError, UnknownNameError, VistaLabError, suggest
from ._first_order import (
    FirstOrderBounds,
    FirstOrderPoint,
    SecondOrderIdentity,
    first_order_bounds,
    first_order_point,
    head_interface_bound,
    second_order_approx,
    second_order_identity,
    two_level_rate,
)
from ._frontier import FRONTIER_REL_TOL, GibbsLaw, gibbs_law, optimal_mean_z, optimal_rate
from ._gaussian_certified import GAUSSIAN_CERT_KAPPA_MAX, gaussian_mean_z_certified
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
from ._recovery_sharp import (
    RECOVERY_EXACT_MAX_STRINGS,
    RecoveryOptimum,
    recovery_exact_optimum,
    recovery_success_bound_sharp,
)
from ._sharp_makeroom import SHARP_KAPPA_MAX, sharp_constant, sharp_mean_z_bound, sharp_pc_bound
from ._tightness import (
    CONTENT_RATE_ABS_TOL,
    CONTENT_RATE_REL_TOL,
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
    "CONTENT_RATE_REL_TOL",
    "CONTENT_SNR_MAX",
    "list_fano_mean_z_bound",
    "ContentTightnessRow",
    "MakeroomTightnessRow",
    "ThresholdTightnessRow",
    "TightnessReport",
    "tightness_report",
    # beyond the paper (theory/BEYOND.md)
    "CertifiedValue",
    "CONTENT_N_MAX",
    "ContentSandwich",
    "content_product_bound",
    "content_jensen_lower_bound",
    "content_rate_limit",
    "content_limit_gap_bound",
    "ContentGapBounds",
    "content_sandwich",
    "content_rate_certified",
    "GAUSSIAN_CERT_KAPPA_MAX",
    "gaussian_mean_z_certified",
    "SHARP_KAPPA_MAX",
    "sharp_pc_bound",
    "sharp_mean_z_bound",
    "sharp_constant",
    "FirstOrderPoint",
    "first_order_point",
    "first_order_bounds",
    "FirstOrderBounds",
    "head_interface_bound",
    "second_order_identity",
    "SecondOrderIdentity",
    "second_order_approx",
    "two_level_rate",
    "RECOVERY_EXACT_MAX_STRINGS",
    "RecoveryOptimum",
    "recovery_exact_optimum",
    "recovery_success_bound_sharp",
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

# The error contract's net over every public name (vistalab._core._door).
_install_contract(globals())
