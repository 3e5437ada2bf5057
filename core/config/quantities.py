"""Resource amounts as a configuration wrote them, and resource names pods can ask for.

Validation compares core values (vcore in millicores, memory in bytes), but a message must
speak the file's language: `guaranteed vcore 10000 exceeds max 5` for a file that says `vcore:
10000` and `vcore: 5`, not `10000000 exceeds 5000`. Parsing records the text of every amount
it reads, by resource and value (`WrittenAmounts`); an amount the file never wrote (a sum of
children's guarantees) is shown in the resource's usual unit: whole cores or millicores, bytes
with the largest exact suffix.

A resource a pod can request is `vcore` (a pod's `cpu`), `memory`, `pods`, `ephemeral-storage`,
a `hugepages-*` size or an extended resource, which Kubernetes requires to carry a domain
(`nvidia.com/gpu`). Any other name limits nothing a pod asks for, so it is most likely a typo
(`memroy: 8Gi`) and gets a warning with the nearest known name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from core.config.suggest import Guesser
from core.resources import MEMORY, PODS, VCORE

WrittenAmounts = Mapping[tuple[str, int], str]  # (resource, core value) -> the text first written for it

STANDARD_RESOURCES = frozenset({VCORE, "cpu", MEMORY, PODS, "ephemeral-storage"})
_COMMON_EXTENDED = ("nvidia.com/gpu", "amd.com/gpu")
_BYTE_SUFFIXES = (
    ("Ei", 2**60),
    ("Pi", 2**50),
    ("Ti", 2**40),
    ("Gi", 2**30),
    ("Mi", 2**20),
    ("Ki", 2**10),
    ("E", 10**18),
    ("P", 10**15),
    ("T", 10**12),
    ("G", 10**9),
    ("M", 10**6),
    ("k", 10**3),
)


def _is_bytes(key: str) -> bool:
    return key in (MEMORY, "ephemeral-storage") or key.startswith("hugepages-")


def amount_text(key: str, value: int, written: WrittenAmounts | None = None) -> str:
    """`value` of resource `key` as the file wrote it, else in the resource's usual unit."""
    if written:
        text = written.get((key, value))
        if text is not None:
            return text
    if key == VCORE:
        return str(value // 1000) if value % 1000 == 0 else f"{value}m"
    if _is_bytes(key) and value:
        candidates = [f"{value // factor}{suffix}" for suffix, factor in _BYTE_SUFFIXES if value % factor == 0]
        if candidates:
            return min(candidates, key=len)
    return str(value)


def is_requestable(name: str) -> bool:
    """Whether a pod can ask for a resource of this name (see the module docstring)."""
    return name in STANDARD_RESOURCES or name.startswith("hugepages-") or "/" in name


def unknown_resource_warning(
    name: str, where: str, names_in_file: Iterable[str] = (), guesser: Guesser | None = None
) -> str | None:
    """A warning for a resource name no pod can request, with the nearest known one; None if fine."""
    if is_requestable(name):
        return None
    known = [*sorted(STANDARD_RESOURCES - {"cpu"}), *_COMMON_EXTENDED, *names_in_file]
    guess = next((k for k in known if "/" in k and k.rsplit("/", 1)[1] == name), None)
    guess = guess or (guesser or Guesser()).nearest(name, known)
    hint = f"; did you mean {guess!r}?" if guess is not None and guess != name else ""
    return (
        f"{where}: resource {name!r} is not one a pod can request (vcore, memory, pods, ephemeral-storage, "
        f"hugepages-*, or an extended resource with a domain such as nvidia.com/gpu), so it limits nothing{hint}"
    )
