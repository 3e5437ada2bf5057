"""Calls to the API server by path, with plain dicts, without the client's generated API classes.

The official client's API classes (`CoreV1Api` and the others) check every argument with
pydantic, and importing `CoreV1Api` alone builds a validator for each of its 400 methods: about
1.2 s of CPU, more than a tenth of `herder run`'s start on a cluster of 50,000 pods
(docs/performance.md). Herder reads and writes plain dicts anyway, so its reads, Events and
status writes go through the same client's REST layer directly: its connection pool, TLS,
proxy, retry and timeout settings and its auth headers (tokens refreshed by its hook), with
the JSON encoded and decoded here. Errors are raised as the generated classes raise them
(`ApiException` and its subclasses, with `.status`, `.reason` and `.body`), network errors as
they come.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, urlencode

from kubernetes import client

JSON = "application/json"
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def segment(name: str) -> str:
    """A name as one path segment (quoted as the generated classes quote path parameters)."""
    return quote(str(name), safe="")


class ApiCalls:
    """Requests by path through `api_client`'s REST layer."""

    def __init__(self, api_client: client.ApiClient, timeout: float = 10.0) -> None:
        self._client = api_client
        self._timeout = timeout

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str = JSON,
        query: Mapping[str, str] | None = None,
        timeout: float | None = None,
    ) -> bytes:
        """The answer's body; a status outside 2xx raises `ApiException` (404 as `NotFoundException`...).
        Writes (POST, PATCH, DELETE) are made from shim/kube/write/ only (tests/shim/test_layout.py)."""
        api = self._client
        headers = {**api.default_headers, "Accept": JSON}
        if body is not None:
            headers["Content-Type"] = content_type
            if type(body) is not dict and isinstance(body, Mapping):
                body = dict(body)
        api.update_params_for_auth(headers, None, ["BearerToken"], path, method, body)
        url = api.configuration.host + path
        if query:
            url += "?" + urlencode(query)
        response = api.rest_client.request(  # type: ignore[no-untyped-call]
            method, url, headers=headers, body=body, _request_timeout=timeout or self._timeout
        )
        data: bytes = response.read()
        if not 200 <= response.status <= 299:
            raise client.ApiException.from_response(
                http_resp=response, body=data.decode("utf-8", "replace") if data else None, data=None
            )
        return data

    def get(self, path: str, query: Mapping[str, str] | None = None, timeout: float | None = None) -> Any:
        """GET `path`, the answer decoded from JSON."""
        return json.loads(self.request("GET", path, query=query, timeout=timeout))
