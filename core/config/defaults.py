"""The configuration Herder runs with when none is given: YuniKorn's default partition."""

from __future__ import annotations

from core.config.schema import (
    DEFAULT_PARTITION,
    ROOT,
    NodeSortPolicyConfig,
    PartitionConfig,
    PlacementRuleConfig,
    QueueConfig,
    SchedulerConfig,
)

DEFAULT_SOURCE = """partitions:
  - name: default
    placementrules:
      - name: tag
        value: namespace
        create: true
    queues:
      - name: root
        submitacl: '*'
    nodesortpolicy:
      type: binpacking
"""


def default_config() -> SchedulerConfig:
    """One partition `default`, tag-by-namespace placement creating queues, root open to all."""
    import hashlib

    root = QueueConfig(name=ROOT, parent=True, submit_acl="*")
    partition = PartitionConfig(
        name=DEFAULT_PARTITION,
        queues=(root,),
        placement_rules=(PlacementRuleConfig(name="tag", create=True, value="namespace"),),
        node_sort_policy=NodeSortPolicyConfig(type="binpacking"),
    )
    return SchedulerConfig(
        partitions=(partition,),
        checksum=hashlib.sha256(DEFAULT_SOURCE.encode()).hexdigest(),
        source=DEFAULT_SOURCE,
    )
