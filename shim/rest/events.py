"""YuniKorn's event API: a page of the event ring, and a live stream of it.

    GET /ws/v1/events/batch?start=&count=   {InstanceUUID, LowestID, HighestID, EventRecords}
    GET /ws/v1/events/stream?count=         newline-delimited JSON: {"InstanceUUID"}, then records

Records are YuniKorn's (`core.event_records`). As in YuniKorn, a batch holds at most
`event.RESTResponseSize` records (the default `count` too), `count=0` is a 400, and a `start`
outside the ring gives no records but the ids the ring holds.

The stream starts with the `count` newest past events, then every new one. One pump per
server follows the ring (every `PUMP_INTERVAL` while a stream is open), encodes each new event
once, off the event loop, and hands the same bytes to every stream; the scheduler never waits
for it. A stream whose client has not taken `STREAM_BUFFER` events is dropped (its connection
closed), never buffered without bound; a write that does not finish in `WRITE_TIMEOUT` drops
it too. At most `event.maxStreams` streams in all and `event.maxStreamsPerHost` per client
address are open; one more answers 503.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from aiohttp import web

from core.event_records import yunikorn_record
from core.scheduler import Scheduler
from shim.rest.context import EXECUTOR, SCHEDULER, json_answer, offload, scheduler_of, status_of
from shim.rest.errors import JSON_TYPE, RestError, bad_request

log = logging.getLogger("herder.rest")
routes = web.RouteTableDef()

_COMPACT = json.JSONEncoder(separators=(",", ":"))  # every stream gets these bytes: keep them few
PUMP_INTERVAL = 0.02  # seconds between looks at the ring while a stream is open
STREAM_BUFFER = 1000  # events a stream may have waiting before it is dropped (YuniKorn's)
WRITE_TIMEOUT = 5.0  # seconds one write to a stream's client may take
IDLE_CHECK = 10.0  # seconds without events after which a stream checks its client is still there


def encode_lines(scheduler: Scheduler, start: int, count: int) -> tuple[bytes, int, int]:
    """Up to `count` events from id `start` as JSON lines; their number and the last id."""
    events = scheduler.events.batch(start, count)
    if not events:
        return b"", 0, start - 1
    offset = scheduler.epoch_offset()
    encode = _COMPACT.encode
    body = "".join([encode(yunikorn_record(event, offset)) + "\n" for event in events])
    return body.encode(), len(events), events[-1].id


@dataclass(eq=False)
class Stream:
    """One open stream: chunks of lines waiting for its client, and how many events they hold."""

    host: str
    chunks: asyncio.Queue[tuple[bytes, int] | None] = field(default_factory=asyncio.Queue)
    waiting: int = 0
    dropped: bool = False
    transport: asyncio.Transport | None = None  # cut when the stream is dropped

    def offer(self, chunk: bytes, events: int) -> None:
        if self.dropped:
            return
        if self.waiting + events > STREAM_BUFFER:
            self.dropped = True
            while not self.chunks.empty():
                self.chunks.get_nowait()
            self.chunks.put_nowait(None)
            if self.transport is not None:
                self.transport.abort()  # a write still waiting for the client fails at once
            return
        self.waiting += events
        self.chunks.put_nowait((chunk, events))

    def taken(self, events: int) -> None:
        self.waiting -= events


@dataclass(eq=False)
class EventStreams:
    """The open streams and the pump that feeds them."""

    streams: set[Stream] = field(default_factory=set)
    last_id: int = 0  # newest event handed to the streams
    dropped: int = 0  # streams dropped for being slow, since the start
    wake: asyncio.Event = field(default_factory=asyncio.Event)

    def admit(self, host: str, max_streams: int, max_per_host: int, newest: int) -> Stream:
        """A new stream, or a 503 over the limits. `newest` is the ring's newest id now: with
        no stream open the pump sleeps, so that is where the streams start from."""
        per_host = Counter(stream.host for stream in self.streams)
        if len(self.streams) >= max_streams:
            raise RestError(503, "Too many streaming connections", f"{max_streams} event streams are open already")
        if per_host[host] >= max_per_host:
            raise RestError(
                503, "Too many streaming connections", f"{host} has {max_per_host} event streams open already"
            )
        if not self.streams:
            self.last_id = newest
        stream = Stream(host)
        self.streams.add(stream)
        self.wake.set()
        return stream

    def leave(self, stream: Stream) -> None:
        self.streams.discard(stream)
        if stream.dropped:
            self.dropped += 1

    async def pump(self, app: web.Application) -> None:
        scheduler, executor = app[SCHEDULER], app[EXECUTOR]
        loop = asyncio.get_running_loop()
        self.last_id = scheduler.events.highest_id()
        while True:
            if not self.streams:
                self.wake.clear()
                await self.wake.wait()
            await asyncio.sleep(PUMP_INTERVAL)
            ring = scheduler.events
            if ring.highest_id() <= self.last_id:
                continue
            start = max(self.last_id + 1, ring.lowest_id())
            # At most a buffer's worth per stream and look: more would drop every stream anyway.
            try:
                chunk, events, last = await loop.run_in_executor(
                    executor, encode_lines, scheduler, start, STREAM_BUFFER
                )
            except RuntimeError:
                return  # the server is stopping: its threads are gone
            except Exception:
                log.exception("event stream pump: events from id %d could not be encoded; skipping them", start)
                self.last_id = min(start + STREAM_BUFFER - 1, ring.highest_id())
                continue
            if not events or last <= self.last_id:
                continue  # a stream came meanwhile and started past these
            self.last_id = last
            for stream in list(self.streams):
                stream.offer(chunk, events)


STREAMS = web.AppKey("event_streams", EventStreams)


def install_streams(app: web.Application) -> None:
    """Give `app` its stream registry and run the pump while the server runs."""

    async def run_pump(app: web.Application) -> AsyncIterator[None]:
        streams = app[STREAMS] = EventStreams()
        task = asyncio.create_task(streams.pump(app), name="herder-rest-event-pump")
        yield
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    async def end_streams(app: web.Application) -> None:
        for stream in list(app[STREAMS].streams):
            stream.chunks.put_nowait(None)  # handlers return, so the server stops without waiting

    app.cleanup_ctx.append(run_pump)
    app.on_shutdown.append(end_streams)


def _count(request: web.Request, default: int, minimum: int) -> int:
    raw = request.query.get("count")
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise bad_request("Invalid count", f"?count={raw}: expected a whole number") from None
    if value < minimum:
        raise bad_request("Invalid count", f"?count={raw}: must be at least {minimum}")
    return value


@routes.get("/ws/v1/events/batch")
async def events_batch(request: web.Request) -> web.Response:
    """Events with id >= start, oldest first, at most count; ids tell what the ring still holds."""
    sched = scheduler_of(request)
    most = sched.settings.event_rest_response_size
    count = min(_count(request, most, 1), most)
    raw_start = request.query.get("start") or "0"
    if not raw_start.isdigit():
        raise bad_request("Invalid start", f"?start={raw_start}: expected a whole number, 0 or more")
    start = int(raw_start)
    instance = status_of(request).instance_uuid

    def build() -> dict[str, object]:
        ring = sched.events
        lowest, highest = ring.lowest_id(), ring.highest_id()
        offset = sched.epoch_offset()
        records = [yunikorn_record(event, offset) for event in ring.batch(start, count)] if start <= highest else []
        return {"InstanceUUID": instance, "LowestID": lowest, "HighestID": highest, "EventRecords": records}

    return await json_answer(request, build)


@routes.get("/ws/v1/events/stream")
async def events_stream(request: web.Request) -> web.StreamResponse:
    sched = scheduler_of(request)
    settings = sched.settings
    past = min(_count(request, 0, 0), settings.event_rest_response_size)
    streams = request.app[STREAMS]
    host = request.remote or "unknown"
    stream = streams.admit(
        host, settings.event_max_streams, settings.event_max_streams_per_host, sched.events.highest_id()
    )
    try:
        newest = streams.last_id
        first = max(newest - past + 1, sched.events.lowest_id())
        history = b""
        if past and newest >= first:
            history, _, _ = await offload(request, lambda: encode_lines(sched, first, newest - first + 1))
        response = web.StreamResponse(headers={"Content-Type": JSON_TYPE, "Cache-Control": "no-cache"})
        await response.prepare(request)
        stream.transport = request.transport
        await _follow(request, response, stream, history)
        return response
    finally:
        streams.leave(stream)


async def _follow(request: web.Request, response: web.StreamResponse, stream: Stream, history: bytes) -> None:
    """Write the first line, the past events, then each chunk the pump hands over, until the
    client goes, the server stops or the stream is dropped for being slow."""
    try:
        first_line = json.dumps({"InstanceUUID": status_of(request).instance_uuid}).encode() + b"\n"
        async with asyncio.timeout(WRITE_TIMEOUT):
            await response.write(first_line + history)
        chunks = stream.chunks
        while True:
            if chunks.empty():
                try:
                    async with asyncio.timeout(IDLE_CHECK):
                        item = await chunks.get()
                except TimeoutError:
                    if request.transport is None or request.transport.is_closing():
                        return  # the client left while nothing happened
                    continue
            else:
                item = chunks.get_nowait()
            if item is None:
                break
            chunk, events = item
            stream.taken(events)
            async with asyncio.timeout(WRITE_TIMEOUT):
                await response.write(chunk)
    except (TimeoutError, ConnectionError):
        stream.dropped = True
        log.warning("event stream of %s dropped: a write failed or took over %.0f s", stream.host, WRITE_TIMEOUT)
        return
    if stream.dropped:
        log.warning("event stream of %s dropped: it fell %d events behind", stream.host, STREAM_BUFFER)
