"""A watch body read straight from the socket gives the same lines as urllib3 would, whatever
the read boundaries; a cut or malformed stream fails as a broken connection does."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shim.kube.watch.chunked import ChunkedBody
from shim.kube.watch.reflector import split_lines


class _Trickle(io.RawIOBase):
    """A socket that hands over at most the next of `sizes` bytes per read."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self._data, self._sizes, self._at = data, sizes or [1], 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        size = min(len(buffer), self._sizes[self._at % len(self._sizes)] if self._at < len(self._data) else 0)
        piece = self._data[self._at : self._at + size]
        buffer[: len(piece)] = piece
        self._at += len(piece)
        return len(piece)


def _chunked(payloads: list[bytes], trailer: bytes = b"") -> bytes:
    body = b"".join(b"%x\r\n%s\r\n" % (len(payload), payload) for payload in payloads)
    return body + b"0\r\n" + trailer + b"\r\n"


def _read(data: bytes, sizes: list[int]) -> ChunkedBody:
    return ChunkedBody(io.BufferedReader(_Trickle(data, sizes), buffer_size=max(sizes or [1])))


events = st.lists(
    st.builds(
        lambda name, n: b'{"type":"ADDED","object":{"name":"%s","n":%d}}\n' % (name.encode(), n),
        st.text("abcxyz-", min_size=1, max_size=30),
        st.integers(0, 10**6),
    ),
    min_size=0,
    max_size=20,
)


@settings(max_examples=150, deadline=None)
@given(events, st.lists(st.integers(1, 200), min_size=1, max_size=8), st.integers(1, 5))
def test_the_lines_are_the_events_whatever_the_reads_and_the_chunking(
    lines: list[bytes], sizes: list[int], per_chunk: int
) -> None:
    stream = b"".join(lines)
    # a server may put several events in a chunk, or cut one across chunks
    step = max(1, len(stream) // (len(lines) * per_chunk or 1))
    payloads = [stream[i : i + step] for i in range(0, len(stream), step)]
    body = _read(_chunked(payloads), sizes)
    assert list(split_lines(iter(body))) == [line.rstrip(b"\n") for line in lines]
    assert body.ended


def test_chunk_extensions_and_a_trailer_are_read_past() -> None:
    data = b"5;name=value\r\nhello\r\n1\r\n\n\r\n0\r\nX-Checksum: 1\r\n\r\n"
    body = _read(data, [3])
    assert list(body) == [b"hello", b"\n"]
    assert body.ended


def test_a_stream_cut_in_the_middle_fails_like_a_broken_connection() -> None:
    data = _chunked([b'{"a":1}\n', b'{"b":2}\n'])[:-12]
    body = _read(data, [7])
    with pytest.raises(ConnectionResetError):
        list(body)
    assert not body.ended


@pytest.mark.parametrize(
    "data, problem",
    [
        (b"zz\r\nhello\r\n", "not a chunk size"),
        (b"5\r\nhelloXX0\r\n\r\n", "not followed by CRLF"),
        (b"5" * 2000, "longer than 1 KiB"),
    ],
)
def test_a_stream_that_is_not_chunked_json_is_refused(data: bytes, problem: str) -> None:
    with pytest.raises(ConnectionError, match=problem):
        list(_read(data, [64]))


def test_a_watch_from_the_api_server_is_read_from_its_socket_and_a_plain_answer_is_not() -> None:
    import json

    import urllib3
    from kubernetes import client

    from shim.kube.watch.chunked import raw_body
    from tests.kube.emulator import EmulatorServer, namespace_body

    with EmulatorServer() as server:
        client.CoreV1Api(server.api_client()).create_namespace(namespace_body("team-a"))
        pool = urllib3.PoolManager(timeout=urllib3.Timeout(connect=5, read=5))
        watch = pool.request("GET", f"{server.url}/api/v1/namespaces?watch=true", preload_content=False)
        body = raw_body(watch)
        assert body is not None
        first = json.loads(next(split_lines(iter(body))))
        assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "team-a")
        watch.close()
        one = pool.request("GET", f"{server.url}/api/v1/namespaces/team-a", preload_content=False)
        if one.headers.get("transfer-encoding", "").lower() != "chunked":
            assert raw_body(one) is None
        one.read()
        assert raw_body(one) is None  # read already: urllib3 reads the rest
