"""A segment tree over block positions with prefix-sum search, so the budget
guard and the overflow rendering find "the first positions whose running total
reaches X" in O(log n) instead of walking every block ever registered."""

from __future__ import annotations

from array import array
from collections.abc import Iterator

__all__ = ["PrefixTree"]

#: "No non-empty position" in the running-total column: below any sum of real
#: values (token counts and their differences, far under 2**60 in magnitude),
#: so it compares as minus infinity and a sum with it stays in an int64.
_NEG = -(1 << 62)


def _column(code: str, n: int, fill: int = 0) -> array[int]:
    """A flat machine-integer column of ``n`` cells, all ``fill`` (8 or 4 bytes
    a cell and no int object, where a list holds a pointer and often an int)."""
    return array(code, [fill]) * n


class PrefixTree:
    """Values at positions ``0 .. n-1``; a position may be *empty* (no value).

    Each node keeps the sum of its values and the largest running total over
    a leading run of its non-empty positions, in two flat integer arrays. That
    total is exactly ``_NEG`` when the node has no non-empty position (an
    empty leaf holds 0 and ``_NEG``, and ``max(_NEG, 0 + _NEG)`` stays
    ``_NEG``) and a real total otherwise, so it also says which nodes are
    empty. Updates and searches cost O(log n); appends are amortised O(1) plus
    O(log n).
    """

    __slots__ = ("_cap", "_sum", "_best", "_n")

    def __init__(self) -> None:
        self._cap = 1
        self._n = 0
        self._sum = _column("q", 2)
        self._best = _column("q", 2, _NEG)

    def __len__(self) -> int:
        return self._n

    def copy(self) -> PrefixTree:
        new = PrefixTree.__new__(PrefixTree)
        new._cap, new._n = self._cap, self._n
        new._sum, new._best = self._sum[:], self._best[:]
        return new

    def append(self, value: int | None = None) -> None:
        """Add position ``n`` (empty when ``value`` is None)."""
        if self._n == self._cap:
            self._grow()
        self._n += 1
        if value is not None:
            self.set(self._n - 1, value)

    def _grow(self) -> None:
        old = self._cap
        cap = old * 2
        s, b = _column("q", 2 * cap), _column("q", 2 * cap, _NEG)
        s[cap : cap + old] = self._sum[old : 2 * old]
        b[cap : cap + old] = self._best[old : 2 * old]
        for i in range(cap - 1, 0, -1):
            l, r = 2 * i, 2 * i + 1
            s[i] = s[l] + s[r]
            b[i] = max(b[l], s[l] + b[r])
        self._cap, self._sum, self._best = cap, s, b

    def set(self, i: int, value: int | None) -> None:
        """Give position ``i`` this value, or make it empty (None)."""
        s, b = self._sum, self._best
        k = i + self._cap
        if value is None:
            if b[k] == _NEG:
                return
            s[k], b[k] = 0, _NEG
        else:
            if b[k] != _NEG and s[k] == value:
                return
            s[k], b[k] = value, value
        k >>= 1
        while k:
            l, r = 2 * k, 2 * k + 1
            s[k] = s[l] + s[r]
            b[k] = max(b[l], s[l] + b[r])
            k >>= 1

    def set_many(self, items: list[tuple[int, int | None]]) -> None:
        """:meth:`set` for many positions at once: the leaves first, then each
        node above them once, level by level, so ``k`` positions in one run
        cost O(k + log n) instead of O(k log n) (an archive of a long range)."""
        s, b = self._sum, self._best
        cap = self._cap
        nodes: set[int] = set()
        for i, value in items:
            k = i + cap
            if value is None:
                s[k], b[k] = 0, _NEG
            else:
                s[k], b[k] = value, value
            nodes.add(k >> 1)
        while nodes and 0 not in nodes:
            up: set[int] = set()
            for k in nodes:
                l, r = 2 * k, 2 * k + 1
                s[k] = s[l] + s[r]
                b[k] = max(b[l], s[l] + b[r])
                up.add(k >> 1)
            nodes = up

    def value(self, i: int) -> int | None:
        k = i + self._cap
        return None if self._best[k] == _NEG else self._sum[k]

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
        s = self._sum
        return sum(s[k] for k in self._cover(max(lo, 0), min(hi, self._n)))

    def first_reaching(self, lo: int, hi: int, need: int) -> tuple[int | None, int]:
        """The first non-empty position ``j`` in ``[lo, hi)`` where the running
        total of the values from ``lo`` reaches ``need``, and that total; or
        ``(None, total of the whole range)``."""
        s, b = self._sum, self._best
        acc = 0
        for k in self._cover(max(lo, 0), min(hi, self._n)):
            if acc + b[k] >= need:
                while k < self._cap:
                    l = 2 * k
                    if acc + b[l] >= need:
                        k = l
                    else:
                        acc += s[l]
                        k = l + 1
                return k - self._cap, acc + s[k]
            acc += s[k]
        return None, acc

    def positions(self, lo: int, hi: int) -> Iterator[int]:
        """The non-empty positions in ``[lo, hi)``, ascending (O(log n) each)."""
        b, cap = self._best, self._cap
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
