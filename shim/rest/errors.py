"""Errors as YuniKorn's REST API shows them, and the headers every answer carries.

Every failure, whether a handler's own (`RestError`: unknown queue, bad query value) or
aiohttp's (no such route, wrong method, body too large), leaves as YuniKorn's error body
`{"status_code": int, "message": str, "description": str}`: `message` is the short kind
("Queue not found"), `description` says what and where. A bug in a handler is logged and
answered with a 500 of the same shape instead of aiohttp's HTML page. A client that goes away
in the middle of its request (its body cut short) is no bug: one line at debug level, so no
caller can fill the log with tracebacks.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

log = logging.getLogger("herder.rest")

JSON_TYPE = "application/json"


class RestError(Exception):
    """A request Herder answers with an error status and YuniKorn's error body."""

    def __init__(self, status: int, message: str, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.message = message
        self.description = description


def not_found(message: str, description: str) -> RestError:
    return RestError(404, message, description)


def bad_request(message: str, description: str) -> RestError:
    return RestError(400, message, description)


def too_many_requests(message: str, description: str) -> RestError:
    return RestError(429, message, description)


def error_response(status: int, message: str, description: str) -> web.Response:
    body = {"status_code": status, "message": message, "description": description}
    return web.Response(status=status, text=json.dumps(body), content_type=JSON_TYPE)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@web.middleware
async def error_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        response = await handler(request)
    except RestError as err:
        response = error_response(err.status, err.message, err.description)
    except web.HTTPException as err:
        if err.status < 400:
            raise
        response = error_response(err.status, err.reason, f"{request.method} {request.path}: {err.reason}")
    except ConnectionResetError as err:  # aiohttp's "Connection lost" while the body was read
        log.debug("REST %s %s: the client went away mid-request (%s)", request.method, request.path, err)
        response = error_response(400, "Client disconnected", f"{request.method} {request.path}: {err}")
    except Exception:
        log.exception("REST %s %s failed", request.method, request.path)
        response = error_response(500, "Internal error", f"{request.method} {request.path}: see the scheduler log")
    return response
