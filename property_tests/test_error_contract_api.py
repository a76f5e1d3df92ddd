"""The Python API's error contract (DESIGN rules 5/6): every public
function of vistalab.theory, vistalab.sims, vistalab.paper_checks and
vistalab.figures validates its arguments at the door and raises only the
project's errors (:class:`VistaLabError`), naming the parameter that was wrong.

The function list is introspected from each package's ``__all__``; every
parameter of every function must have bad values in :data:`BAD` (or a stated
exemption), so a new function or parameter without door checks fails
:func:`test_every_public_parameter_has_bad_values`.
"""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
import vistalab.figures as F
import vistalab.paper_checks as P
import vistalab.sims as S
import vistalab.theory as T
from vistalab.theory import VistaLabError

PACKAGES = (T, S, P, F)

# A cheap valid call per function (keyword form); bad values replace one at a time.
GOOD: dict[str, dict] = {
    "suggest": dict(name="abc", known=["abd"]),
    "recovery_success_bound": dict(N=8, k=4, budget=10.0),
    "recovery_feasibility": dict(N=8, k=4, budget=10.0),
    "asymptotic_separation": dict(N=64, c=0.5),
    "content_rate_bound": dict(kappa=4, sigma=1.0),
    "content_rate_bound_tight": dict(n=64, kappa=4, sigma=1.0),
    "list_fano_pc_bound": dict(n=64, m=4, rate=1.0),
    "makeroom_nu": dict(n=64, kappa=4),
    "makeroom_lower_bound": dict(n=64, kappa=4, rate=1.0),
    "threshold_rate": dict(n=64, kappa=4, delta=0.5),
    "price_per_bit": dict(n=64, kappa=4),
    "rate_needed_for_reduction": dict(n=64, kappa=4, delta_z=0.5),
    "bucket_ledger": dict(n=64, kappa=4, M=4),
    "bucket_ledger_for_mean_z": dict(n=64, kappa=4, mean_z=1.0),
    "bucket_sufficient_rate": dict(n=64, kappa=4, delta=0.5),
    "blind_mean_z": dict(n=64, kappa=4),
    "optimal_mean_z": dict(n=64, kappa=4, rate=1.0),
    "optimal_rate": dict(n=64, kappa=4, mean_z=1.0),
    "gibbs_law": dict(n=64, kappa=4, rate=1.0),
    "content_rate_exact": dict(n=64, kappa=4, sigma=1.0),
    "list_fano_mean_z_bound": dict(n=64, kappa=4, rate=1.0),
    "tightness_report": dict(content_grid=[(8, 4, 1.0)], makeroom_grid=[(64, 4, 1.0)],
                             threshold_grid=[(64, 4, 0.5)]),
    "certify_all": dict(only="prop1"),
    "list_steps": dict(only="prop1"),
    "content_product_bound": dict(n=8, kappa=4, sigma=1.0),
    "content_jensen_lower_bound": dict(n=8, kappa=4, sigma=1.0),
    "content_rate_limit": dict(kappa=4, sigma=1.0),
    "content_limit_gap_bound": dict(n=8, kappa=4, sigma=1.0),
    "content_sandwich": dict(n=8, kappa=4, sigma=1.0),
    "content_rate_certified": dict(n=8, kappa=4, sigma=1.0),
    "gaussian_mean_z_certified": dict(n=8, kappa=2, sigma=1.0),
    "sharp_pc_bound": dict(n=64, m=4, rate=1.0),
    "sharp_mean_z_bound": dict(n=64, kappa=4, rate=1.0),
    "sharp_constant": dict(n=64, kappa=4),
    "first_order_point": dict(n=64, kappa=4, delta=0.5),
    "first_order_bounds": dict(n=64, kappa=4, delta=0.5),
    "head_interface_bound": dict(n=64, kappa=4, delta=0.5),
    "second_order_identity": dict(n=64, kappa=4, delta=0.5),
    "second_order_approx": dict(n=64, kappa=4, delta=0.5),
    "two_level_rate": dict(n=64, kappa=4, delta=0.5),
    "recovery_exact_optimum": dict(N=4, k=2, M=4),
    "recovery_success_bound_sharp": dict(N=8, k=4, budget=10.0),
    "check_chains": dict(certs=(), results=("prop1",)),
    "prove_shannon_inequality": dict(statement="I(X;Y) >= 0", given=(), variables=None),
    "independence": dict(groups=("X", "Y")),
    "functional_dependence": dict(target="X", on="Y"),
    "conditional_independence": dict(a="X", b="Y", given="Z"),
    "simulate_recovery": dict(N=8, k=4, budget=10.0, strategy="recover", trials=20, rng=1),
    "make_strategy": dict(name="recover"),
    "simulate_makeroom": dict(n=64, kappa=4, interface="ledger", trials=20, rng=1),
    "make_interface": dict(name="ledger", n=64, kappa=4),
    "make_policy": dict(name="bayes"),
    "exact_mean_z": dict(interface="{iface}", policy="bayes"),
    "exact_z_pmf": dict(interface="{iface}", policy="bayes"),
    "archive_until_room": dict(sizes=np.array([4, 1, 1, 1, 1]), order=np.arange(5), kappa=4),
    "simulate_makeroom_engine": dict(n=8, kappa=2, interface="ledger", trials=2, rng=1,
                                     array_trials=100),
    "makeroom_event_counters": dict(n=8, kappa=2, trials=2, rng=1),
    "calibrate_makeroom": dict(n=8, kappa=2, rng=1),
    "parse_ledger": dict(dashboard="ID ~Tok\n"),
    "coarsen_ledger": dict(dashboard="ID ~Tok\n", ids=("B1", "B2", "B3"), buckets=2),
    "simulate_recovery_engine": dict(N=4, k=16, budget=4000, strategy="recover", trials=2,
                                     rng=1),
    "measure_handle_cost": dict(N_values=(2, 4), k=16, rng=1),
    "recovery_feasibility_map": dict(N_values=(4, 8), k=16, rng=1),
    "estimate_gaussian_rate": dict(n=64, kappa=4, sigma=1.0, trials=50, rng=1),
    "gaussian_exact_mean_z": dict(n=64, kappa=4, sigma=1.0),
    "gaussian_exact_z_tail": dict(n=64, kappa=4, sigma=1.0),
    "add_plugin": dict(module_name="no_such_plugin_module"),
    "claim": dict(claim_id="contract.test", section="s", where="w", statement="st",
                  tolerance="t"),
    "get_claim": dict(claim_id="thm1.A"),
    "load_quote": dict(quote_id="abstract-headline"),
    "load_quotes": dict(),
    "load_statement": dict(statement_id="x"),
    "load_statements": dict(),
    "load_table": dict(key="ablation"),
    "register_claim": dict(claim_id="contract.test", check=lambda ctx: None, section="s",
                           where="w", statement="st", tolerance="t"),
    "register_not_checkable": dict(claim_id="contract.test", reason="r", section="s",
                                   where="w", statement="st"),
    "run_claims": dict(only="thm1"),
    "select_claims": dict(only="thm1"),
    "table_keys": dict(),
    "load_figure": dict(name="fig1_recovery"),
    "merge_params": dict(figure="fig1_recovery", defaults={"a": 1}, given={"a": 2}),
    "new_figure": dict(),
    "panel_label": dict(ax="{ax}", label="a"),
    "require": dict(module="theory"),
    "save_figure": dict(fig="{fig}", out_dir="{tmp}", name="x"),
    "place_labels": dict(ax="{ax}", labels=[]),
    "find_text_clashes": dict(fig="{fig}"),
    "status_of": dict(ok=True),
    "check_transcription": dict(paper="{tex}"),
}

NOT_INT = [None, "3", 2.5, math.nan, math.inf, 1e308, 10**400, True, object()]
COUNT = [*NOT_INT, 0, -1]
NOT_REAL = [None, "x", math.nan, math.inf, -math.inf, True, object()]
NAME = [[], {}, 3.5, None, "bogus-name"]
RNG = ["abc", -1, 1.5, object()]
SEQ_OF_NAMES = [3, [3], None, [""], object()]
PATH = ["", 3, "x\0y"]
TEXT = [None, 3, "", "  "]
GRID = [[], 3, "abc", [(1, 2)], [(64, 4, "x")], [(1.5, 4, 1.0)]]

# Bad values per parameter name; (function, parameter) entries override.
BAD: dict = {
    "N": [*COUNT, [[1, 2], [3]]], "k": COUNT, "n": COUNT, "m": COUNT, "M": COUNT,
    "kappa": [*COUNT, 1], "budget": [*NOT_REAL, -1.0], "sigma": [*NOT_REAL, 0.0, -1.0],
    "rate": [*NOT_REAL, -1.0, 99.0], "delta": [*NOT_REAL, 0.0, 1.0], "c": [*NOT_REAL, 0.0, 1e308],
    "c0": [*NOT_REAL, -1.0], "delta_z": [*NOT_REAL, -0.1, 99.0], "mean_z": [*NOT_REAL, -0.1, 99.0],
    "lam": [math.nan, "x", math.inf],
    "cost": [3, "x", object()],
    "trials": [*COUNT, 10**12], "workers": [*COUNT, 10**6], "rate_trials": [*COUNT, 1],
    "array_trials": [*COUNT, 1], "chunk_size": COUNT, "l_tokens": [*COUNT, 10**6],
    "buckets": [*COUNT, 10**6], "confidence": [*NOT_REAL, 0.0, 1.0, 1.5],
    "rng": RNG, "handle_cost": [*NOT_REAL, -1.0],
    "strategy": NAME, "interface": NAME, "policy": [[], {}, 3.5, "bogus-name"],
    "mode": NAME, "store": NAME, "tokenizer": NAME, "name": NAME,
    "store_dir": [3, "x\0y", ""], "store_root": ["mem://a b", "x\0y", "", 3, "mem://a/"],
    "N_values": [[], "abc", [1], [10**400], None, [[2, 4], [8]]],
    "interfaces": [3, "abc", [("bogus", {})], None],
    "verify": ["yes", 2, None], "reuse": ["yes", 2, None], "with_buckets": ["yes", 2, None],
    "sizes": [None, "abc", [], [0, 1], [[1]], [math.nan, 1]],
    "order": [None, "abc", [0, 0, 1, 2, 3], [0, 1], [1.5, 0, 2, 3, 4]],
    "dashboard": [None, 3, b"x"], "ids": [None, "B1", (), (1, 2)],
    "only": [[], 3.5, "bogus-xyz-no-match"],
    "statement": [None, 3, "", "H(X", "x\0y"],
    "variables": [3, "X", [3], [""]],
    "groups": [3, [3], None, ("X",), ("X", 3)],
    "target": SEQ_OF_NAMES, "on": SEQ_OF_NAMES, "a": SEQ_OF_NAMES, "b": SEQ_OF_NAMES,
    "content_grid": GRID, "makeroom_grid": GRID, "threshold_grid": GRID,
    "known": [3, None, "abc", object()],
    "module_name": [None, 3, ""], "module": [None, 3, "", "no_such_module_xyz"],
    "claim_id": [[], {}, None, 3, "bogus-claim-xyz"],
    "quote_id": [[], {}, None, 3, "bogus-quote"], "statement_id": [[], {}, None, 3, "bogus"],
    "key": [[], {}, None, 3, "bogus-table"],
    "data_dir": [*PATH, "/nonexistent/xyz", object()],
    "paper": [*PATH, "/nonexistent/paper.tex", object()], "progress": [3, "x"],
    "section": TEXT, "where": TEXT, "tolerance": TEXT, "reason": TEXT,
    "kind": [None, 3, "bogus-kind"], "data": [3, [3], None], "certificates": [3, [3], None],
    "check": [None, 3, "x"], "claims": [3, [3], "x"],
    "figure": [None, 3], "defaults": [None, 3, "abc", [1, 2]],
    "nrows": [*COUNT, 10**6], "ncols": [*COUNT, 10**6], "width": [*NOT_REAL, 0.0, -1.0],
    "height": [*NOT_REAL, 0.0, -1.0],
    "ax": [None, 3, "x"], "label": [None, 3, "x\0y"],
    "fig": [None, 3, "x"], "out_dir": PATH, "ok": [None, "yes", 3, 1.5],
    "labels": [None, 3, "x", [3], [("t", 1.0, 2.0)]],
    "dpi": [*NOT_REAL, 0.0, -1.0, 1e9],
    "stage": [None, 3, "bogus-stage"],
    "certs": [None, 3, "abc", [3]], "results": [3, "prop1", ["bogus-claim"], [3]],
    ("prove_shannon_inequality", "given"): [None, 3, "abc", ["abc"], [3]],
    ("merge_params", "given"): [3, "abc", [1, 2]],
    ("conditional_independence", "given"): SEQ_OF_NAMES,
    ("run_claims", "certificates"): [3, "x", [3]],
    ("save_figure", "name"): [None, 3, "", "a/b", ".."],
    ("list_steps", "only"): [[], 3.5, ""],
    ("simulate_recovery", "handle_cost"): ["x", math.nan, math.inf, -1.0, True],
    ("simulate_makeroom", "chunk_size"): [*COUNT[1:], 10**12],
    ("simulate_makeroom", "rate_trials"): [*COUNT[1:], 1],
    ("simulate_makeroom_engine", "rate_trials"): [*COUNT[1:], 1],
    ("simulate_makeroom_engine", "l_tokens"): [*COUNT[1:], 10**6],
    ("calibrate_makeroom", "l_tokens"): [*COUNT[1:], 10**6],
    ("recovery_feasibility_map", "c0"): ["x", math.nan, math.inf, -1.0, True],
    **{(f, "store_root"): [None, 3, "", "a/", "a b", "a\0b", "x" * 5_000_000]
       for f in ("calibrate_makeroom", "recovery_feasibility_map")},
    ("make_policy", "name"): [[], {}, 3.5, "bogus-name"],
    ("independence", "groups"): [(3, "X"), (None, "X"), ("X",), ("X", 3), ([], "X")],
    ("register_claim", "claim_id"): [[], {}, None, 3, ""],
    ("register_not_checkable", "claim_id"): [[], {}, None, 3, ""],
    ("claim", "claim_id"): [[], {}, None, 3, ""],
    ("register_claim", "statement"): TEXT, ("register_not_checkable", "statement"): TEXT,
    ("claim", "statement"): TEXT,
    **{(f, "kappa"): COUNT for f in ("bucket_ledger", "bucket_ledger_for_mean_z",
                                    "blind_mean_z", "optimal_mean_z", "optimal_rate",
                                    "gibbs_law", "archive_until_room")},
}

# Parameters checked elsewhere or that take anything: stated, not silently skipped.
EXEMPT = {
    ("suggest", "name"): "any object is compared by its str()",
    ("gibbs_law", "mean_z"): "gibbs_law takes exactly one of lam/rate/mean_z; mean_z is "
                             "checked in test_theory_frontier",
    ("gibbs_law", "lam"): "idem",
    ("make_strategy", "params"): "**params are forwarded to the strategy's constructor",
    ("make_interface", "params"): "**params: checked by the interface factory (sigma, ...)",
    ("simulate_makeroom", "params"): "**params: idem",
    ("simulate_makeroom_engine", "params"): "**params: idem",
    ("makeroom_event_counters", "engine_kwargs"): "forwarded to simulate_makeroom_engine",
    ("require", "names"): "*names: checked as text",
    ("simulate_makeroom_engine", "policy"): "checked by simulate_makeroom's door (shared)",
    ("measure_handle_cost", "store"): "checked by the engine store registry (UnknownNameError)",
}


def _functions():
    out = []
    for mod in PACKAGES:
        for name in mod.__all__:
            obj = getattr(mod, name)
            if inspect.isfunction(obj) and name not in {"figure_style", "all_claims",
                                                        "plugin_modules"}:
                out.append((mod, name, obj))
    return out


FUNCTIONS = _functions()


def _params(fn):
    return [p for p in inspect.signature(fn).parameters.values()
            if p.kind is not p.VAR_KEYWORD]


def _bad_values(fname, pname):
    return BAD.get((fname, pname), BAD.get(pname))


def _cases():
    cases = []
    for _mod, fname, fn in FUNCTIONS:
        for p in _params(fn):
            if (fname, p.name) in EXEMPT:
                continue
            for value in _bad_values(fname, p.name) or []:
                cases.append((fname, p.name, value))
    return cases


CASES = _cases()


def test_every_public_parameter_has_bad_values():
    """Coverage of the table: every public function has a valid baseline call and
    every parameter has bad values (or a stated exemption)."""
    missing_good = [f for _m, f, _fn in FUNCTIONS if f not in GOOD]
    assert not missing_good, f"public functions without a baseline call: {missing_good}"
    missing = [(f, p.name) for _m, f, fn in FUNCTIONS for p in _params(fn)
               if (f, p.name) not in EXEMPT and _bad_values(f, p.name) is None]
    assert not missing, f"parameters without bad values: {missing}"
    assert len(CASES) >= 600


@pytest.fixture(scope="module")
def objects(tmp_path_factory):
    from vistalab.figures import new_figure

    P.all_claims()  # load the claim modules before tests swap in a copy of the registry

    fig, axes = new_figure()
    tex = tmp_path_factory.mktemp("tex") / "paper.tex"
    tex.write_text("\\section{Not the paper}\n")  # every transcription check fails, no error
    return {"{tex}": str(tex), "{iface}": S.make_interface("ledger", n=16, kappa=2),
            "{ax}": axes[0, 0],
            "{fig}": fig, "{tmp}": str(tmp_path_factory.mktemp("fig"))}


def _named(exc: VistaLabError, param: str, value) -> bool:
    text = str(exc)
    if f"`{param}`" in text or getattr(exc, "parameter", None) == param:
        return True
    # one rule about several keywords: "`lam/rate/mean_z` must be exactly one keyword"
    if param in str(getattr(exc, "parameter", "")).split("/"):
        return True
    if not hasattr(exc, "parameter"):  # "Unknown strategy 'bogus'. Did you mean ...",
        return repr(value) in text or str(value) in text  # "x does not provide x"
    return False


def _case_id(value: object) -> str:
    """A test id that is the same in every process (pytest-xdist compares them): plain
    objects are named by type, not by their address."""
    if type(value) is object:
        return "object()"
    return f"{value!r:.30}"


@pytest.mark.parametrize("fname,param,value", CASES,
                         ids=[f"{f}-{p}-{_case_id(v)}" for f, p, v in CASES])
def test_bad_argument_raises_project_error_naming_it(fname, param, value, objects,
                                                     monkeypatch):
    """Python API: a bad argument raises a VistaLabError (never a foreign
    exception, never a hang or NaN) that names that parameter."""
    from vistalab.paper_checks import _registry

    monkeypatch.setattr(_registry, "_REGISTRY", dict(_registry._REGISTRY))
    monkeypatch.setattr(_registry, "_PLUGINS", list(_registry._PLUGINS))
    fn = next(fn for _m, f, fn in FUNCTIONS if f == fname)
    kwargs = {k: objects.get(v, v) if isinstance(v, str) else v for k, v in GOOD[fname].items()}
    kwargs[param] = value
    var = [p for p in _params(fn) if p.kind is p.VAR_POSITIONAL]
    with pytest.raises(VistaLabError) as info:
        if var:
            out = fn(*kwargs.pop(var[0].name, ()), **kwargs)
        else:
            out = fn(**kwargs)
        if fname == "claim":  # a decorator factory: bad arguments fail at the latest here
            out(lambda ctx: None)
    assert _named(info.value, param, value), str(info.value)


# The audit's listed Python cases, each with the parameter the error must name.
ISSUE_CASES = [
    (lambda: S.coarsen_ledger("ID ~Tok\n", ("B1", "B2"), buckets=0), "buckets"),
    (lambda: S.simulate_recovery(8, 4, 10.0, "recover", trials=1e308, rng=1), "trials"),
    (lambda: S.recovery_feasibility_map(N_values=[], k=16, rng=1), "N_values"),
    (lambda: S.recovery_feasibility_map(N_values=(4,), k=16, store_root="mem://a b", rng=1),
     "store_root"),
    (lambda: S.recovery_feasibility_map(N_values=(4,), k=16, store_root="mem://a\0b", rng=1),
     "store_root"),
    (lambda: S.estimate_gaussian_rate(1e308, 4, 1.0, trials=10, rng=1), "n"),
    (lambda: T.independence("X", 3), "groups"),
    (lambda: T.tightness_report(content_grid=3), "content_grid"),
    (lambda: T.tightness_report(makeroom_grid=[]), "makeroom_grid"),
    (lambda: T.prove_shannon_inequality("H(X) >= 0", given="abc"), "given"),
    (lambda: T.asymptotic_separation(64, c=1e308), "c"),
    (lambda: T.optimal_mean_z(64, 4, np.array([1.0, 20.0])), "rate"),
    (lambda: T.recovery_feasibility(np.array([4, 5]), 2, 3.0), "N"),
    (lambda: S.simulate_recovery_engine(4, 16, 4000, "recover", trials=1, rng=1, store="disk",
                                        store_dir=__file__), "store_dir"),
    (lambda: S.simulate_makeroom_engine(8, 2, "ledger", trials=1, rng=1, store="disk",
                                        store_dir="/proc/x/y"), "store_dir"),
]


@pytest.mark.parametrize("call,param", ISSUE_CASES, ids=[p for _c, p in ISSUE_CASES])
def test_issue_15_listed_cases(call, param):
    """The raw errors an audit found (ZeroDivision, Overflow, IndexError, AssertionError, a hang
    on NUL, an endless n=1e308, the wrong parameter named) are door-check errors now."""
    with pytest.raises(VistaLabError) as info:
        call()
    assert getattr(info.value, "parameter", None) == param, str(info.value)


def test_issue_15_values_that_are_valid_give_numbers():
    """content_rate_bound(4, 1e308) overflowed; it is 0 to double precision, and the
    theory functions broadcast arrays (scipy.stats style) instead of refusing them."""
    assert T.content_rate_bound(4, 1e308) == 0.0
    assert T.content_rate_bound(4, 1e-300) == math.inf
    out = T.optimal_mean_z(64, 4, np.array([1.0, 2.0]))
    assert out.shape == (2,) and out[0] == T.optimal_mean_z(64, 4, 1.0)
    grid = T.makeroom_lower_bound([64, 128], 4, [[0.5], [1.0]])
    assert grid.shape == (2, 2) and grid[1, 0] == T.makeroom_lower_bound(64, 4, 1.0)
    assert isinstance(T.makeroom_nu(64, 4), float)


BROADCAST = {
    T.recovery_success_bound: dict(N=[8, 16], k=4, budget=[[10.0], [20.0]]),
    T.content_rate_bound: dict(kappa=[2, 4, 8], sigma=1.0),
    T.content_rate_bound_tight: dict(n=64, kappa=4, sigma=[0.5, 1.0]),
    T.list_fano_pc_bound: dict(n=64, m=[1, 4], rate=1.0),
    T.makeroom_nu: dict(n=[64, 1000], kappa=4),
    T.makeroom_lower_bound: dict(n=64, kappa=[2, 4], rate=[[0.5], [2.0]]),
    T.threshold_rate: dict(n=64, kappa=4, delta=[0.25, 0.5]),
    T.price_per_bit: dict(n=[64, 128], kappa=4),
    T.rate_needed_for_reduction: dict(n=64, kappa=4, delta_z=[0.5, 1.0]),
    T.bucket_sufficient_rate: dict(n=64, kappa=4, delta=[0.25, 0.5]),
    T.blind_mean_z: dict(n=[64, 65], kappa=[[2], [3]]),
    T.optimal_mean_z: dict(n=64, kappa=4, rate=np.array([0.0, 1.0, 6.0])),
    T.optimal_rate: dict(n=64, kappa=4, mean_z=[0.5, 1.0]),
    T.content_rate_exact: dict(n=[8, 64], kappa=4, sigma=1.0),
    T.list_fano_mean_z_bound: dict(n=64, kappa=4, rate=[0.5, 1.0]),
}


@pytest.mark.parametrize("fn", list(BROADCAST), ids=lambda f: f.__name__)
def test_theory_functions_broadcast_like_scipy_stats(fn):
    """the closed forms take arrays (numpy broadcasting) and give, element by
    element, exactly the scalar call's value."""
    kwargs = BROADCAST[fn]
    arrays = {k: np.asarray(v) for k, v in kwargs.items()}
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    out = fn(**kwargs)
    assert isinstance(out, np.ndarray) and out.shape == shape and out.dtype == float
    views = {k: np.broadcast_to(a, shape) for k, a in arrays.items()}
    for idx in np.ndindex(shape):
        assert out[idx] == fn(**{k: v[idx].item() for k, v in views.items()})
