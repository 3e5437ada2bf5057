"""YuniKorn's event API on Herder: batch pages and the newline-delimited JSON stream.

The stream is read by a real aiohttp client from a real server; the events come from a real
scheduler (placements, other schedulers' pods, application states) as in rest_world.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from core.config import parse_settings
from core.events import NODE, SchedulingEvent
from shim.convert.pods import pod_to_allocation, pod_to_ask
from shim.rest import RestStatus, ShimMetrics
from shim.rest import events as rest_events
from tests.shim.rest_world import NAMESPACE, NOW, Served, build_scheduler, pod, serve

RECORD = {
    "type": int,
    "objectID": str,
    "timestampNano": int,
    "eventChangeType": int,
    "eventChangeDetail": int,
    "resource": dict,
}
OPTIONAL = {"message": str, "referenceID": str}  # left out when empty, as YuniKorn does


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    sched, _ = build_scheduler()
    sched.update_settings(parse_settings({"event.maxStreamsPerHost": "2", "event.RESTResponseSize": "50"}))
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics()) as world:
        yield world


def find(records: list[dict[str, Any]], **fields: Any) -> list[dict[str, Any]]:
    return [r for r in records if all(r.get(key) == val for key, val in fields.items())]


async def all_records(served: Served) -> list[dict[str, Any]]:
    _, page = await served.get("/ws/v1/events/batch")
    records: list[dict[str, Any]] = page["EventRecords"]
    while records and records[-1]["id"] < page["HighestID"]:
        _, page = await served.get(f"/ws/v1/events/batch?start={records[-1]['id'] + 1}")
        records.extend(page["EventRecords"])
    return records


async def test_batch_records_carry_yunikorn_types_changes_and_details(served: Served) -> None:
    records = await all_records(served)
    for record in records:
        for key, kind in RECORD.items():
            assert type(record[key]) is kind, (key, record)
        for key, kind in OPTIONAL.items():
            assert type(record.get(key, "")) is kind and record.get(key) != "", (key, record)
    # job-1's first pod placed: YuniKorn files it under the application (APP ADD APP_ALLOC) ...
    [placed] = find(records, type=2, eventChangeDetail=200, referenceID="uid-job-1-a")
    assert placed["objectID"] == "job-1" and placed["eventChangeType"] == 2
    assert placed["resource"]["resources"]["vcore"] == {"value": 1000}
    assert placed["timestampNano"] == int(NOW * 10**9)
    # ... and under the node (NODE ADD NODE_ALLOC)
    [on_node] = find(records, type=3, eventChangeDetail=303, referenceID="uid-job-1-a")
    assert on_node["objectID"] == "node-0" and on_node["eventChangeType"] == 2
    # the other scheduler's pod: NODE_ALLOC marked foreign, and NODE_OCCUPIED (seed 003)
    [foreign] = find(records, type=3, eventChangeDetail=303, referenceID="uid-other")
    assert foreign["message"] == "foreign"
    [occupied] = find(records, type=3, eventChangeDetail=305, objectID="node-0")
    assert occupied["eventChangeType"] == 1 and occupied["resource"]["resources"]["vcore"] == {"value": 500}
    # application states: Accepted (204) then Running (206), as SET
    job1 = [r["eventChangeDetail"] for r in find(records, type=2, objectID="job-1", eventChangeType=1)]
    assert job1 == [204, 206]
    # a node added: NODE ADD with its capacity
    [added] = find(records, type=3, objectID="node-1", eventChangeType=2, eventChangeDetail=0)
    assert added["resource"]["resources"]["pods"] == {"value": 10}


async def test_batch_keeps_to_the_response_size_and_refuses_a_zero_count(served: Served) -> None:
    for i in range(60):
        served.sched.events.add(SchedulingEvent(NOW, NODE, f"node-{i}", "Note"))
    _, page = await served.get("/ws/v1/events/batch?count=1000")
    assert len(page["EventRecords"]) == 50  # event.RESTResponseSize
    status, body = await served.get("/ws/v1/events/batch?count=0")
    assert status == 400 and body["message"] == "Invalid count"
    _, beyond = await served.get(f"/ws/v1/events/batch?start={page['HighestID'] + 5}")
    assert beyond["EventRecords"] == [] and beyond["HighestID"] == page["HighestID"]


async def read_line(response: aiohttp.ClientResponse) -> dict[str, Any]:
    line = await asyncio.wait_for(response.content.readline(), 5)
    assert line.endswith(b"\n"), line
    result: dict[str, Any] = json.loads(line)
    return result


async def test_stream_sends_the_instance_then_past_events_then_new_ones_as_json_lines(served: Served) -> None:
    async with served.session.get(served.base + "/ws/v1/events/stream?count=2") as response:
        assert response.status == 200
        assert await read_line(response) == {"InstanceUUID": served.status.instance_uuid}
        past = [await read_line(response), await read_line(response)]
        _, page = await served.get("/ws/v1/events/batch")
        assert [r["id"] for r in past] == [page["HighestID"] - 1, page["HighestID"]]

        served.sched.add_allocation(
            pod_to_allocation(pod("late", "x", "nobody", [], "250m", "default-scheduler", "node-1"), NAMESPACE)
        )
        served.sched.add_ask(pod_to_ask(pod("job-4-a", "job-4", "alice", ["ml"], "1"), NAMESPACE))
        served.sched.schedule()
        seen = [await read_line(response) for _ in range(6)]
        assert [
            (r["type"], r["eventChangeType"], r["eventChangeDetail"], r["objectID"], r.get("referenceID", ""))
            for r in seen
        ] == [
            (3, 2, 303, "node-1", "uid-late"),  # NODE ADD NODE_ALLOC, the other scheduler's pod
            (3, 1, 305, "node-1", ""),  # NODE SET NODE_OCCUPIED
            (2, 1, 204, "job-4", ""),  # APP SET APP_ACCEPTED
            (3, 2, 303, "node-1", "uid-job-4-a"),  # NODE ADD NODE_ALLOC, Herder's pod
            (2, 1, 206, "job-4", ""),  # APP SET APP_RUNNING
            (2, 2, 200, "job-4", "uid-job-4-a"),  # APP ADD APP_ALLOC
        ]
        assert seen[0]["message"] == "foreign"
        assert [r["id"] for r in seen] == list(range(page["HighestID"] + 1, page["HighestID"] + 7))


async def test_a_stream_opened_later_starts_from_the_newest_events(served: Served) -> None:
    async with served.session.get(served.base + "/ws/v1/events/stream") as first:
        await read_line(first)
    streams = served.app[rest_events.STREAMS]
    for _ in range(100):  # the server sees the first stream gone when it next writes to it
        served.sched.events.add(SchedulingEvent(NOW, NODE, "node-x", "Note"))
        await asyncio.sleep(0.05)
        if not streams.streams:
            break
    await asyncio.sleep(0.1)  # no stream open: the pump sleeps while events come
    for i in range(5):
        served.sched.events.add(SchedulingEvent(NOW, NODE, f"node-{i}", "Note"))
    async with served.session.get(served.base + "/ws/v1/events/stream?count=2") as later:
        await read_line(later)
        past = [await read_line(later), await read_line(later)]
        assert [r["objectID"] for r in past] == ["node-3", "node-4"]
        served.sched.events.add(SchedulingEvent(NOW, NODE, "node-5", "Note"))
        assert (await read_line(later))["objectID"] == "node-5"


async def test_streams_beyond_the_per_host_limit_answer_503_and_a_closed_one_frees_its_place(served: Served) -> None:
    url = served.base + "/ws/v1/events/stream"
    first = await served.session.get(url)
    second = await served.session.get(url)
    await read_line(first), await read_line(second)
    async with served.session.get(url) as third:
        assert third.status == 503
        body = await third.json()
        assert body["message"] == "Too many streaming connections" and "127.0.0.1" in body["description"]
    first.close()
    for _ in range(100):  # the server notices the client left on its next write or idle check
        served.sched.events.add(SchedulingEvent(NOW, NODE, "node-0", "Note"))
        await asyncio.sleep(0.05)
        async with served.session.get(url) as again:
            if again.status == 200:
                assert (await read_line(again))["InstanceUUID"]
                break
    else:
        pytest.fail("the closed stream kept its place")
    second.close()


def test_a_stream_that_falls_too_far_behind_is_dropped_not_buffered() -> None:
    stream = rest_events.Stream("10.0.0.1")
    stream.offer(b"x\n" * 600, 600)
    stream.offer(b"x\n" * 400, 400)
    assert not stream.dropped and stream.waiting == 1000
    stream.offer(b"x\n", 1)
    assert stream.dropped
    assert stream.chunks.qsize() == 1 and stream.chunks.get_nowait() is None  # what waited is let go


async def test_a_client_that_stops_reading_is_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rest_events, "PUMP_INTERVAL", 0.001)
    sched, _ = build_scheduler()
    sched.update_settings(parse_settings({"event.ringBufferCapacity": "40000"}))
    async with serve(sched, RestStatus(identity="herder-0"), ShimMetrics()) as served:
        streams = None
        async with served.session.get(served.base + "/ws/v1/events/stream") as response:
            await read_line(response)
            message = "x" * 4000
            for _round in range(200):
                for i in range(100):
                    sched.events.add(SchedulingEvent(NOW, NODE, f"node-{i}", "Note", message))
                await asyncio.sleep(0.002)
                streams = served.app[rest_events.STREAMS]
                if streams.dropped:
                    break
            assert streams is not None and streams.dropped == 1
            assert not streams.streams
