"""Submit access control: YuniKorn ACL strings and who may submit to a queue.

An ACL string is `*` (everyone), `"user1,user2 group1,group2"` (users, one space, groups) or
empty (nobody). Submission to a queue is allowed when the ACL of the queue or of any ancestor
allows the user; a queue that does not exist yet has no ACL of its own and so inherits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from core.objects.ask import UserGroup


@dataclass(frozen=True, slots=True)
class Acl:
    everyone: bool = False
    users: frozenset[str] = frozenset()
    groups: frozenset[str] = frozenset()

    @classmethod
    def parse(cls, text: str) -> Acl:
        """Parse a submitacl value; raises ValueError naming the text when it is malformed."""
        stripped = text.strip()
        if stripped == "*":
            return cls(everyone=True)
        parts = text.rstrip().split(" ")
        if len(parts) > 2:
            raise ValueError(f"ACL {text!r} has more than one space: use 'users groups', comma-separated")
        users = _names(parts[0])
        groups = _names(parts[1]) if len(parts) == 2 else frozenset()
        return cls(everyone="*" in users or "*" in groups, users=users, groups=groups)

    def allows(self, user: UserGroup) -> bool:
        if self.everyone or user.user in self.users:
            return True
        return any(group in self.groups for group in user.groups)


def _names(field: str) -> frozenset[str]:
    return frozenset(name.strip() for name in field.split(",") if name.strip())


class QueueView(Protocol):
    """What placement needs to know about the partition's queue tree."""

    def exists(self, path: str) -> bool: ...

    def is_leaf(self, path: str) -> bool: ...

    def submit_acl(self, path: str) -> str | None: ...


@runtime_checkable
class ImplicitParents(Protocol):
    """Optional on a view: whether a leaf may become a parent because a rule names it as one."""

    def can_become_parent(self, path: str) -> bool: ...


@runtime_checkable
class AclSummary(Protocol):
    """Optional on a view: whether any queue in the whole tree has a submitacl."""

    def any_acl_configured(self) -> bool: ...


def ancestors(path: str) -> list[str]:
    """`root.a.b` -> [`root.a.b`, `root.a`, `root`]."""
    parts = path.split(".")
    return [".".join(parts[:n]) for n in range(len(parts), 0, -1)]


def submit_denial(path: str, user: UserGroup, view: QueueView) -> str | None:
    """None when `user` may submit to `path`, else a sentence saying why not.

    Departure from YuniKorn, which denies when no ACL allows: when no queue has a submitacl at
    all, everyone may submit (an administrator who never wrote an ACL expects pods to run). A
    view that cannot say so for the whole tree (no `any_acl_configured`) is judged on the
    queues along the path alone.
    """
    acls: list[tuple[str, str]] = []
    for queue in ancestors(path):
        if not view.exists(queue):
            continue
        text = view.submit_acl(queue)
        if text is None:
            continue
        try:
            acl = Acl.parse(text)
        except ValueError as err:
            acls.append((queue, f"invalid ({err})"))
            continue
        if acl.allows(user):
            return None
        acls.append((queue, repr(text)))
    configured = view.any_acl_configured() if isinstance(view, AclSummary) else bool(acls)
    if not configured:
        return None
    if not acls:
        return f"user {user.user} may not submit to {path}: no queue on its path has a submitacl"
    named = ", ".join(f"{queue} {text}" for queue, text in acls)
    return f"user {user.user} may not submit to {path}: not allowed by the submitacl of {named}"
