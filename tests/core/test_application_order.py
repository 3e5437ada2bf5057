"""A leaf's application order moves only the applications whose key may have changed; after a
refresh it must be exactly the order a full sort of the pending applications gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from core.objects.application import Application
from core.objects.application_order import ApplicationOrder, SortKey
from core.objects.ask import UserGroup

changes = st.lists(
    st.tuples(st.integers(0, 29), st.sampled_from(["priority", "drain"]), st.integers(0, 3)),
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=30), st.lists(changes, max_size=6))
def test_refreshed_order_is_the_full_sort(priorities: list[int], rounds: list[list[tuple[int, str, int]]]) -> None:
    apps = [Application(f"app-{i:02d}", "root.a", UserGroup(), {}, float(i % 4)) for i in range(len(priorities))]
    best = {app.app_id: p for app, p in zip(apps, priorities, strict=True)}
    pending = {app.app_id: app for app in apps}

    def key(app: Application) -> SortKey:
        return (-best[app.app_id], app.submission_time, app.app_id)

    order = ApplicationOrder(pending.values(), key)
    for round_changes in rounds:
        for index, what, priority in round_changes:
            app = apps[index % len(apps)]
            if what == "drain":
                pending.pop(app.app_id, None)
            else:
                best[app.app_id] = priority
            order.suspect(app)
        order.refresh(pending, key)
        assert list(order) == sorted(pending.values(), key=key)
