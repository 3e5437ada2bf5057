"""Queues placement creates for namespaces (seed 004): made on demand with the namespace's
limits, gone when their last application completes; static queues stay."""

from __future__ import annotations

import textwrap

from core.config import load_config
from core.scheduler import COMPLETING_TIMEOUT
from tests.core.scheduling.world import World
from tests.seeds import SEED_004_PARENT_MAPPING

PARENTS = """
partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
        parent:
          - name: tag
            value: namespace.parentqueue
    queues:
      - name: root
        submitacl: '*'
        queues:
          - name: production
            parent: true
            resources: {max: {vcore: 4}}
          - name: development
            parent: true
"""


def test_a_namespace_gets_its_queue_and_loses_it_when_empty() -> None:
    world = World()  # the default config: tag namespace, create
    world.node("n1")
    world.pod("p1", namespace="team-a", app="job")
    assert world.has_queue("root.team-a")
    assert world.queue("root.team-a")["isManaged"] is False
    assert world.schedule() == {"p1": "n1"}
    world.finish("p1")
    assert world.app_state("job") == "Completing"
    assert world.has_queue("root.team-a")  # a pod of the job may still come back
    world.schedule(advance=COMPLETING_TIMEOUT)
    assert world.app_state("job") == "Completed"
    assert not world.has_queue("root.team-a")


def test_namespace_annotations_set_the_created_queues_limits() -> None:
    world = World()
    world.node("n1", cpu=16)
    tags = {"namespace.resourcequota": '{"vcore": 2500}', "namespace.resourcemaxapps": "1"}
    world.pods(3, namespace="capped", tags=tags, app="job")
    world.pod("other", namespace="capped", tags=tags, app="job2", cpu=0.5)
    world.schedule()
    assert world.queue("root.capped")["maxResource"] == {"vcore": 2500}
    assert world.queue("root.capped")["maxRunningApps"] == 1
    assert world.allocated("root.capped")["vcore"] == 2000
    assert world.reason("p2") == "queue root.capped would exceed max vcore: 2000m allocated + 1000m asked > 2500m"
    assert world.reason("other") == "queue root.capped has reached maxapplications 1 (1 running)"


def test_the_parent_annotation_places_the_namespace_under_a_configured_parent() -> None:
    world = World(PARENTS)
    world.node("n1", cpu=16)
    tags = {"namespace.parentqueue": "production"}
    world.pods(5, namespace="finance", tags=tags, app="report")
    world.schedule()
    assert world.has_queue("root.production.finance")
    assert world.allocated("root.production.finance")["vcore"] == 4000  # the parent's max holds
    assert "queue root.production would exceed max vcore" in (world.reason("p4") or "")


def test_a_static_queue_stays_when_empty() -> None:
    world = World(PARENTS)
    world.node("n1")
    world.pod("p1", namespace="dev", tags={"namespace.parentqueue": "root.development"}, app="job")
    world.schedule()
    world.finish("p1")
    world.schedule(advance=COMPLETING_TIMEOUT)
    assert not world.has_queue("root.development.dev")
    assert world.has_queue("root.development")


def test_an_application_no_rule_places_is_rejected_with_the_reason() -> None:
    world = World(PARENTS)
    world.node("n1")
    world.pod("p1", namespace="lost", tags={"namespace.parentqueue": "nowhere"}, app="job")
    assert world.schedule() == {}
    reason = world.reason("p1") or ""
    assert reason.startswith("no placement rule matched")
    assert "root.nowhere" in reason
    rejected = [a for a in world.sched.applications_document() if a["applicationID"] == "job"]
    assert rejected[0]["applicationState"] == "Rejected"


def test_a_completing_application_keeps_its_queue_when_a_pod_comes_back() -> None:
    world = World()
    world.node("n1")
    world.pod("p1", namespace="team-b", app="job")
    world.schedule()
    world.finish("p1")
    world.schedule(advance=COMPLETING_TIMEOUT / 2)
    world.pod("p2", namespace="team-b", app="job")
    world.schedule(advance=COMPLETING_TIMEOUT)
    assert world.app_state("job") == "Running"
    assert world.has_queue("root.team-b")


def test_the_parent_rule_reads_the_same_as_a_mapping_or_the_documented_one_item_list() -> None:
    as_list = load_config(textwrap.dedent(PARENTS))
    as_mapping = load_config(
        textwrap.dedent(PARENTS).replace(
            "          - name: tag\n            value: namespace.parentqueue",
            "          name: tag\n          value: namespace.parentqueue",
        )
    )
    rule = as_list.partition().placement_rules[0]
    assert rule.parent is not None and rule.parent.value == "namespace.parentqueue"
    assert as_mapping.partition().placement_rules == as_list.partition().placement_rules


def test_a_rejected_application_is_listed_once_however_many_pods_it_has() -> None:
    world = World(PARENTS)
    for i in range(3):
        world.pod(f"p{i}", namespace="lost", tags={"namespace.parentqueue": "nowhere"}, app="job")
    world.configure(PARENTS)  # retried on a config change, still rejected
    rejected = [a for a in world.sched.applications_document() if a["applicationID"] == "job"]
    assert len(rejected) == 1
    assert world.sched.metrics.apps_rejected == 1
    assert len([e for e in world.out.reasons("Rejected") if e.object_id == "job"]) == 1


def test_seed_004_parent_mapping_a_childless_queue_a_rule_names_as_parent_becomes_one() -> None:
    world = World(SEED_004_PARENT_MAPPING)
    world.node("n1", cpu=16)
    world.pod("f1", namespace="finance", tags={"namespace.parentqueue": "root.production"}, app="report")
    world.pod("s1", namespace="sales", tags={"namespace.parentqueue": "production"}, app="deals")
    world.pod("d1", namespace="dev", tags={"namespace.parentqueue": "development"}, app="build")
    assert world.schedule() == {"f1": "n1", "s1": "n1", "d1": "n1"}
    assert world.queue("root.production")["isLeaf"] is False
    assert world.queue("root.production.finance")["isLeaf"] is True
    assert world.has_queue("root.production.sales")
    assert world.has_queue("root.development.dev")


def test_an_implicit_parent_keeps_its_children_across_a_config_change_and_is_a_leaf_when_they_go() -> None:
    world = World(SEED_004_PARENT_MAPPING)
    world.node("n1", cpu=16)
    world.pod("f1", namespace="finance", tags={"namespace.parentqueue": "production"}, app="report")
    world.schedule()
    world.configure(SEED_004_PARENT_MAPPING + "      - name: staging\n")
    assert world.queue("root.production.finance")["isLeaf"] is True
    assert not world.has_queue("root.production-draining")
    world.finish("f1")
    world.schedule(advance=COMPLETING_TIMEOUT)
    assert not world.has_queue("root.production.finance")
    assert world.queue("root.production")["isLeaf"] is True


def test_a_childless_queue_holding_applications_stays_a_leaf() -> None:
    world = World(
        SEED_004_PARENT_MAPPING.replace("    placementrules:\n", "    placementrules:\n    - name: provided\n")
    )
    world.node("n1", cpu=16)
    world.pod("own", namespace="x", queue="root.production", app="direct")
    world.schedule()
    world.pod("f1", namespace="finance", tags={"namespace.parentqueue": "production"}, app="report")
    assert world.schedule() == {}
    reason = world.reason("f1") or ""
    assert "root.production, which is a leaf queue, not a parent" in reason


def test_a_queue_stated_as_a_leaf_never_becomes_a_parent() -> None:
    stated = SEED_004_PARENT_MAPPING.replace("- name: production\n", "- name: production\n        parent: false\n")
    world = World(stated)
    world.node("n1", cpu=16)
    world.pod("f1", namespace="finance", tags={"namespace.parentqueue": "production"}, app="report")
    assert world.schedule() == {}
    assert "root.production, which is a leaf queue, not a parent" in (world.reason("f1") or "")


def test_seed_004_parent_mapping_validation_notes_the_queues_that_may_become_parents() -> None:
    notes = load_config(SEED_004_PARENT_MAPPING).warnings
    assert [n.split(":")[0] for n in notes] == [
        "partitions[default].queues.root.production",
        "partitions[default].queues.root.development",
    ]
    assert "becomes a parent when the parent rule of placementrules[0] names it" in notes[0]
