"""Reading a scenario: every shape problem is named by entry and key, all at once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from core.config import SettingsError
from shim.sim.scenario import OBJECT_KINDS, TOP_KEYS, ScenarioError, load_scenario, parse_scenario
from tests.sim.scenarios import node, pod


def problems(document: Any) -> list[str]:
    with pytest.raises(ScenarioError) as err:
        parse_scenario(document)
    return err.value.problems


def test_a_minimal_scenario_needs_nothing_but_a_mapping() -> None:
    scenario = parse_scenario({}, "empty")
    assert scenario.name == "empty" and scenario.until is None and scenario.workload == ()


def test_workload_count_must_be_a_positive_integer() -> None:
    document = {"workload": [pod("a"), pod("b"), {**pod("c"), "count": 0}]}
    assert problems(document) == ["workload[2].count: must be a whole number from 1 to 100000, got 0"]


def test_every_problem_is_reported_at_once_with_its_path() -> None:
    document = {
        "nodes": [{"name": "n", "allocatable": {"cpu": "4"}, "colour": "red"}, {"count": 2}],
        "workload": [{"at": -1, "pod": {"metadata": {"name": "x"}, "spec": {}}}],
        "events": [{"at": 5, "action": "explode"}, {"at": 5, "action": "remove-node"}],
        "until": "soon",
        "extra": 1,
    }
    found = problems(document)
    assert "scenario: unknown key 'extra' (expected one of: " + ", ".join(TOP_KEYS) + ")" in found
    assert any(p.startswith("nodes[0]: unknown key 'colour'") for p in found)
    assert "nodes[1].name: required: a non-empty string" in found
    assert any(p.startswith("nodes[1].allocatable: required") for p in found)
    assert "workload[0].at: must be a number of seconds from 0 to 3.1536e+08, got -1" in found
    assert "workload[0].pod.spec.containers: required: a non-empty list" in found
    assert any(p.startswith("events[0].action: must be one of") for p in found)
    assert "events[1].name: required: a non-empty string" in found
    assert "until: must be a positive number of seconds up to 3.1536e+08, got 'soon'" in found


def test_invalid_config_and_settings_are_scenario_errors_naming_the_key() -> None:
    document = {
        "settings": {"quota.recycle.delay": "soon", "no.such.key": 1},
        "config": {"partitions": [{"name": "default", "queues": [{"name": "root", "colour": "red"}]}]},
    }
    found = problems(document)
    assert any(p.startswith("settings.quota.recycle.delay: ") for p in found)
    assert "settings.no.such.key: unknown setting" in found
    assert any(p.startswith("config: ") and "colour" in p for p in found)


def test_duplicate_names_are_refused_with_both_places() -> None:
    document = {
        "nodes": [node("worker", count=2), node("worker-1")],
        "workload": [pod("job", count=2), pod("job-1")],
    }
    found = problems(document)
    assert "nodes[1]: node worker-1 is already made by nodes[0]" in found
    assert "workload[1]: pod default/job-1 is already made by workload[0]" in found


def test_events_check_their_own_keys() -> None:
    document = {
        "events": [
            {"at": 1, "action": "delete", "kind": "Pod", "name": "a", "selector": {"x": "y"}},
            {"at": 1, "action": "delete", "kind": "Gadget", "name": "a"},
            {"at": 1, "action": "apply", "object": {"spec": {"replicas": 3}}},
            {"at": 1, "action": "apply", "object": {"metadata": {"name": "ns"}}, "duration": 5},
            {"at": 1, "action": "add-node"},
            {"at": 1, "action": "cordon-node", "name": "n", "node": {}},
        ]
    }
    found = problems(document)
    assert "events[0]: give exactly one of name or selector" in found
    assert any(p.startswith("events[1].kind: must be one of Pod, ElasticQuota, Namespace, Node") for p in found)
    kinds = ", ".join(("Namespace", "ElasticQuota", "Pod", *OBJECT_KINDS))
    assert f"events[2].object: cannot tell what this is: give kind, one of {kinds}" in found
    assert "events[3].duration: only a pod has a duration" in found
    assert any(p.startswith("events[4].node: required") for p in found)
    assert any(p.startswith("events[5]: unknown key 'node'") for p in found)


def test_snapshots_after_until_are_refused() -> None:
    assert problems({"until": 100, "snapshots": [50, 150]}) == ["snapshots[1]: 150 is after until (100)"]


def test_selector_may_be_a_string_of_pairs() -> None:
    scenario = parse_scenario({"events": [{"at": 1, "action": "delete", "kind": "Pod", "selector": "app=web,tier=fe"}]})
    assert scenario.events[0].selector == {"app": "web", "tier": "fe"}


def test_set_overrides_apply_over_the_scenario_settings() -> None:
    scenario = parse_scenario({"settings": {"quota.recycle.delay": "30s"}}, overrides={"quota.recycle.delay": "5s"})
    assert scenario.settings.recycle_delay == 5.0
    with pytest.raises(SettingsError):
        parse_scenario({}, overrides={"quota.recycle.delay": "later"})


def test_config_may_be_given_as_a_string(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "config: |\n  partitions:\n    - name: default\n      queues:\n        - name: root\n          queues:\n"
        "            - name: a\n"
    )
    scenario = load_scenario(path)
    assert scenario.name == "s"
    assert [q.name for q in scenario.config.partition().queues[0].queues] == ["a"]


def test_broken_yaml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("name: x\nnodes: [\n")
    with pytest.raises(ScenarioError) as err:
        load_scenario(path)
    assert "not valid YAML at line" in err.value.problems[0]


def test_containers_must_be_mappings_as_the_api_server_requires() -> None:
    document = {"workload": [{"pod": {"metadata": {"name": "p"}, "spec": {"containers": ["busybox"]}}}]}
    assert problems(document) == ["workload[0].pod.spec.containers[0]: expected a container (a mapping), got str"]
