"""A segment tree over block positions with prefix-sum search, so the budget
guard and the overflow rendering find "the first positions whose running total
reaches X" in O(log n) instead of walking every block ever registered."""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterator

__all__ = ["PrefixTree", "add_sorted"]

#: "No non-empty position" in the running-total column: below any sum of real
#: values (token counts and their differences, far under 2**60 in magnitude),
#: so it compares as minus infinity and a sum with it stays in an int64.
_NEG = -(1 << 62)


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

class PrefixTree:
    """Values at positions ``0 .. n-1``; a position may be *empty* (no value).

    Each node keeps the largest running total over a leading run of its
    non-empty positions, and each inner node the sum of its values, in two
    flat integer arrays. That total is exactly ``_NEG`` when the node has no
    non-empty position (an empty leaf holds ``_NEG``, and ``max(_NEG, 0 +
    _NEG)`` stays ``_NEG``) and a real total otherwise, so it also says which
    nodes are empty; a leaf's total is its value, which is also its sum (0
    when empty), so leaves keep no sum cell. Updates and searches cost
    O(log n); appends are amortised O(1) plus O(log n).

    An update writes its leaf at once and the nodes above it when the tree is
    next searched (or after ``_DIRTY_MAX`` updates), all pending updates in
    one pass level by level: a turn registers blocks (an update each) and
    usually searches nothing, so it walks no path to the root.
    """

    __slots__ = ("_cap", "_s", "_b", "_n", "_dirty")

    def __init__(self) -> None:
        self._cap = 1
        self._n = 0
        self._s = _column("q", 1)  # inner nodes 1 .. cap-1 (cell 0 unused)
        self._b = _column("q", 2, _NEG)  # every node 1 .. 2*cap-1
        # parents of the leaves written since the nodes above were last made
        self._dirty: list[int] = []

    @property
    def _sum(self) -> array[int]:
        """The inner nodes' sums, up to date."""
        self._flush()
        return self._s

    @property
    def _best(self) -> array[int]:
        """Every node's best leading total, up to date."""
        self._flush()
        return self._b

    def __len__(self) -> int:
        return self._n

    def copy(self) -> PrefixTree:
        self._flush()
        new = PrefixTree.__new__(PrefixTree)
        new._cap, new._n = self._cap, self._n
        new._s, new._b = self._s[:], self._b[:]
        new._dirty = []
        return new

    def _node_sum(self, k: int) -> int:
        if k < self._cap:
            return self._s[k]
        v = self._b[k]
        return 0 if v == _NEG else v

    def append(self, value: int | None = None) -> None:
        """Add position ``n`` (empty when ``value`` is None)."""
        if self._n == self._cap:
            self._grow()
        self._n += 1
        if value is not None:
            self.set(self._n - 1, value)

    def _grow(self) -> None:
        """Double the capacity; every inner node is rebuilt from the leaves
        (which every update writes at once), so no update stays pending."""
        old = self._cap
        cap = old * 2
        s, b = _column("q", cap), _column("q", 2 * cap, _NEG)
        b[cap : cap + old] = self._b[old : 2 * old]
        for i in range(cap - 1, cap // 2 - 1, -1):  # the leaves' parents
            bl, br = b[2 * i], b[2 * i + 1]
            sl = 0 if bl == _NEG else bl
            s[i] = sl + (0 if br == _NEG else br)
            b[i] = max(bl, sl + br)
        for i in range(cap // 2 - 1, 0, -1):
            l, r = 2 * i, 2 * i + 1
            s[i] = s[l] + s[r]
            b[i] = max(b[l], s[l] + b[r])
        self._cap, self._s, self._b = cap, s, b
        self._dirty.clear()

    def set(self, i: int, value: int | None) -> None:
        """Give position ``i`` this value, or make it empty (None)."""
        b = self._b
        k = i + self._cap
        v = _NEG if value is None else value  # no value is _NEG
        if b[k] == v:
            return
        b[k] = v
        dirty = self._dirty
        dirty.append(k >> 1)
        if len(dirty) > _DIRTY_MAX:
            self._flush()

    def set_many(self, items: list[tuple[int, int | None]]) -> None:
        """:meth:`set` for many positions at once: the leaves first, then each
        node above them once, level by level, so ``k`` positions in one run
        cost O(k + log n) instead of O(k log n) (an archive of a long range)."""
        b = self._b
        cap = self._cap
        dirty = self._dirty
        for i, value in items:
            k = i + cap
            b[k] = _NEG if value is None else value
            dirty.append(k >> 1)
        self._flush()

    def _flush(self) -> None:
        """Bring the nodes above the leaves written since the last flush up
        to date: each such node once, level by level (every pending entry is
        a leaf's parent, so they start on one level)."""
        dirty = self._dirty
        if not dirty:
            return
        s, b = self._s, self._b
        if len(dirty) == 1:
            k = dirty.pop()
            if not k:
                return
            l = 2 * k  # k is a leaf's parent
            bl, br = b[l], b[l + 1]
            sl = 0 if bl == _NEG else bl
            s[k] = sl + (0 if br == _NEG else br)
            b[k] = max(bl, sl + br)
            k >>= 1
            while k:
                l, r = 2 * k, 2 * k + 1
                s[k] = s[l] + s[r]
                b[k] = max(b[l], s[l] + b[r])
                k >>= 1
            return
        nodes = set(dirty)
        dirty.clear()
        if 0 in nodes:  # a one-leaf tree: no inner node
            return
        up: set[int] = set()
        for k in nodes:  # the leaves' parents
            bl, br = b[2 * k], b[2 * k + 1]
            sl = 0 if bl == _NEG else bl
            s[k] = sl + (0 if br == _NEG else br)
            b[k] = max(bl, sl + br)
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
        v = self._b[i + self._cap]
        return None if v == _NEG else v

    def _cover(self, lo: int, hi: int) -> list[int]:
        """Nodes covering positions ``[lo, hi)``, left to right."""
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

    def total(self, lo: int, hi: int) -> int:
        """Sum of the values in ``[lo, hi)``."""
        self._flush()
        node_sum = self._node_sum
        return sum(node_sum(k) for k in self._cover(max(lo, 0), min(hi, self._n)))

    def first_reaching(self, lo: int, hi: int, need: int) -> tuple[int | None, int]:
        """The first non-empty position ``j`` in ``[lo, hi)`` where the running
        total of the values from ``lo`` reaches ``need``, and that total; or
        ``(None, total of the whole range)``."""
        self._flush()
        s, b, cap = self._s, self._b, self._cap
        acc = 0
        for k in self._cover(max(lo, 0), min(hi, self._n)):
            if acc + b[k] >= need:
                while k < cap:
                    l = 2 * k
                    if acc + b[l] >= need:
                        k = l
                    else:
                        acc += s[l] if l < cap else (0 if b[l] == _NEG else b[l])
                        k = l + 1
                return k - cap, acc + (0 if b[k] == _NEG else b[k])  # the leaf's value
            acc += s[k] if k < cap else (0 if b[k] == _NEG else b[k])
        return None, acc

    def positions(self, lo: int, hi: int) -> Iterator[int]:
        """The non-empty positions in ``[lo, hi)``, ascending (O(log n) each)."""
        self._flush()
        return self._positions(lo, hi)

    def _positions(self, lo: int, hi: int) -> Iterator[int]:
        b, cap = self._b, self._cap
        for top in self._cover(max(lo, 0), min(hi, self._n)):
            if b[top] == _NEG:
                continue
            stack = [top]
            while stack:
                k = stack.pop()
                if b[k] == _NEG:
                    continue
                if k >= cap:
                    yield k - cap
                else:
                    stack.append(2 * k + 1)
                    stack.append(2 * k)
