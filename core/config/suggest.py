"""The "did you mean" guess: the nearest known word to a misspelt key, setting, property or resource.

Matching ignores case (`maxApplications` finds `maxapplications`) and needs a close match, so
a word that resembles nothing gets no guess rather than a wrong one. A guess costs a fuzzy
match, so a document guesses for its first `GUESSES` unknown words only (`Guesser`): a file of
a hundred thousand unknown keys is not worth a hundred thousand guesses.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

_CUTOFF = 0.75
GUESSES = 50


def nearest(word: str, choices: Iterable[str]) -> str | None:
    """The known word `word` most likely meant, or None when none is close."""
    options = sorted(set(choices))
    by_lower = {option.lower(): option for option in options}
    lowered = word.lower()
    if lowered in by_lower and by_lower[lowered] != word:
        return by_lower[lowered]
    found = difflib.get_close_matches(lowered, list(by_lower), n=1, cutoff=_CUTOFF)
    return by_lower[found[0]] if found else None


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the nearest known word, else an empty string."""
    guess = nearest(word, choices)
    return f" (did you mean {guess!r}?)" if guess is not None and guess != word else ""


class Guesser:
    """`did_you_mean` for one document's first `limit` words, then no more guesses."""

    def __init__(self, limit: int = GUESSES) -> None:
        self.left = limit

    def nearest(self, word: str, choices: Iterable[str]) -> str | None:
        if self.left <= 0:
            return None
        self.left -= 1
        return nearest(word, choices)

    def did_you_mean(self, word: str, choices: Iterable[str]) -> str:
        guess = self.nearest(word, choices)
        return f" (did you mean {guess!r}?)" if guess is not None and guess != word else ""
