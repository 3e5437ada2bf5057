"""`herder snapshot --anonymize`: a snapshot that can be shared, with the same behaviour.

Names that say who does what are replaced, each by the same stand-in everywhere it occurs:
namespaces (`ns-1`), quotas named otherwise (`quota-1`), users (`user-1`) and groups
(`group-1`), applications, the controllers that own pods and the PodGroups or Workloads that
gang them (`app-1`), pods (`pod-1`), their
uids (`uid-1`, owner references too) and claims (`claim-1`). Kubernetes' own namespaces keep
their names. A string is replaced where it *is* such a name (a label value, a queue
path's segment, `namespace/name`, an ACL's entry, a value inside the user annotation's JSON),
so a selector and the labels it selects stay equal, and a queue created for a namespace keeps
following it. Container images, commands, arguments and environments are dropped (they are not
scheduling input). Node names, resource amounts, priorities, times and label keys stay.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import yaml

from shim.convert.identity import ANNOTATION_USER_INFO, LABEL_APP_ID, LABEL_APPLICATION_ID, LABEL_SPARK_APP

APP_LABELS = (LABEL_APP_ID, LABEL_APPLICATION_ID, LABEL_SPARK_APP)
CONTAINER_KEYS = ("name", "resources", "ports", "restartPolicy")
_ACL_SPLIT = re.compile(r"[ ,]")
KEPT = frozenset({"*", "root", "default", "kube-system", "kube-public", "kube-node-lease"})


class Renames:
    """Stand-ins by kind. Within a kind they are numbered in the names' own sorted order, with
    as many digits as the largest number needs, so any two names compare as their stand-ins do:
    where Herder breaks a tie by name or uid (queues, applications, pods), it breaks it the same."""

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self._seen: dict[str, dict[str, None]] = {}  # kind -> names, in the order kinds were first met

    def add(self, kind: str, name: object) -> None:
        if isinstance(name, str) and name and name not in KEPT:
            self._seen.setdefault(kind, {})[name] = None

    def number(self) -> None:
        taken: set[str] = set()
        for kind, found in self._seen.items():
            names = sorted(name for name in found if name not in taken)
            width = len(str(len(names)))
            for i, name in enumerate(names, 1):
                self.names[name] = f"{kind}-{i:0{width}d}"
            taken.update(names)

    def text(self, value: str) -> str:
        found = self.names.get(value)
        if found is not None:
            return found
        if "/" in value:
            return "/".join(self.names.get(part, part) for part in value.split("/"))
        if "." in value and value.startswith("root."):
            return ".".join(self.names.get(part, part) for part in value.split("."))
        return value


def _users_of(annotations: Mapping[str, Any]) -> tuple[object, list[object]]:
    try:
        info = json.loads(str(annotations.get(ANNOTATION_USER_INFO, "")))
    except ValueError:
        return None, []
    if not isinstance(info, dict):
        return None, []
    groups = info.get("groups")
    return info.get("user"), list(groups) if isinstance(groups, list) else []


def _collect(document: Mapping[str, Any], config: object, renames: Renames) -> None:
    for namespace in document.get("namespaces") or []:
        renames.add("ns", namespace["metadata"].get("name"))
    for entry in document.get("workload") or []:
        renames.add("ns", (entry["pod"].get("metadata") or {}).get("namespace"))
    for quota in document.get("quotas") or []:
        renames.add("ns", quota["metadata"].get("namespace"))
        renames.add("quota", quota["metadata"].get("name"))
    for entry in document.get("workload") or []:
        meta = entry["pod"].get("metadata") or {}
        user, groups = _users_of(meta.get("annotations") or {})
        renames.add("user", user)
        for group in groups:
            renames.add("group", group)
        for key in APP_LABELS:
            renames.add("app", (meta.get("labels") or {}).get(key))
        for owner in meta.get("ownerReferences") or []:
            renames.add("app", owner.get("name"))
        for volume in (entry["pod"].get("spec") or {}).get("volumes") or []:
            renames.add("claim", (volume.get("persistentVolumeClaim") or {}).get("claimName"))
    for obj in document.get("objects") or []:
        if obj.get("kind") == "PersistentVolumeClaim":
            renames.add("claim", obj["metadata"].get("name"))
        elif obj.get("kind") in ("PodGroup", "Workload"):  # a gang's group is named after its job
            renames.add("app", obj["metadata"].get("name"))
    _collect_config(config, renames)
    for entry in document.get("workload") or []:
        meta = entry["pod"].get("metadata") or {}
        renames.add("pod", meta.get("name"))
        renames.add("uid", meta.get("uid"))  # owner references name their owner's uid too


def _collect_config(node: object, renames: Renames) -> None:
    """Users and groups named in limits, ACLs and placement filters of a queues.yaml."""
    if isinstance(node, Mapping):
        for key, value in node.items():
            if key in ("users", "groups") and isinstance(value, list):
                for name in value:
                    renames.add("user" if key == "users" else "group", name)
            elif key in ("submitacl", "adminacl") and isinstance(value, str):
                users, _, groups = value.partition(" ")
                for name in _ACL_SPLIT.split(users):
                    renames.add("user", name)
                for name in _ACL_SPLIT.split(groups):
                    renames.add("group", name)
            else:
                _collect_config(value, renames)
    elif isinstance(node, list):
        for item in node:
            _collect_config(item, renames)


def _rewrite(node: Any, renames: Renames) -> Any:
    if isinstance(node, str):
        return renames.text(node)
    if isinstance(node, Mapping):
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key == ANNOTATION_USER_INFO and isinstance(value, str):
                out[key] = _rewrite_json(value, renames)
            elif key in ("submitacl", "adminacl") and isinstance(value, str):
                users, space, groups = value.partition(" ")
                out[key] = _acl(users, renames) + space + _acl(groups, renames)
            elif key in ("containers", "initContainers") and isinstance(value, list):
                out[key] = [_rewrite(_container(c), renames) for c in value]
            else:
                out[key] = _rewrite(value, renames)
        return out
    if isinstance(node, list):
        return [_rewrite(item, renames) for item in node]
    return node


def _acl(text: str, renames: Renames) -> str:
    return ",".join(renames.text(part) if part else part for part in text.split(","))


def _rewrite_json(text: str, renames: Renames) -> str:
    try:
        return json.dumps(_rewrite(json.loads(text), renames))
    except ValueError:
        return text


def _container(container: object) -> object:
    if not isinstance(container, Mapping):
        return container
    return {key: container[key] for key in CONTAINER_KEYS if key in container}


def anonymize(document: Mapping[str, Any]) -> tuple[dict[str, Any], Renames]:
    """The scenario with every name of a person, team or workload replaced (and the renames)."""
    raw_config = document.get("config")
    config = yaml.safe_load(raw_config) if isinstance(raw_config, str) else raw_config
    renames = Renames()
    _collect(document, config, renames)
    renames.number()
    out: dict[str, Any] = {key: value for key, value in document.items() if key != "config"}
    out = _rewrite(out, renames)
    if config is not None:
        out["config"] = yaml.safe_dump(_rewrite(config, renames), sort_keys=False)
    return out, renames


def stand_ins(renames: Renames, kinds: Iterable[str]) -> int:
    """How many names of these kinds were replaced."""
    prefixes = tuple(f"{kind}-" for kind in kinds)
    return sum(1 for value in renames.names.values() if value.startswith(prefixes))
