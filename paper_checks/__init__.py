"""A registry of every quantitative claim of the VISTA paper, each checked by code, and the
paper's tables written once as data.

Run the checks with :func:`run_claims` (or ``vista-lab check-paper``); read a table with
:func:`load_table`; add claims from another package with :func:`claim` /
:func:`register_claim` in a module passed to :func:`add_plugin`.
"""

# The built-in claims register themselves when their modules are imported; import them
# statically (paper order), so a renamed module breaks the build instead of silently
# dropping its claims.
from vistalab._core._door import install_contract as _install_contract

from . import (  # noqa: F401
    _claims_lemma1,
    _claims_prop1,
    _claims_prop2,
    _claims_tables,
    _claims_text,
    _claims_thm1,
    _engine_claims,
)
from ._context import DEFAULT_ENTROPY, CheckContext, Unavailable
from ._data import (
    DATA_DIR,
    PaperTable,
    Quote,
    Statement,
    load_quote,
    load_quotes,
    load_statement,
    load_statements,
    load_table,
    table_keys,
)
from ._records import STAGES, STATUSES, Claim, ClaimResult, Outcome, PaperCheckReport
from ._registry import (
    SECTIONS,
    add_plugin,
    all_claims,
    claim,
    get_claim,
    plugin_modules,
    register_claim,
    register_not_checkable,
    select_claims,
)
from ._run import run_claims
from ._transcription import TranscriptionCheck, check_transcription

__all__ = [
    "TranscriptionCheck",
    "check_transcription",
    "DATA_DIR",
    "DEFAULT_ENTROPY",
    "SECTIONS",
    "STAGES",
    "STATUSES",
    "CheckContext",
    "Claim",
    "ClaimResult",
    "Outcome",
    "PaperCheckReport",
    "PaperTable",
    "Quote",
    "Statement",
    "Unavailable",
    "add_plugin",
    "all_claims",
    "claim",
    "get_claim",
    "load_quote",
    "load_quotes",
    "load_statement",
    "load_statements",
    "load_table",
    "plugin_modules",
    "register_claim",
    "register_not_checkable",
    "run_claims",
    "select_claims",
    "table_keys",
]

# The error contract's net over every public name (vistalab._core._door).
_install_contract(globals())
