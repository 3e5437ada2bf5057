"""Admission decisions for pods and workloads: who submitted a pod, which scheduler it asks for,
which quota labels it may carry. Pure functions over the `request` part of an AdmissionReview.

The trust model (docs/operator.md, "Webhooks and trust"):

- A pod's `yunikorn.apache.org/user.info` says whose usage it is. On CREATE the webhook writes it
  from the requester's identity (`userInfo.username` and `.groups`).
- Only trusted requesters may supply it themselves: a username matching one of the
  `admission.trustedUsers` regexps (each must match the whole name). Anyone else who supplies
  it is refused, so a user cannot run pods as somebody else.
- Workloads (Deployments, Jobs, ReplicationControllers, PodTemplates, and custom kinds named in
  `admission.templatePaths`: see templates.py) get the same treatment on every pod template,
  so the pods a controller creates from them carry the identity of whoever created the workload. A
  trusted controller's pod (ownerReference with `controller: true`) keeps the template's
  identity while `admission.trustControllers` is true; when it is false such a pod is accounted
  to the requester (the controller) instead.
- A new pod whose PriorityClass carries `yunikorn.apache.org/allow-preemption` gets it copied
  (unless it sets its own), as YuniKorn's admission controller does.
- On UPDATE nobody may change a pod's user.info or its `quota.scheduling.koordinator.sh/preemptible`
  label; an untrusted requester may not change a workload template's user.info.

Mutations are returned as JSON merge patches (`Decision.patch`); the kopf layer turns them into
the JSONPatch an admission response carries.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from core.config.settings import Settings
from core.elastic.spec import ElasticQuotaSpec
from core.elastic.validation import validate_pod_labels
from shim.convert.identity import ANNOTATION_USER_INFO, user_info
from shim.convert.objects import ConversionError, annotations_of, labels_of, list_at, map_at, meta_of
from shim.convert.priority import ANNOTATION_ALLOW_PREEMPTION
from shim.convert.quotas import LABEL_PREEMPTIBLE, LABEL_QUOTA_NAME
from shim.kube.admission.templates import BUILTIN_TEMPLATE_PATHS, parse_template_paths, stamp_patch, templates

DEFAULT_SCHEDULER = "default-scheduler"
FORBIDDEN = 403
INVALID = 400
UNAVAILABLE = 503

# (apiGroup, plural) of the built-in kinds with pod templates (templates.BUILTIN_TEMPLATE_PATHS),
# for registering the webhook; custom kinds are added to the chart's webhook rules by the user.
WORKLOAD_RESOURCES = frozenset(
    {
        ("apps", "deployments"),
        ("apps", "replicasets"),
        ("apps", "statefulsets"),
        ("apps", "daemonsets"),
        ("batch", "jobs"),
        ("batch", "cronjobs"),
        ("", "replicationcontrollers"),
        ("", "podtemplates"),
    }
)


@dataclass(frozen=True, slots=True)
class Decision:
    """Allowed or refused (with a message and HTTP code), plus a JSON merge patch to apply."""

    allowed: bool = True
    message: str = ""
    code: int = 200
    patch: Mapping[str, Any] = field(default_factory=dict)

    @staticmethod
    def deny(message: str, code: int = INVALID) -> Decision:
        return Decision(allowed=False, message=message, code=code)


@dataclass(frozen=True, slots=True)
class QuotaTree:
    """The ElasticQuota tree the core holds and how many pods count against each quota."""

    specs: Mapping[str, ElasticQuotaSpec]
    pods_by_quota: Mapping[str, int]


QuotaTreeProvider = Callable[[], "QuotaTree | None"]
"""The current quota tree, or None while the scheduler has not loaded it yet."""

NamespaceLookup = Callable[[str], "Mapping[str, Any] | None"]
"""The Namespace object with this name (labels are what matter), or None when unknown."""


@dataclass(frozen=True, slots=True)
class AdmissionPolicy:
    """The admission.* settings in the form the decisions use."""

    scheduler_name: str = "herder"
    trusted_users: tuple[re.Pattern[str], ...] = ()
    trust_controllers: bool = True
    namespace_label: str = "herder.io/scheduler"
    template_paths: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(BUILTIN_TEMPLATE_PATHS))

    @staticmethod
    def from_settings(settings: Settings) -> AdmissionPolicy:
        custom = parse_template_paths(settings.admission_template_paths)
        return AdmissionPolicy(
            scheduler_name=settings.scheduler_name,
            trusted_users=tuple(re.compile(p) for p in settings.admission_trusted_users),
            trust_controllers=settings.admission_trust_controllers,
            namespace_label=settings.admission_namespace_label,
            template_paths={**BUILTIN_TEMPLATE_PATHS, **custom},
        )

    def trusts(self, username: str) -> bool:
        return any(pattern.fullmatch(username) for pattern in self.trusted_users)


# --- reading the request ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Requester:
    username: str
    groups: tuple[str, ...]

    def user_info(self) -> str:
        """The annotation value naming this requester, as the shim reads it back."""
        return json.dumps({"user": self.username, "groups": list(self.groups)}, separators=(",", ":"))


def requester(request: Mapping[str, Any]) -> Requester:
    info = map_at(request, "userInfo")
    groups = info.get("groups")
    return Requester(
        username=str(info.get("username") or ""),
        groups=tuple(str(g) for g in groups) if isinstance(groups, list) else (),
    )


def request_object(request: Mapping[str, Any]) -> Mapping[str, Any]:
    obj = request.get("object")
    return obj if isinstance(obj, Mapping) else {}


def request_old_object(request: Mapping[str, Any]) -> Mapping[str, Any]:
    obj = request.get("oldObject")
    return obj if isinstance(obj, Mapping) else {}


def describe(request: Mapping[str, Any], kind: str) -> str:
    """`<kind> <namespace>/<name>` for messages; a generated name shows as its prefix plus `*`."""
    obj = request_object(request) or request_old_object(request)
    meta = meta_of(obj)
    namespace = request.get("namespace") or meta.get("namespace") or ""
    name = request.get("name") or meta.get("name") or (f"{meta.get('generateName', '')}*")
    return f"{kind} {namespace}/{name}" if namespace else f"{kind} {name}"


def controlled(obj: Mapping[str, Any]) -> bool:
    """Whether a controller (a ReplicaSet, Job, ...) owns the object."""
    return any(
        isinstance(owner, Mapping) and owner.get("controller") is True
        for owner in list_at(obj, "metadata", "ownerReferences")
    )


def _malformed_user_info(obj: Mapping[str, Any], where: str) -> str | None:
    """Why the object's user.info cannot be read (the scheduler would fall back to `nobody`)."""
    try:
        user_info(obj)
    except ConversionError:
        raw = annotations_of(obj).get(ANNOTATION_USER_INFO)
        return (
            f"{where}: annotation {ANNOTATION_USER_INFO} must be JSON like"
            f' {{"user": "alice", "groups": ["team-a"]}}, got {raw!r}'
        )
    return None


def _untrusted(where: str, who: Requester, action: str) -> Decision:
    return Decision.deny(
        f"{where}: {who.username or 'an anonymous user'} may not {action} annotation {ANNOTATION_USER_INFO};"
        " only users matching the admission.trustedUsers setting may set whose usage a pod is",
        FORBIDDEN,
    )


# --- pods -------------------------------------------------------------------------------------


def _preemptible(obj: Mapping[str, Any]) -> bool:
    return labels_of(obj).get(LABEL_PREEMPTIBLE) != "false"


def _opted_in(namespace: Mapping[str, Any] | None, label: str) -> bool:
    value = labels_of(namespace).get(label)
    return value is not None and str(value).lower() != "false"


def review_pod(
    request: Mapping[str, Any],
    policy: AdmissionPolicy,
    quotas: QuotaTree | None,
    namespace: Mapping[str, Any] | None,
    priority_class: Mapping[str, Any] | None = None,
) -> Decision:
    """Stamp the requester's identity and Herder's scheduler on a new pod, and the preemption
    opt-out of its PriorityClass (`priority_class`, when the pod names one Herder knows) unless
    the pod sets its own; refuse forged identities, pods naming a parent quota and changes of
    user.info or the preemptible label."""
    where = describe(request, "pod")
    pod = request_object(request)
    who = requester(request)
    specs = quotas.specs if quotas is not None else {}
    operation = request.get("operation")
    if operation == "UPDATE":
        old = request_old_object(request)
        before, after = annotations_of(old).get(ANNOTATION_USER_INFO), annotations_of(pod).get(ANNOTATION_USER_INFO)
        if before != after:
            return Decision.deny(
                f"{where}: annotation {ANNOTATION_USER_INFO} cannot change once the pod exists"
                f" (was {before!r}, now {after!r})",
                FORBIDDEN,
            )
        label, old_label = labels_of(pod).get(LABEL_QUOTA_NAME), labels_of(old).get(LABEL_QUOTA_NAME)
        problems = validate_pod_labels(
            specs, label if label != old_label else None, _preemptible(old), _preemptible(pod)
        )
        if problems:
            return Decision.deny(f"{where}: {'; '.join(problems)}", INVALID)
        return Decision()
    if operation != "CREATE":
        return Decision()

    patch: dict[str, Any] = {}
    supplied = annotations_of(pod).get(ANNOTATION_USER_INFO)
    if supplied is None:
        patch["metadata"] = {"annotations": {ANNOTATION_USER_INFO: who.user_info()}}
    elif not policy.trusts(who.username):
        return _untrusted(where, who, "set")
    elif controlled(pod) and not policy.trust_controllers:
        patch["metadata"] = {"annotations": {ANNOTATION_USER_INFO: who.user_info()}}
    else:
        malformed = _malformed_user_info(pod, where)
        if malformed:
            return Decision.deny(malformed, INVALID)

    label = labels_of(pod).get(LABEL_QUOTA_NAME)
    problems = validate_pod_labels(specs, str(label) if label else None, None, _preemptible(pod))
    if problems:
        return Decision.deny(f"{where}: {'; '.join(problems)}", INVALID)

    opt_out = annotations_of(priority_class).get(ANNOTATION_ALLOW_PREEMPTION)
    if opt_out is not None and ANNOTATION_ALLOW_PREEMPTION not in annotations_of(pod):
        patch.setdefault("metadata", {}).setdefault("annotations", {})[ANNOTATION_ALLOW_PREEMPTION] = str(opt_out)

    scheduler = map_at(pod, "spec").get("schedulerName")
    if scheduler in (None, "", DEFAULT_SCHEDULER) and _opted_in(namespace, policy.namespace_label):
        patch["spec"] = {"schedulerName": policy.scheduler_name}
    return Decision(patch=patch)


# --- workloads --------------------------------------------------------------------------------


def review_workload(request: Mapping[str, Any], policy: AdmissionPolicy) -> Decision:
    """Stamp the creator's identity on every pod template of a workload; refuse forged ones."""
    obj = request_object(request)
    kind = str(obj.get("kind") or map_at(request, "kind").get("kind") or "")
    paths = policy.template_paths.get(kind)
    if not paths:
        return Decision()
    where = describe(request, kind)
    who = requester(request)
    found = templates(obj, paths)
    operation = request.get("operation")
    if operation == "UPDATE":
        before = {
            location: annotations.get(ANNOTATION_USER_INFO)
            for location, annotations in templates(request_old_object(request), paths)
        }
        for location, annotations in found:
            if annotations.get(ANNOTATION_USER_INFO) != before.get(location) and not policy.trusts(who.username):
                return _untrusted(where, who, "change the pod template's")
        return Decision()
    if operation != "CREATE":
        return Decision()
    supplied = [annotations for _, annotations in found if ANNOTATION_USER_INFO in annotations]
    if supplied and not policy.trusts(who.username):
        return _untrusted(where, who, "set the pod template's")
    for annotations in supplied:
        malformed = _malformed_user_info({"metadata": {"annotations": annotations}}, where)
        if malformed:
            return Decision.deny(malformed, INVALID)
    unstamped = [location for location, annotations in found if ANNOTATION_USER_INFO not in annotations]
    if not unstamped:
        return Decision()
    return Decision(patch=stamp_patch(obj, unstamped, ANNOTATION_USER_INFO, who.user_info()))
