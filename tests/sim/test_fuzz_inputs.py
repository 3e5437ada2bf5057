"""Hostile input never crashes or hangs Herder, a refusal keeps the previous state, and random
valid scenarios keep every bound.

Hypothesis replaces parts of valid inputs with arbitrary values (NaN, infinities, huge and
negative numbers, quantities, lists where mappings belong, deep nesting) in every place a user
writes: scenario files, queues.yaml, ElasticQuotas, namespace annotations and pod specs. Each
example must end within its time limit with a result or a clear error of the documented kind;
a traceback of any other kind, or a hang, fails the test.

It also writes whole scenarios a cluster could see (`shim/bench/scenario_fuzz.py`: queues,
limits, quotas, gangs, PriorityClasses, rules between pods, volumes, nodes added, removed and
cordoned, resizes) and runs each twice through the simulator: no traceback, no hang, the same
report twice, no node, queue, quota, user or group taken above its bound
(`shim/bench/scenario_checks.py`). Bounded here (`max_examples`); `HERDER_FUZZ_EXAMPLES=N`
runs N of them (a soak), as does `herder bench --fuzz N` (seeded, without Hypothesis).
"""

from __future__ import annotations

import contextlib
import copy
import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from core.config import load_config
from core.scheduler import Scheduler
from shim.bench.scenario_checks import check_scenario, time_limit
from shim.bench.scenario_fuzz import generate_scenario
from shim.convert.namespaces import namespace_problems, namespace_tags
from shim.convert.objects import ConversionError
from shim.convert.pods import pod_to_ask
from shim.convert.quotas import quota_to_spec
from shim.kube.watch.reload import ConfigReloader, ConfigSource
from shim.sim.engine import Simulation
from shim.sim.report import build_report
from shim.sim.scenario import ScenarioError, load_scenario
from tests.shim.rest_world import Recorder
from tests.sim.scenarios import namespace_queues

TIME_LIMIT = 10  # seconds one example may take; a hang fails instead of stalling the suite
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 50),
    st.sampled_from([2**63, 10**9, -(2**63), 10**400]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=6),
    st.sampled_from(["-4", "1e308", "NaN", ".nan", "9Ei", "1Gi", "500m", "", "true", "root", "*", "{", "[]"]),
)
garbage = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=5), inner, max_size=3)),
    max_leaves=12,
)

POD: dict[str, Any] = {
    "metadata": {
        "name": "p",
        "namespace": "team",
        "labels": {"yunikorn.apache.org/app-id": "job"},
        "annotations": {"yunikorn.apache.org/user.info": '{"user": "alice"}'},
    },
    "spec": {
        "schedulerName": "herder",
        "priorityClassName": "high",
        "containers": [{"name": "main", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
        "volumes": [
            {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"metadata": {"labels": {}}, "spec": {}}}},
        ],
    },
}
CLAIM: dict[str, Any] = {
    "kind": "PersistentVolumeClaim",
    "metadata": {"name": "data", "namespace": "team", "annotations": {}},
    "spec": {
        "storageClassName": "local",
        "accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}},
    },
}
OBJECTS: list[dict[str, Any]] = [
    {
        "kind": "StorageClass",
        "metadata": {"name": "local", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "rancher.io/local-path",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowedTopologies": [{"matchLabelExpressions": [{"key": "zone", "values": ["a"]}]}],
    },
    {
        "kind": "PersistentVolume",
        "metadata": {"name": "pv", "labels": {}},
        "spec": {
            "storageClassName": "local",
            "capacity": {"storage": "2Gi"},
            "accessModes": ["ReadWriteOnce"],
            "claimRef": {"namespace": "team", "name": "data"},
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]
                }
            },
        },
        "status": {"phase": "Available"},
    },
    CLAIM,
    {
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "pdb", "namespace": "team"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "x"}}},
    },
    {"kind": "PriorityClass", "metadata": {"name": "high", "annotations": {}}, "value": 100},
]
QUOTA: dict[str, Any] = {
    "apiVersion": "scheduling.sigs.k8s.io/v1alpha1",
    "kind": "ElasticQuota",
    "metadata": {"name": "team", "namespace": "team", "labels": {}, "annotations": {}},
    "spec": {"min": {"cpu": "2"}, "max": {"cpu": "4"}},
}
QUEUES: dict[str, Any] = namespace_queues(
    queues=[{"name": "team", "resources": {"max": {"vcore": 4, "memory": "8Gi"}}}],
    limits=[{"limit": "alice", "users": ["alice"], "maxresources": {"vcore": 2}}],
)
SCENARIO: dict[str, Any] = {
    "settings": {"quota.recycle.delay": "10s"},
    "config": QUEUES,
    "nodes": [{"name": "n", "count": 2, "allocatable": {"cpu": "4", "memory": "8Gi"}, "labels": {"zone": "a"}}],
    "namespaces": [{"metadata": {"name": "team", "annotations": {"yunikorn.apache.org/namespace.quota": "{}"}}}],
    "quotas": [QUOTA],
    "objects": OBJECTS,
    "workload": [{"at": 1, "count": 3, "duration": 20, "pod": POD}],
    "events": [
        {"at": 5, "action": "cordon-node", "name": "n-0"},
        {"at": 6, "action": "apply", "object": {**CLAIM, "metadata": {"name": "more", "namespace": "team"}}},
        {"at": 7, "action": "resize", "namespace": "team", "name": "p-0", "requests": {"cpu": "2"}},
        {"at": 8, "action": "delete", "kind": "PersistentVolumeClaim", "namespace": "team", "name": "more"},
        {"at": 9, "action": "apply", "object": {"kind": "PodDisruptionBudget", "metadata": {"name": "b"}, "spec": {}}},
    ],
    "until": 60,
}

SCENARIO_PATHS = [
    ("settings",),
    ("settings", "quota.recycle.delay"),
    ("config",),
    ("config", "partitions", 0, "queues", 0, "queues"),
    ("config", "partitions", 0, "queues", 0, "limits", 0, "maxresources"),
    ("nodes", 0, "count"),
    ("nodes", 0, "allocatable", "cpu"),
    ("nodes", 0, "labels"),
    ("namespaces", 0, "metadata", "annotations"),
    ("quotas", 0, "spec"),
    ("quotas", 0, "spec", "max", "cpu"),
    ("quotas", 0, "metadata", "labels"),
    ("workload", 0, "at"),
    ("workload", 0, "count"),
    ("workload", 0, "duration"),
    ("workload", 0, "pod", "spec", "containers", 0, "resources", "requests", "cpu"),
    ("workload", 0, "pod", "metadata", "annotations"),
    ("workload", 0, "pod", "spec", "priority"),
    ("workload", 0, "pod", "spec", "volumes"),
    ("workload", 0, "pod", "spec", "volumes", 0, "persistentVolumeClaim"),
    ("workload", 0, "pod", "spec", "volumes", 1, "ephemeral"),
    ("workload", 0, "pod", "spec", "volumes", 1, "ephemeral", "volumeClaimTemplate"),
    ("workload", 0, "pod", "spec", "volumes", 1, "ephemeral", "volumeClaimTemplate", "metadata"),
    ("workload", 0, "pod", "spec", "volumes", 1, "ephemeral", "volumeClaimTemplate", "spec"),
    ("workload", 0, "pod", "spec", "priorityClassName"),
    ("objects", 0, "allowedTopologies"),
    ("objects", 0, "allowedTopologies", 0),
    ("objects", 0, "provisioner"),
    ("objects", 0, "volumeBindingMode"),
    ("objects", 1, "spec"),
    ("objects", 1, "spec", "claimRef"),
    ("objects", 1, "spec", "capacity"),
    ("objects", 1, "spec", "accessModes"),
    ("objects", 1, "spec", "nodeAffinity"),
    ("objects", 1, "spec", "nodeAffinity", "required", "nodeSelectorTerms", 0),
    ("objects", 1, "status"),
    ("objects", 2, "spec"),
    ("objects", 2, "spec", "resources"),
    ("objects", 2, "spec", "resources", "requests"),
    ("objects", 2, "spec", "accessModes"),
    ("objects", 2, "spec", "storageClassName"),
    ("objects", 2, "spec", "volumeName"),
    ("objects", 2, "metadata", "annotations"),
    ("objects", 3, "spec"),
    ("objects", 3, "spec", "minAvailable"),
    ("objects", 3, "spec", "selector"),
    ("objects", 4, "value"),
    ("objects", 4, "metadata", "annotations"),
    ("events", 0),
    ("events", 0, "at"),
    ("events", 1, "object", "spec"),
    ("events", 2, "requests"),
    ("events", 2, "requests", "cpu"),
    ("events", 4, "object", "spec"),
    ("until",),
]


def put(document: Any, path: tuple[Any, ...], value: Any) -> Any:
    """`document` with the value at `path` replaced (the path's containers exist in the base)."""
    result = copy.deepcopy(document)
    target = result
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return result


def mutated(base: dict[str, Any], paths: list[tuple[Any, ...]]) -> st.SearchStrategy[Any]:
    def apply(changes: list[tuple[tuple[Any, ...], Any]]) -> Any:
        document: Any = base
        for path, value in changes:
            with contextlib.suppress(KeyError, IndexError, TypeError):  # an earlier change removed the container
                document = put(document, path, value)
        return document

    return st.lists(st.tuples(st.sampled_from(paths), garbage), min_size=1, max_size=3).map(apply)


@FUZZ
@given(mutated(SCENARIO, SCENARIO_PATHS))
def test_scenario_files_run_or_are_refused_clearly(document: Any) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "scenario.yaml"
        path.write_text(yaml.safe_dump(document))
        with time_limit(TIME_LIMIT):
            try:
                scenario = load_scenario(path)
            except ScenarioError as refused:
                assert refused.problems and all(isinstance(p, str) and p for p in refused.problems)
                return
            simulation = Simulation(scenario)
            simulation.run()
            report = build_report(simulation)
    assert report["summary"]["pods"] >= 0


QUEUE_PATHS = [
    ("partitions",),
    ("partitions", 0, "name"),
    ("partitions", 0, "placementrules"),
    ("partitions", 0, "placementrules", 0, "value"),
    ("partitions", 0, "queues"),
    ("partitions", 0, "queues", 0, "queues", 0, "resources"),
    ("partitions", 0, "queues", 0, "queues", 0, "resources", "max", "vcore"),
    ("partitions", 0, "queues", 0, "limits"),
    ("partitions", 0, "queues", 0, "limits", 0, "maxresources", "vcore"),
    ("partitions", 0, "queues", 0, "limits", 0, "users"),
]


@FUZZ
@given(mutated(QUEUES, QUEUE_PATHS))
def test_queues_yaml_is_applied_or_refused_and_the_running_config_stays(document: Any) -> None:
    scheduler = Scheduler(Recorder(), load_config(yaml.safe_dump(QUEUES)))
    before = scheduler.config.checksum
    source = ConfigSource(namespace="herder")
    configmap = {"metadata": {"name": "herder-config"}, "data": {"queues.yaml": yaml.safe_dump(document)}}
    reloader = ConfigReloader(scheduler, source, lambda: configmap, None)
    with time_limit(TIME_LIMIT):
        applied = reloader.check()
    if applied is False:
        assert scheduler.config.checksum == before  # refused whole: the old configuration runs
    else:
        assert applied is True or scheduler.config.checksum == before


@FUZZ
@given(garbage)
def test_a_configmap_whose_data_is_not_text_is_refused_not_a_crash(data: Any) -> None:
    scheduler = Scheduler(Recorder(), load_config(yaml.safe_dump(QUEUES)))
    before = scheduler.config.checksum
    reloader = ConfigReloader(scheduler, ConfigSource(namespace="herder"), lambda: {"data": data}, None)
    with time_limit(TIME_LIMIT):
        reloader.check()
    if data and not isinstance(data, dict):  # empty data is the default configuration, as documented
        assert scheduler.config.checksum == before


QUOTA_PATHS = [
    ("spec",),
    ("spec", "min"),
    ("spec", "max"),
    ("spec", "max", "cpu"),
    ("spec", "min", "cpu"),
    ("metadata",),
    ("metadata", "labels"),
    ("metadata", "annotations"),
    ("metadata", "name"),
]


@FUZZ
@given(mutated(QUOTA, QUOTA_PATHS))
def test_elastic_quotas_are_applied_or_refused_and_the_previous_one_stays(quota: Any) -> None:
    scheduler = Scheduler(Recorder(), load_config(yaml.safe_dump(QUEUES)))
    scheduler.update_quota(quota_to_spec(QUOTA))
    before = scheduler.quotas_document()
    with time_limit(TIME_LIMIT):
        try:
            spec = quota_to_spec(quota)
        except ConversionError as refused:
            assert str(refused)
            assert scheduler.quotas_document() == before
            return
        try:
            scheduler.update_quota(spec)
        except ValueError as refused:
            assert str(refused)
            assert scheduler.quotas_document() == before


POD_PATHS = [
    ("metadata",),
    ("metadata", "labels"),
    ("metadata", "annotations"),
    ("metadata", "annotations", "yunikorn.apache.org/user.info"),
    ("spec",),
    ("spec", "containers"),
    ("spec", "containers", 0),
    ("spec", "containers", 0, "resources"),
    ("spec", "containers", 0, "resources", "requests", "cpu"),
    ("spec", "containers", 0, "resources", "requests", "memory"),
    ("spec", "priority"),
    ("spec", "nodeSelector"),
    ("spec", "tolerations"),
    ("spec", "affinity"),
    ("spec", "overhead"),
]


NAMESPACE_ANNOTATIONS = [
    "yunikorn.apache.org/namespace.quota",
    "yunikorn.apache.org/namespace.guaranteed",
    "yunikorn.apache.org/namespace.max.cpu",
    "yunikorn.apache.org/namespace.max.memory",
    "yunikorn.apache.org/parentqueue",
    "yunikorn.apache.org/namespace.maxApps",
]


@FUZZ
@given(mutated(POD, POD_PATHS), st.dictionaries(st.sampled_from(NAMESPACE_ANNOTATIONS), garbage, max_size=3))
def test_pods_and_namespace_annotations_are_scheduled_or_wait_with_a_reason(pod: Any, annotations: Any) -> None:
    namespace = {"metadata": {"name": "team", "annotations": annotations}}
    scheduler = Scheduler(Recorder(), load_config(yaml.safe_dump(QUEUES)))
    with time_limit(TIME_LIMIT):
        namespace_tags(namespace)
        assert all(isinstance(problem, str) for problem in namespace_problems(namespace))
        try:
            ask = pod_to_ask(pod, namespace)
        except ConversionError as refused:
            assert str(refused)
            return
        scheduler.add_ask(ask)
        scheduler.schedule()
    assert not any(value < 0 for value in ask.resource.values())


class DrawnChoices:
    """The scenario generator's choices, drawn from Hypothesis (which then shrinks a failing scenario)."""

    def __init__(self, data: st.DataObject) -> None:
        self._data = data

    def integer(self, low: int, high: int) -> int:
        return self._data.draw(st.integers(low, high))


SCENARIOS = settings(
    max_examples=int(os.environ.get("HERDER_FUZZ_EXAMPLES", "30")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@SCENARIOS
@given(st.data())
def test_random_scenarios_run_keep_every_bound_and_repeat(data: st.DataObject) -> None:
    document = generate_scenario(DrawnChoices(data))
    note(yaml.safe_dump(document, sort_keys=False))
    with time_limit(TIME_LIMIT):
        outcome = check_scenario(document)
    assert not outcome.refused, outcome.refused  # the generator writes valid scenarios
    assert not outcome.problems, "\n".join(outcome.problems)
