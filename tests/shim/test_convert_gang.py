"""YuniKorn's gang annotations read into the core's task groups, and bad ones named."""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.gang.spec import DEFAULT_TIMEOUT, HARD, SOFT
from shim.convert.gangs.yunikorn import (
    ANNOTATION_PLACEHOLDER,
    ANNOTATION_POLICY,
    ANNOTATION_TASK_GROUP_NAME,
    ANNOTATION_TASK_GROUPS,
)
from shim.convert.pods import pod_key, pod_to_ask

GROUPS = [
    {
        "name": "worker",
        "minMember": 3,
        "minResource": {"cpu": "500m", "memory": "1Gi"},
        "nodeSelector": {"pool": "gpu"},
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
    },
    # Go's JSON matches keys ignoring case, and so does Herder.
    {"Name": "driver", "MINMEMBER": 1, "minresource": {"cpu": 1}},
]


def pod(annotations: dict[str, str], name: str = "job-0", uid: str = "u-1") -> dict[str, Any]:
    return {
        "metadata": {
            "name": name,
            "namespace": "team",
            "uid": uid,
            "labels": {"applicationId": "job"},
            "annotations": annotations,
        },
        "spec": {"schedulerName": "herder", "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}]},
    }


def test_the_defining_pod_carries_the_task_groups_timeout_and_style() -> None:
    ask = pod_to_ask(
        pod(
            {
                ANNOTATION_TASK_GROUPS: json.dumps(GROUPS),
                ANNOTATION_TASK_GROUP_NAME: "worker",
                ANNOTATION_POLICY: "placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard",
            }
        ),
        None,
    )
    assert ask.problems == ()
    assert ask.task_group == "worker"
    assert ask.gang is not None
    assert (ask.gang.timeout, ask.gang.style, ask.gang.originator) == (60.0, HARD, "u-1")
    worker, driver = ask.gang.groups
    assert (worker.name, worker.min_member, dict(worker.min_resource)) == (
        "worker",
        3,
        {"vcore": 500, "memory": 2**30, "pods": 1},
    )
    assert worker.constraints.node_selector == (("pool", "gpu"),)
    assert worker.constraints.tolerations[0].key == "gpu"
    assert (driver.name, driver.min_member, dict(driver.min_resource)) == ("driver", 1, {"vcore": 1000, "pods": 1})


def test_later_pods_name_their_group_only_and_defaults_apply() -> None:
    ask = pod_to_ask(pod({ANNOTATION_TASK_GROUP_NAME: "worker"}), None)
    assert (ask.task_group, ask.gang, ask.problems) == ("worker", None, ())
    defining = pod_to_ask(pod({ANNOTATION_TASK_GROUPS: json.dumps(GROUPS)}), None)
    assert defining.gang is not None
    assert (defining.gang.timeout, defining.gang.style) == (DEFAULT_TIMEOUT, SOFT)


def test_a_placeholder_pod_is_keyed_by_its_name_as_the_core_made_it() -> None:
    placeholder = pod({ANNOTATION_PLACEHOLDER: "true", ANNOTATION_TASK_GROUP_NAME: "worker"}, name="tg-job-worker-1")
    assert pod_key(placeholder) == "team/tg-job-worker-1"
    ask = pod_to_ask(placeholder, None)
    assert ask.placeholder and ask.key == "team/tg-job-worker-1"
    assert pod_key(pod({})) == "u-1"


def test_bad_gang_annotations_are_named_and_the_pod_waits() -> None:
    cases = {
        "{not json": "not JSON",
        json.dumps({"name": "w"}): "expected a JSON list of task groups",
        json.dumps([{"minMember": 1}]): "'name' must be a non-empty string",
        json.dumps([{"name": "w", "minMember": "two"}]): "'minMember' must be a whole number",
        json.dumps([{"name": "w", "minMember": 1, "minResource": {"cpu": "lots"}}]): "resource 'cpu'",
        json.dumps([{"name": "w", "minMember": 1}, {"name": "w", "minMember": 1}]): "defined more than once",
        json.dumps([{"name": "w", "minMember": 1, "tolerations": {"key": "x"}}]): "'tolerations' has the wrong shape",
    }
    for raw, expected in cases.items():
        ask = pod_to_ask(pod({ANNOTATION_TASK_GROUPS: raw}), None)
        assert ask.gang is None
        assert len(ask.problems) == 1 and expected in ask.problems[0], (raw, ask.problems)
        assert ANNOTATION_TASK_GROUPS in ask.problems[0]


# yunikorn-k8shim's TestGetSchedulingPolicyParams (pkg/cache/gang_utils_test.go) and the
# application metadata test's "gangSchedulingStyle=Hard=Soft": (annotation key, value) ->
# (timeout, style) as YuniKorn reads them (its timeout 0 is the default), and what Herder names
# in the warning: every ignored pair.
UNKNOWN = "unknownPara=unkown"
YUNIKORN_POLICY_ROWS = [
    (
        ANNOTATION_POLICY,
        f"{UNKNOWN} placeholderTimeoutInSeconds=50=25 gangSchedulingStyle=Hard=Soft",
        (DEFAULT_TIMEOUT, SOFT),
        [UNKNOWN, "'placeholderTimeoutInSeconds=50=25' is not key=value", "'gangSchedulingStyle=Hard=Soft'"],
    ),
    (
        ANNOTATION_POLICY,
        f"{UNKNOWN} placeholderTimeoutInSeconds=50 gangSchedulingStyle=Hard=Soft",
        (50.0, SOFT),
        [UNKNOWN, "'gangSchedulingStyle=Hard=Soft' is not key=value"],
    ),
    (
        ANNOTATION_POLICY,
        f"{UNKNOWN} placeholderTimeoutInSeconds=oneSecond gangSchedulingStyle=Soft",
        (DEFAULT_TIMEOUT, SOFT),
        [UNKNOWN, "placeholderTimeoutInSeconds must be whole seconds, got 'oneSecond'; the default (900 s) applies"],
    ),
    (ANNOTATION_POLICY, UNKNOWN, (DEFAULT_TIMEOUT, SOFT), [UNKNOWN]),
    ("policyParamUndefined", f"{UNKNOWN} placeholderTimeoutInSeconds=50", (DEFAULT_TIMEOUT, SOFT), []),
    (
        ANNOTATION_POLICY,
        f"{UNKNOWN} placeholderTimeoutInSeconds=50  gangSchedulingStyle=Hard",
        (50.0, HARD),
        [UNKNOWN],
    ),
    (ANNOTATION_POLICY, f"{UNKNOWN} gangSchedulingStyle=Soft", (DEFAULT_TIMEOUT, SOFT), [UNKNOWN]),
    (
        ANNOTATION_POLICY,
        f"{UNKNOWN} gangSchedulingStyle=abc",
        (DEFAULT_TIMEOUT, SOFT),
        [UNKNOWN, "gangSchedulingStyle must be Soft or Hard, got 'abc'; the gang is Soft"],
    ),
    (
        ANNOTATION_POLICY,
        "placeholderTimeoutInSeconds gangSchedulingStyle",
        (DEFAULT_TIMEOUT, SOFT),
        ["'placeholderTimeoutInSeconds' is not key=value", "'gangSchedulingStyle' is not key=value"],
    ),
    (ANNOTATION_POLICY, "gangSchedulingStyle=Hard=Soft", (DEFAULT_TIMEOUT, SOFT), ["'gangSchedulingStyle=Hard=Soft'"]),
]


@pytest.mark.parametrize(("key", "value", "read", "named"), YUNIKORN_POLICY_ROWS)
def test_malformed_scheduling_policy_parameters_fall_back_as_in_yunikorn_and_are_named(
    key: str, value: str, read: tuple[float, str], named: list[str]
) -> None:
    ask = pod_to_ask(pod({ANNOTATION_TASK_GROUPS: json.dumps(GROUPS), key: value}), None)
    assert ask.problems == ()  # the gang goes on: a Spark job that runs on YuniKorn runs here
    assert ask.gang is not None and (ask.gang.timeout, ask.gang.style) == read
    assert len(ask.notices) == len(named)
    for notice, expected in zip(ask.notices, named, strict=True):
        assert expected in notice and f"pod team/job-0 annotation {ANNOTATION_POLICY}" in notice


def test_a_later_parameter_overrides_an_earlier_one_and_a_bad_timeout_resets_to_the_default() -> None:
    # YuniKorn assigns each pair in turn: a timeout that does not parse is 0 (the default) even
    # after a good one, and an unknown style is Soft even after Hard.
    for raw, read in {
        "placeholderTimeoutInSeconds=30 placeholderTimeoutInSeconds=60": (60.0, SOFT),
        "placeholderTimeoutInSeconds=30 placeholderTimeoutInSeconds=soon": (DEFAULT_TIMEOUT, SOFT),
        "gangSchedulingStyle=Hard gangSchedulingStyle=hard": (DEFAULT_TIMEOUT, SOFT),
        "placeholderTimeoutInSeconds=-5 gangSchedulingStyle=Hard": (DEFAULT_TIMEOUT, HARD),
        "placeholderTimeoutInSeconds=+45": (45.0, SOFT),
        "placeholderTimeoutInSeconds=1_000": (DEFAULT_TIMEOUT, SOFT),  # Go's ParseInt takes no underscores
    }.items():
        ask = pod_to_ask(pod({ANNOTATION_TASK_GROUPS: json.dumps(GROUPS), ANNOTATION_POLICY: raw}), None)
        assert ask.gang is not None and (ask.gang.timeout, ask.gang.style) == read, raw


def test_a_timeout_beyond_int64_saturates_as_gos_parseint_does_and_is_named() -> None:
    raw = "placeholderTimeoutInSeconds=" + "9" * 400
    ask = pod_to_ask(pod({ANNOTATION_TASK_GROUPS: json.dumps(GROUPS), ANNOTATION_POLICY: raw}), None)
    assert ask.problems == () and ask.gang is not None and ask.gang.timeout == float(2**63 - 1)
    assert len(ask.notices) == 1 and "out of range; read as 9223372036854775807" in ask.notices[0]


def test_well_formed_parameters_say_nothing() -> None:
    raw = "placeholderTimeoutInSeconds=60 gangSchedulingStyle=Hard"
    ask = pod_to_ask(pod({ANNOTATION_TASK_GROUPS: json.dumps(GROUPS), ANNOTATION_POLICY: raw}), None)
    assert ask.notices == () and ask.problems == ()


def test_a_groups_labels_and_rules_between_pods_are_its_placeholders_own() -> None:
    spread = {
        "maxSkew": 1,
        "topologyKey": "topology.kubernetes.io/zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchLabels": {"role": "worker"}},
    }
    anti = {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"role": "worker"}}}
    groups = [
        {
            "name": "worker",
            "minMember": 2,
            "labels": {"role": "worker"},
            "topologySpreadConstraints": [spread],
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [anti]}},
        }
    ]
    ask = pod_to_ask(pod({ANNOTATION_TASK_GROUPS: json.dumps(groups)}), None)
    assert ask.gang is not None
    rules = ask.gang.groups[0].pod
    assert dict(rules.labels) == {"role": "worker", "yunikorn.apache.org/app-id": "job"}
    assert rules.namespace == "team"
    assert len(rules.spread) == 1 and len(rules.anti_affinity) == 1


def test_a_malformed_rule_in_a_group_is_named() -> None:
    groups = [{"name": "w", "minMember": 1, "topologySpreadConstraints": [{"maxSkew": "one"}]}]
    ask = pod_to_ask(pod({ANNOTATION_TASK_GROUPS: json.dumps(groups)}), None)
    assert ask.gang is None and len(ask.problems) == 1
    assert "(task group 'w')" in ask.problems[0]
