"""SortedBlocks against a plain sorted list: the same entries in the same order after any moves."""

from __future__ import annotations

from bisect import bisect_left, insort

from hypothesis import given, settings
from hypothesis import strategies as st

from core.objects import sorted_blocks
from core.objects.sorted_blocks import SortedBlocks

# (which entry, its new share, taken by the entry itself rather than a key before it)
moves = st.lists(st.tuples(st.integers(0, 60), st.integers(0, 50), st.booleans()), max_size=400)


@settings(max_examples=60, deadline=None)
@given(st.sets(st.integers(0, 600), max_size=700), moves, st.sampled_from([2, 5, 256]))
def test_moves_keep_the_order_a_sorted_list_keeps(
    names: set[int], steps: list[tuple[int, int, bool]], block: int
) -> None:
    default, sorted_blocks.BLOCK = sorted_blocks.BLOCK, block  # small blocks split and empty often
    try:
        _moves(names, steps)
    finally:
        sorted_blocks.BLOCK = default


def _moves(names: set[int], steps: list[tuple[int, int, bool]]) -> None:
    reference = sorted((0, name) for name in names)
    blocks = SortedBlocks(reference)
    for pick, share, by_entry in steps:
        if not reference:
            break
        old = reference[pick % len(reference)]
        # the entry itself, as a parent passes its child's (pick 0: the one in front), or a
        # prefix, which sorts before every entry of that share
        key = old if by_entry else (old[0],)
        expected = reference[bisect_left(reference, key)]
        del reference[bisect_left(reference, key)]
        assert blocks.remove_at(key) == expected
        new = (share, expected[1])  # behind every entry when its share is the largest
        insort(reference, new)
        blocks.add(new)
        assert len(blocks) == len(reference)
    assert list(blocks) == reference


def test_removing_past_the_last_entry_finds_nothing_and_an_emptied_list_takes_entries_again() -> None:
    blocks = SortedBlocks([(1, "a"), (2, "b")])
    assert blocks.remove_at((3,)) is None
    assert blocks.remove_at((1,)) == (1, "a")
    assert blocks.remove_at((0,)) == (2, "b")
    assert len(blocks) == 0 and list(blocks) == []
    blocks.add((5, "c"))
    assert list(blocks) == [(5, "c")]
