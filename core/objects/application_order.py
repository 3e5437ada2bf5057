"""The order in which a leaf serves its applications, kept sorted one application at a time.

A leaf serves its applications by a sort key (see `policies.py`: the priority of the best ask
that may run now, then submission time, then id, so no two keys are equal). The scheduling
cycle decides when the order must follow the keys again; re-sorting all applications then
costs a key per application, for a change that usually concerns one (the application just
served, whose best ask went). So the order remembers each application's key and which
applications may have a new one since (`suspect`): bringing it up to date (`refresh`) moves
only those, by bisection, and drops those no longer pending. As every other key is unchanged,
the result is the list a full sort would give.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from core.objects.application import Application

SortKey = tuple[Any, ...]  # compared element by element; unique by application id


class ApplicationOrder:
    __slots__ = ("_apps", "_key_of", "_keys", "stale", "suspects")

    def __init__(self, apps: Iterable[Application], key: Callable[[Application], SortKey]) -> None:
        entries = sorted(((key(app), app) for app in apps), key=lambda entry: entry[0])
        self._keys: list[SortKey] = [entry[0] for entry in entries]
        self._apps: list[Application] = [entry[1] for entry in entries]
        self._key_of: dict[str, SortKey] = {app.app_id: k for k, app in entries}
        self.suspects: dict[str, Application] = {}  # may have a new key since it was read
        self.stale = False  # the cycle asked for the order to follow the keys again

    def __iter__(self) -> Iterator[Application]:
        return iter(self._apps)

    def __len__(self) -> int:
        return len(self._apps)

    def in_order(self, apps: Iterable[Application]) -> list[Application] | None:
        """Some of the applications, in the order they are served (None if one is not in it)."""
        key_of = self._key_of
        if any(app.app_id not in key_of for app in apps):
            return None
        return sorted(apps, key=lambda app: key_of[app.app_id])

    def suspect(self, app: Application) -> None:
        """The application's key may have changed; the order stays as it is until `refresh`."""
        self.suspects[app.app_id] = app

    def refresh(self, pending: Mapping[str, Application], key: Callable[[Application], SortKey]) -> None:
        """Move every suspect to where its current key sorts; drop those no longer pending."""
        keys, apps = self._keys, self._apps
        for app_id, app in self.suspects.items():
            old = self._key_of.pop(app_id, None)
            if old is not None:
                at = bisect_left(keys, old)
                del keys[at], apps[at]
            if pending.get(app_id) is app:
                new = key(app)
                at = bisect_left(keys, new)
                keys.insert(at, new)
                apps.insert(at, app)
                self._key_of[app_id] = new
        self.suspects.clear()
        self.stale = False
