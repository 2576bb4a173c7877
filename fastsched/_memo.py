"""Bounded memos: the one rule by which the simulator keeps pure results it may be asked again."""

from __future__ import annotations

__all__ = ["remember"]


def remember(memo: dict, key, make, keep: int):
    """Return ``memo[key]``, made by ``make()`` and kept if absent; a memo holding ``keep`` entries is emptied first.

    Every entry must be a pure function of its key (never ``None``), so emptying the memo
    only means an answer is made again: a bound at O(1) cost, with no eviction order to keep.

    Examples
    --------
    >>> memo = {}
    >>> remember(memo, "a", lambda: 1, keep=2), remember(memo, "a", lambda: 2, keep=2)
    (1, 1)
    >>> remember(memo, "b", lambda: 3, keep=1), sorted(memo)
    (3, ['b'])
    """
    found = memo.get(key)
    if found is None:
        if len(memo) >= keep:
            memo.clear()
        found = memo[key] = make()
    return found
