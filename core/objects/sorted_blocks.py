"""A sorted list kept in blocks, so moving one entry of a long list does not shift all of it.

A parent keeps its children in fair order across decisions and moves the one whose share
changed (objects/queue.py). With thousands of children, deleting and inserting in one Python
list moves every pointer behind the spot twice: at 10,000 children that was most of the move.
Here entries live in blocks of at most `2 * BLOCK` and a list of each block's first entry
finds the block by bisection; a move shifts one block only. Entries are tuples compared as
they are; `remove_at` takes a key that sorts just before its entry (a prefix of the tuple).
A parent with a few hundred children or fewer keeps a plain list (queue.py): for it one
shift is cheaper than the blocks' bookkeeping.

Under fair sharing the child a walk just served is usually the entry in front, and its grown
share usually puts it behind every other: those two cases skip both bisections.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import Any

BLOCK = 256  # entries per block (up to twice as many before it splits)


class SortedBlocks:
    __slots__ = ("_blocks", "_firsts", "_size")

    def __init__(self, ordered: Iterable[tuple[Any, ...]]) -> None:
        """From entries already in order."""
        entries = list(ordered)
        self._blocks: list[list[tuple[Any, ...]]] = [entries[at : at + BLOCK] for at in range(0, len(entries), BLOCK)]
        self._firsts: list[tuple[Any, ...]] = [block[0] for block in self._blocks]
        self._size = len(entries)

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        return chain.from_iterable(self._blocks)

    def remove_at(self, key: tuple[Any, ...]) -> tuple[Any, ...] | None:
        """Take out and return the first entry at or after `key`, None when there is none."""
        blocks = self._blocks
        if blocks and blocks[0][0] is key:  # the entry in front: the one a walk just served
            return self._take(0, 0)
        number = bisect_right(self._firsts, key) - 1
        at = 0
        if number < 0:
            number = 0
        else:
            at = bisect_left(blocks[number], key)
            if at == len(blocks[number]):  # it opens the next block, if any
                number, at = number + 1, 0
        if number >= len(blocks):
            return None
        return self._take(number, at)

    def _take(self, number: int, at: int) -> tuple[Any, ...]:
        blocks = self._blocks
        block = blocks[number]
        entry = block.pop(at)
        self._size -= 1
        if not block:
            del blocks[number], self._firsts[number]
        elif at == 0:
            self._firsts[number] = block[0]
        return entry

    def add(self, entry: tuple[Any, ...]) -> None:
        if not self._blocks:
            self._blocks.append([entry])
            self._firsts.append(entry)
            self._size = 1
            return
        last = self._blocks[-1]
        if entry > last[-1]:  # behind every entry: where a child just served usually goes
            number, block = len(self._blocks) - 1, last
            block.append(entry)
        else:
            number = max(bisect_right(self._firsts, entry) - 1, 0)
            block = self._blocks[number]
            insort(block, entry)
        self._size += 1
        self._firsts[number] = block[0]
        if len(block) > 2 * BLOCK:
            self._blocks[number : number + 1] = [block[:BLOCK], block[BLOCK:]]
            self._firsts[number : number + 1] = [block[0], block[BLOCK]]
