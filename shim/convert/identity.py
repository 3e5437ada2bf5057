"""Which application, queue and user a pod belongs to, and whether Herder schedules it: read
from YuniKorn's labels and annotations (and Spark's), as YuniKorn's shim reads them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.objects.ask import DEFAULT_USER, NO_USER, UserGroup
from shim.convert.objects import ConversionError, parse_json
from shim.convert.pod_view import PodLike, as_view
from shim.interning import Interner

YK_PREFIX = "yunikorn.apache.org/"
LABEL_APP_ID = YK_PREFIX + "app-id"
ANNOTATION_APP_ID = YK_PREFIX + "app-id"
LABEL_APPLICATION_ID = "applicationId"
LABEL_SPARK_APP = "spark-app-selector"
LABEL_QUEUE = YK_PREFIX + "queue"
ANNOTATION_QUEUE = YK_PREFIX + "queue"
LABEL_QUEUE_PLAIN = "queue"
ANNOTATION_USER_INFO = YK_PREFIX + "user.info"

shared_user: Interner[UserGroup] = Interner()


def is_herder_pod(pod: PodLike, scheduler_name: str) -> bool:
    return bool(as_view(pod).scheduler_name == scheduler_name)


def _first(*candidates: Any) -> str | None:
    for value in candidates:
        if isinstance(value, str) and value:
            return value
    return None


def application_id(pod: PodLike) -> str:
    pod = as_view(pod)
    labels, annotations = pod.labels, pod.annotations
    found = _first(
        labels.get(LABEL_APP_ID),
        annotations.get(ANNOTATION_APP_ID),
        labels.get(LABEL_APPLICATION_ID),
        labels.get(LABEL_SPARK_APP),
    )
    if found:
        return found
    for owner in pod.owners:
        if owner.get("controller") is True:
            return f"{owner.get('kind', '')}-{owner.get('name', '')}".lower()
    return f"{pod.namespace or 'default'}-autogen"


def queue_name(pod: PodLike) -> str | None:
    pod = as_view(pod)
    labels = pod.labels
    return _first(labels.get(LABEL_QUEUE), pod.annotations.get(ANNOTATION_QUEUE), labels.get(LABEL_QUEUE_PLAIN))


def user_info(pod: PodLike) -> UserGroup:
    pod = as_view(pod)
    raw = pod.annotations.get(ANNOTATION_USER_INFO)
    if raw is None:
        return NO_USER
    where = f"pod {pod.name} annotation {ANNOTATION_USER_INFO}"
    data = parse_json(raw, where)
    if not isinstance(data, Mapping):
        raise ConversionError(f"{where}: expected an object with user and groups, got {raw!r}")
    user = data.get("user") or DEFAULT_USER
    groups = data.get("groups") or []
    if not isinstance(user, str) or not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise ConversionError(f"{where}: user must be a string and groups a list of strings, got {raw!r}")
    return shared_user(UserGroup(user=user, groups=tuple(groups)))
