"""What the REST server says about this replica: initial sync done, leadership, identity.

The operator owns one `RestStatus` and flips it as things happen (`mark_synced()` once every
node, pod, quota and namespace is loaded; `set_leader()` on every Lease tick). The REST
server only reads it: `/readyz` answers 200 once `synced` is true and tells whether this
replica leads, `/metrics` exports `herder_leader` and `herder_ready`. Attribute writes are
single assignments, so threads may update it without a lock.
"""

from __future__ import annotations

import socket
import time
import uuid
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RestStatus:
    identity: str = field(default_factory=socket.gethostname)
    synced: bool = False
    leader: bool = False
    # With a webhook port, the API server calls this replica once it is ready (a Service routes to
    # ready pods), so it is ready only once the webhook server listens too.
    webhooks_expected: bool = False
    webhooks_serving: bool = False
    # Changes on every process start, so event readers can tell a restart (YuniKorn's InstanceUUID).
    instance_uuid: str = field(default_factory=lambda: str(uuid.uuid4()))
    started: float = field(default_factory=time.time)

    def mark_synced(self) -> None:
        self.synced = True

    @property
    def ready(self) -> bool:
        return self.synced and (self.webhooks_serving or not self.webhooks_expected)

    def mark_webhooks_serving(self) -> None:
        self.webhooks_serving = True

    def set_leader(self, leader: bool) -> None:
        self.leader = leader

    def document(self) -> dict[str, Any]:
        return {
            "ready": self.ready,
            "leader": self.leader,
            "identity": self.identity,
            "instanceUUID": self.instance_uuid,
            "startTime": self.started,
        }
