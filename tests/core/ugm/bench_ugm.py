"""Cost of user and group tracking: microseconds per increase and per decrease.

Run: python -m tests.core.ugm.bench_ugm   (a measurement, not a test; pytest does not collect it)

World: 1,000 users in 100 groups (two groups each), a 3-level queue tree (root, 10 departments,
5 teams each) with user, named-group and wildcard limits on every queue, every user already
running two applications. Then increases and decreases of one more pod for random users.
"""

from __future__ import annotations

import random
import time

from core.config.schema import Limit, PartitionConfig
from core.objects.ask import UserGroup
from core.resources import Resource
from core.ugm import UserGroupManager
from tests.core.ugm.worlds import limit, partition, queue

USERS = 1000
GROUPS = 100
DEPARTMENTS = 10
TEAMS = 5
CALLS = 20_000


def limits_for(level: int, seed: int, scale: int = 1) -> tuple[Limit, ...]:
    groups = tuple(f"group-{(seed * 7 + i) % GROUPS}" for i in range(5))
    return (
        limit(users=(f"user-{seed % USERS}",), vcore=10**6 * scale, apps=10**4),
        limit(groups=groups, vcore=10**7 * scale, apps=10**5),
        limit(users=("*",), vcore=10**6 * scale // (level + 1), apps=10**3),
        limit(groups=("*",), vcore=10**8 * scale, apps=10**6),
    )


def config(scale: int = 1) -> tuple[PartitionConfig, list[str]]:
    departments = []
    leaves = []
    for d in range(DEPARTMENTS):
        teams = []
        for t in range(TEAMS):
            teams.append(queue(f"team{t}", limits=limits_for(2, d * TEAMS + t, scale)))
            leaves.append(f"root.dept{d}.team{t}")
        departments.append(queue(f"dept{d}", *teams, limits=limits_for(1, 1000 + d, scale)))
    return partition(queue("root", *departments, limits=limits_for(0, 5000, scale))), leaves


def main() -> None:
    rng = random.Random(7)
    first, leaves = config()
    second, _ = config(scale=2)
    ugm = UserGroupManager()
    ugm.update_config(first)
    users = [UserGroup(f"user-{u}", (f"group-{u % GROUPS}", f"group-{(u * 13 + 1) % GROUPS}")) for u in range(USERS)]
    pod = Resource({"vcore": 500, "memory": 2**30, "pods": 1})
    home = {user.user: rng.choice(leaves) for user in users}
    for user in users:
        for app in range(2):
            assert ugm.increase_tracked_resource(home[user.user], f"{user.user}-app{app}", pod, user)
    # Half the calls add a pod to a running application, half start a new one (group resolution).
    calls = []
    for i in range(CALLS):
        user = users[rng.randrange(USERS)]
        new = i % 2 == 1
        calls.append((home[user.user], f"{user.user}-new{i}" if new else f"{user.user}-app{i % 4 // 2}", user, new))

    start = time.perf_counter()
    for path, app, user, _new in calls:
        ugm.increase_tracked_resource(path, app, pod, user)
    increase = time.perf_counter() - start
    start = time.perf_counter()
    for path, app, user, new in calls:
        ugm.decrease_tracked_resource(path, app, pod, user, remove_app=new)
    decrease = time.perf_counter() - start

    start = time.perf_counter()
    rounds = 10
    for index in range(rounds):
        ugm.update_config(second if index % 2 == 0 else first)
    reapply = (time.perf_counter() - start) / rounds

    levels = len(ugm.usage_samples())
    print(f"users {USERS}, groups {GROUPS}, queues {1 + DEPARTMENTS + DEPARTMENTS * TEAMS}, calls {CALLS}")
    print(f"increase: {increase / CALLS * 1e6:.1f} us/call")
    print(f"decrease: {decrease / CALLS * 1e6:.1f} us/call")
    print(f"config change re-applied to {levels} tracked levels: {reapply * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
