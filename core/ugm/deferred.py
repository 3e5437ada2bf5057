"""One application's deferred usage operations on one queue path, kept until the next flush.

The operations stay in order; one is merged into the one before it when both move usage the
same way for the same user and the earlier one kept the application running (an application
is removed by its last decrease only). An operation holds its usages as counts per usage
object: pods of one size share one request object, so merging a pod is a count, and the sum
is made once, at the flush. The open (last) operation lives in the object's own fields, so
the usual case, one application placing pods of one size in a cycle, is one small object.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from core.objects.ask import UserGroup
from core.resources import Resource, add_into

INCREASE, DECREASE, REMOVE_APP = 0, 1, 2

Operation = tuple[int, UserGroup, dict[str, int]]  # (kind, user, summed usage)


class DeferredOps:
    __slots__ = ("_closed", "_kind", "_more", "_pods", "_usage", "_user")

    def __init__(self, kind: int, user: UserGroup, usage: Mapping[str, int]) -> None:
        self._closed: list[Operation] | None = None  # operations before the open one, summed
        self._open(kind, user, usage)

    def _open(self, kind: int, user: UserGroup, usage: Mapping[str, int]) -> None:
        self._kind = kind
        self._user = user
        self._usage = _kept(usage)
        self._pods = 1  # pods of `_usage`
        self._more: dict[int, list[Any]] | None = None  # other usages: id of the held object -> [usage, pods]

    def add(self, kind: int, user: UserGroup, usage: Mapping[str, int]) -> None:
        """One more operation, merged into the open one when it may be."""
        last = self._kind
        if (self._user is user or self._user == user) and (
            last == kind == INCREASE or (last == DECREASE and kind != INCREASE)
        ):
            self._kind = kind
            if usage is self._usage:  # a Resource held as it is: the same object, the same size
                self._pods += 1
            else:
                self._count(usage)
            return
        if self._closed is None:
            self._closed = []
        self._closed.append(self._summed())
        self._open(kind, user, usage)

    def _count(self, usage: Mapping[str, int]) -> None:
        # A Resource is held as it is (immutable), so its id stays its own while it is counted;
        # any other mapping is copied and held apart.
        more = self._more
        if more is None:
            more = self._more = {}
        if isinstance(usage, Resource):
            found = more.get(id(usage))
            if found is not None:
                found[1] += 1
            else:
                more[id(usage)] = [usage, 1]
        else:
            copy = dict(usage)
            more[id(copy)] = [copy, 1]

    def _summed(self) -> Operation:
        """The open operation with its usages summed, as merging them one by one into a copy
        of the first gives."""
        total = plain_usage(self._usage)
        if self._pods > 1:
            add_into(total, self._usage, self._pods - 1)
        for usage, pods in (self._more or {}).values():
            add_into(total, usage, pods)
        return self._kind, self._user, total

    def operations(self) -> Iterator[Operation]:
        """Every operation in order, each with its usage summed."""
        yield from self._closed or ()
        yield self._summed()


def _kept(usage: Mapping[str, int]) -> Mapping[str, int]:
    return usage if isinstance(usage, Resource) else dict(usage)


def plain_usage(usage: Mapping[str, int]) -> dict[str, int]:
    """A plain dict copy: iterating it is several times faster than a Resource mapping."""
    return usage.to_dict() if isinstance(usage, Resource) else dict(usage)
