"""The event ring: ids without gaps, the newest `capacity` kept, records built when read."""

from __future__ import annotations

from core.events import ADD, NODE, NODE_ALLOC, REQUEST, EventRing, SchedulingEvent
from core.resources import Resource


def _fill(ring: EventRing, count: int) -> None:
    for index in range(count):
        if index % 2:
            ring.add_record(
                float(index),
                NODE,
                f"n{index}",
                "AllocationAdded",
                "",
                f"pod-{index}",
                "ns/p",
                ADD,
                NODE_ALLOC,
                Resource({"vcore": index}),
            )
        else:
            ring.add(SchedulingEvent(float(index), REQUEST, f"pod-{index}", "Scheduled", message=f"m{index}"))


def test_events_and_records_share_one_sequence_of_ids_and_read_back_whole() -> None:
    ring = EventRing(capacity=100)
    _fill(ring, 6)
    events = ring.batch(0, -1)
    assert [event.id for event in events] == [1, 2, 3, 4, 5, 6]
    record = events[1]
    assert record == SchedulingEvent(
        1.0,
        NODE,
        "n1",
        "AllocationAdded",
        "",
        "pod-1",
        "ns/p",
        id=2,
        change=ADD,
        detail=NODE_ALLOC,
        resource=Resource({"vcore": 1}),
    )
    assert events[2].message == "m2"
    assert [event.id for event in ring.batch(4, 2)] == [4, 5]
    assert [event.id for event in ring.latest(2)] == [5, 6]


def test_a_full_ring_keeps_the_newest_and_reads_from_either_end() -> None:
    ring = EventRing(capacity=5)
    _fill(ring, 12)
    assert ring.lowest_id() == 8 and ring.highest_id() == 12 and len(ring) == 5
    assert [event.id for event in ring.batch(0, 3)] == [8, 9, 10]
    assert [event.id for event in ring.batch(11, 10)] == [11, 12]  # near the newest end
    assert ring.batch(13) == []
    assert [event.object_id for event in ring.batch(8, 2)] == ["n7", "pod-8"]
