"""Reservations: large pods and gangs do not starve behind a stream of small ones.

When the pod at the front of its leaf queue's line cannot be placed only because no node has
the free room (its queue, user and quota limits let it run, and some node could hold it once
pods leave), and it has waited `reservation.delay`, Herder reserves for it the node where it
can start soonest; for a gang's placeholder, the nodes all its pending placeholders need, in
one step. The room is kept on the node (`Node.hold`, the mechanism that also keeps a
preemptor's room), so no other pod is placed there, except:

- a pod that fits *beside* it (in the room the node has beyond what is kept), and
- a *backfill* (`reservation.backfill`): a pod with `activeDeadlineSeconds` that fits in the
  node's free room now and whose deadline ends before the reserved pod's earliest start,
  computed from the deadlines of the pods that must leave for it (Slurm's EASY backfill).

A reservation ends when its pod is placed (anywhere), leaves, waits for something other than
room (its queue's max, say), or can no longer fit the node (the node went, was cordoned or
relabelled, or shrank).

No two reserving pods wait on each other. The rule: a node holds the reservations of one
application at a time, and a reservation is only made where the room it needs frees when
pods *that wait for nothing* leave: running pods do, while the placeholders of a gang still
reserving and the room kept for another pod (a reservation or a preemptor's hold) count as
staying. So a reserved pod waits only for pods that end by themselves, never for another
waiting pod, and waits cannot form a cycle.

`book.py` holds what is reserved, `timing.py` when a node frees enough, `choose.py` which
nodes to reserve, `reserve.py` the pass after each cycle that makes and ends reservations and
the steps the cycle takes for a reserved pod, `backfill.py` the pods that may use a reserved
node meanwhile.
"""
