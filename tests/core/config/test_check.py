"""One check finds every problem of every kind it can, in the file's own units, and always warns.

`check_config` is what `herder validate`, the ConfigMap reload and `POST /ws/v1/validate-conf`
run, so what these tests pin down holds for all three.
"""

from __future__ import annotations

import textwrap

import pytest

from core.config import QUEUES_KEY, check_config, check_config_data

STRUCTURAL_SEMANTIC_AND_OLD_UNIT = """
partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
            maxApplications: 3
            resources:
              guaranteed: {vcore: 10000}
              max: {vcore: 5, memory: 100000}
"""


def test_a_structural_error_a_semantic_error_and_an_old_unit_are_reported_in_one_run() -> None:
    report = check_config(STRUCTURAL_SEMANTIC_AND_OLD_UNIT)
    assert not report.valid
    assert report.problems == (
        "partitions[default].queues.root.a: unknown key 'maxApplications' (did you mean 'maxapplications'?)",
        "partitions[default].queues.root.a: guaranteed vcore 10000 exceeds max 5",
    )
    assert any("vcore 10000 is read as 10000 cores" in w and "'10000m'" in w for w in report.warnings)
    assert any("memory 100000 is read as 100000 bytes" in w for w in report.warnings)


@pytest.mark.parametrize(
    ("resources", "message"),
    [
        ({"guaranteed": "{memory: 8Gi}", "max": "{memory: 4Gi}"}, "guaranteed memory 8Gi exceeds max 4Gi"),
        ({"guaranteed": "{memory: 3G}", "max": "{memory: 2000M}"}, "guaranteed memory 3G exceeds max 2000M"),
        ({"guaranteed": "{vcore: 1500m}", "max": "{vcore: 1}"}, "guaranteed vcore 1500m exceeds max 1"),
        ({"guaranteed": "{cpu: 4}", "max": "{vcore: 2}"}, "guaranteed vcore 4 exceeds max 2"),
    ],
)
def test_amounts_are_shown_as_the_file_wrote_them(resources: dict[str, str], message: str) -> None:
    source = f"""
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - name: a
                resources: {{guaranteed: {resources["guaranteed"]}, max: {resources["max"]}}}
    """
    assert check_config(textwrap.dedent(source)).problems == (f"partitions[default].queues.root.a: {message}",)


def test_a_sum_the_file_never_wrote_is_shown_in_the_resources_usual_unit() -> None:
    source = """
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - name: team
                resources: {max: {memory: 16Gi, vcore: 4}}
                queues:
                  - {name: a, resources: {guaranteed: {memory: 10Gi, vcore: 2500m}}}
                  - {name: b, resources: {guaranteed: {memory: 8Gi, vcore: 2}}}
    """
    assert check_config(textwrap.dedent(source)).problems == (
        "partitions[default].queues.root.team: children's guaranteed memory 18Gi exceeds max 16Gi",
        "partitions[default].queues.root.team: children's guaranteed vcore 4500m exceeds max 4",
    )


def test_warnings_come_with_the_problems_of_a_refused_file() -> None:
    source = STRUCTURAL_SEMANTIC_AND_OLD_UNIT.replace("max: {vcore: 5", "max: {vcore: 50000")
    source = source.replace(
        "      - name: root\n", "      - name: root\n        properties: {application.sort.policy: stateaware}\n"
    )
    report = check_config(source)
    assert report.problems == (
        "partitions[default].queues.root.a: unknown key 'maxApplications' (did you mean 'maxapplications'?)",
    )
    assert any("'stateaware' is deprecated" in w for w in report.warnings)
    assert any("vcore 50000 is read as 50000 cores" in w for w in report.warnings)


def test_a_misspelt_resource_is_a_warning_with_the_nearest_name() -> None:
    source = """
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - {name: a, resources: {max: {memroy: 8Gi, vcore: 4}}}
              - {name: b, resources: {max: {gpu: 2, nvidia.com/gpu: 1}}}
              - {name: c, resources: {max: {hugepages-2Mi: 1Gi, example.com/fpga: 1, pods: 10, ephemeral-storage: 1Gi}}}
    """
    report = check_config(textwrap.dedent(source))
    assert report.valid
    odd = [w for w in report.warnings if "is not one a pod can request" in w]
    assert len(odd) == 2
    assert odd[0].startswith("partitions[default].queues.root.a.resources.max: resource 'memroy'")
    assert odd[0].endswith("did you mean 'memory'?")
    assert odd[1].startswith("partitions[default].queues.root.b.resources.max: resource 'gpu'")
    assert odd[1].endswith("did you mean 'nvidia.com/gpu'?")


@pytest.mark.parametrize(
    ("key", "guess"),
    [("placementrule", "placementrules"), ("nodesortpolcy", "nodesortpolicy"), ("limts", "limits")],
)
def test_an_unknown_key_gets_the_nearest_known_one(key: str, guess: str) -> None:
    source = f"partitions:\n  - name: default\n    {key}: []\n    queues: [{{name: root}}]\n"
    assert check_config(source).problems == (f"partitions[default]: unknown key {key!r} (did you mean {guess!r}?)",)


def test_an_unknown_key_like_no_known_one_lists_the_known_keys() -> None:
    source = "partitions:\n  - name: default\n    queues: [{name: root, colour: blue}]\n"
    [problem] = check_config(source).problems
    assert problem.startswith("partitions[default].queues.root: unknown key 'colour' (known keys: adminacl, ")


def test_an_unknown_property_gets_the_nearest_known_one() -> None:
    source = "partitions:\n  - name: default\n    queues: [{name: root, properties: {preemption.dealy: 10s}}]\n"
    report = check_config(source)
    assert report.valid
    assert any(
        "preemption.dealy: property kept" in w and "did you mean 'preemption.delay'?" in w for w in report.warnings
    )


def test_an_unknown_setting_gets_the_nearest_known_one() -> None:
    report = check_config_data({QUEUES_KEY: "", "quota.recycle.dealy": "30s"})
    assert report.problems == ("quota.recycle.dealy: unknown setting (did you mean 'quota.recycle.delay'?)",)


def test_yunikorns_own_settings_are_kept_with_a_warning_not_refused() -> None:
    data = {QUEUES_KEY: "", "service.clusterId": "mycluster", "log.core.scheduler.level": "debug"}
    data["admissionController.accessControl.systemUsers"] = "^system:serviceaccount:kube-system:"
    report = check_config_data(data)
    assert report.valid
    assert "service.clusterId: a YuniKorn setting Herder does not read; ignored" in report.warnings
    assert any(w.startswith("admissionController.accessControl.systemUsers:") and "admission.trustedUsers" in w
               for w in report.warnings)  # fmt: skip
    assert report.config is not None and "service.clusterId" in " ".join(report.config.warnings)


def test_a_configmaps_queue_problems_and_setting_problems_come_together() -> None:
    report = check_config_data({QUEUES_KEY: STRUCTURAL_SEMANTIC_AND_OLD_UNIT, "bind.workers": "many"})
    assert [p.split(":")[0] for p in report.problems] == [QUEUES_KEY, QUEUES_KEY, "bind.workers"]
    assert all(w.startswith(f"{QUEUES_KEY}: ") for w in report.warnings)


def test_repeated_keys_are_problems_with_their_lines_and_the_rest_is_still_checked() -> None:
    source = """partitions:
  - name: default
    queues:
      - name: root
        queues:
          - name: a
            resources: {max: {vcore: 2}}
            resources: {max: {vcore: 4}}
          - name: b
            name: c
            maxapplications: x
"""
    assert check_config(source).problems == (
        "line 8, column 13: key 'resources' is given again (first at line 7); the later value would silently "
        "replace the first",
        "line 10, column 13: key 'name' is given again (first at line 9); the later value would silently replace "
        "the first",
        "partitions[default].queues.root.c.maxapplications: expected a whole number, got 'x'",
    )


def test_a_value_that_cannot_be_read_is_not_reported_again_as_a_wrong_comparison() -> None:
    # maxapplications 'lots' reads as nothing; the parent's rule (children must set theirs) and the
    # limit's "sets neither" would otherwise echo it.
    source = """
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - name: p
                maxapplications: 4
                queues:
                  - name: c
                    maxapplications: lots
                    limits: [{users: [sue], maxresources: {memory: lots}}]
    """
    report = check_config(textwrap.dedent(source))
    assert [p.split(": ", 1)[0] for p in report.problems] == [
        "partitions[default].queues.root.p.c.maxapplications",
        "partitions[default].queues.root.p.c.limits[0].maxresources",
    ]


def test_a_partition_not_named_default_is_refused_naming_what_it_defines() -> None:
    report = check_config("partitions:\n  - name: gpu\n    queues: [{name: root}]\n")
    assert report.problems == (
        "partitions: Herder schedules the partition 'default' only (as YuniKorn's Kubernetes shim does), and this "
        "configuration does not define it (it defines 'gpu')",
    )


def test_another_partition_beside_default_is_ignored_with_a_warning() -> None:
    source = "partitions:\n  - name: Default\n    queues: [{name: root}]\n  - name: gpu\n    queues: [{name: root}]\n"
    report = check_config(source)
    assert report.valid and report.config is not None
    assert report.config.partition().name == "default"
    assert "partitions[gpu]: ignored; Herder schedules the partition 'default' only" in report.warnings


def test_a_limit_fits_the_max_in_force_at_its_queue_including_the_parents() -> None:
    # Seed 001: "the resource quota assigned in a limit must be smaller than the maximum allowed at
    # that level for the queue" -- a queue without a max of its own is bounded by its parent's.
    source = """
    partitions:
      - name: default
        queues:
          - name: root
            queues:
              - name: team
                resources: {max: {memory: 64Gi}}
                queues:
                  - name: a
                    limits: [{users: [sue], maxresources: {memory: 100Gi}}]
    """
    assert check_config(textwrap.dedent(source)).problems == (
        "partitions[default].queues.root.team.a.limits[0]: maxresources memory 100Gi exceeds 64Gi, the max of "
        "root.team, which holds here",
    )


def test_a_named_limit_under_a_wildcard_limit_above_is_held_to_it() -> None:
    # root lets every user have 10Gi; sue's 20Gi in root.a could never be reached.
    source = """
    partitions:
      - name: default
        queues:
          - name: root
            limits: [{users: ["*"], maxresources: {memory: 10Gi}}]
            queues:
              - name: a
                limits: [{users: [sue], maxresources: {memory: 20Gi}}]
    """
    assert check_config(textwrap.dedent(source)).problems == (
        "partitions[default].queues.root.a.limits[0]: user 'sue': ancestor queue 'root' ('*' limit) limits memory "
        "to 10Gi, this limit asks 20Gi",
    )


def test_an_acl_name_yunikorn_would_ignore_is_a_warning() -> None:
    source = "partitions:\n  - name: default\n    queues: [{name: root, submitacl: 'alice,b@d! ops'}]\n"
    report = check_config(source)
    assert report.valid
    assert report.warnings == (
        "partitions[default].queues.root.submitacl: 'b@d!' is not a valid user name; YuniKorn ignores such an "
        "entry, Herder matches it only to that exact user name",
    )


def test_an_acl_with_two_spaces_in_a_row_is_refused_as_the_scheduler_would() -> None:
    # The scheduler splits an ACL on each space: "a  b" is three fields there.
    source = "partitions:\n  - name: default\n    queues: [{name: root, submitacl: 'alice  ops'}]\n"
    assert "more than one space" in check_config(source).problems[0]


def test_a_fixed_parent_rule_that_may_not_create_its_missing_queue_is_warned_about() -> None:
    # YuniKorn's check uses the rule's own create for the whole path and accepts this chain, which
    # never places anything: the parent rule may not create root.namespaces.
    source = """
    partitions:
      - name: default
        placementrules:
          - name: tag
            value: namespace
            create: true
            parent: {name: fixed, value: root.namespaces}
        queues: [{name: root}]
    """
    report = check_config(textwrap.dedent(source))
    assert report.valid
    assert report.warnings == (
        "partitions[default].placementrules[0].parent: root.namespaces does not exist and this parent rule's create "
        "is false, so the rule never places an application",
    )


def test_a_childless_queue_a_fixed_parent_rule_names_must_say_parent_true() -> None:
    source = """
    partitions:
      - name: default
        placementrules:
          - {name: user, create: true, parent: {name: fixed, value: production}}
        queues:
          - name: root
            queues: [{name: production}]
    """
    report = check_config(textwrap.dedent(source))
    assert report.problems == (
        "partitions[default].placementrules[0]: root.production is a leaf queue, but the rules after the fixed one "
        "place applications in queues below it (set 'parent: true' on it, or name a parent queue)",
    )
    assert check_config(textwrap.dedent(source).replace("{name: production}", "{name: production, parent: true}")).valid


def test_quantities_finer_than_their_unit_are_refused() -> None:
    queue = "{name: a, resources: {max: {vcore: 0.0001, pods: 1.5}}}"
    source = f"partitions:\n  - name: default\n    queues: [{{name: root, queues: [{queue}]}}]\n"
    problems = check_config(source).problems
    assert any("'vcore': 0.0001 is finer than a millicore" in p for p in problems), problems
    assert any("'pods': 1.5 is not a whole number" in p for p in problems), problems


def test_partition_limits_are_named_where_they_were_written() -> None:
    source = """
    partitions:
      - name: default
        limits: [{users: [sue], maxresources: {memory: lots}}, {users: [sue], maxapplications: 1}]
        queues: [{name: root}]
    """
    assert [p.split(":")[0] for p in check_config(textwrap.dedent(source)).problems] == [
        "partitions[default].limits[0].maxresources",
        "partitions[default].limits[1]",
    ]
