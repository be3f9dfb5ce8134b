"""The pieces every generated corpus module builds values from (the gate's corpus, its
provider and generic formats): alphabets, seeded random runs, and values shaped from parts.
Nothing here imports the corpus modules, so any of them may be imported first."""

from __future__ import annotations

import random
import string
from collections.abc import Callable

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
DIGITS = string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"

Maker = Callable[[random.Random], tuple[str, tuple[str, ...]]]
"""rng -> (the value as written, its sensitive parts)."""
Part = str | tuple[str, int] | tuple[str, str, int] | Callable[[random.Random], str]
"""A literal; a secret run (alphabet, length); a run (kind, alphabet, length), secret only
when kind is "s"; or a callable making a secret part (a UUID used as a key)."""


def pick(rng: random.Random, alphabet: str, length: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(length))


def uuid4(rng: random.Random) -> str:
    groups = (pick(rng, HEX, 8), pick(rng, HEX, 4), "4" + pick(rng, HEX, 3))
    return "-".join((*groups, "a" + pick(rng, HEX, 3), pick(rng, HEX, 12)))


def shaped(*parts: Part) -> Maker:
    """The parts concatenated; the secret ones of at least 8 characters are returned as the
    value's sensitive parts."""

    def make(rng: random.Random) -> tuple[str, tuple[str, ...]]:
        pieces: list[str] = []
        secret: list[str] = []
        for part in parts:
            if isinstance(part, str):
                pieces.append(part)
                continue
            if callable(part):
                run, is_secret = part(rng), True
            elif len(part) == 2:
                run, is_secret = pick(rng, part[0], part[1]), True
            else:
                kind, alphabet, length = part
                run, is_secret = pick(rng, alphabet, length), kind == "s"
            pieces.append(run)
            if is_secret:
                secret.append(run)
        return "".join(pieces), tuple(s for s in secret if len(s) >= 8)

    return make
