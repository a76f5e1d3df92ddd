"""The public testing kit, vistalab.testing: each check
returns [] for a correct implementation written here, outside the project's
code, and names the problem for a broken one (a check that cannot fail is no
check). The user implementations are passed as instances: nothing is
registered, no module global is touched."""

from __future__ import annotations

import math
import os
import re
import unicodedata

import numpy as np
import pytest
from hypothesis import settings
from hypothesis.stateful import invariant
from vistalab.workspace import (
    TOKENIZERS,
    MemoryStore,
    PathEscapeError,
    PayloadConflictError,
    PayloadInfo,
    PayloadIntegrityError,
    Workspace,
    get_tokenizer,
    sha256_hex,
)

from vistalab import sims
from vistalab._core import MissingExtraError
from vistalab.testing import (
    WorkspaceMachine,
    check_interface,
    check_policy,
    check_store,
    check_strategy,
    check_tokenizer,
    machine_budget,
)

# ---------------------------------------------------------------------------
# A user's store: payloads in a dict, written from scratch against the protocol
# ---------------------------------------------------------------------------

_KEY = re.compile(r"[BG][1-9][0-9]*\.txt\Z")


class DictStore:
    """A correct PayloadStore written by a user (not derived from the project's stores)."""

    def __init__(self, root: str = "user://payloads") -> None:
        self.root = root
        self.blobs: dict[str, bytes] = {}

    def put(self, key: str, data: bytes) -> PayloadInfo:
        self.blobs[key] = bytes(data)
        return PayloadInfo(key, f"{self.root}/{key}", len(data), sha256_hex(data))

    def get(self, key: str, *, sha256: str | None = None) -> bytes:
        if key not in self.blobs:
            raise PayloadIntegrityError(key, "is missing")
        data = self.blobs[key]
        if sha256 is not None and sha256_hex(data) != sha256:
            raise PayloadIntegrityError(key, "checksum mismatch")
        return data

    def delete(self, key: str) -> None:
        self.blobs.pop(key, None)

    def contains(self, key: str) -> bool:
        return key in self.blobs

    def keys(self) -> list[str]:
        return sorted(self.blobs)

    def key_of(self, path: str) -> str:
        prefix = self.root + "/"
        name = path[len(prefix):] if path.startswith(prefix) else path
        if "\x00" in path or not _KEY.match(name):
            raise PathEscapeError(path, "is not a payload of this store")
        return name


class CorruptingStore(DictStore):
    """Flips the last byte of every payload it keeps (and does not verify checksums)."""

    def put(self, key, data):
        info = super().put(key, data)
        if data:
            self.blobs[key] = data[:-1] + bytes([data[-1] ^ 1])
        return info

    def get(self, key, *, sha256=None):
        return super().get(key)


class LosingStore(DictStore):
    """Acknowledges every put but keeps only the first payload."""

    def put(self, key, data):
        info = PayloadInfo(key, f"{self.root}/{key}", len(data), sha256_hex(data))
        if not self.blobs:
            self.blobs[key] = bytes(data)
        return info


def test_check_store_accepts_a_correct_user_store():
    """The store contract (eq. archive-contract), the reference-model comparison, a
    Workspace round trip and the stateful machine all pass for a correct user store."""
    assert check_store(lambda directory: DictStore()) == []


@pytest.mark.parametrize(("store_cls", "needle"), [
    (CorruptingStore, "did not return the exact bytes"),
    (LosingStore, "the payload was lost"),
])
def test_check_store_reports_broken_user_stores(store_cls, needle):
    """A store that corrupts bytes or loses payloads is reported, with the reason."""
    problems = check_store(lambda directory: store_cls())
    assert problems and any(needle in p for p in problems), problems


def test_check_store_reports_a_store_that_ignores_checksums():
    """get(key, sha256=<wrong>) must refuse: the engine relies on it to detect tampering."""

    class Trusting(DictStore):
        def get(self, key, *, sha256=None):
            return super().get(key)

    problems = check_store(lambda directory: Trusting())
    assert any("PayloadIntegrityError" in p for p in problems), problems


def test_check_store_reports_a_non_store():
    assert check_store(lambda directory: object()) == [
        "contract: does not implement the PayloadStore protocol (missing: root, put, get, "
        "delete, contains, keys, key_of)"]


# ---------------------------------------------------------------------------
# A user's tokenizer
# ---------------------------------------------------------------------------


class RunTokenizer:
    """Counts each whitespace character and each run of non-space characters as one
    token: additive across a word boundary, at most one token per byte."""

    name = "runs"
    additive = True

    def count(self, text: str) -> int:
        return len(re.findall(r"\s|\S+", text))


class CeilTokenizer:
    """Claims additivity, but ceil(bytes/4) rounds up per piece."""

    name = "ceil"
    additive = True

    def count(self, text: str) -> int:
        return math.ceil(len(text.encode()) / 4)


class FlakyTokenizer:
    """Not deterministic: counts drift from call to call."""

    name = "flaky"
    additive = False

    def __init__(self) -> None:
        self.calls = 0

    def count(self, text: str) -> int:
        self.calls += 1
        return min(len(text.encode()), self.calls % 3)


def test_check_tokenizer_accepts_a_correct_user_tokenizer():
    """Implementation Details: a user's tokenizer honouring the protocol passes the samples
    and drives the workspace engine through the stateful machine."""
    assert check_tokenizer(RunTokenizer()) == []


@pytest.mark.parametrize(("tok", "needle"), [
    (CeilTokenizer(), "says additive but"),
    (FlakyTokenizer(), "is not deterministic"),
])
def test_check_tokenizer_reports_broken_user_tokenizers(tok, needle):
    problems = check_tokenizer(tok)
    assert any(needle in p for p in problems), problems


# ---------------------------------------------------------------------------
# A user's interface and policy (Definition 3)
# ---------------------------------------------------------------------------


class NoisyPointer:
    """Y = J* with probability p, else a uniformly random block (possibly J* again)."""

    name = "noisy-pointer"

    def __init__(self, n: int = 13, kappa: int = 3, p: float = 0.5) -> None:
        self.n, self.kappa, self.p = n, kappa, p

    @property
    def params(self) -> dict[str, float]:
        return {"p": self.p}

    def observe(self, j_star: int, rng: np.random.Generator) -> int:
        return j_star if rng.random() < self.p else int(rng.integers(self.n))

    def log_posterior(self, y: int) -> np.ndarray:
        lp = np.full(self.n, math.log((1 - self.p) / self.n))
        lp[y] = math.log(self.p + (1 - self.p) / self.n)
        return lp

    def rate(self, *, trials=None, rng=None) -> sims.RateEstimate:
        # I(J*;Y) = H(Y) - H(Y | J*) = log2 n - H(row), exact.
        hit, miss = self.p + (1 - self.p) / self.n, (1 - self.p) / self.n
        h_row = -(hit * math.log2(hit) + (self.n - 1) * miss * math.log2(miss))
        return sims.RateEstimate(bits=math.log2(self.n) - h_row, se=0.0, trials=0, exact=True,
                                 method="closed form")


class ExcludingPointer(NoisyPointer):
    """Broken: its posterior puts zero mass on every block but the observed one, so the
    truth is excluded whenever the pointer is wrong."""

    def log_posterior(self, y):
        lp = np.full(self.n, -np.inf)
        lp[y] = 0.0
        return lp


class OverclaimingPointer(NoisyPointer):
    """Broken: declares the ledger's exact law (Z = 0 always) that it does not have."""

    def exact_bayes_mean_z(self) -> float:
        return 0.0

    def exact_bayes_z_pmf(self) -> np.ndarray:
        return np.eye(self.kappa + 1)[0]


def test_check_interface_accepts_a_correct_user_interface():
    """Definition 3 and Theorem 1: a user's interface passes every interface check."""
    assert check_interface(NoisyPointer()) == []


@pytest.mark.parametrize(("iface", "needle"), [
    (ExcludingPointer(), "excludes the true block"),
    (OverclaimingPointer(), "do not follow the declared exact law"),
])
def test_check_interface_reports_broken_user_interfaces(iface, needle):
    problems = check_interface(iface)
    assert any(needle in p for p in problems), problems


class IndexOrder:
    """Archive blocks in index order, ignoring Y: a valid (blind) policy."""

    name = "index-order"

    def order(self, interface, y, rng):
        return np.arange(interface.n)


class DuplicatingOrder(IndexOrder):
    """Broken: archives block 0 twice and never the last block."""

    name = "duplicating"

    def order(self, interface, y, rng):
        out = np.arange(interface.n)
        out[-1] = 0
        return out


class OverclaimingOrder(IndexOrder):
    """Broken: declares that it never archives a load-bearing block."""

    name = "overclaiming"

    def exact_z_pmf(self, interface):
        return np.eye(interface.kappa + 1)[0]

    def exact_mean_z(self, interface):
        return 0.0


def test_check_policy_accepts_a_correct_user_policy():
    """Definition 3: a user's policy (a fixed order) passes with every reference interface."""
    assert check_policy(IndexOrder()) == []


@pytest.mark.parametrize(("policy", "needle"), [
    (DuplicatingOrder(), "is not a permutation"),
    (OverclaimingOrder(), "do not follow the declared exact law"),
])
def test_check_policy_reports_broken_user_policies(policy, needle):
    problems = check_policy(policy)
    assert any(needle in p for p in problems), problems


# ---------------------------------------------------------------------------
# A user's strategy (Proposition 1)
# ---------------------------------------------------------------------------


class GuessAll:
    """Keeps nothing and guesses the revealed block uniformly: success 2^-k exactly."""

    name = "guess-all"
    recovering = False

    def plan(self, N, k, budget, cost):
        return sims.StrategyPlan(entropy_bits=0.0, exact_success=2.0 ** -k, details={"k": k})

    def encode(self, blocks, plan, rng, archive):
        return np.zeros((blocks.shape[0], 0), dtype=np.uint8)

    def decode(self, state, index, plan, rng, archive):
        k = int(plan.details["k"])
        guess = rng.integers(0, 256, size=(index.shape[0], -(-k // 8)), dtype=np.uint8)
        if k % 8:
            guess[:, -1] &= np.uint8((0xFF << (8 - k % 8)) & 0xFF)
        return guess


class BoastingGuess(GuessAll):
    """Broken: declares success 1/2 whatever k."""

    name = "boasting"

    def plan(self, N, k, budget, cost):
        return sims.StrategyPlan(entropy_bits=0.0, exact_success=0.5, details={"k": k})


def test_check_strategy_accepts_a_correct_user_strategy():
    """Proposition 1: a user's non-recovering strategy passes on every grid instance."""
    assert check_strategy(GuessAll()) == []


def test_check_strategy_reports_a_broken_user_strategy():
    problems = check_strategy(BoastingGuess())
    assert any("declared exact success 0.5" in p for p in problems), problems


def test_checks_refuse_objects_without_the_protocol():
    """Each check names the missing members instead of crashing."""
    assert check_interface(object())[0].startswith("does not implement sims.Interface")
    assert check_policy(object())[0].startswith("does not implement sims.Policy")
    assert check_strategy(object())[0].startswith("does not implement sims.Strategy")
    assert check_tokenizer(object())[0].startswith("does not implement the Tokenizer")


# ---------------------------------------------------------------------------
# WorkspaceMachine as a base class, and the pytest plugin's fixtures
# ---------------------------------------------------------------------------


class UserStoreMachine(WorkspaceMachine):
    """The stateful machine driving the user's tokenizer and store, with one more
    invariant of the user's own."""

    tokenizer = RunTokenizer()

    def make_store(self, directory):
        return DictStore()

    @invariant()
    def store_holds_only_payload_keys(self):
        if hasattr(self, "ws"):
            assert all(_KEY.match(k) for k in self.ws.store.keys())


TestUserStoreMachine = UserStoreMachine.TestCase
TestUserStoreMachine.settings = settings(max_examples=10, stateful_step_count=25,
                                         deadline=None)


def test_plugin_fixtures(vista_conformance, vista_workspace):
    """The pytest plugin (entry point pytest11) provides the fixtures."""
    vista_conformance.store(lambda directory: DictStore())
    ws = vista_workspace(3000, tokenizer=RunTokenizer())
    ws.register_user("hello world")
    assert ws.render().tokens <= 3000
    with pytest.raises(pytest.fail.Exception, match="does not conform"):
        vista_conformance.tokenizer(CeilTokenizer())


# ---------------------------------------------------------------------------
# Audit items: the kit judges tokenizers by the contract, not by one budget
# ---------------------------------------------------------------------------


class PerChar:
    """One token per character: dense, but within the contract (at most one per byte)."""

    name = "perchar"
    additive = True

    def count(self, text: str) -> int:
        return len(text)


class PerByte:
    """One token per UTF-8 byte: the densest counter the contract allows."""

    name = "perbyte"
    additive = True

    def count(self, text: str) -> int:
        return len(text.encode("utf-8"))


@pytest.mark.parametrize("tok", [PerChar(), PerByte()], ids=["per-char", "per-byte"])
def test_check_tokenizer_accepts_dense_tokenizers(tok, vista_conformance):
    """Audit item 1 (Implementation Details, Tokenizer contract): a counter at the
    contract's byte bound passes; the stateful machine sizes its budget to the
    tokenizer (management floor plus room) instead of a fixed 2,400 that such a
    counter cannot even construct a Workspace with."""
    assert check_tokenizer(tok, stateful_examples=2) == []
    vista_conformance.tokenizer(tok, stateful_examples=1)


def test_machine_budget_scales_and_still_overflows():
    """Audit item 1: the machine's budget is the engine's own management floor (with
    the machine's pinned messages) plus room for ~3,200 bytes of the machine's words,
    so a 14,000-byte tool result (the machine's largest) overflows it under approx and
    per-byte counting."""
    for tok in ("approx", PerByte(), RunTokenizer()):
        budget = machine_budget(tok)
        ws = Workspace(budget, tokenizer=tok, store=MemoryStore())
        ws.register_system("You are a test agent.")
        ws.register_user("Task: keep evidence recoverable.")
        assert ws.management_floor() < budget
        if tok != "approx" and not isinstance(tok, PerByte):
            continue
        ws.register_tool_call([{"id": "c1", "type": "function",
                                "function": {"name": "fetch", "arguments": "{}"}}])
        ws.register_tool_result("c1", "x" * 14000)
        assert ws.render().mode == "overflow" or ws.block("B4").rejected


class ZeroTokenizer:
    """Broken: every text is free, so the budget guard bounds nothing."""

    name = "zero"
    additive = True

    def count(self, text: str) -> int:
        return 0


class BmpOnlyTokenizer:
    """Broken: a UCS-2 era counter that crashes on characters above U+FFFF."""

    name = "bmp-only"
    additive = False

    def count(self, text: str) -> int:
        if any(ord(c) > 0xFFFF for c in text):
            raise UnicodeError("character above U+FFFF")
        return len(text.encode("utf-16-le")) // 4 + (1 if text else 0)


class ControlBlindTokenizer(RunTokenizer):
    """Broken: control characters (other than whitespace) are dropped before counting,
    so a run of them is free."""

    name = "control-blind"
    additive = False

    def count(self, text: str) -> int:
        kept = "".join(c for c in text if c.isprintable() or c.isspace())
        return super().count(kept)


@pytest.mark.parametrize(("tok", "needle"), [
    (ZeroTokenizer(), "= 0 for non-empty text"),
    (BmpOnlyTokenizer(), "raised UnicodeError"),
    (ControlBlindTokenizer(), "= 0 for non-empty text"),
])
def test_check_tokenizer_reports_free_or_crashing_tokenizers(tok, needle):
    """Audit item 2 (Tokenizer contract: 1 <= count(text) <= UTF-8 bytes for non-empty
    text; the budget guard relies on it): an always-zero counter, one that crashes on
    astral-plane text and one that drops control characters are each reported."""
    problems = check_tokenizer(tok, stateful_examples=0)
    assert any(needle in p for p in problems), problems


def test_zero_tokenizer_breaks_the_budget_guarantee():
    """Audit item 2: why the rule matters. With an always-zero counter a normal-mode
    rendering holds arbitrarily many bytes at a handful of (framing) tokens."""
    ws = Workspace(2000, tokenizer=ZeroTokenizer(), store=MemoryStore())
    ws.register_user("x" * 100_000)
    r = ws.render()
    assert r.mode == "normal" and r.tokens < 2000
    assert sum(len(str(m.get("content", ""))) for m in r.messages) > 100_000


def test_samples_cover_astral_combining_crlf_and_control_text():
    """Audit item 2: the default samples hold astral-plane characters (emoji, CJK
    extension B), combining marks, CRLF line ends and NUL-free control characters."""
    from vistalab.testing import TOKENIZER_SAMPLES

    joined = "".join(TOKENIZER_SAMPLES)
    assert any(0x1F300 <= ord(c) <= 0x1FAFF for c in joined)  # emoji
    assert any(0x20000 <= ord(c) <= 0x2A6DF for c in joined)  # CJK extension B
    assert any(unicodedata.combining(c) for c in joined)
    assert "\r\n" in joined and "\x00" not in joined
    assert any(unicodedata.category(c) == "Cc" and not c.isspace() for c in joined)


# ---------------------------------------------------------------------------
# Audit item 3: check_store holds key_of and the ownership rule to the protocol
# ---------------------------------------------------------------------------


class EscapingStore(DictStore):
    """Broken: key_of keeps the last path component, so any path 'maps' to a key."""

    def key_of(self, path):
        return path.split("/")[-1]


class FolderStore(DictStore):
    """A correct store on a folder (its ``root``), shared by every store made on the
    same folder: payloads in files, a foreign payload never replaced."""

    def __init__(self, directory) -> None:
        super().__init__(str(directory))
        self.mine: set[str] = set()

    def _file(self, key):
        return os.path.join(self.root, key)

    def put(self, key, data):
        if key not in self.mine and self.contains(key) and self.get(key) != data:
            raise PayloadConflictError(key, self.root, "already exists with other bytes")
        with open(self._file(key), "wb") as fh:
            fh.write(data)
        self.mine.add(key)
        return PayloadInfo(key, f"{self.root}/{key}", len(data), sha256_hex(data))

    def claim(self, keys):
        self.mine.update(keys)

    def get(self, key, *, sha256=None):
        try:
            with open(self._file(key), "rb") as fh:
                data = fh.read()
        except FileNotFoundError:
            raise PayloadIntegrityError(key, "is missing") from None
        if sha256 is not None and sha256_hex(data) != sha256:
            raise PayloadIntegrityError(key, "checksum mismatch")
        return data

    def delete(self, key):
        if self.contains(key):
            os.unlink(self._file(key))

    def contains(self, key):
        return os.path.isfile(self._file(key))

    def keys(self):
        return sorted(n for n in os.listdir(self.root) if _KEY.match(n))

    def key_of(self, path):
        name = super().key_of(path)
        if os.path.islink(self._file(name)):
            raise PathEscapeError(path, "is a symlink")
        return name


class ClobberingStore(FolderStore):
    """Broken: replaces payloads it did not write (another run's archive is lost)."""

    def put(self, key, data):
        self.mine.add(key)
        return super().put(key, data)


class SymlinkFollowingStore(FolderStore):
    """Broken: maps a symlink planted in the folder to a key (reads would leave it)."""

    def key_of(self, path):
        return DictStore.key_of(self, path)


def test_check_store_reports_a_key_of_that_refuses_nothing():
    """Audit item 3 (PayloadStore protocol: key_of refuses anything outside the store
    with PathEscapeError): a key_of that keeps the last path component is reported for
    absolute paths elsewhere, traversal, another store's path and the empty path."""
    problems = check_store(lambda directory: EscapingStore(), stateful_examples=0)
    text = "\n".join(problems)
    for needle in ("'/etc/B1.txt'", "/../B1.txt'", "-other/B1.txt'", "key_of('')"):
        assert needle in text, problems
    assert all(p.startswith("key_of refusals: ") for p in problems)


@pytest.mark.parametrize(("store_cls", "needle"), [
    (ClobberingStore, "instead of raising PayloadConflictError"),
    (SymlinkFollowingStore, "/B7.txt') (a symlink to a file outside the store) returned"),
])
def test_check_store_reports_broken_folder_stores(store_cls, needle):
    """Audit item 3 (PayloadStore protocol: a store sharing a folder never replaces a
    payload it did not write; key_of refuses symlinks): both breaks are reported."""
    problems = check_store(lambda directory: store_cls(directory), stateful_examples=0)
    assert any(needle in p for p in problems), problems


def test_check_store_accepts_a_correct_folder_store():
    """Audit item 3: a correct user store on a shared folder (conflicts refused, claim
    honoured, symlinks refused) passes every stage, the new ones included."""
    assert check_store(lambda directory: FolderStore(directory), stateful_examples=1) == []


def test_shipped_memory_store_on_a_disk_display_root_passes():
    """Audit item 3: a MemoryStore whose display root is an existing folder (the
    machine's twin) is not judged by files it never wrote in that folder."""
    assert check_store(lambda directory: MemoryStore(str(directory)), stateful_examples=0) == []


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_shipped_tokenizers_pass_the_full_check(name):
    """Audit items 1 and 2: every registered tokenizer whose dependencies are installed
    passes check_tokenizer with the new samples and the lower bound, and drives the
    stateful machine at its scaled budget."""
    try:
        tok = get_tokenizer(name)
    except MissingExtraError as exc:
        pytest.skip(str(exc))
    assert check_tokenizer(tok, stateful_examples=2) == []
