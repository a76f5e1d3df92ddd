"""Randomised second-method checks driven by Hypothesis.

Runs are derandomised (fixed seed derived from the property), use no example
database and print nothing, so ``verify`` is reproducible and side-effect free.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._registry import Outcome

__all__ = ["run_property"]


def run_property(
    prop: Callable[..., None],
    *strategies: Any,
    max_examples: int = 150,
    label: str = "",
) -> Outcome:
    """Run ``prop`` on examples drawn from ``strategies``.

    ``prop`` raises AssertionError (with a message) when the property fails;
    the shrunk falsifying example becomes the failure detail.
    """
    from hypothesis import HealthCheck, Verbosity, given, settings
    from hypothesis import strategies as st

    count = [0]

    # @given refuses varargs, so the strategies travel as one tuple.
    def wrapped(args: tuple[Any, ...]) -> None:
        count[0] += 1
        prop(*args)

    test = settings(
        max_examples=max_examples,
        derandomize=True,
        database=None,
        deadline=None,
        verbosity=Verbosity.quiet,
        suppress_health_check=list(HealthCheck),
        print_blob=False,
    )(given(st.tuples(*strategies))(wrapped))
    where = f"{label}: " if label else ""
    try:
        test()
    except AssertionError as exc:
        return Outcome(False, f"{where}falsified: {' '.join(str(exc).split())}")
    return Outcome(True, f"{where}held on {count[0]} Hypothesis examples (derandomized)")
