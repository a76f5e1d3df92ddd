"""The command line's error contract (README "Exit status"): every bad
value of every option of every subcommand ends with exit status 2 and exactly
one line on stderr naming the option, never a traceback; a FIFO, a folder or a
device given as an input file is refused at once (no hang).

The table is checked against the parser itself: an option added without bad
values in :data:`BAD` fails :func:`test_every_option_has_bad_values`.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

import pytest

from vistalab.cli import build_parser, main

from ._data import TRACES

DATA = TRACES
OPS = str(DATA / "ops_agent.json")

INT = ["", "abc", "1.5", "1e999", "nan"]
COUNT = [*INT, "0", "-3"]
REAL = ["", "abc", "nan", "inf", "-inf"]
NAME = ["", "bogus"]
SEED = ["", "abc", "-1", "1.5"]

# Bad values per (command, option); paths are templates filled in by the fixture:
# {file} an existing file, {dir} an existing folder, {missing} a missing path.
OUT_DIR = ["", "{file}", "/dev/null", "/proc/x/y", "{file}/sub"]
OUT_FILE = ["", "{dir}", "/proc/x/p.png", "/dev/null", "{missing}/x.log"]
# Special files (a FIFO, an endless device, a blocking /proc file): refused, never
# waited on (each call runs under a hang detector, see _check_one_line).
SPECIAL = ["{fifo}", "/dev/zero", "/proc/kmsg"]
IN_FILE = ["", "{dir}", "/dev/null", "{missing}", *SPECIAL]
IN_DIR = ["", "{file}", "/dev/null", "{missing}", "{fifo}"]

BASE: dict[tuple[str, ...], list[str]] = {
    ("verify",): [],
    ("bound", "recovery"): ["--N", "8", "--k", "4", "--budget", "10"],
    ("bound", "content"): ["--kappa", "4", "--sigma", "1"],
    ("bound", "makeroom"): ["--n", "64", "--kappa", "4", "--rate", "1"],
    ("bound", "frontier"): ["--n", "64", "--kappa", "4", "--rate", "1"],
    ("recovery",): ["--N", "8", "--k", "4", "--budget", "10", "--strategy", "recover",
                    "--trials", "10", "--seed", "1"],
    ("makeroom",): ["--n", "16", "--kappa", "2", "--interface", "ledger", "--trials", "10",
                    "--seed", "1"],
    ("workspace", "replay"): [OPS],
    ("workspace", "dashboard"): [OPS, "--budget", "4000"],
    ("workspace", "reward"): [OPS, "--budget", "4000"],
    ("workspace", "probe"): [OPS, "--budget", "4000"],
    ("check-paper",): [],
    ("reproduce",): ["--quick"],
    ("sweep",): ["{config}"],
    ("plot-sweep",): ["{results}"],
    ("workspace", "serve"): ["--budget", "4000"],
    ("examples",): ["{missing}"],
    ("conformance",): ["vistalab.conformance:tail_trimmer", "--examples", "2"],
    ("figure",): ["fig4_tradeoff"],
}

ENGINE = {"--store", "--store-dir", "--tokenizer", "--block-tokens", "--array-trials"}
# options whose bad values need another baseline interface (makeroom)
INTERFACE_FOR = {"--sigma": "gaussian", "--rate-trials": "gaussian", "--buckets": "buckets",
                 "--lam": "gibbs", "--rate": "gibbs"}

#: `verify engine` options: given after the TARGET `engine` (without it they are refused too).
VERIFY_ENGINE = {"--sequences", "--seed", "--max-ops"}

BAD: dict[tuple[tuple[str, ...], str], list[str]] = {
    (("verify",), "--only"): ["", "no-such-step-xyz"],
    (("verify",), "TARGET"): NAME,
    (("verify",), "--sequences"): [*INT, "-3"],
    (("verify",), "--seed"): SEED,
    (("verify",), "--max-ops"): COUNT,
    (("bound", "recovery"), "--N"): COUNT,
    (("bound", "recovery"), "--k"): COUNT,
    (("bound", "recovery"), "--budget"): [*REAL, "-1"],
    (("bound", "recovery"), "--c0"): [*REAL, "-1"],
    (("bound", "recovery"), "--instruction"): [*REAL, "-1"],
    (("bound", "content"), "--kappa"): [*COUNT, "1"],
    (("bound", "content"), "--sigma"): [*REAL, "0", "-1"],
    (("bound", "content"), "--n"): [*COUNT, "1"],
    (("bound", "makeroom"), "--n"): [*COUNT, "4"],
    (("bound", "makeroom"), "--kappa"): [*COUNT, "40"],
    (("bound", "makeroom"), "--rate"): [*REAL, "-1", "99"],
    (("bound", "makeroom"), "--delta"): [*REAL, "0", "1.5"],
    (("bound", "frontier"), "--n"): [*COUNT, "4"],
    (("bound", "frontier"), "--kappa"): [*COUNT, "64"],
    (("bound", "frontier"), "--rate"): [*REAL, "-1", "99"],
    (("bound", "frontier"), "--mean-z"): [*REAL, "-1", "99"],
    (("recovery",), "--N"): COUNT,
    (("recovery",), "--k"): COUNT,
    (("recovery",), "--budget"): [*REAL, "-1"],
    (("recovery",), "--strategy"): NAME,
    (("recovery",), "--handle-cost"): [*REAL, "-1"],
    (("recovery",), "--trials"): [*COUNT, "99999999999"],
    (("recovery",), "--seed"): SEED,
    (("recovery",), "--workers"): [*COUNT, "5000"],
    (("recovery",), "--store"): NAME,
    (("recovery",), "--store-dir"): OUT_DIR,
    (("recovery",), "--tokenizer"): NAME,
    (("makeroom",), "--n"): [*COUNT, "2"],
    (("makeroom",), "--kappa"): COUNT,
    (("makeroom",), "--interface"): [*NAME, "gausian"],
    (("makeroom",), "--sigma"): [*REAL, "0", "-1"],
    (("makeroom",), "--buckets"): COUNT,
    (("makeroom",), "--lam"): REAL,
    (("makeroom",), "--rate"): [*REAL, "-1", "99"],
    (("makeroom",), "--policy"): NAME,
    (("makeroom",), "--mode"): NAME,
    (("makeroom",), "--trials"): [*COUNT, "99999999999"],
    (("makeroom",), "--rate-trials"): [*COUNT, "1"],
    (("makeroom",), "--seed"): SEED,
    (("makeroom",), "--workers"): [*COUNT, "5000"],
    (("makeroom",), "--store"): NAME,
    (("makeroom",), "--store-dir"): OUT_DIR,
    (("makeroom",), "--tokenizer"): NAME,
    (("makeroom",), "--block-tokens"): [*COUNT, "100001"],
    (("makeroom",), "--array-trials"): [*COUNT, "1"],
    (("workspace", "replay"), "TRACE"): IN_FILE,
    (("workspace", "replay"), "--budget"): COUNT,
    (("workspace", "replay"), "--tokenizer"): NAME,
    (("workspace", "replay"), "--hard-limit"): COUNT,
    (("workspace", "replay"), "--archive-dir"): OUT_DIR,
    (("workspace", "replay"), "--log"): OUT_FILE,
    (("workspace", "dashboard"), "TRACE"): IN_FILE,
    (("workspace", "dashboard"), "--budget"): COUNT,
    (("workspace", "dashboard"), "--tokenizer"): NAME,
    (("workspace", "dashboard"), "--hard-limit"): COUNT,
    (("workspace", "dashboard"), "--archive-dir"): OUT_DIR,
    (("workspace", "reward"), "TRACE"): IN_FILE,
    (("workspace", "reward"), "--budget"): COUNT,
    (("workspace", "reward"), "--tokenizer"): NAME,
    (("workspace", "reward"), "--outcome"): [*REAL, "2", "-0.5"],
    (("workspace", "reward"), "--rho"): [*REAL, "1", "-1"],
    (("workspace", "reward"), "--lambda-p"): REAL,
    (("workspace", "reward"), "--lambda-i"): REAL,
    (("workspace", "reward"), "--lambda-u"): REAL,
    (("workspace", "reward"), "--eps"): REAL,
    (("workspace", "probe"), "TRACE"): IN_FILE,
    (("workspace", "probe"), "--budget"): COUNT,
    (("workspace", "probe"), "--tokenizer"): NAME,
    (("workspace", "probe"), "--anchor"): ["", "bogus", "1.5"],
    (("workspace", "probe"), "--blocks"): COUNT,
    (("workspace", "probe"), "--pairs"): [*INT, "-1"],
    (("workspace", "probe"), "--max-ratio"): [*REAL, "1", "-1"],
    (("workspace", "probe"), "--max-tokens"): COUNT,
    (("workspace", "probe"), "--seed"): SEED,
    (("workspace", "probe"), "--answers"): IN_FILE,
    (("workspace", "probe"), "--prompts"): OUT_DIR,
    (("check-paper",), "--only"): ["no-such-claim-xyz"],
    (("check-paper",), "--data-dir"): [*IN_DIR, "{dir}"],
    (("check-paper",), "--seed"): SEED,
    (("reproduce",), "--out"): OUT_DIR,
    (("reproduce",), "--seed"): ["", "abc", "1.5", "-1"],
    (("sweep",), "CONFIG.toml"): [*IN_FILE, "{file}"],
    (("sweep",), "--out"): OUT_DIR,
    (("sweep",), "--workers"): ["", "abc", "1.5", "0", "-1"],
    (("plot-sweep",), "RESULTS"): [*IN_FILE, "{file}"],
    (("plot-sweep",), "--x"): ["", "bogus"],
    (("plot-sweep",), "--y"): ["", "bogus", "mean_z/bogus"],
    (("plot-sweep",), "--group"): ["bogus"],
    (("plot-sweep",), "--where"): ["bogus", "bogus=1"],
    (("plot-sweep",), "--out"): ["", "{dir}", "/proc/x/p.png", "/dev/null", "{file}.txt"],
    (("workspace", "replay"), "--render"): NAME,
    (("workspace", "serve"), "--budget"): COUNT,
    (("workspace", "serve"), "--store"): OUT_DIR,
    (("workspace", "serve"), "--tokenizer"): NAME,
    (("workspace", "serve"), "--transport"): NAME,
    (("workspace", "serve"), "--port"): [*INT, "0", "70000"],
    (("workspace", "serve"), "--role"): NAME,
    (("workspace", "serve"), "--hard-limit"): COUNT,
    (("workspace", "serve"), "--task-tools"): IN_FILE,
    (("workspace", "serve"), "--log"): OUT_FILE,
    (("workspace", "serve"), "--token-file"): OUT_FILE,
    (("check-paper",), "--paper"): IN_FILE,
    (("reproduce",), "--paper"): IN_FILE,
    (("examples",), "DIR"): ["", "{file}", "/proc/x/y", "/dev/null"],
    # a name nobody registered, a module that does not import, a missing function,
    # a one-argument function that is no adapter factory, a class with the wrong signature
    (("conformance",), "MANAGER"): ["", "bogus", "no_such_module_xyz:f",
                                    "vistalab.conformance:no_such_function", "json:dumps",
                                    "vistalab.conformance:ConformanceReport"],
    (("conformance",), "--protocol"): [*NAME, "Responses", "Gemini"],
    (("conformance",), "--examples"): COUNT,
    (("conformance",), "--seed"): SEED,
    (("conformance",), "--budget"): [*COUNT, "1,x"],
    (("conformance",), "--timeout"): [*REAL, "0", "-1"],
    (("conformance",), "--import-timeout"): [*REAL, "0", "-1", "1e9"],
    (("conformance",), "--out"): OUT_DIR,
    (("conformance",), "--replay"): [*IN_FILE, "{file}"],
    # --peers belongs to --study: without it every value is refused (never ignored)
    (("conformance",), "--peers"): ["", "bogus", "langchain-last"],
    (("conformance",), "--pinned"): NAME,
    (("conformance",), "--counter"): [*NAME, "cl100k"],
    # with MANAGER in the baseline line every --command is refused (one manager per run)
    (("conformance",), "--command"): ["", "'unclosed", "no-such-program-xyz"],
    (("conformance",), "--baseline"): [*IN_FILE, "{file}"],
    (("conformance",), "--write-baseline"): OUT_FILE,
    (("conformance",), "--export"): OUT_DIR,
    (("figure",), "NAME"): NAME,
}
# CLI audit item 5: argparse's own type errors (type=int options) name rule and fix
BAD[(("check-paper",), "--seed")] += ["abc"]
BAD[(("sweep",), "--workers")] += ["1e3"]
# CLI audit items 5 and 7: a file that is not JSON / not the paper's LaTeX is bad input
BAD[(("workspace", "serve"), "--task-tools")] += ["{file}"]
BAD[(("check-paper",), "--paper")] += ["{file}"]
BAD[(("reproduce",), "--paper")] += ["{file}"]

# Options whose every value is valid (free text), and the scheduler, whose bad
# values are the sweeps' own: listed so the coverage check is explicit.
# `figure NAME ...`: the rest of the line goes to the figure script's own parser, whose
# options (and their bad values) differ per figure; test_first_hour checks a few.
NO_BAD_VALUES = {(("plot-sweep",), "--title"), (("sweep",), "--scheduler"),
                 (("figure",), "...")}

# Whole command lines: misspelt options and commands (README "Exit status").
LINES = [
    (["--versoin"], "--version"),
    (["verfy"], "verify"),
    (["verify", "--sequences", "3"], "sequences"),  # an engine option without `engine`
    ([], "COMMAND"),
    (["bound"], "WHAT"),
    (["workspace"], "SUBCOMMAND"),
    (["bound", "content", "--kapa", "4", "--sigma", "1"], "--kappa"),
    (["recovery", "--n", "64", "--k", "4", "--budget", "40", "--strategy", "recover"], "--N"),
    (["makeroom", "--n", "16", "--kappa", "2", "--interface", "ledger", "--trails", "5"],
     "--trials"),
    (["makeroom", "--n", "16", "--kappa", "2", "--interface", "ledger", "--engine",
      "--block-tokens", "0", "--trials", "2"], "block-tokens"),
    (["makeroom", "--n", "16", "--kappa", "2", "--interface", "ledger", "--store", "disk"],
     "store"),
    (["bound", "frontier", "--n", "64", "--kappa", "4", "--rate", "1", "--mean-z", "1"],
     "--mean-z"),
    # CLI audit item 5: the engine's budget floor names the option and its minimum
    (["recovery", "--engine", "--N", "8", "--k", "4", "--budget", "10", "--strategy",
      "recover", "--trials", "2"], "`--budget` must be at least"),
]


def _walk(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _walk(sub, (*path, name))
        elif not isinstance(a, (argparse._HelpAction, argparse._VersionAction)) and a.nargs != 0:
            yield path, (a.option_strings[0] if a.option_strings else a.metavar)


def test_every_option_has_bad_values():
    """Coverage of the table: every value-taking option and positional of every
    subcommand has bad values (or is listed as free text)."""
    options = set(_walk(build_parser(), ()))
    missing = options - set(BAD) - NO_BAD_VALUES
    assert not missing, f"options without bad values in the error-contract table: {missing}"
    assert not set(BAD) - options, "table rows for options that no longer exist"
    assert len(CASES) >= 300


def _argv(cmd: tuple[str, ...], option: str, value: str) -> list[str]:
    base = list(BASE[cmd])
    if cmd == ("makeroom",) and option in INTERFACE_FOR:
        base[base.index("--interface") + 1] = INTERFACE_FOR[option]
    if cmd == ("makeroom",) and option == "--rate-trials":
        base += ["--sigma", "1"]
    if cmd == ("bound", "frontier") and option == "--mean-z":
        i = base.index("--rate")
        del base[i:i + 2]
    if option in ENGINE and cmd in {("makeroom",), ("recovery",)}:
        base.append("--engine")
        if option == "--store-dir":
            base += ["--store", "disk"]
    if cmd == ("verify",) and option in VERIFY_ENGINE:
        base = ["engine", *base]
    if not option.startswith("-"):  # a positional replaces the baseline's
        positional = [i for i, tok in enumerate(base) if not tok.startswith("-")
                      and (i == 0 or not base[i - 1].startswith("-"))]
        if not positional:  # an optional positional the baseline leaves out
            return [*cmd, value, *base]
        base[positional[0]] = value
        return [*cmd, *base]
    if option in base:
        i = base.index(option)
        del base[i:i + 2]
    return [*cmd, *base, option, value]


CASES = [(cmd, opt, value) for (cmd, opt), values in BAD.items() for value in values]


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("contract")
    (root / "file").write_text("not a table\n")
    (root / "dir").mkdir()
    os.mkfifo(root / "fifo")
    config = root / "cfg.toml"
    config.write_text('experiment = "makeroom"\nseed = 1\n[params]\nn = 16\nkappa = 2\n'
                      'trials = 50\n[[grid]]\ninterface = ["ledger", "blind"]\n')
    results = root / "results.csv"
    results.write_text("n,kappa,interface,rate_bits,rate_bits_se,mean_z,mean_z_ci_low,"
                       "mean_z_ci_high\n16,2,ledger,4.0,0.0,0.0,0.0,0.0\n"
                       "16,2,blind,0.0,0.0,1.8125,1.8,1.9\n")
    return {"file": str(root / "file"), "dir": str(root / "dir"), "fifo": str(root / "fifo"),
            "missing": str(root / "missing"), "config": str(config), "results": str(results)}


def _fill(tokens: list[str], paths: dict[str, str]) -> list[str]:
    return [t.format(**paths) if "{" in t else t for t in tokens]


def _names(option: str) -> list[str]:
    bare = option.lstrip("-")
    names = [bare, bare.replace("-", "_"), bare.lower(), bare.split(".")[0]]
    if bare == "outcome":
        names.append("outcomes")
    return names


def _hang(signum, frame):
    raise AssertionError("no answer within 60 s (a hang)")


def _check_one_line(argv: list[str], names: list[str], capsys) -> str:
    import signal

    old = signal.signal(signal.SIGALRM, _hang)
    signal.setitimer(signal.ITIMER_REAL, 60.0)  # a hang detector, not a speed check
    try:
        status = main(argv)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    captured = capsys.readouterr()
    err = captured.err
    assert status == 2, (argv, status, err)
    assert "Traceback" not in err, err
    assert err.startswith("vista-lab: error: ") and err.count("\n") == 1, (argv, err)
    assert any(n in err for n in names), (argv, names, err)
    return err


@pytest.mark.parametrize("cmd,option,value", CASES,
                         ids=[f"{' '.join(c)} {o}={v!r}" for c, o, v in CASES])
def test_bad_value_is_one_line_exit_2(cmd, option, value, paths, capsys):
    """CLI: a bad value ends with exit 2 and one stderr line naming the option."""
    argv = _fill(_argv(cmd, option, value), paths)
    _check_one_line(argv, _names(option), capsys)


@pytest.mark.parametrize("argv,name", LINES, ids=[" ".join(a) or "(empty)" for a, _ in LINES])
def test_misspelt_line_names_what_was_meant(argv, name, capsys):
    """did-you-mean for misspelt options (also next to missing required
    ones, case-folded: --n -> --N), no doubled 'vista-lab:' prefix, and API
    parameter names mapped back to options (l_tokens -> --block-tokens)."""
    err = _check_one_line(argv, [name], capsys)
    assert err.count("vista-lab:") == 1 or "vista-lab " in err
    assert "l_tokens" not in err


def test_misspelt_option_gets_did_you_mean(capsys):
    """`--kapa` and `--versoin` name the option that was meant."""
    for argv, meant in ((["bound", "content", "--kapa", "4"], "'--kappa'"),
                        (["--versoin"], "'--version'"),
                        (["recovery", "--n", "64", "--k", "4", "--budget", "4",
                          "--strategy", "recover"], "'--N'")):
        assert main(argv) == 2
        assert f"did you mean {meant}?" in capsys.readouterr().err


def test_unknown_command_has_no_doubled_prefix(capsys):
    """'vista-lab verfy' printed 'vista-lab: error: vista-lab: COMMAND: ...'."""
    assert main(["verfy"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vista-lab: error: COMMAND: unknown value 'verfy'; did you mean "
                          "'verify'?")


def test_empty_trials_is_refused_not_the_default(capsys):
    """`--trials ''` was silently the default."""
    for argv in (["makeroom", "--n", "16", "--kappa", "2", "--interface", "ledger",
                  "--trials", ""],
                 ["recovery", "--N", "8", "--k", "4", "--budget", "10", "--strategy",
                  "recover", "--trials", ""]):
        assert main(argv) == 2
        assert "`trials` must be an integer (got trials='')" in capsys.readouterr().err


def test_content_bound_at_tiny_sigma_is_a_value_not_a_traceback(capsys):
    """`bound content --kappa 4 --sigma 1e-300` raised ZeroDivisionError; the
    bound is +inf there (vacuous), printed as null in JSON."""
    assert main(["bound", "content", "--kappa", "4", "--sigma", "1e-300", "--json"]) == 0
    assert '"paper_bound_bits": null' in capsys.readouterr().out


def test_gaussian_makeroom_at_high_snr_runs(capsys):
    """makeroom gaussian --sigma 0.07 (ln(kappa)/sigma ~ 20) exited 2 blaming
    the user with rate=nan; the rate is finite and the run completes."""
    argv = ["makeroom", "--n", "100", "--kappa", "4", "--interface", "gaussian",
            "--sigma", "0.07", "--trials", "1000", "--seed", "1", "--json",
            "--rate-trials", "200"]
    assert main(argv) in (0, 1)
    out = capsys.readouterr()
    assert "rate_bits" in out.out and "Traceback" not in out.err
    import json

    doc = json.loads(out.out)
    assert doc["rate_bits"] is not None and 0 <= doc["rate_bits"] <= 6.644


def test_read_only_folder_mid_run_is_one_line(monkeypatch, tmp_path, capsys):
    """a folder that becomes unwritable mid-replay (PermissionError from
    the store) ends as one line with exit 2, not a traceback. The store's write is
    made to fail, since root ignores folder permissions."""
    from vistalab import workspace

    def refuse(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(tmp_path / "arch" / "x.txt"))

    store_cls = workspace.DiskStore
    name = next(n for n in ("put", "write", "store", "save") if hasattr(store_cls, n))
    monkeypatch.setattr(store_cls, name, refuse)
    status = main(["workspace", "replay", OPS, "--budget", "3000", "--archive-dir",
                   str(tmp_path / "arch")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "Permission denied" in err
    assert "Traceback" not in err


def test_deeply_nested_json_is_one_line(tmp_path, capsys):
    """'[' * 200000 as a trace raised RecursionError."""
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000)
    assert main(["workspace", "replay", str(deep)]) == 2
    err = capsys.readouterr().err
    # refused before parsing, naming the trace file and the depth limit
    assert err.count("\n") == 1 and "nested more than" in err and str(deep) in err


def test_empty_data_dir_is_bad_input(tmp_path, capsys):
    """check-paper --data-dir EMPTY exited 1 ('9 claims failed'); a
    folder without the paper's data files is bad input (exit 2, names the option)."""
    assert main(["check-paper", "--data-dir", str(tmp_path), "--only", "table8.*"]) == 2
    err = capsys.readouterr().err
    assert "`--data-dir` must hold every paper data file" in err and err.count("\n") == 1


# ----------------------------------------------------------------- no hang

HANG_CASES = [
    ["workspace", "replay", "{fifo}"],
    ["workspace", "dashboard", "{fifo}", "--budget", "4000"],
    ["workspace", "reward", "{fifo}", "--budget", "4000"],
    ["workspace", "probe", "{fifo}", "--budget", "4000"],
    ["workspace", "probe", OPS, "--budget", "4000", "--answers", "{fifo}"],
    ["sweep", "{fifo}"],
    ["plot-sweep", "{fifo}"],
    ["check-paper", "--data-dir", "{fifo}"],
    ["workspace", "replay", "/dev/zero"],
    ["workspace", "replay", "{dir}"],
    ["workspace", "replay", OPS, "--log", "{fifo}"],
    ["conformance", "--replay", "{fifo}"],
]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
def test_fifo_directory_device_are_refused_at_once(tmp_path):
    """No hang: a FIFO, a folder or a device given where a file is read
    is refused from os.stat, before any open. Run in a subprocess whose timeout is
    only a guard against a regression hanging the suite (not a timing assertion)."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    (tmp_path / "d").mkdir()
    lines = [[t.format(fifo=fifo, dir=tmp_path / "d") for t in argv] for argv in HANG_CASES]
    script = (
        "import sys, json\n"
        "from vistalab.cli import main\n"
        "for argv in json.loads(sys.argv[1]):\n"
        "    print(main(argv), flush=True)\n"
    )
    import json

    proc = subprocess.run([sys.executable, "-c", script, json.dumps(lines)],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout.split() == ["2"] * len(lines), proc.stderr
    errs = [e for e in proc.stderr.splitlines() if e]
    assert len(errs) == len(lines) and "Traceback" not in proc.stderr
    assert all(re.search(r"named pipe|a folder|a device|not a regular", e) for e in errs), errs
