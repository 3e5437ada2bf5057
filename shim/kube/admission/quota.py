"""Admission of ElasticQuota changes: the core's validation rules applied to a create, update or
delete before the API server stores it, against the quota tree the scheduler holds.

A refusal names the quota and every rule it breaks (negative values, min within max, the parent
exists and is a parent, `is-parent` changes, children's mins within the parent's min below the
first level, cycles, a quota with children or pods cannot be deleted). Quota names are unique
across namespaces, as the core keys quotas by name. An update that leaves everything the core
reads unchanged (Herder's own runtime/request annotations, other labels, status) always passes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Any

from core.elastic.validation import validate_quota_change, validate_quota_deletion
from shim.convert.objects import ConversionError, meta_of
from shim.convert.quotas import quota_to_spec
from shim.kube.admission.decisions import (
    INVALID,
    UNAVAILABLE,
    Decision,
    QuotaTree,
    describe,
    request_object,
    request_old_object,
)


def _refused(where: str, problems: list[str]) -> Decision:
    return Decision.deny(f"{where} refused: {'; '.join(problems)}", INVALID)


def review_quota(request: Mapping[str, Any], quotas: QuotaTree | None) -> Decision:
    """Allow or refuse an ElasticQuota CREATE, UPDATE or DELETE."""
    where = describe(request, "ElasticQuota")
    operation = request.get("operation")
    if operation not in ("CREATE", "UPDATE", "DELETE"):
        return Decision()
    if quotas is None:
        return Decision.deny(
            f"{where}: Herder has not loaded the quota tree yet, so the change cannot be checked; retry shortly",
            UNAVAILABLE,
        )
    if operation == "DELETE":
        old: Mapping[str, Any] = request_old_object(request)
        name = str(request.get("name") or meta_of(old).get("name") or "")
        problems = validate_quota_deletion(quotas.specs, name, quotas.pods_by_quota)
        return _refused(where, problems) if problems else Decision()
    try:
        new = quota_to_spec(request_object(request))
    except ConversionError as err:
        return _refused(where, [str(err)])
    previous = None
    if operation == "UPDATE":
        with contextlib.suppress(ConversionError):  # an unreadable stored object: check the new one in full
            previous = quota_to_spec(request_old_object(request))
        if previous == new:
            return Decision()
    existing = quotas.specs.get(new.name)
    if operation == "CREATE" and existing is not None and existing.namespace != new.namespace:
        return _refused(
            where,
            [f"quota name {new.name} is already used in namespace {existing.namespace}; names are cluster-wide"],
        )
    problems = validate_quota_change(quotas.specs, new, previous)
    return _refused(where, problems) if problems else Decision()
