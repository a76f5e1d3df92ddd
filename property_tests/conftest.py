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
