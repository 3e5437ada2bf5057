"""The user group manager (seeds 000 and 001): usage per user and per group along the queue
hierarchy, and the user and group limits of the queue configuration enforced on it.

`UserGroupManager` (one per partition) is the only entry point; `UsageSample` is what it
reports for metrics.
"""

from core.ugm.documents import UsageSample
from core.ugm.manager import UserGroupManager

__all__ = ["UsageSample", "UserGroupManager"]
