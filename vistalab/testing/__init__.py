"""Test your own engine pieces with the suites vista-lab runs on its own.

In the manner of Gymnasium's ``check_env``: each ``check_*`` function takes
*your* object (no registration, no module globals touched) and returns the
list of problems it found, ``[]`` when the object conforms.

- :func:`check_tokenizer` -- a ``vistalab.workspace.Tokenizer``;
- :func:`check_store` -- a factory of ``vistalab.workspace.PayloadStore``;
- :func:`check_interface` -- a ``vistalab.sims.Interface``;
- :func:`check_policy` -- a ``vistalab.sims.Policy``;
- :func:`check_strategy` -- a ``vistalab.sims.Strategy``;
- :class:`WorkspaceMachine` -- the Hypothesis stateful machine of the
  workspace engine; subclass it to add ``@invariant``s or to drive your own
  tokenizer (``tokenizer = MyTok()``) or store (override ``make_store``); its
  budget defaults to :func:`machine_budget` of the tokenizer.

Using your implementations needs no registration either: pass the instances
where a name would go, e.g. ``Workspace(budget, tokenizer=MyTok(),
store=MyStore(...))``, ``sims.simulate_makeroom(n, kappa, MyInterface(...),
policy=MyPolicy())``, ``sims.simulate_recovery(N, k, B, MyStrategy())``.

The pytest plugin (installed with the package, entry point ``vistalab``)
provides the fixtures ``vista_conformance`` (the checks, failing the test with
the problems listed) and ``vista_workspace`` (a Workspace factory on a
temporary folder). This kit needs the ``testing`` extra
(``pip install 'vista-lab[testing]'``: Hypothesis).
"""

from vistalab._core import import_optional
from vistalab._core._door import install_contract as _install_contract

import_optional("hypothesis", "vistalab.testing")

from ._machine import WorkspaceMachine, machine_budget  # noqa: E402
from ._sims import (  # noqa: E402
    RECOVERY_GRID,
    check_interface,
    check_policy,
    check_strategy,
    reference_interfaces,
    reference_policies,
)
from ._stats import binomial_interval, chi2_fits  # noqa: E402
from ._workspace import STORE_SAMPLES, TOKENIZER_SAMPLES, check_store, check_tokenizer  # noqa: E402

__all__ = [
    "RECOVERY_GRID",
    "STORE_SAMPLES",
    "TOKENIZER_SAMPLES",
    "WorkspaceMachine",
    "binomial_interval",
    "check_interface",
    "check_policy",
    "check_store",
    "check_strategy",
    "check_tokenizer",
    "chi2_fits",
    "machine_budget",
    "reference_interfaces",
    "reference_policies",
]

# The error contract's net over every public name (vistalab._core._door).
_install_contract(globals())
