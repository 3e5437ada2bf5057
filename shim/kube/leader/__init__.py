"""Leadership: who may schedule, and the loops that run only while this replica leads.

The election over one Lease (`lease.py`: acquire, renew, take over when expired, release) and the
scheduling-cycle and recycler threads it starts and stops (`loops.py`). The Lease itself is read
and written through a store (`write/lease_store.py`), so this room makes no API calls of its own.
"""
