"""Who may call the REST API, and from which web pages: bearer tokens and CORS.

The API shows every queue, user, group, application and pod name, so it can be locked down:

- a shared token (`RestAccess.token`, e.g. read from a Secret): `Authorization: Bearer <token>`
  must match it (compared in constant time);
- a token review (`RestAccess.review`): the bearer token is asked about elsewhere, in the
  operator a TokenReview against the API server; a verdict is remembered for `REVIEW_TTL`
  seconds so a scraping Prometheus does not cost one review per scrape.

With both, either passing is enough; with neither, the API is open (the default, as
YuniKorn's). `/healthz` and `/readyz` never ask for a token: kubelet probes carry none and
they reveal only readiness and the replica's name.

CORS headers are sent only when origins are configured (`cors_origins`; `*` for any), and an
`OPTIONS` preflight from such an origin is answered here.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from shim.rest.errors import Handler, error_response

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
REVIEW_TTL = 60.0
REVIEWS_KEPT = 1024
CORS_METHODS = "GET,POST,HEAD,OPTIONS"
CORS_ALLOWED_HEADERS = "Authorization,X-Requested-With,Content-Type,Accept,Origin"


@dataclass(frozen=True, slots=True)
class RestAccess:
    token: str | None = None
    review: Callable[[str], bool] | None = None  # blocking; runs off the event loop
    cors_origins: tuple[str, ...] = ()

    @property
    def authenticates(self) -> bool:
        return bool(self.token) or self.review is not None


class _Reviews:
    """Recent token-review verdicts by the token's hash."""

    def __init__(self) -> None:
        self._verdicts: dict[str, tuple[bool, float]] = {}

    def get(self, key: str) -> bool | None:
        hit = self._verdicts.get(key)
        if hit is None or hit[1] < time.monotonic():
            return None
        return hit[0]

    def put(self, key: str, allowed: bool) -> None:
        if len(self._verdicts) >= REVIEWS_KEPT:
            self._verdicts.clear()
        self._verdicts[key] = (allowed, time.monotonic() + REVIEW_TTL)


def _bearer(request: web.Request) -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _cors_origin(access: RestAccess, request: web.Request) -> str | None:
    if not access.cors_origins:
        return None
    if "*" in access.cors_origins:
        return "*"
    origin = request.headers.get("Origin")
    return origin if origin in access.cors_origins else None


def access_middleware(access: RestAccess, executor: Any) -> Any:
    """The aiohttp middleware enforcing `access`; `executor` runs token reviews."""
    reviews = _Reviews()

    async def allowed(token: str) -> bool:
        if access.token and hmac.compare_digest(token.encode(), access.token.encode()):
            return True
        if access.review is None:
            return False
        key = hashlib.sha256(token.encode()).hexdigest()
        verdict = reviews.get(key)
        if verdict is None:
            loop = asyncio.get_running_loop()
            try:
                verdict = await loop.run_in_executor(executor, access.review, token)
            except Exception:
                return False  # the reviewer is unreachable: refuse, and ask again next time
            reviews.put(key, verdict)
        return verdict

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        origin = _cors_origin(access, request)
        if request.method == "OPTIONS" and origin is not None:
            response: web.StreamResponse = web.Response(status=204)
        elif access.authenticates and request.path not in OPEN_PATHS:
            token = _bearer(request)
            if token is None or not await allowed(token):
                response = error_response(
                    401, "Unauthorized", f"{request.method} {request.path}: a valid bearer token is required"
                )
                response.headers["WWW-Authenticate"] = 'Bearer realm="herder"'
            else:
                response = await handler(request)
        else:
            response = await handler(request)
        return response

    return middleware


def cors_headers(access: RestAccess) -> Any:
    """An `on_response_prepare` hook adding CORS headers for configured origins (streams too)."""

    async def add(request: web.Request, response: web.StreamResponse) -> None:
        origin = _cors_origin(access, request)
        if origin is None:
            return
        response.headers["Access-Control-Allow-Origin"] = origin
        response.headers["Access-Control-Allow-Methods"] = CORS_METHODS
        response.headers["Access-Control-Allow-Headers"] = CORS_ALLOWED_HEADERS
        if origin != "*":
            response.headers["Vary"] = "Origin"

    return add
