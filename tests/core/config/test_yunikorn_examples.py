"""YuniKorn's own example configurations get the verdict YuniKorn's validator gives them.

The configurations are the examples of yunikorn-core (`config/queues.yaml`, `config/limit.yaml`)
and of YuniKorn's documentation (yunikorn-site `docs/user_guide/*.md`), as published; each
test says where its text comes from and why YuniKorn accepts or refuses it. Where Herder
accepts, the warnings say what it reads differently.
"""

from __future__ import annotations

import textwrap

import pytest

from core.config import check_config, check_config_data

# yunikorn-core config/queues.yaml: capitalised rule names, a second partition, a resource
# named `gpu`, an unknown property. YuniKorn accepts it.
CORE_QUEUES = """
partitions:
  - name: default
    nodesortpolicy:
        type: binpacking
    placementrules:
      - name: User
        create: true
        parent:
          name: Provided
          create: false
        filter:
          type: allow
          groups:
            - sandbox
      - name: Provided
        create: true
    limits:
      - limit: "resource limit for user"
        users:
        - user1
        maxresources: {memory: 10G, vcore: 10}
      - limit: "application limit for group"
        groups:
          - sandbox
        maxapplications: 10
    queues:
      - name: root
        queues:
          - name: advertisement
            resources:
              guaranteed:
                {memory: 500G, vcore: 50}
              max:
                {memory: 800G, vcore: 80}
          - name: search
            resources:
              guaranteed:
                memory: 400G
                vcore: 40
              max:
                memory: 600G
                vcore: 60
          - name: sandbox
            parent: true
            submitacl: " sandbox"
            resources:
              guaranteed:
                memory: 100G
                vcore: 10
              max:
                memory: 100G
                vcore: 10
  - name: gpu
    queues:
      - name: production
        adminacl: "admin admin"
        maxapplications: 10
      - name: test
        properties:
          x: y
        limits:
          - limit: "resource limit for user"
            users:
              - gpuuser
            maxresources: { memory: 10G, vcore: 10, gpu: 50 }
"""

# yunikorn-core config/limit.yaml: a `*` group limit first and a named group after it, and
# user@domain allowed 50 applications under a queue that allows 10. YuniKorn refuses it
# ("should not specify only one group limit that is using the wildcard").
CORE_LIMITS = """
partitions:
  - name: default
    queues:
      - name: root
        limits:
          - limit:
            users:
            - john
            - sue
            maxapplications: 10
            maxresources: {memory: 10G, vcore: 10}
          - limit:
            users:
            - bob
            maxapplications: 100
        queues:
          - name: level1
            limits:
              - limit:
                users:
                - user@domain
                - testuser
                maxapplications: 10
              - limit:
                groups:
                - "*"
                maxapplications: 10
              - limit:
                groups:
                - appdev
                maxapplications: 20
            queues:
              - name: level2-2
                limits:
                  - limit:
                    users:
                    - user@domain
                    maxapplications: 1
              - name: level2-3
                limits:
                  - limit:
                    users:
                    - user@domain
                    maxapplications: 50
"""

# docs/user_guide/queue_config.md, "An example configuration of a queue root.namespaces".
SITE_PARENT_WITH_LIMITS = """
partitions:
  - name: default
    queues:
      - name: namespaces
        parent: true
        maxapplications: 12
        resources:
          guaranteed:
            {memory: 1G, vcore: 10}
          max:
            {memory: 10G, vcore: 100}
        queues:
          - name: level1
            maxapplications: 8
            resources:
              guaranteed:
                {memory: 500M, vcore: 5}
              max:
                {memory: 5G, vcore: 50}
"""

# docs/user_guide/queue_config.md, "Child Template".
SITE_CHILD_TEMPLATE = """
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
    queues:
      - name: root
        submitacl: '*'
        childtemplate:
          maxapplications: 10
          properties:
            application.sort.policy: fifo
          resources:
            guaranteed:
              vcore: 1
              memory: 1G
            max:
              vcore: 20
              memory: 600G
        queues:
          - name: parent
            parent: true
            childtemplate:
              resources:
                max:
                  vcore: 21
                  memory: 610G
          - name: notemplate
            parent: true
"""

# docs/user_guide/queue_config.md, the partition example: `nodesortpolicy: fair` is a string
# where YuniKorn's reader wants a mapping, and there are no queues. YuniKorn refuses it.
SITE_PARTITION_SHORTHAND = """
partitions:
  - name: default
    nodesortpolicy: fair
    preemption:
      enabled: false
      quotapreemptionenabled: false
    usergroupresolver:
      type: ldap
"""

# docs/user_guide/sorting_policies.md, node sorting: no queues, which YuniKorn refuses
# ("queue config is not set").
SITE_NODE_SORTING_ONLY = """
partitions:
  - name: default
    nodesortpolicy:
        type: fair
"""

# docs/user_guide/placement_rules.md, the last example.
SITE_PLACEMENT_PRODUCTION = """
partitions:
  - name: default
    queues:
      - name: production
        submitacl: john,bob
    placementrules:
      - name: fixed
        value: root.production
      - name: user
        create: true
"""

# docs/user_guide/priorities.md, the fenced tenants.
SITE_PRIORITIES = """
partitions:
  - name: default
    queues:
    - name: root
      queues:
      - name: system
        queues:
        - name: system-normal
          properties:
            priority.offset: "0"
        - name: system-high
          properties:
            priority.offset: "1000"
        - name: system-low
          properties:
            priority.offset: "-1000"
      - name: tenants
        properties:
          priority.policy: "fence"
        queues:
          - name: tenant-a
            properties:
              priority.policy: "fence"
              priority.offset: "10"
            queues:
              - name: child-a-1
              - name: child-a-2
          - name: tenant-b
            properties:
              priority.policy: "fence"
              priority.offset: "0"
            queues:
              - name: child-b-1
              - name: child-b-2
"""

# docs/user_guide/acls.md, the full example.
SITE_ACLS = """
partitions:
  - name: default
    queues:
      - name: test
        submitacl: "*"
        adminacl: sue dev,test
      - name: product
        submitacl: " product"
"""

# docs/user_guide/quota_preemption.md: a YuniKorn 1.8 feature Herder does not have.
SITE_QUOTA_PREEMPTION = """
partitions:
  - name: default
    preemption:
      quotapreemptionenabled: true
    queues:
      - name: root
        queues:
          - name: prod
            parent: false
            resources:
              max:
                {memory: 10T, vcore: 1000}
            properties:
              quota.preemption.delay: 15m
"""

# docs/user_guide/use_case.md, "Specify parent queues for dynamic queues" (its ConfigMap).
SITE_USE_CASE_QUEUES = """
partitions:
  - name: default
    placementrules:
      - name: provided
        create: true
        parent:
          name: fixed
          value: root.system
          filter:
            type: allow
            users:
              - admin
            groups:
              - admin
      - name: user
        create: true
        filter:
          type: allow
          groups:
            - group-a
        parent:
          name: fixed
          value: root.tenants.group-a
      - name: tag
        value: namespace
        create: true
        filter:
          type: allow
          groups:
            - group-b
        parent:
          name: fixed
          value: root.tenants.group-b
    queues:
      - name: root
        queues:
        - name: system
          adminacl: " admin"
          parent: true  # Let the queue be designated as the parent queue
        - name: tenants
          parent: true
          queues:
            - name: group-a
              adminacl: " group-a"
              parent: true
            - name: group-b
              adminacl: " group-b"
              parent: true
"""


@pytest.mark.parametrize(
    "source",
    [SITE_PARENT_WITH_LIMITS, SITE_CHILD_TEMPLATE, SITE_PLACEMENT_PRODUCTION, SITE_PRIORITIES, SITE_ACLS],
    ids=["queue_config-namespaces", "queue_config-childtemplate", "placement_rules-production", "priorities", "acls"],
)
def test_examples_yunikorn_accepts_are_accepted_without_a_warning(source: str) -> None:
    report = check_config(textwrap.dedent(source))
    assert report.valid, report.problems
    assert report.warnings == ()


def test_yunikorn_cores_example_is_accepted_with_what_herder_reads_differently() -> None:
    report = check_config(CORE_QUEUES)
    assert report.valid, report.problems
    assert report.config is not None
    rules = report.config.partition().placement_rules
    assert [rule.name for rule in rules] == ["user", "provided"]
    warned = "\n".join(report.warnings)
    assert "partitions[gpu]: ignored; Herder schedules the partition 'default' only" in warned
    assert "resource 'gpu' is not one a pod can request" in warned and "did you mean 'nvidia.com/gpu'?" in warned
    assert "properties.x: property kept and shown in the configuration, but Herder does not read it" in warned


def test_yunikorn_cores_limits_example_is_refused_as_yunikorn_refuses_it() -> None:
    problems = check_config(CORE_LIMITS).problems
    assert (
        "partitions[default].queues.root.level1.limits[2]: group 'appdev' comes after the '*' group limit" in problems
    )
    assert (
        "partitions[default].queues.root.level1.level2-3.limits[0]: user 'user@domain': ancestor queue 'root.level1' "
        "limits maxapplications to 10, this limit asks 50"
    ) in problems


def test_the_documented_partition_shorthand_is_refused_with_the_mapping_to_write() -> None:
    problems = check_config(SITE_PARTITION_SHORTHAND).problems
    assert "partitions[default].nodesortpolicy: expected a mapping, got str (write 'nodesortpolicy: {type: fair}')" in (
        problems
    )
    assert any(p.startswith("partitions[default]: queues is required") for p in problems)


def test_a_partition_without_queues_is_refused_as_yunikorn_refuses_it() -> None:
    assert check_config(SITE_NODE_SORTING_ONLY).problems == (
        "partitions[default]: queues is required (at least the root queue: queues: [{name: root}])",
    )


def test_quota_preemption_settings_are_accepted_and_said_to_be_ignored() -> None:
    report = check_config(SITE_QUOTA_PREEMPTION)
    assert report.valid, report.problems
    warned = "\n".join(report.warnings)
    assert "preemption.quotapreemptionenabled: ignored; Herder has no quota-change preemption" in warned
    assert "properties.quota.preemption.delay: property kept" in warned
    assert "did you mean" not in warned


def test_the_use_case_configmap_is_accepted_with_its_admission_setting_warned_about() -> None:
    data = {
        "admissionController.accessControl.externalGroups": "admin,group-a,group-b",
        "queues.yaml": SITE_USE_CASE_QUEUES,
    }
    report = check_config_data(data)
    assert report.valid, report.problems
    assert report.warnings == (
        "admissionController.accessControl.externalGroups: a YuniKorn setting Herder does not read; ignored",
    )
