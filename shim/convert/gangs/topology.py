"""The topology a gang's pods ask for -> the core's GangTopology (core/gang/spec.py).

    kueue.x-k8s.io/podset-required-topology: <node label>    every member in one domain of it
    kueue.x-k8s.io/podset-preferred-topology: <node label>   one domain if possible, else few

Kueue's pod annotations, read off the pod that defines its gang (for YuniKorn's task groups, the
pod carrying `yunikorn.apache.org/task-groups`), whatever API defines the gang: any gang source
hands its annotations here. The value is a node label key (`topology.example.com/rack`,
`kubernetes.io/hostname`); anything else, or both annotations at once, is a problem naming the
annotation, and the pod waits with it. `label_key` checks a node label key wherever an API
states one (a Kubernetes PodGroup's `spec.schedulingConstraints.topology[].key`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from core.gang.spec import GangTopology
from shim.convert.objects import ConversionError

ANNOTATION_REQUIRED_TOPOLOGY = "kueue.x-k8s.io/podset-required-topology"
ANNOTATION_PREFERRED_TOPOLOGY = "kueue.x-k8s.io/podset-preferred-topology"
TOPOLOGY_ANNOTATIONS = (ANNOTATION_REQUIRED_TOPOLOGY, ANNOTATION_PREFERRED_TOPOLOGY)

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def gang_topology(annotations: Mapping[str, Any], where: str) -> GangTopology | None:
    """The topology these annotations ask for, or None; ConversionError when they are unreadable.
    `where` names the object carrying them (`pod ml/train-0`)."""
    required = annotations.get(ANNOTATION_REQUIRED_TOPOLOGY)
    preferred = annotations.get(ANNOTATION_PREFERRED_TOPOLOGY)
    if required is not None and preferred is not None:
        raise ConversionError(
            f"{where}: annotations {ANNOTATION_REQUIRED_TOPOLOGY} and {ANNOTATION_PREFERRED_TOPOLOGY}"
            " are both set; a gang takes one of them"
        )
    if required is not None:
        return GangTopology(label_key(required, f"{where} annotation {ANNOTATION_REQUIRED_TOPOLOGY}"), True)
    if preferred is not None:
        return GangTopology(label_key(preferred, f"{where} annotation {ANNOTATION_PREFERRED_TOPOLOGY}"), False)
    return None


def label_key(value: Any, where: str) -> str:
    """A node label key as Kubernetes validates one: `[prefix/]name`, the prefix a DNS subdomain
    of at most 253 characters, the name at most 63 alphanumerics, `-`, `_` or `.`."""
    if isinstance(value, str):
        prefix, slash, name = value.strip().rpartition("/")
        if _NAME.match(name) and (not slash or (len(prefix) <= 253 and _PREFIX.match(prefix))):
            return value.strip()
    raise ConversionError(f"{where}: expected a node label key such as topology.kubernetes.io/zone, got {value!r}")
