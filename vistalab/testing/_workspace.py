"""Conformance checks for the two pluggable pieces of the workspace engine:
tokenizers and payload stores (paper, Implementation Details; eq.
archive-contract: the exact bytes are recoverable from the payload path)."""

from __future__ import annotations

import os
import tempfile
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vistalab._core import DomainError
from vistalab.workspace import (
    MemoryStore,
    PathEscapeError,
    PayloadConflictError,
    PayloadIntegrityError,
    PayloadStore,
    Tokenizer,
    Workspace,
    WorkspaceError,
    sha256_hex,
)

__all__ = ["TOKENIZER_SAMPLES", "STORE_SAMPLES", "check_tokenizer", "check_store"]

#: Texts every tokenizer is checked on: dashboard fragments (IDs, padded numbers,
#: ledger rows), words with and without a leading space, non-ASCII text, then text
#: that real tool results carry and narrow counters trip on: astral-plane
#: characters (emoji, a ZWJ sequence, CJK extension B, mathematical letters),
#: combining marks, CRLF line ends and control characters (never NUL).
TOKENIZER_SAMPLES: tuple[str, ...] = (
    "B12", "   1,234", "   8r", "  tool_result        0      B3      visible\n", "hello",
    " world", "x", "  ", "a\n", "é", " é", "12", " 34", "!!", " !!", "", "日本語のテキスト",
    "<|endoftext|>", "a  b\n  c",
    "\U0001F600", " \U0001F469\u200D\U0001F469\u200D\U0001F467 family",
    "\U00020000\U00020B9F\U0002A6D6",
    " \U0001D518\U0001D52B\U0001D526", "e\u0301", " Z\u0324\u0354\u0367\u0311", "\u0301",
    "line one\r\nline two\r\n", "\r\n", " \r\n", "\x07\x08\x1b\x7f",
    "\x1b[31mred\x1b[0m\x01\x02\t\x0b\x0c", "\x85\u2028",
    "0f1e2d3c4b5a", "aGVsbG8gd29ybGQ=/+x9", '{"id":12,"name":"abc"},', "中文字，。字！", "x1y2.z3",
)

#: Payloads every store is checked on: empty, arbitrary bytes (CR, NUL, 0xff), UTF-8.
STORE_SAMPLES: dict[str, bytes] = {
    "B1.txt": b"",
    "B2.txt": b"exact\r\nbytes\x00\xff",
    "G1.txt": "日本\n".encode() * 50,
}


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def check_tokenizer(tok: Any, samples: Sequence[str] = TOKENIZER_SAMPLES, *,
                    stateful_examples: int = 5) -> list[str]:
    """Everything that breaks the ``Tokenizer`` contract; ``[]`` if ``tok`` conforms.

    The contract (``vistalab.workspace.Tokenizer``): a non-empty ``name``, an
    ``additive`` flag, and ``count(text) -> int`` that is an int with
    ``1 <= count(text) <= len(text.encode("utf-8"))`` for every non-empty text
    (0 for ``""``): at most the UTF-8 byte count because the management
    reserve relies on it, at least one because the budget guard does (a
    counter that makes some text free lets unbounded bytes through a
    normal-mode rendering). It must not raise on any sample (astral-plane,
    combining, CRLF and control text included), be deterministic, and be
    additive across a word boundary (``a + " b"``) when the tokenizer says it
    is. The optional members are checked when present: ``max_token_bytes``
    (no sample may count fewer than ``ceil(bytes / max_token_bytes)``; for
    ASCII samples likewise ``max_token_bytes_ascii``),
    ``count_lower_bound`` (never above a sample's count, with or without a
    limit) and ``split_points`` (every declared position splits the sample's
    count exactly). Then a workspace driven with ``tok`` by the stateful
    machine (:class:`WorkspaceMachine`) must keep every invariant.

    Parameters
    ----------
    tok : object
        The tokenizer instance to check (it need not be registered anywhere).
    samples : sequence of str
        Texts to count (default :data:`TOKENIZER_SAMPLES`).
    stateful_examples : int
        Hypothesis examples of the stateful machine (0 skips it).

    Returns
    -------
    list of str
        One line per problem found.
    """
    _stateful_examples_iv(stateful_examples)
    if isinstance(samples, (str, bytes)) or not isinstance(samples, Sequence) \
            or not all(isinstance(t, str) for t in samples):
        raise DomainError("samples", samples, "must be a sequence of strings",
                          "pass e.g. ['hello', ' world'] (the default: TOKENIZER_SAMPLES)")
    if not isinstance(tok, Tokenizer):
        missing = [m for m in ("name", "additive", "count") if not hasattr(tok, m)]
        return [f"does not implement the Tokenizer protocol (missing: {', '.join(missing)})"]
    problems: list[str] = []
    if not isinstance(tok.name, str) or not tok.name:
        problems.append(f"name {tok.name!r} is not a non-empty string")
    counts: dict[str, int] = {}
    for text in samples:
        try:
            n = tok.count(text)
            again = tok.count(text)
        except Exception as exc:  # noqa: BLE001 - a crash is a problem to report
            problems.append(f"count({text!r}) raised {_describe(exc)}")
            continue
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            problems.append(f"count({text!r}) = {n!r} is not a non-negative int")
            continue
        if text and n == 0:
            problems.append(f"count({text!r}) = 0 for non-empty text: every non-empty text "
                            "must count at least 1 token, or the budget guard bounds nothing")
        if n > len(text.encode("utf-8")):
            problems.append(f"count({text!r}) = {n} exceeds its {len(text.encode())} UTF-8 bytes")
        if again != n:
            problems.append(f"count({text!r}) is not deterministic ({n} then {again})")
        counts[text] = int(n)
    if getattr(tok, "additive", False):
        for a in samples:
            for b in samples:
                if a in counts and b in counts and a and b and not a[-1].isspace() \
                        and b[0] == " ":
                    try:
                        joined = tok.count(a + b)
                    except Exception as exc:  # noqa: BLE001
                        problems.append(f"count({a + b!r}) raised {_describe(exc)}")
                        continue
                    if joined != counts[a] + counts[b]:
                        problems.append(f"says additive but count({a!r} + {b!r}) = {joined} "
                                        f"!= {counts[a]} + {counts[b]}")
    problems += _optional_members(tok, counts)
    if not problems and stateful_examples > 0:
        from ._machine import run_machine

        problems += run_machine(tokenizer=tok, examples=stateful_examples)
    return problems


def _stateful_examples_iv(stateful_examples: Any) -> int:
    """The bounded example count of :func:`check_tokenizer` and :func:`check_store`."""
    if isinstance(stateful_examples, bool) or not isinstance(stateful_examples, int) \
            or not 0 <= stateful_examples <= MAX_STATEFUL_EXAMPLES:
        raise DomainError("stateful_examples", stateful_examples, "must be an integer from 0 "
                          f"to {MAX_STATEFUL_EXAMPLES}", "pass e.g. stateful_examples=5")
    return stateful_examples


def _optional_members(tok: Any, counts: dict[str, int]) -> list[str]:
    """The optional ``max_token_bytes``, ``count_lower_bound`` and
    ``split_points`` members, checked on the samples: the bounds never above a
    count, and every declared split position splitting the count exactly."""
    import math
    import re

    problems: list[str] = []
    m = getattr(tok, "max_token_bytes", None)
    if m is not None:
        if isinstance(m, bool) or not isinstance(m, int) or m < 1:
            problems.append(f"max_token_bytes {m!r} is not an int >= 1 (or None)")
        else:
            for text, n in counts.items():
                need = math.ceil(len(text.encode("utf-8")) / m)
                if n < need:
                    problems.append(f"count({text!r}) = {n} is below ceil(bytes / "
                                    f"max_token_bytes) = {need}: the bound would refuse "
                                    "results that fit")
    ma = getattr(tok, "max_token_bytes_ascii", None)
    if ma is not None:
        if isinstance(ma, bool) or not isinstance(ma, int) or ma < 1:
            problems.append(f"max_token_bytes_ascii {ma!r} is not an int >= 1 (or None)")
        else:
            for text, n in counts.items():
                if text.isascii() and n < math.ceil(len(text) / ma):
                    problems.append(f"count({text!r}) = {n} is below ceil(bytes / "
                                    f"max_token_bytes_ascii) = {math.ceil(len(text) / ma)}")
    bound = getattr(tok, "count_lower_bound", None)
    if bound is not None:
        if not callable(bound):
            problems.append(f"count_lower_bound {bound!r} is not callable (or None)")
        else:
            for text, n in counts.items():
                for limit in (None, 0):
                    try:
                        lb = bound(text, limit)
                    except Exception as exc:  # noqa: BLE001
                        problems.append(f"count_lower_bound({text!r}, {limit}) raised "
                                        f"{_describe(exc)}")
                        break
                    if isinstance(lb, bool) or not isinstance(lb, (int, np.integer)):
                        problems.append(f"count_lower_bound({text!r}, {limit}) = {lb!r} is "
                                        "not an int")
                        break
                    if lb > n:
                        problems.append(f"count({text!r}) = {n} is below count_lower_bound("
                                        f"{text!r}, {limit}) = {lb}: the guard would refuse "
                                        "results that fit")
                        break
    pat = getattr(tok, "split_points", None)
    if pat is not None:
        if not isinstance(pat, re.Pattern):
            return [*problems, f"split_points {pat!r} is not a compiled re pattern (or None)"]
        for text, n in counts.items():
            for mt in pat.finditer(text):
                q = mt.start()
                if 0 < q < len(text):
                    try:
                        parts = tok.count(text[:q]) + tok.count(text[q:])
                    except Exception as exc:  # noqa: BLE001
                        problems.append(f"count of a piece of {text!r} raised {_describe(exc)}")
                        break
                    if parts != n:
                        problems.append(f"split_points splits {text!r} at {q} but the "
                                        f"pieces count {parts} != {n}")
                        break
    return problems


def _store_contract(store: Any, samples: dict[str, bytes]) -> list[str]:
    problems: list[str] = []
    if not isinstance(store, PayloadStore):
        missing = [m for m in ("root", "put", "get", "delete", "contains", "keys", "key_of")
                   if not hasattr(store, m)]
        return [f"does not implement the PayloadStore protocol (missing: {', '.join(missing)})"]
    for key, data in samples.items():
        info = store.put(key, data)
        if (info.key, info.size, info.sha256) != (key, len(data), sha256_hex(data)):
            problems.append(f"put({key}) reported {info}, expected key={key}, size={len(data)}, "
                            f"sha256={sha256_hex(data)[:16]}...")
        if info.path != f"{store.root}/{key}":
            problems.append(f"put({key}) path {info.path} is not root/key")
        if not store.contains(key):
            problems.append(f"contains({key}) is False right after put: the payload was lost")
            continue
        try:
            got = store.get(key, sha256=info.sha256)
        except Exception as exc:  # noqa: BLE001
            problems.append(f"get({key}) raised {_describe(exc)} right after put")
            continue
        if got != data:
            problems.append(f"get({key}) did not return the exact bytes "
                            f"({len(got)} bytes, expected {len(data)})")
        if store.key_of(info.path) != key:
            problems.append(f"key_of({info.path}) does not map back to {key}")
        try:
            store.get(key, sha256="0" * 64)
            problems.append(f"get({key}, sha256=<wrong>) returned bytes instead of raising "
                            "PayloadIntegrityError")
        except PayloadIntegrityError:
            pass
        except Exception as exc:  # noqa: BLE001
            problems.append(f"get({key}, sha256=<wrong>) raised {_describe(exc)}, not "
                            "PayloadIntegrityError")
    if sorted(samples) != list(store.keys()):
        problems.append(f"keys() = {store.keys()}, expected {sorted(samples)}")
    for key in samples:
        store.delete(key)
        if store.contains(key):
            problems.append(f"delete({key}) left the payload")
        try:
            store.get(key)
            problems.append(f"get({key}) after delete returned bytes instead of raising "
                            "PayloadIntegrityError")
        except PayloadIntegrityError:
            pass
    return problems


def _store_vs_model(store: Any, rounds: int = 60, seed: int = 12) -> list[str]:
    """Random put/overwrite/delete/get against a reference :class:`MemoryStore`."""
    ref = MemoryStore(store.root)
    gen = np.random.default_rng(seed)
    keys = [f"B{i}.txt" for i in range(1, 6)] + ["G1.txt", "G2.txt"]
    for step in range(rounds):
        key = keys[int(gen.integers(len(keys)))]
        op = int(gen.integers(3))
        if op == 0:
            data = gen.bytes(int(gen.integers(0, 3000)))
            a, b = store.put(key, data), ref.put(key, data)
            if (a.key, a.size, a.sha256, a.path) != (b.key, b.size, b.sha256, b.path):
                return [f"step {step}: put({key}) reported {a}, reference {b}"]
        elif op == 1:
            store.delete(key)
            ref.delete(key)
        if store.contains(key) != ref.contains(key):
            return [f"step {step}: contains({key}) = {store.contains(key)}, "
                    f"reference {ref.contains(key)}"]
        if ref.contains(key):
            want = ref.get(key)
            try:
                got = store.get(key, sha256=sha256_hex(want))
            except Exception as exc:  # noqa: BLE001
                return [f"step {step}: get({key}) raised {_describe(exc)}; reference returned "
                        f"{len(want)} bytes"]
            if got != want:
                return [f"step {step}: get({key}) returned {len(got)} bytes that differ from "
                        f"the {len(want)} bytes put"]
    if list(store.keys()) != ref.keys():
        return [f"keys() = {store.keys()}, reference {ref.keys()}"]
    return []


def _refusal_cases(root: str, other_root: str | None) -> list[tuple[str, str]]:
    """(path, why it is outside the store) pairs every ``key_of`` must refuse."""
    cases = [
        ("", "empty"),
        ("   ", "blank"),
        ("/etc/passwd", "an absolute path elsewhere"),
        ("/etc/B1.txt", "an absolute path elsewhere, payload-like name"),
        ("../B1.txt", "traversal"),
        (f"{root}/../B1.txt", "traversal out of the store"),
        (f"{root}/B1.txt/../../B1.txt", "traversal through a payload"),
        (f"{root}/../{root.rstrip('/').rsplit('/', 1)[-1]}-other/B1.txt",
         "traversal into a sibling folder"),
        (f"{root}-other/B1.txt", "another store's path (a sibling with the same prefix)"),
        (f"{root}/B1.txt\x00", "a NUL byte"),
        (f"{root}/notes.txt", "not a payload name"),
        (f"{root}/B0.txt", "not a payload name"),
    ]
    if other_root is not None and other_root != root:
        cases.append((f"{other_root}/B1.txt", "another store's payload"))
    return cases


def _key_of_refusals(store: Any, directory: Path, factory: Callable[[Path], Any]) -> list[str]:
    """``key_of`` refuses every path outside the store with ``PathEscapeError``."""
    problems: list[str] = []
    store.put("B1.txt", b"inside")
    with tempfile.TemporaryDirectory(prefix="vista-check-store-other-") as tmp:
        other = factory(Path(tmp))
        other.put("B1.txt", b"another store's payload")
        cases = _refusal_cases(store.root, getattr(other, "root", None))
        if os.path.isfile(os.path.join(store.root, "B1.txt")):
            # The store keeps payloads as files in its root folder (not merely a
            # display root): a symlink planted there must not map to a key.
            outside = Path(tmp) / "outside.txt"
            outside.write_bytes(b"not a payload")
            link = os.path.join(store.root, "B7.txt")
            os.symlink(outside, link)
            cases.append((link, "a symlink to a file outside the store"))
        for path, why in cases:
            try:
                key = store.key_of(path)
            except PathEscapeError:
                continue
            except Exception as exc:  # noqa: BLE001 - a crash is a finding
                problems.append(f"key_of({path!r}) ({why}) raised {_describe(exc)}, not "
                                "PathEscapeError")
                continue
            problems.append(f"key_of({path!r}) ({why}) returned {key!r} instead of raising "
                            "PathEscapeError")
    return problems


def _ownership(store: Any, directory: Path, factory: Callable[[Path], Any]) -> list[str]:
    """Two stores on one folder: the second never replaces the first's payload with
    other bytes (``PayloadConflictError``) unless it ``claim``s it; the same bytes
    are accepted. Stores that do not share a folder have nothing to check."""
    first = b"written by the first store"
    store.put("B1.txt", first)
    second = factory(directory)
    if not second.contains("B1.txt"):
        return []
    problems: list[str] = []
    try:
        second.put("B1.txt", b"other bytes")
        problems.append("a second store on the same folder replaced B1.txt, which it did not "
                        "write, instead of raising PayloadConflictError")
    except PayloadConflictError:
        pass
    except Exception as exc:  # noqa: BLE001
        problems.append(f"replacing another store's B1.txt raised {_describe(exc)}, not "
                        "PayloadConflictError")
    if store.get("B1.txt") != first:
        problems.append("the first store's B1.txt lost its bytes to a second store on the "
                        "same folder")
        return problems
    try:
        second.put("B1.txt", first)
    except Exception as exc:  # noqa: BLE001
        problems.append(f"putting identical bytes over another store's B1.txt raised "
                        f"{_describe(exc)}; identical bytes must be accepted")
    claim = getattr(second, "claim", None)  # optional member
    if claim is not None:
        claim(["B1.txt"])
        try:
            second.put("B1.txt", b"after claim")
        except Exception as exc:  # noqa: BLE001
            problems.append(f"put(B1.txt) after claim(['B1.txt']) raised {_describe(exc)}; a "
                            "claimed payload may be replaced")
    return problems


def _store_in_workspace(store: Any) -> list[str]:
    """Archive through a Workspace on ``store`` and read every payload back exactly."""
    ws = Workspace(4000, tokenizer="approx", store=store)
    ws.register_system("You are a test agent.")
    ws.register_user("Task: keep evidence recoverable.")
    originals = {}
    for i in range(3):
        body = f"result {i}\n" + "payload line é\r\n" * (40 * (i + 1))
        cid = f"call_{i}"
        ws.register_tool_call([{"id": cid, "type": "function",
                                "function": {"name": "fetch", "arguments": "{}"}}])
        bid = ws.register_tool_result(cid, body)
        originals[bid] = ws.recover(bid)
    try:
        ws.archive(",".join(originals), "kept outside the prompt")
    except WorkspaceError as exc:
        return [f"Workspace.archive on this store raised {_describe(exc)}"]
    problems = []
    for bid, raw in originals.items():
        try:
            if ws.recover(bid) != raw:
                problems.append(f"Workspace.recover({bid}) after archive differs from the "
                                "registered bytes")
        except WorkspaceError as exc:
            problems.append(f"Workspace.recover({bid}) after archive raised {_describe(exc)}")
    return problems


#: Most Hypothesis examples :func:`check_store` runs against the memory twin.
MAX_STATEFUL_EXAMPLES = 10_000


def check_store(factory: Callable[[Path], Any], samples: dict[str, bytes] | None = None, *,
                stateful_examples: int = 5) -> list[str]:
    """Everything that breaks the ``PayloadStore`` contract; ``[]`` if the stores conform.

    ``factory(directory)`` must return a new, empty store; ``directory`` is a
    fresh empty folder the store may use (a disk store) or ignore (an
    in-memory one). The checks, each on a fresh store:

    1. the contract on :data:`STORE_SAMPLES`: ``put`` reports key, size,
       sha256 and ``root/key`` path; ``get`` returns the exact bytes and
       raises ``PayloadIntegrityError`` for a wrong checksum or a missing key;
       ``key_of`` inverts the path; ``keys`` and ``delete`` behave;
    2. ``key_of`` refuses, with ``PathEscapeError``, every path outside the
       store: empty and blank paths, absolute paths elsewhere, ``..``
       traversal (out of the store, through a payload, into a sibling),
       another store's payload path (a second store from ``factory``) and a
       sibling folder sharing the root as a prefix, a NUL byte, names that
       are not payload keys, and (for a store that keeps its payloads as files
       in its ``root`` folder) a symlink planted in the folder;
    3. random put / overwrite / delete / get against the reference
       :class:`~vistalab.workspace.MemoryStore`;
    4. a :class:`~vistalab.workspace.Workspace` on the store archives tool
       results and recovers them byte for byte;
    5. ownership, for stores that share a folder (a second
       ``factory(directory)`` on the same folder sees the first's payloads):
       the second store's ``put`` of other bytes over a payload it did not
       write raises ``PayloadConflictError`` and leaves the bytes intact,
       identical bytes are accepted, and after the optional ``claim([key])``
       the replacement is allowed. Stores that do not share (a fresh
       in-memory store per call) skip this stage;
    6. the stateful machine (:class:`WorkspaceMachine`) with this store next to
       a memory twin (``stateful_examples`` Hypothesis examples; 0 skips it).

    Parameters
    ----------
    factory : callable
        ``factory(directory) -> PayloadStore``: a new, empty store per call.
    samples : dict of str to bytes, optional
        Payloads for the contract stage (default :data:`STORE_SAMPLES`).
    stateful_examples : int
        Examples of the stateful stage (default 5; 0 skips it).

    Returns
    -------
    list of str
        One line per problem found (a crash of the store is a problem too).
    """
    if not callable(factory):
        raise DomainError("factory", factory, "must be a callable taking a folder Path and "
                          "returning a store", "pass e.g. DiskStore")
    _stateful_examples_iv(stateful_examples)
    if samples is not None and (not isinstance(samples, dict) or not all(
            isinstance(k, str) and isinstance(v, bytes) for k, v in samples.items())):
        raise DomainError("samples", samples, "must map payload keys (str) to bytes",
                          "pass e.g. {'B1.txt': b'hello'}")
    problems: list[str] = []
    stages: list[tuple[str, Callable[[Any, Path], list[str]]]] = [
        ("contract", lambda s, d: _store_contract(s, dict(samples or STORE_SAMPLES))),
        ("key_of refusals", lambda s, d: _key_of_refusals(s, d, factory)),
        ("against the reference store", lambda s, d: _store_vs_model(s)),
        ("inside a Workspace", lambda s, d: _store_in_workspace(s)),
        ("a folder shared by two stores", lambda s, d: _ownership(s, d, factory)),
    ]
    for label, stage in stages:
        with tempfile.TemporaryDirectory(prefix="vista-check-store-") as tmp:
            try:
                store = factory(Path(tmp))
                problems += [f"{label}: {p}" for p in stage(store, Path(tmp))]
            except Exception as exc:  # noqa: BLE001 - a crashing store is a finding
                where = traceback.extract_tb(exc.__traceback__)[-1]
                problems.append(f"{label}: raised {_describe(exc)} (at {where.name}, line "
                                f"{where.lineno})")
        if problems:
            return problems
    if stateful_examples > 0:
        from ._machine import run_machine

        problems += run_machine(store_factory=factory, examples=stateful_examples)
    return problems
