"""User and group usage over REST (seed 001's documents with current YuniKorn's field names).

    GET /ws/v1/partition/{partition}/usage/users
    GET /ws/v1/partition/{partition}/usage/user/{user}
    GET /ws/v1/partition/{partition}/usage/groups
    GET /ws/v1/partition/{partition}/usage/group/{group}

A user or group nobody tracks is a 404. A name that could never be tracked (it fails
YuniKorn's user or group name pattern) is a 400, so a typo'd URL is told apart from an idle
user; a tracked name is always found, whatever its characters. `*` (the wildcard limit's
tracker, also written `%2A`) is a name like any other: 200 while tracked, else 404.
"""

from __future__ import annotations

import re

from aiohttp import web

from core.config.validate import GROUP_NAME, USER_NAME, WILDCARD
from shim.rest.context import check_partition, json_answer, offload, scheduler_of
from shim.rest.errors import bad_request, not_found

routes = web.RouteTableDef()


@routes.get("/ws/v1/partition/{partition}/usage/users")
async def users(request: web.Request) -> web.Response:
    check_partition(request)
    return await json_answer(request, scheduler_of(request).users_document)


@routes.get("/ws/v1/partition/{partition}/usage/groups")
async def groups(request: web.Request) -> web.Response:
    check_partition(request)
    return await json_answer(request, scheduler_of(request).groups_document)


async def _one(request: web.Request, kind: str, pattern: re.Pattern[str]) -> web.Response:
    partition = check_partition(request)
    name = request.match_info[kind]
    sched = scheduler_of(request)
    find = sched.user_document if kind == "user" else sched.group_document
    doc = await offload(request, lambda: find(name))
    if doc is not None:
        return await json_answer(request, lambda: doc)
    if name != WILDCARD and not pattern.match(name):
        raise bad_request(f"Invalid {kind} name", f"{kind} name {name!r} does not match {pattern.pattern}")
    raise not_found(f"{kind.capitalize()} not found", f"{kind} {name} has no tracked usage in partition {partition}")


@routes.get("/ws/v1/partition/{partition}/usage/user/{user:.+}")
async def user(request: web.Request) -> web.Response:
    return await _one(request, "user", USER_NAME)


@routes.get("/ws/v1/partition/{partition}/usage/group/{group:.+}")
async def group(request: web.Request) -> web.Response:
    return await _one(request, "group", GROUP_NAME)
