"""Pure mathematics of the VISTA paper: closed-form bounds, the exact optimal
information-recovery frontier, and machine-checked proof steps.

No I/O, no plotting, no randomness.
"""

from ._errors import DomainError, UnknownNameError, VistaLabError, suggest

__all__ = ["DomainError", "UnknownNameError", "VistaLabError", "suggest"]
