"""The quota groups outside the tree (seed 002's sys-group and default-group) as objects.

Seed 002, "Implementation Details": the default-group "will be created by default not only in
scheduler memory, but also try create the quota group crd. Its "min" and "max" has default
value, users can modify them on demand." An ElasticQuota named `default` is that object.
"""

from __future__ import annotations

import pytest

from core.config.settings import Settings
from core.elastic.spec import ElasticQuotaSpec
from core.resources import Resource
from tests.core.scheduling.world import World


def test_seed_002_an_object_named_default_sets_the_default_groups_min_and_max() -> None:
    world = World(settings=Settings(default_max=Resource({"vcore": 8000})))
    world.node("n1", cpu=16)
    world.quota("default", namespace="herder", min={"cpu": 1}, max={"cpu": 2})
    world.pods(3, namespace="loose", app="job")  # no quota of their own: the default group
    assert len(world.schedule()) == 2
    reason = world.reason("p2") or ""
    assert "quota default would exceed its runtime: vcore 2000m used + 1000m asked > 2000m" in reason
    status = world.sched.quota_status()["default"]
    assert (status.min, status.max) == (Resource({"vcore": 1000}), Resource({"vcore": 2000}))
    [default] = [doc for doc in world.sched.quotas_document() if doc["name"] == "default"]
    assert (default["namespace"], default["min"], default["max"]) == ("herder", {"vcore": 1000}, {"vcore": 2000})
    assert "default" not in world.sched.quota_tree()[0]  # outside the tree, as before


def test_a_default_object_without_a_max_leaves_the_setting_in_force() -> None:
    world = World(settings=Settings(default_max=Resource({"vcore": 1000})))
    world.node("n1", cpu=16)
    world.quota("default", namespace="herder")
    world.pods(2, namespace="loose", app="job")
    assert len(world.schedule()) == 1


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        (ElasticQuotaSpec("system", max=Resource({"vcore": 1000})), "the system quota's min and max are unlimited"),
        (ElasticQuotaSpec("default", parent="org"), "the default quota group sits outside the tree"),
        (ElasticQuotaSpec("default", min=Resource({"vcore": 3000}), max=Resource({"vcore": 2000})), "min vcore"),
        (ElasticQuotaSpec("root"), "the name 'root' is reserved"),
    ],
)
def test_group_objects_saying_what_a_group_cannot_be_are_refused(spec: ElasticQuotaSpec, problem: str) -> None:
    world = World()
    with pytest.raises(ValueError, match=problem):
        world.sched.update_quota(spec)


def test_the_system_groups_object_is_accepted_and_changes_nothing() -> None:
    world = World()
    world.node("n1", cpu=4)
    world.sched.update_quota(ElasticQuotaSpec("system", namespace="herder"))
    assert world.sched.quota_status()["system"].max == Resource()
