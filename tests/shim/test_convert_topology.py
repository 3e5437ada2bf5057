"""Kueue's topology annotations on the pod that defines a gang, read into its GangTopology; bad
ones named, and the pod waits with them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.gang.spec import GangTopology
from shim.convert.gangs.topology import ANNOTATION_PREFERRED_TOPOLOGY, ANNOTATION_REQUIRED_TOPOLOGY
from shim.convert.gangs.yunikorn import ANNOTATION_TASK_GROUP_NAME, ANNOTATION_TASK_GROUPS
from shim.convert.pods import pod_to_ask

GROUPS = json.dumps([{"name": "w", "minMember": 4, "minResource": {"cpu": "4"}}])


def pod(**annotations: str) -> dict[str, Any]:
    return {
        "metadata": {
            "name": "train-0",
            "namespace": "ml",
            "uid": "u-1",
            "labels": {"applicationId": "train"},
            "annotations": {ANNOTATION_TASK_GROUPS: GROUPS, ANNOTATION_TASK_GROUP_NAME: "w", **annotations},
        },
        "spec": {"schedulerName": "herder", "containers": [{"name": "c", "resources": {"requests": {"cpu": "4"}}}]},
    }


@pytest.mark.parametrize(
    ("annotation", "value", "topology"),
    [
        (ANNOTATION_REQUIRED_TOPOLOGY, "topology.example.com/rack", GangTopology("topology.example.com/rack", True)),
        (
            ANNOTATION_PREFERRED_TOPOLOGY,
            "cloud.provider.com/topology-block",
            GangTopology("cloud.provider.com/topology-block", False),
        ),
        (ANNOTATION_REQUIRED_TOPOLOGY, "kubernetes.io/hostname", GangTopology("kubernetes.io/hostname", True)),
        (ANNOTATION_PREFERRED_TOPOLOGY, "rack", GangTopology("rack", False)),
    ],
)
def test_kueues_annotations_give_the_gang_its_topology(annotation: str, value: str, topology: GangTopology) -> None:
    ask = pod_to_ask(pod(**{annotation: value}), None)
    assert ask.problems == () and ask.gang is not None
    assert ask.gang.topology == topology


def test_a_gang_without_them_has_no_topology() -> None:
    ask = pod_to_ask(pod(), None)
    assert ask.gang is not None and ask.gang.topology is None


def test_the_level_is_named_as_people_say_it() -> None:
    assert GangTopology("topology.example.com/rack").level == "rack"
    assert GangTopology("cloud.provider.com/topology-block").level == "block"
    assert GangTopology("kubernetes.io/hostname").level == "node"
    assert GangTopology("topology.kubernetes.io/zone").level == "zone"


@pytest.mark.parametrize(
    ("annotations", "problem"),
    [
        (
            {ANNOTATION_REQUIRED_TOPOLOGY: "rack", ANNOTATION_PREFERRED_TOPOLOGY: "rack"},
            "pod ml/train-0: annotations kueue.x-k8s.io/podset-required-topology and"
            " kueue.x-k8s.io/podset-preferred-topology are both set; a gang takes one of them",
        ),
        (
            {ANNOTATION_REQUIRED_TOPOLOGY: "not a label"},
            "pod ml/train-0 annotation kueue.x-k8s.io/podset-required-topology: expected a node label key such"
            " as topology.kubernetes.io/zone, got 'not a label'",
        ),
        (
            {ANNOTATION_PREFERRED_TOPOLOGY: ""},
            "pod ml/train-0 annotation kueue.x-k8s.io/podset-preferred-topology: expected a node label key such"
            " as topology.kubernetes.io/zone, got ''",
        ),
        (
            {ANNOTATION_REQUIRED_TOPOLOGY: "Bad_Prefix/rack"},
            "pod ml/train-0 annotation kueue.x-k8s.io/podset-required-topology: expected a node label key such"
            " as topology.kubernetes.io/zone, got 'Bad_Prefix/rack'",
        ),
    ],
)
def test_bad_topology_annotations_are_named_and_the_pod_waits(annotations: dict[str, str], problem: str) -> None:
    ask = pod_to_ask(pod(**annotations), None)
    assert ask.gang is None and ask.problems == (problem,)
