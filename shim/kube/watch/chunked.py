"""A watch stream's body read straight from its socket: HTTP/1.1 chunked framing taken off in bulk.

An API server sends every watch event as a chunk of its own. Read through urllib3 and
`http.client`, each chunk costs several layers of Python calls (the chunk size line, the
chunk, its CRLF, each a read of its own): about 23 µs of CPU per event here, where reading
whatever the socket holds and cutting the chunks out of it with `bytes.find` costs about 8
(docs/performance.md). A burst brings two events per pod (ADDED, then MODIFIED once bound).

`raw_body(response)` says whether a response can be read this way: a chunked body with no
content encoding that nobody has read from yet, behind `http.client` (urllib3 2's transport).
Otherwise the caller reads it through urllib3 as before.
"""

from __future__ import annotations

import http.client
from collections.abc import Iterator
from typing import Any

READ_SIZE = 1 << 16
MAX_SIZE_LINE = 1024  # a chunk size line (hex size and extensions) longer than this is not a watch's


class ChunkedBody:
    """The payloads of a chunked body, read from the socket's buffered reader `reader`.

    `ended` is True once the last chunk (size 0) and its trailer have been read; a stream that
    stops before that raises ConnectionResetError, as a cut connection does through urllib3.
    """

    def __init__(self, reader: Any) -> None:
        self._reader = reader
        self._buffer = b""
        self._at = 0
        self.ended = False

    def __iter__(self) -> Iterator[bytes]:
        while not self.ended:
            payloads = self._cut()
            if payloads:
                yield from payloads
            elif not self.ended:
                self._fill()

    def _fill(self) -> None:
        data: bytes = self._reader.read1(READ_SIZE)
        if not data:
            raise ConnectionResetError("the watch stream ended in the middle of its chunked body")
        self._buffer = self._buffer[self._at :] + data
        self._at = 0

    def _cut(self) -> list[bytes]:
        """Every whole chunk in the buffer, in order; stops at a partial one (or at the end)."""
        buffer, at, payloads = self._buffer, self._at, []
        while True:
            line_end = buffer.find(b"\r\n", at)
            if line_end < 0:
                if len(buffer) - at > MAX_SIZE_LINE:
                    raise ConnectionError("a chunk size line longer than 1 KiB in a watch stream")
                break
            size_text = buffer[at:line_end].split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ConnectionError(f"not a chunk size in a watch stream: {size_text[:40]!r}") from None
            if size == 0:
                trailer_end = buffer.find(b"\r\n\r\n", line_end)
                if trailer_end < 0:
                    break  # the trailer (usually empty) is still on its way
                self.ended = True
                at = trailer_end + 4
                break
            chunk_end = line_end + 2 + size
            if len(buffer) < chunk_end + 2:
                break
            if buffer[chunk_end : chunk_end + 2] != b"\r\n":
                raise ConnectionError("a chunk not followed by CRLF in a watch stream")
            payloads.append(buffer[line_end + 2 : chunk_end])
            at = chunk_end + 2
        self._at = at
        return payloads


def raw_body(response: Any) -> ChunkedBody | None:
    """The response's body to read from its socket, or None when it must be read through urllib3."""
    inner = getattr(response, "_fp", None)
    if not isinstance(inner, http.client.HTTPResponse) or not inner.chunked or inner.chunk_left is not None:
        return None
    if inner.fp is None or (response.headers.get("content-encoding") or "identity").lower() != "identity":
        return None
    return ChunkedBody(inner.fp)
