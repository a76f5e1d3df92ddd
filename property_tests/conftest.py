"""Shared pytest configuration: Hypothesis profiles.

``ci`` (the default) bounds the number of examples so the whole suite stays
well under ten minutes on a 2-core machine; ``dev`` explores much more.
Select with ``HYPOTHESIS_PROFILE=dev``.
"""

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "dev",
    max_examples=500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    # Also registered in pyproject.toml; repeated here for runs from an installed wheel
    # (pytest --pyargs vistalab.tests), where there is no pyproject.toml.
    config.addinivalue_line(
        "markers",
        "slow: long-running test (statistical or end-to-end); still part of the default run",
    )
