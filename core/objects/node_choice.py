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
ties go to the lower column, so nodes compare by the key `(-rank, column)`, smallest first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

REMEMBERED = 16  # fitting nodes kept per shape
_EVERYTHING: tuple[float, int] = (math.inf, 0)  # floor of a list that holds every fitting node

Needs = tuple[tuple[int, int], ...]  # (resource row, amount) for each resource asked


@dataclass(slots=True)
class Choice:
    seen: int  # how much of the change log had been read
    needs: Needs
    mask: npt.NDArray[np.bool_]  # nodes the shape's constraints allow
    best: list[tuple[float, int]]  # fitting nodes as (-rank, column), best first
    floor: tuple[float, int]  # every node not in `best` and not changed since has a larger key

    def first(self) -> int:
        """The chosen column, -1 when no node fits."""
        return self.best[0][1] if self.best else -1


def choose(
    avail: npt.NDArray[np.int64],
    rank: npt.NDArray[np.float64],
    mask: npt.NDArray[np.bool_],
    needs: Needs,
    seen: int,
) -> Choice:
    """A full pass over every column."""
    fit = mask
    for row, amount in needs:
        fit = fit & (avail[row] >= amount)
    fitting = np.flatnonzero(fit)
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
    best = [entry for entry in choice.best if entry[1] not in changed]
    floor = choice.floor
    mask, needs = choice.mask, choice.needs
    for pos in changed:
        if not mask[pos]:
            continue
        for row, amount in needs:
            if avail.item(row, pos) < amount:
                break
        else:
            key = (-rank.item(pos), pos)
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
