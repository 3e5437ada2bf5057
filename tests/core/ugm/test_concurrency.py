"""Updates from many threads: no lost update, exact totals, limits never mixed (seed 000's race)."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from core.objects.ask import UserGroup
from core.ugm import UserGroupManager
from core.ugm.trackers import UserTracker
from tests.core.ugm.worlds import (
    cores,
    limit,
    limits_at,
    manager,
    partition,
    queue,
    running_at,
    usage_at,
    who,
)

THREADS = 8
ROUNDS = 300


@pytest.fixture(autouse=True)
def eager_thread_switching() -> Iterator[None]:
    """Switch threads as often as possible, so interleavings between steps are likely."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(previous)


def run_threads(work: Callable[[int], None]) -> None:
    errors: list[BaseException] = []
    start = threading.Barrier(THREADS)

    def body(index: int) -> None:
        try:
            start.wait()
            work(index)
        except BaseException as err:  # collected and re-raised in the test thread
            errors.append(err)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck: deadlock?"
    if errors:
        raise errors[0]


def paused_at_first_call(
    monkeypatch: pytest.MonkeyPatch, owner: type, name: str
) -> tuple[threading.Event, threading.Event]:
    """Make the first call of `owner.name` stop until `resume` is set, after setting `reached`."""
    reached, resume = threading.Event(), threading.Event()
    original = getattr(owner, name)
    calls = 0

    def paused(*args: object, **kwargs: object) -> object:
        nonlocal calls
        calls += 1
        if calls == 1:
            reached.set()
            assert resume.wait(10)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, paused)
    return reached, resume


def test_decrease_emptying_a_tracker_that_an_increase_already_found_waits_and_loses_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Seed 000's race, forced: an increase has found joe's (and dev's) tracker and is about to
    change it; meanwhile a decrease removes joe's last usage. The decrease waits for the
    increase, and the increase lands in trackers that are still the ones the manager shows."""
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), vcore=100),))))
    joe = who("joe", "dev")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(1), joe)
    reached, resume = paused_at_first_call(monkeypatch, UserTracker, "increase")
    results: list[bool] = []
    increase = threading.Thread(
        target=lambda: results.append(ugm.increase_tracked_resource("root.team", "app-2", cores(2), joe))
    )
    increase.start()
    assert reached.wait(10)
    decrease = threading.Thread(
        target=lambda: ugm.decrease_tracked_resource("root.team", "app-1", cores(1), joe, remove_app=True)
    )
    decrease.start()
    decrease.join(0.2)
    assert decrease.is_alive(), "the decrease changed joe's trackers while an increase was changing them"
    resume.set()
    increase.join(10)
    decrease.join(10)
    assert results == [True]
    for document in (ugm.user_document("joe"), ugm.group_document("dev")):
        assert running_at(document, "root.team") == ["app-2"]
        assert usage_at(document, "root.team") == {"vcore": 2000}


def test_config_change_waits_for_an_increase_being_checked_then_limits_the_levels_it_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An increase being checked while the configuration changes is judged by the limits it
    started with, never by a mix: the change waits for it, then gives the level the increase
    created its new limit."""
    ugm = manager(queue("root", queue("team"), queue("lab")))
    ann = who("ann")
    assert ugm.increase_tracked_resource("root.team", "app-1", cores(2), ann)
    ugm.update_config(partition(queue("root", queue("team"), queue("lab", limits=(limit(users=("*",), vcore=9),)))))
    reached, resume = paused_at_first_call(monkeypatch, UserTracker, "check_increase")
    results: list[bool] = []
    increase = threading.Thread(
        target=lambda: results.append(ugm.increase_tracked_resource("root.lab", "app-2", cores(5), ann))
    )
    increase.start()
    assert reached.wait(10)
    lowered = partition(queue("root", queue("team"), queue("lab", limits=(limit(users=("*",), vcore=3),))))
    change = threading.Thread(target=lambda: ugm.update_config(lowered))
    change.start()
    change.join(0.2)
    assert change.is_alive(), "the limits changed under an increase being checked"
    resume.set()
    increase.join(10)
    change.join(10)
    assert results == [True]  # 5 cores within the 9 in force when it was checked
    document = ugm.user_document("ann")
    assert usage_at(document, "root.lab") == {"vcore": 5000}
    assert limits_at(document, "root.lab") == ({"vcore": 3000}, 0)
    assert not ugm.increase_tracked_resource("root.lab", "app-2", cores(1), ann)  # the new limit holds


def churn(ugm: UserGroupManager, users: list[UserGroup], paths: tuple[str, ...]) -> dict[int, list[str]]:
    """Each thread starts an application and mostly ends it at once, now and then a round
    later, so trackers empty and refill all the time; returns what each thread still runs."""
    held: dict[int, list[str]] = {}

    def work(index: int) -> None:
        user = users[index]
        mine: list[str] = []
        for round_ in range(ROUNDS):
            app = f"t{index}-{round_}"
            assert ugm.increase_tracked_resource(paths[round_ % len(paths)], app, cores(1), user)
            mine.append(app)
            # Only this thread removes its applications, so each must stay visible until it
            # does: an increase that landed in a tracker another thread's decrease had
            # unlinked would not be.
            user_doc, group_doc = ugm.user_document(user.user), ugm.group_document("dev")
            for held_app in mine:
                assert held_app in (running_at(user_doc, "root") or []), f"{held_app} lost for {user.user}"
                assert held_app in (running_at(group_doc, "root") or []), f"{held_app} lost for dev"
            while len(mine) > (1 if (round_ * 7 + index) % 10 == 0 else 0):
                gone = mine.pop(0)
                path = paths[int(gone.rsplit("-", 1)[1]) % len(paths)]
                ugm.decrease_tracked_resource(path, gone, cores(1), user, remove_app=True)
        held[index] = mine

    run_threads(work)
    return held


def test_increase_racing_the_decrease_that_empties_a_tracker_is_never_lost() -> None:
    ugm = manager(queue("root", queue("team", limits=(limit(groups=("dev",), vcore=10**6),))))
    joe = who("joe", "dev")
    held = churn(ugm, [joe] * THREADS, ("root.team",))
    apps = sorted(app for mine in held.values() for app in mine)
    for document in (ugm.user_document("joe"), ugm.group_document("dev")):
        assert usage_at(document, "root.team") == ({"vcore": 1000 * len(apps)} if apps else None)
        assert running_at(document, "root.team") == (apps or None)


def test_many_users_sharing_one_group_keep_exact_totals_and_leave_nothing_behind() -> None:
    ugm = manager(queue("root", queue("a"), queue("b"), limits=(limit(groups=("dev",), vcore=10**6),)))
    users = [who(f"user-{index}", "dev") for index in range(THREADS)]
    held = churn(ugm, users, ("root.a", "root.b"))
    apps = sorted(app for mine in held.values() for app in mine)
    group = ugm.group_document("dev")
    assert usage_at(group, "root") == ({"vcore": 1000 * len(apps)} if apps else None)
    assert running_at(group, "root") == (apps or None)
    for index, mine in held.items():
        assert running_at(ugm.user_document(users[index].user), "root") == (sorted(mine) or None)
        for app in mine:
            path = ("root.a", "root.b")[int(app.rsplit("-", 1)[1]) % 2]
            ugm.decrease_tracked_resource(path, app, cores(1), users[index], remove_app=True)
    assert ugm.users_documents() == []
    assert ugm.groups_documents() == []


def test_config_changes_during_updates_leave_every_tracker_on_the_last_limits() -> None:
    first = partition(
        queue("root", queue("team", limits=(limit(users=("*",), apps=900), limit(groups=("dev",), apps=9000))))
    )
    last = partition(
        queue("root", queue("team", limits=(limit(users=("*",), apps=400), limit(groups=("dev",), apps=3000))))
    )
    ugm = manager(queue("root", queue("team")))
    ugm.update_config(first)

    def work(index: int) -> None:
        if index == 0:
            for round_ in range(ROUNDS):
                ugm.update_config(last if round_ % 2 else first)
            return
        user = who(f"user-{index}", "dev")
        for round_ in range(ROUNDS):
            assert ugm.increase_tracked_resource("root.team", f"{user.user}-{round_}", cores(1), user)

    run_threads(work)
    # ROUNDS - 1 is odd: `last` is the configuration applied last.
    workers = THREADS - 1
    for index in range(1, THREADS):
        assert limits_at(ugm.user_document(f"user-{index}"), "root.team") == ({}, 400)
        assert usage_at(ugm.user_document(f"user-{index}"), "root.team") == {"vcore": ROUNDS * 1000}
    assert limits_at(ugm.group_document("dev"), "root.team") == ({}, 3000)
    assert usage_at(ugm.group_document("dev"), "root.team") == {"vcore": workers * ROUNDS * 1000}
