"""Machine-checked proof steps for the paper's Appendices B-D (private).

theory/__init__.py re-exports the public names; the step modules register
themselves with :mod:`._registry` when first needed.
"""

from ._lp import (
    ShannonProof,
    conditional_independence,
    functional_dependence,
    independence,
    prove_shannon_inequality,
)
from ._registry import (
    CLAIMS,
    GENERALITIES,
    MAIN_RESULTS,
    METHODS,
    ChainResult,
    Outcome,
    Step,
    StepCertificate,
    VerificationReport,
    certify_all,
    check_chains,
    get_step,
    list_steps,
    run_step,
)

__all__ = [
    "CLAIMS",
    "GENERALITIES",
    "MAIN_RESULTS",
    "METHODS",
    "ChainResult",
    "Outcome",
    "ShannonProof",
    "Step",
    "StepCertificate",
    "VerificationReport",
    "certify_all",
    "check_chains",
    "conditional_independence",
    "functional_dependence",
    "get_step",
    "independence",
    "list_steps",
    "prove_shannon_inequality",
    "run_step",
]
