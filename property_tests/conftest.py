"""Shared pytest configuration: Hypothesis profiles.

``ci`` (the default) bounds the number of examples so the whole suite stays
well under ten minutes on a 2-core machine; ``dev`` explores much more.
Select with ``HYPOTHESIS_PROFILE=dev``.
"""

import gc
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


def pytest_sessionfinish(session):
    # Under pytest-xdist a worker reports "finished" after this hook; the controller
    # then gives it 5 s (execnet's shutdown deadline) before sending it SIGINT, which
    # printed a KeyboardInterrupt traceback after the summary. What ran past 5 s on a
    # loaded machine was pytest's own last garbage collection (its unraisable-exception
    # check walks the whole heap). Collect here, before the report, and freeze the
    # survivors so that last pass has nothing left to walk. An exception raised by a
    # finalizer in this collection still reaches pytest's unraisable-exception hook.
    gc.collect()
    gc.freeze()
