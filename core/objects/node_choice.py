"""Remembered node choices: the best few nodes for a pod shape, kept true as nodes change.

Placing a pod changes one node, so between two pods of the same shape (request and node
constraints) only a handful of nodes have changed. A full pass ranks every node; this module
keeps the best `REMEMBERED` fitting nodes of that pass, in order, together with a *floor*:
every node not remembered ranks below it. When the shape comes again, only the nodes changed
since are looked at again: they leave the remembered list and come back if they still fit and
rank above the floor. The first remembered node is then exactly the node a full pass would
choose, since every other node either was not changed (and stays below the floor, or is
remembered with its rank) or was just looked at. When the list runs dry above the floor, or
too many nodes changed, only a full pass can tell, and the caller makes one.

A node's rank is a number where higher is better (the node index turns its policy into it);
ties go to the lower column, so nodes compare by the key `(-rank, column)`, smallest first. A
shape whose ties go another way (a pod tolerating some PreferNoSchedule taints: the node index
orders columns for pods tolerating none) carries a `TieOrder`, and its nodes compare by
`(-rank, place)` instead, a place being the column's rank in the shape's own order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

REMEMBERED = 16  # fitting nodes kept per shape
_EVERYTHING: tuple[float, int] = (math.inf, 0)  # floor of a list that holds every fitting node

Needs = tuple[tuple[int, int], ...]  # (resource row, amount) for each resource asked


@dataclass(frozen=True, slots=True)
class TieOrder:
    """An order of all columns for breaking ties: `place[column]` is the column's place in it,
    `column[place]` the column at that place."""

    place: npt.NDArray[np.int64]
    column: npt.NDArray[np.int64]


@dataclass(slots=True)
class Choice:
    seen: int  # how much of the change log had been read
    needs: Needs
    mask: npt.NDArray[np.bool_]  # nodes the shape's constraints allow
    best: list[tuple[float, int]]  # fitting nodes as (-rank, column or place), best first
    floor: tuple[float, int]  # every node not in `best` and not changed since has a larger key
    ties: TieOrder | None = None  # None: ties go to the lower column

    def first(self) -> int:
        """The chosen column, -1 when no node fits."""
        if not self.best:
            return -1
        tie = self.best[0][1]
        return tie if self.ties is None else int(self.ties.column[tie])


def choose(
    avail: npt.NDArray[np.int64],
    rank: npt.NDArray[np.float64],
    mask: npt.NDArray[np.bool_],
    needs: Needs,
    seen: int,
    ties: TieOrder | None = None,
) -> Choice:
    """A full pass over every column."""
    fit = mask
    for row, amount in needs:
        fit = fit & (avail[row] >= amount)
    fitting = np.flatnonzero(fit)
    if ties is not None:
        return _choose_with_ties(rank, mask, needs, seen, fitting, ties)
    if len(fitting) <= REMEMBERED:
        top = fitting
        floor = _EVERYTHING
    else:
        ranks = rank[fitting]
        # The REMEMBERED-th best rank; above it everything is kept, at it the lowest columns.
        cut = np.partition(ranks, len(ranks) - REMEMBERED)[len(ranks) - REMEMBERED]
        above = fitting[ranks > cut]
        tied = fitting[ranks == cut][: REMEMBERED - len(above)]
        top = np.concatenate((above, tied))
        floor = (-float(cut), int(tied[-1]))
    best = sorted((-float(rank[pos]), int(pos)) for pos in top)
    return Choice(seen, needs, mask, best, floor)


def _choose_with_ties(
    rank: npt.NDArray[np.float64],
    mask: npt.NDArray[np.bool_],
    needs: Needs,
    seen: int,
    fitting: npt.NDArray[np.intp],
    ties: TieOrder,
) -> Choice:
    """`choose` for a shape with its own tie order: as there, with places for columns."""
    places = ties.place[fitting]
    if len(fitting) <= REMEMBERED:
        top = np.arange(len(fitting))
        floor = _EVERYTHING
    else:
        ranks = rank[fitting]
        cut = np.partition(ranks, len(ranks) - REMEMBERED)[len(ranks) - REMEMBERED]
        above = np.flatnonzero(ranks > cut)
        tied = np.flatnonzero(ranks == cut)
        tied = tied[np.argsort(places[tied], kind="stable")][: REMEMBERED - len(above)]
        top = np.concatenate((above, tied))
        floor = (-float(cut), int(places[tied[-1]]))
    best = sorted((-float(rank[fitting[i]]), int(places[i])) for i in top)
    return Choice(seen, needs, mask, best, floor, ties)


def confirm(
    choice: Choice,
    avail: npt.NDArray[np.int64],
    rank: npt.NDArray[np.float64],
    log: list[int],
    limit: int,
) -> int | None:
    """The choice after the columns changed since it was read, or None when a full pass must
    decide (the list ran dry above the floor, or more than `limit` changes to read)."""
    if choice.seen == len(log):
        return choice.first()
    if len(log) - choice.seen > limit:
        return None
    changed = set(log[choice.seen :])
    ties = choice.ties
    if ties is None:
        best = [entry for entry in choice.best if entry[1] not in changed]
    else:
        moved = {ties.place.item(pos) for pos in changed}
        best = [entry for entry in choice.best if entry[1] not in moved]
    floor = choice.floor
    mask, needs = choice.mask, choice.needs
    for pos in changed:
        if not mask[pos]:
            continue
        for row, amount in needs:
            if avail.item(row, pos) < amount:
                break
        else:
            key = (-rank.item(pos), pos if ties is None else ties.place.item(pos))
            if key <= floor:
                best.append(key)
    if not best and floor is not _EVERYTHING:
        return None
    best.sort()
    if len(best) > REMEMBERED:
        del best[REMEMBERED:]
        floor = best[-1]  # what was cut ranks below the new last one
    choice.best, choice.floor, choice.seen = best, floor, len(log)
    return choice.first()
