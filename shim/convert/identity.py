"""Which application, queue and user a pod belongs to, and whether Herder schedules it: read
from YuniKorn's labels and annotations (and Spark's), as YuniKorn's shim reads them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.objects.ask import DEFAULT_USER, NO_USER, UserGroup
from shim.convert.objects import (
    ConversionError,
    annotations_of,
    labels_of,
    list_at,
    map_at,
    meta_of,
    object_name,
    parse_json,
)
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


def is_herder_pod(pod: Mapping[str, Any], scheduler_name: str) -> bool:
    return map_at(pod, "spec").get("schedulerName") == scheduler_name


def _first(*candidates: Any) -> str | None:
    for value in candidates:
        if isinstance(value, str) and value:
            return value
    return None


def application_id(pod: Mapping[str, Any]) -> str:
    labels, annotations = labels_of(pod), annotations_of(pod)
    found = _first(
        labels.get(LABEL_APP_ID),
        annotations.get(ANNOTATION_APP_ID),
        labels.get(LABEL_APPLICATION_ID),
        labels.get(LABEL_SPARK_APP),
    )
    if found:
        return found
    for owner in list_at(pod, "metadata", "ownerReferences"):
        if isinstance(owner, Mapping) and owner.get("controller") is True:
            return f"{owner.get('kind', '')}-{owner.get('name', '')}".lower()
    return f"{meta_of(pod).get('namespace', 'default')}-autogen"


def queue_name(pod: Mapping[str, Any]) -> str | None:
    labels = labels_of(pod)
    return _first(labels.get(LABEL_QUEUE), annotations_of(pod).get(ANNOTATION_QUEUE), labels.get(LABEL_QUEUE_PLAIN))


def user_info(pod: Mapping[str, Any]) -> UserGroup:
    raw = annotations_of(pod).get(ANNOTATION_USER_INFO)
    if raw is None:
        return NO_USER
    where = f"pod {object_name(pod)} annotation {ANNOTATION_USER_INFO}"
    data = parse_json(raw, where)
    if not isinstance(data, Mapping):
        raise ConversionError(f"{where}: expected an object with user and groups, got {raw!r}")
    user = data.get("user") or DEFAULT_USER
    groups = data.get("groups") or []
    if not isinstance(user, str) or not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
        raise ConversionError(f"{where}: user must be a string and groups a list of strings, got {raw!r}")
    return shared_user(UserGroup(user=user, groups=tuple(groups)))
