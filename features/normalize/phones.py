"""Phone numbers in free text, as keys that match however a number is written."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pandas as pd

from features.normalize.contacts import (
    _RE2_PHONE_HINT,
    _Contact,
    _map_contacts,
)
from features.normalize.unique import _check_series

# Phone candidates: international (+/00), trunk-prefixed (0...), or North American 3-3-4.
_PHONE_RE = re.compile(r"(?<![\w.,/£$€+-])(?:\+|\(\s*\+)?\(?\d[\d ().\-/\u00a0]{6,22}\d(?!\d)")
_DATE_LIKE_RE = re.compile(r"^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$|^\d{1,2}[./-]\d{4}\b")
_NANP_RE = re.compile(r"^\(?[2-9]\d{2}\)?[\s.-]*[2-9]\d{2}[\s.-]+\d{4}$")
_PHONE_KEY_DIGITS = 9
_TRUNK_IN_BRACKETS_RE = re.compile(r"(?<=\d)\s*\(0\)\s*")  # "+43 (0) 5242 ..." -> "+43 5242 ..."
# The digits part of a `_PHONE_RE` match lies in one match of this (first to last digit of a run),
# the part before it ("+", "(", white space) in the `_PHONE_LEAD` or space characters just before.
_PHONE_CORE_RE = re.compile(r"\d[\d ().\-/\u00a0]{6,}\d")
_PHONE_LEAD = frozenset("+(")


# ITU country codes: 1 and 7 have one digit, these have two, all others three.
_TWO_DIGIT_COUNTRY_CODES = frozenset(
    "20 27 30 31 32 33 34 36 39 40 41 43 44 45 46 47 48 49 51 52 53 54 55 56 57 58 60 61 62 63 64 65 66 "
    "81 82 84 86 90 91 92 93 94 95 98".split()
)


def _national_number(digits: str, international: bool) -> str:
    """Drop the international prefix and country code, or the trunk 0: "+43 5242..." = "05242..."."""
    if international:
        digits = digits[2:] if digits.startswith("00") else digits
        cc = 1 if digits[0] in "17" else 2 if digits[:2] in _TWO_DIGIT_COUNTRY_CODES else 3
        return digits[cc:].lstrip("0") or digits
    if len(digits) == 11 and digits[0] == "1":  # 1-703-218-6000
        return digits[1:]
    return digits.lstrip("0") or digits


def _phone_matches(text: str) -> Iterator[re.Match[str]]:
    """`_PHONE_RE.finditer(text)`, run only around the digit runs a match can be made of."""
    end = 0
    for core in _PHONE_CORE_RE.finditer(text):
        start = core.start()
        while start > end and (text[start - 1] in _PHONE_LEAD or text[start - 1].isspace()):
            start -= 1
        yield from _PHONE_RE.finditer(text, start, core.end())
        end = core.end()


def _phones(contact: _Contact) -> tuple[str, ...] | None:
    if not contact.phone_hint:  # `_RE2_PHONE_HINT`: most ads hold no 8-digit run at all
        return None
    text = contact.clean
    if "(0)" in text:
        text = _TRUNK_IN_BRACKETS_RE.sub(" ", text)
    keys: set[str] = set()
    for m in _phone_matches(text):
        cand = m.group(0).strip(" ()-./")
        if _DATE_LIKE_RE.search(cand):
            continue
        digits = re.sub(r"\D", "", cand)
        if not 8 <= len(digits) <= 15:
            continue
        international = m.group(0).lstrip("( ").startswith("+") or digits.startswith("00")
        if not (
            international
            or digits.startswith("0")
            or _NANP_RE.match(cand)
            or (digits.startswith("1") and len(digits) == 11 and _NANP_RE.match(cand[1:].strip(" -.")))
        ):
            continue
        if len(set(digits)) <= 2:  # 00000000, 0101010101
            continue
        keys.add(_national_number(digits, international)[-_PHONE_KEY_DIGITS:])
    return tuple(sorted(keys)) or None


def extract_phones(s: pd.Series) -> pd.Series:
    """Phone-number keys found in free text: the last 9 digits of each national number.

    Numbers must look like phone numbers: international ("+44 ...", "0044 ..."), with a trunk
    "0" ("020 7946 0958", "07582/620430") or North American ("(214) 555-0142"); dates and
    salary ranges are skipped. Numbers need >= 8 digits as written. The key is the last 9 digits
    of the national number (country code or trunk "0" dropped), so "+44 20 7946 0958" and
    "020 7946 0958" give the same key, as do "+43 5242 6951" and "05242 6951".

    Returns:
        object Series of sorted tuples of digit strings; NA where there are none.

    Example:
        >>> extract_phones(pd.Series(["Call +44 20 7946 0958", "Tel. 020 7946 0958", "01.02.2024"])).tolist()
        [('079460958',), ('079460958',), <NA>]
    """
    return _map_contacts(_check_series(s, "extract_phones"), [_phones], _RE2_PHONE_HINT)[0]
