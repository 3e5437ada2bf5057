"""Asks of sibling pods: pods made from one template (a Job's, a ReplicaSet's, a bench's) share
every part of their ask but their name, uid and creation time, so the watch reads the first one
whole and gives the others its ask with their own identity (a restart's listing is tens of
thousands of such pods).

A pod takes a sibling's ask only when everything the ask is read from is equal: its namespace
(the very object the sibling was read with), labels, annotations, owner references and spec
but for `nodeName`. Its size is read anew unless neither pod's status can change it (a pod
resized in place counts what the kubelet holds: shim/convert/pod_size.py). An ask with a
problem, a notice, a gang or a placeholder, a pod naming a PodGroup (its ask follows the
group's object) or mounting an ephemeral volume (its claim is named after the pod) is never
shared: such pods are read whole each time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from core.kept import KeptTable
from core.objects.ask import Ask
from shim.convert.gang_sources import GroupLookup, group_ref, no_groups
from shim.convert.objects import ConversionError
from shim.convert.pod_size import pod_resource
from shim.convert.pod_view import PodView
from shim.convert.pods import pod_created, pod_to_ask, shared_resource

# status fields a pod's size is read from (an in-place resize): without them the spec alone says it
_SIZE_STATUS = ("containerStatuses", "resize", "conditions")

TEMPLATES_KEPT = 4096


class _Template(NamedTuple):
    ask: Ask
    namespace: Mapping[str, Any] | None
    annotations: Mapping[str, Any]
    owners: tuple[Mapping[str, Any], ...]
    spec: Mapping[str, Any]  # without nodeName
    size_from_spec: bool


def _without_node(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    if "nodeName" not in spec:
        return spec
    rest = dict(spec)
    del rest["nodeName"]
    return rest


def _size_from_spec(pod: PodView) -> bool:
    status = pod.status
    return not status or not any(field in status for field in _SIZE_STATUS)


def _shareable(ask: Ask, pod: PodView) -> bool:
    if ask.problems or ask.notices or ask.gang is not None or ask.task_group or ask.placeholder:
        return False
    if any(isinstance(volume, Mapping) and volume.get("ephemeral") is not None for volume in pod.volumes):
        return False
    try:
        return group_ref(pod) is None
    except ConversionError:
        return False


class SiblingAsks:
    """The last shareable ask read per namespace and labels, and what it was read from."""

    def __init__(self, limit: int = TEMPLATES_KEPT) -> None:
        self._templates: KeptTable[tuple[str, tuple[tuple[str, Any], ...]], _Template] = KeptTable(limit)
        self.shared = 0  # asks given from a sibling's (for tests and the bench)

    def ask(
        self,
        pod: PodView,
        namespace: Mapping[str, Any] | None,
        scheduler_name: str,
        key: str,
        groups: GroupLookup = no_groups,
    ) -> Ask:
        """`pod_to_ask(pod, namespace, scheduler_name, key, groups)`, from a sibling's ask when it has one."""
        try:
            template_key = (pod.namespace, tuple(pod.labels.items()))
            template = self._templates.get(template_key)
        except TypeError:  # a label value that cannot be hashed: read the pod whole
            return pod_to_ask(pod, namespace, scheduler_name, key, groups)
        if template is not None:
            shared = self._from_sibling(template, pod, namespace, key)
            if shared is not None:
                self.shared += 1
                return shared
        ask = pod_to_ask(pod, namespace, scheduler_name, key, groups)
        if _shareable(ask, pod):
            self._templates.keep(
                template_key,
                _Template(ask, namespace, pod.annotations, pod.owners, _without_node(pod.spec), _size_from_spec(pod)),
            )
        return ask

    @staticmethod
    def _from_sibling(template: _Template, pod: PodView, namespace: Mapping[str, Any] | None, key: str) -> Ask | None:
        if not (
            template.namespace is namespace
            and template.annotations == pod.annotations
            and template.owners == pod.owners
            and template.spec == _without_node(pod.spec)
        ):
            return None
        try:
            ask = template.ask.copy_as(key, pod.name, pod_created(pod))
            if not (template.size_from_spec and _size_from_spec(pod)):
                size = pod_resource(pod)
                if size != ask.resource:
                    ask = ask._replace(resource=shared_resource(size))
        except ConversionError:
            return None  # read whole: the problem goes into the ask
        return ask
