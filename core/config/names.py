"""The names a configuration may use: queues, users, groups, placement rules (YuniKorn's rules).

The patterns are YuniKorn's (`pkg/common/configs/configvalidator.go`): a queue name is 1 to 64
of letters, digits and `_ : # / @ -` (a dot separates queues in a path, so it is never part of
a name); a user name starts with a letter or `_` and may hold `: # / _ . @ -` and end in `$`; a
group name is the same without `# / @ $`. Herder adds one rule: no queue below the root is
called `root`, since a short queue name `root` means the root itself.

A placement filter's single entry may be a regular expression instead of a name; YuniKorn
takes an entry as one only when it holds a character no name can (`SPECIAL`).
"""

from __future__ import annotations

import re

ROOT = "root"
WILDCARD = "*"
QUEUE_NAME = re.compile(r"^[a-zA-Z0-9_:#/@-]{1,64}$")
USER_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9:#/_.@-]*[$]?$")
GROUP_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9:_.-]*$")
RULE_NAME = re.compile(r"^[_a-zA-Z][a-zA-Z0-9_]*$")
SPECIAL = re.compile(r"[\^$*+?()\[{}|]")
QUEUE_NAME_RULE = "1 to 64 letters, digits and _ : # / @ - (a dot separates queues)"


def queue_name_problem(name: str, *, below_root: bool = True) -> str | None:
    """Why `name` cannot name a configured queue, or None when it can."""
    if not QUEUE_NAME.match(name):
        return f"invalid queue name {name!r} ({QUEUE_NAME_RULE})"
    if below_root and name.lower() == ROOT:
        return "a queue below the root may not be called 'root' (a short queue name 'root' means the root itself)"
    return None
