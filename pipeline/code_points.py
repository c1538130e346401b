"""Every Unicode code point as one string, for tables made from Python's own character classes
(the tokeniser's word, digit and space classes and case folding; the widget pre-check's letters).

Example:
    >>> text = every_code_point()
    >>> len(text), text[65], text[0x1F600] == "\\U0001F600"
    (1114112, 'A', True)
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

CODE_POINTS = 0x110000


def every_code_point() -> str:
    """The code points 0 to 0x10FFFF in order, surrogates included (~15 ms: decoded from their
    UTF-32 bytes, not joined one `chr` at a time, ~170 ms)."""
    return np.arange(CODE_POINTS, dtype=np.uint32).tobytes().decode("utf-32-le", "surrogatepass")


def changed_positions(text: str, *mappings: Callable[[str], str], chunk: int = 256) -> list[int]:
    """Positions of the characters of `text` that one of `mappings` (`str.casefold`, `str.lower`,
    ...) changes. These map each character alone (`str.lower`'s final sigma only chooses between
    two lower-case forms of "Σ"), so a chunk that every mapping leaves alone holds none: most of
    Unicode (CJK, unassigned code points) is skipped a chunk at a time (~8-10 ms for all code
    points, ~115 ms one by one)."""
    changed: list[int] = []
    for start in range(0, len(text), chunk):
        part = text[start : start + chunk]
        if any(mapping(part) != part for mapping in mappings):
            changed.extend(
                start + i for i, c in enumerate(part) if any(mapping(c) != c for mapping in mappings)
            )
    return changed


def cased_code_points(text: str) -> str:
    """The characters of `text` that `str.lower` or `str.upper` changes, in order: the only ones
    Python's case-insensitive `re` can match to another character (its special pairs, "ſ" and
    "s", the Kelvin sign and "k", "ı" and "i", are cased too)."""
    return "".join(text[i] for i in changed_positions(text, str.lower, str.upper))
