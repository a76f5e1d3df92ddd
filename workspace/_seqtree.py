"""A segment tree over block positions with prefix-sum search, so the budget
guard and the overflow rendering find "the first positions whose running total
reaches X" in O(log n) instead of walking every block ever registered."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator
from itertools import accumulate

__all__ = ["PrefixTree", "add_sorted"]

#: "No non-empty position" in the running-total column: below any sum of real
#: values (token counts and their differences, far under 2**60 in magnitude),
#: so it compares as minus infinity and a sum with it stays in an int64. An
#: empty position holds it too.
_NEG = -(1 << 62)

#: Positions per bucket, the tree's leaves: ``1 << _SHIFT``. A bucket is
#: searched by a scan of its values, so the tree keeps three cells per bucket,
#: not three per position.
_SHIFT = 4
_BUCKET = 1 << _SHIFT


def _column(code: str, n: int, fill: int = 0) -> array[int]:
    """A flat machine-integer column of ``n`` cells, all ``fill`` (8 or 4 bytes
    a cell and no int object, where a list holds a pointer and often an int)."""
    return array(code, [fill]) * n


#: Updates held before the nodes above them are brought up to date (see
#: :meth:`PrefixTree.set`): a bounded list, flushed in one pass.
_DIRTY_MAX = 256


def add_sorted(items: list[int], x: int) -> None:
    """Insert ``x`` into the ascending list ``items`` unless it is there
    (O(1) when ``x`` is past the end, the common case of a newest chunk;
    else a bisection and a memmove)."""
    if not items or items[-1] < x:
        items.append(x)
    elif items[-1] != x:
        k = bisect.bisect_left(items, x)
        if items[k] != x:
            items.insert(k, x)


def _total(vals: array[int]) -> int:
    """The sum of the non-empty values in ``vals`` (in C: each empty one
    added as ``_NEG`` is taken out again)."""
    return sum(vals) - vals.count(_NEG) * _NEG


def _scan(vals: array[int]) -> tuple[int, int]:
    """The sum of the non-empty values in ``vals`` and the largest running
    total at a non-empty one (``_NEG`` when every one is empty)."""
    empty = vals.count(_NEG)  # the counts and sums run in C
    if not empty:
        return sum(vals), max(accumulate(vals), default=_NEG)
    if empty == len(vals):
        return 0, _NEG
    acc, best = 0, _NEG
    for x in vals:
        if x != _NEG:
            acc += x
            if acc > best:
                best = acc
    return acc, best


class PrefixTree:
    """Values at positions ``0 .. n-1``; a position may be *empty* (no value).

    The values sit in one flat column (an empty position holds ``_NEG``), in
    buckets of ``_BUCKET`` consecutive positions. Over the buckets, each node
    of a binary tree keeps the sum of its values and the largest running
    total over a leading run of its non-empty positions, in two flat integer
    arrays (leaves: the buckets). That total is exactly ``_NEG`` when the
    node has no non-empty position (``max(_NEG, 0 + _NEG)`` stays ``_NEG``)
    and a real total otherwise, so it also says which nodes are empty.
    Updates and searches cost O(log n) plus a scan of one or two buckets at
    the ends; appends are amortised O(1) plus O(log n).

    An update writes its value at once and its bucket and the nodes above it
    when the tree is next searched (or after ``_DIRTY_MAX`` updates), all
    pending updates in one pass level by level: a turn registers blocks (an
    update each) and usually searches nothing, so it walks no path to the
    root.
    """

    __slots__ = ("_cap", "_v", "_s", "_b", "_dirty")

    def __init__(self) -> None:
        self._cap = 1  # leaves (buckets) the tree has room for: a power of two
        self._v = array("q")  # the values, one cell per position
        self._s = _column("q", 2)  # every node's sum, 1 .. 2*cap-1 (cell 0 unused)
        self._b = _column("q", 2, _NEG)  # every node's best leading total
        # buckets written since the nodes above were last made
        self._dirty: list[int] = []

    @property
    def _sum(self) -> array[int]:
        """The nodes' sums, up to date."""
        self._flush()
        return self._s

    @property
    def _best(self) -> array[int]:
        """Every node's best leading total, up to date."""
        self._flush()
        return self._b

    def __len__(self) -> int:
        return len(self._v)

    def copy(self) -> PrefixTree:
        self._flush()
        new = PrefixTree.__new__(PrefixTree)
        new._cap = self._cap
        new._v, new._s, new._b = self._v[:], self._s[:], self._b[:]
        new._dirty = []
        return new

    def append(self, value: int | None = None) -> None:
        """Add position ``n`` (empty when ``value`` is None)."""
        v = self._v
        if len(v) == self._cap << _SHIFT:
            self._grow()
        v.append(_NEG)
        if value is not None:
            self.set(len(v) - 1, value)

    def _grow(self) -> None:
        """Double the capacity; every node is rebuilt from the values (which
        every update writes at once), so no update stays pending."""
        cap = self._cap * 2
        s, b, v = _column("q", 2 * cap), _column("q", 2 * cap, _NEG), self._v
        for j in range((len(v) + _BUCKET - 1) >> _SHIFT):
            s[cap + j], b[cap + j] = _scan(v[j << _SHIFT : (j + 1) << _SHIFT])
        for i in range(cap - 1, 0, -1):
            l, r = 2 * i, 2 * i + 1
            s[i] = s[l] + s[r]
            b[i] = max(b[l], s[l] + b[r])
        self._cap, self._s, self._b = cap, s, b
        self._dirty.clear()

    def set(self, i: int, value: int | None) -> None:
        """Give position ``i`` this value, or make it empty (None)."""
        vals = self._v
        v = _NEG if value is None else value  # no value is _NEG
        if vals[i] == v:
            return
        vals[i] = v
        dirty = self._dirty
        dirty.append(i >> _SHIFT)
        if len(dirty) > _DIRTY_MAX:
            self._flush()

    def set_many(self, items: list[tuple[int, int | None]]) -> None:
        """:meth:`set` for many positions at once: the values first, then each
        bucket and node above them once, level by level, so ``k`` positions in
        one run cost O(k + log n) instead of O(k log n) (an archive of a long
        range)."""
        vals = self._v
        dirty = self._dirty
        for i, value in items:
            vals[i] = _NEG if value is None else value
            dirty.append(i >> _SHIFT)
        self._flush()

    def _flush(self) -> None:
        """Bring the buckets written since the last flush and the nodes above
        them up to date: each such node once, level by level."""
        dirty = self._dirty
        if not dirty:
            return
        s, b, v, cap = self._s, self._b, self._v, self._cap
        if len(dirty) == 1 or min(dirty) == max(dirty):  # one bucket: its path
            j = dirty[0]
            dirty.clear()
            k = cap + j
            s[k], b[k] = _scan(v[j << _SHIFT : (j + 1) << _SHIFT])
            k >>= 1
            while k:
                l, r = 2 * k, 2 * k + 1
                s[k] = s[l] + s[r]
                b[k] = max(b[l], s[l] + b[r])
                k >>= 1
            return
        nodes = set(dirty)
        dirty.clear()
        up: set[int] = set()
        for j in nodes:
            k = cap + j
            s[k], b[k] = _scan(v[j << _SHIFT : (j + 1) << _SHIFT])
            up.add(k >> 1)
        nodes = up
        while nodes and 0 not in nodes:
            up = set()
            for k in nodes:
                l, r = 2 * k, 2 * k + 1
                s[k] = s[l] + s[r]
                b[k] = max(b[l], s[l] + b[r])
                up.add(k >> 1)
            nodes = up

    def value(self, i: int) -> int | None:
        v = self._v[i]
        return None if v == _NEG else v

    def _cover(self, lo: int, hi: int) -> list[int]:
        """Nodes covering buckets ``[lo, hi)``, left to right."""
        left: list[int] = []
        right: list[int] = []
        lo += self._cap
        hi += self._cap
        while lo < hi:
            if lo & 1:
                left.append(lo)
                lo += 1
            if hi & 1:
                hi -= 1
                right.append(hi)
            lo >>= 1
            hi >>= 1
        return left + right[::-1]

    def _split(self, lo: int, hi: int) -> tuple[int, int, int, int]:
        """``[lo, hi)`` clipped to the positions, as a head of positions
        ``[lo, a)``, whole buckets ``[a >> _SHIFT, z >> _SHIFT)`` and a tail
        ``[z, hi)`` (``a == z`` and an empty tail when no bucket is whole)."""
        lo, hi = max(lo, 0), min(hi, len(self._v))
        a = min(-(-lo >> _SHIFT) << _SHIFT, hi)
        z = max(hi >> _SHIFT << _SHIFT, a)
        return lo, a, z, hi

    def total(self, lo: int, hi: int) -> int:
        """Sum of the values in ``[lo, hi)``."""
        self._flush()
        lo, a, z, hi = self._split(lo, hi)
        if lo >= hi:
            return 0
        v, s = self._v, self._s
        out = _total(v[lo:a]) + _total(v[z:hi])
        return out + sum(s[k] for k in self._cover(a >> _SHIFT, z >> _SHIFT))

    def first_reaching(self, lo: int, hi: int, need: int) -> tuple[int | None, int]:
        """The first non-empty position ``j`` in ``[lo, hi)`` where the running
        total of the values from ``lo`` reaches ``need``, and that total; or
        ``(None, total of the whole range)``."""
        self._flush()
        lo, a, z, hi = self._split(lo, hi)
        v, s, b, cap = self._v, self._s, self._b, self._cap
        j, acc = _reach(v, lo, a, 0, need)
        if j is not None:
            return j, acc
        for k in self._cover(a >> _SHIFT, z >> _SHIFT):
            if acc + b[k] >= need:
                while k < cap:
                    l = 2 * k
                    if acc + b[l] >= need:
                        k = l
                    else:
                        acc += s[l]
                        k = l + 1
                start = (k - cap) << _SHIFT
                j, acc = _reach(v, start, start + _BUCKET, acc, need)
                if j is None:
                    raise AssertionError("a bucket's best total reached, no value of it")
                return j, acc
            acc += s[k]
        return _reach(v, z, hi, acc, need)

    def positions(self, lo: int, hi: int) -> Iterator[int]:
        """The non-empty positions in ``[lo, hi)``, ascending (O(log n) each)."""
        self._flush()
        return self._positions(lo, hi)

    def _positions(self, lo: int, hi: int) -> Iterator[int]:
        lo, a, z, hi = self._split(lo, hi)
        v, b, cap = self._v, self._b, self._cap
        for j in range(lo, a):
            if v[j] != _NEG:
                yield j
        for top in self._cover(a >> _SHIFT, z >> _SHIFT):
            if b[top] == _NEG:
                continue
            stack = [top]
            while stack:
                k = stack.pop()
                if b[k] == _NEG:
                    continue
                if k >= cap:
                    start = (k - cap) << _SHIFT
                    for j in range(start, start + _BUCKET):
                        if v[j] != _NEG:
                            yield j
                else:
                    stack.append(2 * k + 1)
                    stack.append(2 * k)
        for j in range(z, hi):
            if v[j] != _NEG:
                yield j


def _reach(v: array[int], lo: int, hi: int, acc: int, need: int) -> tuple[int | None, int]:
    """The first non-empty position ``j`` in ``[lo, hi)`` of value column ``v``
    where ``acc`` plus the running total of the values from ``lo`` reaches
    ``need``, and that total; or ``(None, acc plus the range's total)``."""
    for j in range(lo, hi):
        x = v[j]
        if x != _NEG:
            acc += x
            if acc >= need:
                return j, acc
    return None, acc
