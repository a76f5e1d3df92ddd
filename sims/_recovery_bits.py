"""Packed-bit helpers of the recovery Monte Carlo: random k-bit blocks as bytes (most
significant bit first), and fields and bit ranges packed into and read from a state."""

from __future__ import annotations

import numpy as np

__all__: list[str] = []


# ---------------------------------------------------------------------------
# Bit helpers
# ---------------------------------------------------------------------------


def _kbytes(k: int) -> int:
    return (k + 7) // 8


def _tail_mask(k: int) -> int:
    """Mask of the used bits of the last byte of a k-bit block."""
    r = k % 8
    return 0xFF if r == 0 else (0xFF << (8 - r)) & 0xFF


def _random_blocks(gen: np.random.Generator, shape: tuple[int, ...], k: int) -> np.ndarray:
    """Uniform k-bit blocks, packed; one raw 64-bit draw per 8 bytes."""
    kb = _kbytes(k)
    words = (kb + 7) // 8
    raw = gen.bit_generator.random_raw(int(np.prod(shape)) * words)
    out = np.asarray(raw, dtype=np.uint64).view(np.uint8).reshape(*shape, words * 8)[..., :kb]
    out = np.ascontiguousarray(out)
    out[..., -1] &= np.uint8(_tail_mask(k))
    return out


def _random_guess(rng: np.random.Generator, trials: int, k: int) -> np.ndarray:
    return _random_blocks(rng, (trials,), k)


def _prefix(blocks: np.ndarray, bits: int) -> np.ndarray:
    """The first ``bits`` bits of each packed block, packed (zero tail)."""
    nb = _kbytes(bits)
    out = np.ascontiguousarray(blocks[..., :nb])
    if nb:
        out[..., -1] &= np.uint8(_tail_mask(bits))
    return out


def _pack_fields(fields: np.ndarray, width: int) -> np.ndarray:
    """Concatenate F packed ``width``-bit fields per row, (T, F, ceil(width/8))
    -> (T, ceil(F*width/8)), without padding between fields."""
    trials = fields.shape[0]
    if width % 8 == 0:
        return fields.reshape(trials, -1).copy()
    bits = np.unpackbits(fields, axis=2, count=width)
    return np.packbits(bits.reshape(trials, -1), axis=1)


def _read_field(state: np.ndarray, index: np.ndarray, width: int) -> np.ndarray:
    """Field ``index[t]`` (``width`` bits at bit offset ``index*width``) of
    each row of a packed state, as packed bytes (T, ceil(width/8))."""
    return _read_bits(state, index.astype(np.int64) * width, width)


def _read_bits(state: np.ndarray, start_bit: np.ndarray, nbits: int) -> np.ndarray:
    """``nbits`` bits of row t of a packed state from bit ``start_bit[t]`` on,
    packed (T, ceil(nbits/8)) with a zero tail.

    Byte arithmetic on a window of ceil(nbits/8)+1 bytes per row (each output
    byte is two neighbouring state bytes shifted by the row's bit offset),
    never unpacking to one byte per bit.
    """
    trials = start_bit.shape[0]
    nb = _kbytes(nbits)
    first = start_bit // 8
    shift = (start_bit % 8).astype(np.uint16)[:, None]
    padded = np.concatenate([state, np.zeros((trials, nb + 1), dtype=np.uint8)], axis=1)
    window = padded[np.arange(trials)[:, None], first[:, None] + np.arange(nb + 1)]
    pair = (window[:, :-1].astype(np.uint16) << 8) | window[:, 1:]
    out = ((pair << shift) >> 8).astype(np.uint8)
    if nb:
        out[:, -1] &= np.uint8(_tail_mask(nbits))
    return out


def _or_bits(out: np.ndarray, src: np.ndarray, offset: int) -> None:
    """OR the packed rows ``src`` (T, nb), zero tail, into ``out`` (T, M) from
    bit ``offset`` on. Bits of ``src`` that would land past byte M must be zero
    (the caller sizes ``out`` for the bits it places)."""
    q, r = divmod(offset, 8)
    room = out.shape[1] - q
    if r == 0:
        width = min(src.shape[1], room)
        out[:, q:q + width] |= src[:, :width]
        return
    width = min(src.shape[1], room)
    out[:, q:q + width] |= src[:, :width] >> np.uint8(r)
    spill = min(src.shape[1], room - 1)
    if spill > 0:
        out[:, q + 1:q + 1 + spill] |= src[:, :spill] << np.uint8(8 - r)


def _pack_index(values: np.ndarray, bits: int) -> np.ndarray:
    """Non-negative integers < 2**bits (bits <= 64) as packed ``bits``-bit
    fields, most significant bit first, shape (..., ceil(bits/8))."""
    wide = values.astype(np.uint64) << np.uint64(64 - bits)
    return wide.astype(">u8").view(np.uint8).reshape(*values.shape, 8)[..., :_kbytes(bits)]


# Up to this many fields a state is assembled by byte shifts, one field at a
# time; beyond it by unpacking to bits (fewer Python-level steps).
_SHIFT_PACK_FIELDS = 512
