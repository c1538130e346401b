"""The generic text key every field normaliser builds on: NFKC, mojibake and entities repaired,
case and accents folded, punctuation to spaces, letters of every script kept.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Callable

import ftfy
import pandas as pd

from jobdedup.features.normalize.unique import _check_series, _map_unique

# --------------------------------------------------------------------------------------------
# Generic text key
# --------------------------------------------------------------------------------------------

# Zero-width characters, bidi controls, soft hyphen, BOM: deleted (they sit inside words).
_INVISIBLE = "\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff"
_INVISIBLE_RE = re.compile(f"[{_INVISIBLE}]")
# Trade and copyright marks ("Welltower™", "DEPT®"); NFKC would turn ™ into letters.
_MARKS_RE = re.compile("[\u2122\u2120\u00ae\u00a9\u2117]")
# Diacritics removed after NFKD: Latin/Greek/Cyrillic combining marks, Hebrew points and
# cantillation, Arabic harakat. Marks of other scripts (Indic vowel signs, Thai) are kept.
_ACCENT_RE = re.compile(
    "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"
    "\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u064b-\u065f\u0670]"
)
# Letters that NFKD does not decompose.
_LETTER_MAP = str.maketrans(
    {"ł": "l", "ø": "o", "đ": "d", "ħ": "h", "ı": "i", "æ": "ae", "œ": "oe", "þ": "th", "ŀ": "l"}
)


def _code_point_runs(test: Callable[[str], bool]) -> list[tuple[int, int]]:
    """(first, last) of each run of consecutive code points that pass `test`."""
    runs: list[tuple[int, int]] = []
    # Planes 0-2 and the variation-selector supplement hold every assigned mark and digit (Unicode 15).
    for cp in [*range(0x30000), *range(0xE0100, 0xE01F0)]:
        if test(chr(cp)):
            if runs and runs[-1][1] == cp - 1:
                runs[-1] = (runs[-1][0], cp)
            else:
                runs.append((cp, cp))
    return runs


def _mark_class() -> str:
    """A regex character-class body listing every combining mark (category M*) as ranges."""
    return "".join(
        re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
        for a, b in _code_point_runs(lambda c: unicodedata.category(c)[0] == "M")
    )


# Anything that is not a letter, digit or combining mark (so Devanagari/Thai words stay whole).
_NON_WORD_CHAR_RE = re.compile(f"[^\\w{_mark_class()}]|_")


class _NonWordToSpace(dict[int, int]):
    """`str.translate` table mapping each non-word character to a space, filled on first use.

    Translating and splitting is several times faster than a regex substitution, whose
    character class is a long list of combining-mark ranges.
    """

    def __missing__(self, cp: int) -> int:
        self[cp] = mapped = 32 if _NON_WORD_CHAR_RE.fullmatch(chr(cp)) else cp
        return mapped


_NON_WORD_TO_SPACE = _NonWordToSpace()
# Apostrophes, Hebrew geresh/gershayim and quotes *between letters* are deleted, not spaced:
# "O'Fallon" -> "ofallon", 'מנכ"ל' / "מנכ״ל" -> "מנכל", "בע''מ" -> "בעמ".
_INNER_QUOTE_RE = re.compile("(?<=\\w)(?:''|['\u2019\u02bc`\u00b4\"\u05f3\u05f4])(?=\\w)")
_QUOTE_CHAR_RE = re.compile("['\u2019\u02bc`\u00b4\"\u05f3\u05f4]")
# Programming-language tokens that punctuation removal would destroy, each with a substring
# every match contains (most texts have none, so the regex is skipped).
_TECH_TOKENS = [
    ("c++", re.compile(r"(?<![\w+])c\+\+"), " cpp "),
    ("#", re.compile(r"(?<![\w#])([cf])#"), r" \1sharp "),
    ("asp.net", re.compile(r"\basp\.net\b"), " asp dotnet "),
    (".net", re.compile(r"(?<![\w.])\.net\b"), " dotnet "),
    ("dot", re.compile(r"\bdot\s?net\b"), " dotnet "),
]


def _fix_mojibake(text: str) -> str:
    """Text that was UTF-8 decoded as cp1252, latin-1 or another single-byte code ("NestlÃ©",
    "â€™", "Ã¼ber") decoded again, by ftfy's `fix_encoding`, whose badness heuristic leaves
    real text in any script as it is."""
    return ftfy.fix_encoding(text)


def _preclean(text: str) -> str:
    """Mojibake and HTML entities repaired, NFKC, invisible characters and ™/®/© removed."""
    if text.isascii() and "&" not in text:  # nothing to repair
        return text
    text = _fix_mojibake(text)
    if "&" in text:
        text = html.unescape(text)
    return _INVISIBLE_RE.sub("", unicodedata.normalize("NFKC", _MARKS_RE.sub(" ", text)))


def _fold(text: str) -> str:
    """Casefold and strip Latin/Greek/Cyrillic/Hebrew/Arabic diacritics; result is NFKC."""
    if text.isascii():
        return text.lower()
    text = text.casefold()
    text = _ACCENT_RE.sub("", unicodedata.normalize("NFKD", text))
    return unicodedata.normalize("NFC", text.translate(_LETTER_MAP))


def _key(text: str) -> str:
    """The text key of an already pre-cleaned string ("" when nothing is left)."""
    text = _fold(text)
    for needle, pattern, repl in _TECH_TOKENS:
        if needle in text:
            text = pattern.sub(repl, text)
    if _QUOTE_CHAR_RE.search(text):
        text = _INNER_QUOTE_RE.sub("", text)
    return " ".join(text.translate(_NON_WORD_TO_SPACE).split())


def _text_key(text: str) -> str | None:
    return _key(_preclean(text)) or None


def normalize_text_key(s: pd.Series) -> pd.Series:
    """Generic comparison key: NFKC, casefold, no accents, punctuation -> space, single spaces.

    Letters of every script are kept (Latin, Cyrillic, Greek, Hebrew, Arabic, CJK, Indic);
    zero-width characters and right-to-left marks are removed; ``C++``, ``C#`` and ``.NET``
    survive as ``cpp``, ``csharp`` and ``dotnet``.

    Args:
        s: strings, NA allowed.

    Returns:
        "string" Series aligned to `s`; NA where `s` is NA or nothing is left.

    Example:
        >>> normalize_text_key(pd.Series(["Düsseldorf – C# Entwickler", "Москва!", None])).tolist()
        ['dusseldorf csharp entwickler', 'москва', <NA>]
    """
    return _map_unique(_check_series(s, "normalize_text_key"), _text_key, "string")


def normalize_occupation(s: pd.Series) -> pd.Series:
    """Occupation / category / industry key; the same rules as `normalize_text_key`.

    Example:
        >>> normalize_occupation(pd.Series(["IT & Telecoms Jobs", "Healthcare & Nursing Jobs"])).tolist()
        ['it telecoms jobs', 'healthcare nursing jobs']
    """
    return _map_unique(_check_series(s, "normalize_occupation"), _text_key, "string")


def _fixpoint(func: Callable[[str], str], text: str, limit: int = 4) -> str:
    """Apply `func` until the result stops changing, so the normaliser is idempotent."""
    for _ in range(limit):
        new = func(text)
        if new == text:
            break
        text = new
    return text
