"""Shared machinery of the engine-backed experiments (workspace/ driven by sims/):
a memoising view of the engine's tokenizer, payload-store set-up, and the search
for block texts whose net archive size, in the engine's own tokens, is exact.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from vistalab.theory import DomainError
from vistalab.workspace import DiskStore, MemoryStore, PayloadStore, Tokenizer

from vistalab import workspace

__all__ = [
    "ENGINE_TOKENIZERS",
    "ENGINE_STORES",
    "MemoTokenizer",
    "StoreSpec",
    "store_iv",
    "tokenizer_iv",
    "fit_text",
    "random_words",
]

#: Tokenizers the engine-backed experiments accept (the engine's registry names).
ENGINE_TOKENIZERS: tuple[str, ...] = ("cl100k_base", "approx")
#: Payload stores the engine-backed experiments accept.
ENGINE_STORES: tuple[str, ...] = ("memory", "disk")

# Ordinary words for block texts: random words (and digits) keep every block
# distinct, so a swapped or corrupted payload is always detected.
_VOCAB: tuple[str, ...] = (
    "river", "stone", "garden", "window", "signal", "market", "engine", "paper", "orbit",
    "yellow", "silver", "forest", "harbor", "bridge", "candle", "desert", "winter", "summer",
    "planet", "mirror", "letter", "number", "table", "record", "motion", "pocket", "valley",
    "shadow", "thread", "castle", "island", "rocket", "copper", "marble", "folder", "ladder",
    "basket", "button", "camera", "circle", "cotton", "dragon", "family", "farmer", "finger",
    "flower", "friend", "hammer", "jacket", "kitten", "lemon", "medal", "needle", "office",
    "orange", "parrot", "pencil", "pepper", "rabbit", "saddle", "ticket", "tunnel", "wallet",
    "anchor", "beacon", "clover", "meadow", "velvet", "walnut", "pillow", "lantern", "compass",
)

_MEMO_MAX = 1 << 20


class MemoTokenizer:
    """The engine's tokenizer with a memo of the texts it has counted.

    Trials re-register the same calibrated texts and re-render the same
    handles and ledger rows, so after the first trial almost every count is a
    dictionary look-up. The counts (and ``name``, which enters the engine's
    canonical hash) are exactly the wrapped tokenizer's.
    """

    def __init__(self, base: Tokenizer) -> None:
        self.base = base
        self.name: str = base.name
        self.additive: bool = bool(base.additive)
        self._count = base.count
        self._memo: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self._memo.get(text)
        if n is None:
            if len(self._memo) >= _MEMO_MAX:
                self._memo.clear()
            n = self._memo[text] = self._count(text)
        return n

    def __repr__(self) -> str:
        return f"MemoTokenizer({self.base!r})"


def tokenizer_iv(name: Any) -> MemoTokenizer:
    """An engine tokenizer by registry name, wrapped in a memo."""
    if not isinstance(name, str) or name not in ENGINE_TOKENIZERS:
        from vistalab.theory import UnknownNameError

        raise UnknownNameError("tokenizer", str(name), ENGINE_TOKENIZERS)
    return MemoTokenizer(workspace.get_tokenizer(name))


#: Longest payload root accepted (PATH_MAX): the root is part of every handle.
MAX_STORE_ROOT = 4096


def store_root_iv(store_root: Any) -> str:
    """A payload root that handles can show: a str of at most MAX_STORE_ROOT
    characters, without a trailing slash, whitespace or control characters
    (checked before any character is scanned, so a 5 MB string costs nothing)."""
    if (not isinstance(store_root, str) or not store_root.strip()
            or len(store_root) > MAX_STORE_ROOT or store_root.endswith("/")
            or any(ch.isspace() or not ch.isprintable() for ch in store_root)):
        raise DomainError("store_root", store_root, "must be a payload root without a "
                          "trailing slash, whitespace or control characters, of at most "
                          f"{MAX_STORE_ROOT} characters",
                          "pass a store's .root, e.g. DiskStore('archive').root")
    return store_root


@dataclass
class StoreSpec:
    """Where a run's payloads go: a fresh in-memory store per trial, or one
    payload folder for the whole run (each trial's workspace only reads the
    payloads it wrote itself: the engine refuses any other key). A trial on
    disk removes its payloads when it ends: the engine never overwrites a
    payload file it did not write, and the next trial reuses the IDs.

    A temporary folder the run created is removed by :meth:`close`, on leaving
    a ``with`` block, or at the latest when the spec is garbage-collected or
    the interpreter exits (``weakref.finalize``), so an interrupted run leaves
    nothing behind.

    Attributes
    ----------
    kind : {"memory", "disk"}
    root : str
        Display root of payload paths (part of every handle, hence of the
        token calibration).
    directory : Path or None
        The payload folder (disk only).
    owned : bool
        True if the folder is a temporary one this run created and removes.
    """

    kind: str
    root: str
    directory: Path | None = None
    owned: bool = False
    _disk: DiskStore | None = None
    _cleanup: Any = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.owned and self.directory is not None:
            self._cleanup = weakref.finalize(self, shutil.rmtree, str(self.directory),
                                             ignore_errors=True)

    def new(self) -> PayloadStore:
        """The store one trial's workspace writes to."""
        if self.kind == "memory":
            return MemoryStore(self.root)
        assert self._disk is not None
        return self._disk

    def close(self) -> None:
        """Remove the payload folder if this run created it (idempotent)."""
        if self._cleanup is not None:
            self._cleanup()

    def __enter__(self) -> StoreSpec:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def remove_trial_payloads(ws: Any) -> None:
    """Delete the payloads a finished trial's workspace still holds (its live
    archived blocks and groups), so the next trial on the same folder can use
    the same IDs: the engine never overwrites a payload it did not write."""
    store = ws.store
    keys = {b.payload.key for b in ws.blocks if b.payload is not None}
    keys |= {g.payload.key for g in ws.groups.values()}
    for key in sorted(keys):
        store.delete(key)


def store_iv(store: Any, store_dir: Any = None) -> StoreSpec:
    """Validate ``store`` (``"memory"`` or ``"disk"``) and set it up.

    ``store_dir`` (disk only) is the payload folder; by default a temporary
    folder is created and removed when the run ends (use the spec as a context
    manager, or call ``close``).
    """
    if not isinstance(store, str) or store not in ENGINE_STORES:
        from vistalab.theory import UnknownNameError

        raise UnknownNameError("payload store", str(store), ENGINE_STORES)
    if store == "memory":
        if store_dir is not None:
            raise DomainError("store_dir", store_dir, "is only used with store='disk'",
                              "drop store_dir or pass store='disk'")
        return StoreSpec("memory", "mem://archive")
    if store_dir is None:
        directory = Path(tempfile.mkdtemp(prefix="vista-engine-"))
        try:
            disk = DiskStore(directory)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        return StoreSpec("disk", disk.root, disk.directory, True, disk)
    if not isinstance(store_dir, (str, Path)) or not str(store_dir).strip():
        raise DomainError("store_dir", store_dir, "must be a folder path",
                          "pass a writable folder, e.g. store_dir='archive'")
    from vistalab._core._paths import output_dir

    # a file, FIFO or device where the folder should be, /proc, an unwritable parent:
    # refused here with the fix, not as a raw OSError from the store
    store_dir = output_dir("store_dir", store_dir)
    disk = DiskStore(store_dir)
    return StoreSpec("disk", disk.root, disk.directory, False, disk)


def random_words(gen: np.random.Generator, count: int) -> list[str]:
    """``count`` words drawn uniformly from a fixed vocabulary."""
    idx = gen.integers(len(_VOCAB), size=max(0, count))
    return [_VOCAB[i] for i in idx]


def _digits(gen: np.random.Generator, count: int) -> str:
    return "".join(str(d) for d in gen.integers(10, size=count))


def fit_text(
    header: str,
    target_net: int,
    measure: Callable[[str], tuple[int, int]],
    gen: np.random.Generator,
    *,
    handle_tokens: int | None = None,
    start_words: list[str] | None = None,
    max_evals: int = 3000,
) -> tuple[str, int, int, int]:
    """Search a text ``header + words + digits`` whose net archive size is exact.

    ``measure(text)`` returns ``(prompt tokens of the block, prompt tokens of
    the handle that would replace it)``. The handle shows the text's byte size
    and sha256, whose tokenisation varies, so it cannot be predicted, only
    measured. The search runs in two phases:

    1. move the block's own size to ``target_net + H`` (words in coarse
       steps, a trailing digit run in steps of about one token), where ``H``
       is ``handle_tokens`` or, if None, the handle size first measured;
    2. re-draw the digits at constant length, which changes the checksum and
       nothing else a tokenizer sees the length of (cl100k splits digit runs
       in groups of three whatever their values; the byte count is fixed),
       until the handle costs exactly ``H``.

    Returns
    -------
    (text, block_tokens, handle_tokens, evaluations)

    Raises
    ------
    DomainError
        If no text is found within ``max_evals`` measurements.
    """
    words = list(start_words) if start_words else random_words(gen, max(1, target_net))
    digits = _digits(gen, 6)
    want = handle_tokens
    evals = 0
    redraws = 0

    def compose() -> str:
        return " ".join([header, *words, digits])

    while evals < max_evals:
        evals += 1
        text = compose()
        gross, handle = measure(text)
        if want is None:
            want = handle
        miss = target_net + want - gross
        if miss == 0:
            if handle == want:
                return text, gross, handle, evals
            redraws += 1
            if redraws % 12:
                digits = _digits(gen, len(digits))  # phase 2: checksum only
            else:
                # The handle's size field, not its checksum, is off (e.g. the byte size
                # sits at a power of ten): move the length and go back to phase 1.
                words[-1] = random_words(gen, 1)[0]
                digits = _digits(gen, 6 + redraws // 12 % 3)
            continue
        # Phase 1: the block's own size.
        if miss >= 3:
            words.extend(random_words(gen, max(1, (2 * miss) // 3)))
        elif miss <= -3 and len(words) > 1:
            del words[-min(len(words) - 1, max(1, (-2 * miss) // 3)):]
        elif miss > 0:
            digits += _digits(gen, 3)
        elif len(digits) > 3:
            digits = digits[:-3] if len(digits) >= 6 else digits[:3]
        elif len(words) > 1:
            words.pop()
            digits = _digits(gen, 6)
        else:
            raise DomainError("target_net", target_net, "must leave room for a text larger "
                              "than its own archive handle", "raise the block size")
    raise DomainError("target_net", target_net, "could not be reached by the text search",
                      "try another block size or seed",
                      context=f"header={header!r}, handle_tokens={handle_tokens}")
