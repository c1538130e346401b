"""Phone numbers in free text, as keys that match however a number is written."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pandas as pd
import phonenumbers

from jobdedup.features.normalize.contacts import (
    _PHONE_HINT,
    _Contact,
    _map_contacts,
)
from jobdedup.features.normalize.unique import _check_series

# Phone candidates: international (+/00), trunk-prefixed (0...), or North American 3-3-4.
_PHONE_RE = re.compile(r"(?<![\w.,/£$€+-])(?:\+|\(\s*\+)?\(?\d[\d ().\-/\u00a0]{6,22}\d(?!\d)")
_DATE_LIKE_RE = re.compile(r"^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$|^\d{1,2}[./-]\d{4}\b")
_NANP_RE = re.compile(r"^\(?[2-9]\d{2}\)?[\s.-]*[2-9]\d{2}[\s.-]+\d{4}$")
_NON_DIGIT_RE = re.compile(r"\D")
_TRUNK_IN_BRACKETS_RE = re.compile(r"(?<=\d)\s*\(0\)\s*")  # "+43 (0) 5242 ..." -> "+43 5242 ..."
# The digits part of a `_PHONE_RE` match lies in one match of this (first to last digit of a run),
# the part before it ("+", "(", white space) in the `_PHONE_LEAD` or space characters just before.
_PHONE_CORE_RE = re.compile(r"\d[\d ().\-/\u00a0]{6,}\d")
_PHONE_LEAD = frozenset("+(")


def _phone_matches(text: str) -> Iterator[re.Match[str]]:
    """`_PHONE_RE.finditer(text)`, run only around the digit runs a match can be made of."""
    end = 0
    for core in _PHONE_CORE_RE.finditer(text):
        start = core.start()
        while start > end and (text[start - 1] in _PHONE_LEAD or text[start - 1].isspace()):
            start -= 1
        yield from _PHONE_RE.finditer(text, start, core.end())
        end = core.end()


def _written_as_phone(cand: str, digits: str, international: bool) -> bool:
    """Whether a candidate is written the way phone numbers are: international, with a trunk "0" or
    North American 3-3-4; not a date, not 8+ digits of only one or two kinds (00000000)."""
    if _DATE_LIKE_RE.search(cand) or not 8 <= len(digits) <= 15 or len(set(digits)) <= 2:
        return False
    return (
        international
        or digits.startswith("0")
        or _NANP_RE.match(cand) is not None
        or (
            digits.startswith("1") and len(digits) == 11 and _NANP_RE.match(cand[1:].strip(" -.")) is not None
        )
    )


def _phone_keys(cand: str, digits: str, international: bool, region: str | None) -> tuple[str, ...]:
    """The keys of a candidate: its E.164 form ("+442079460958") and the digits it is dialled with
    inside its country ("02079460958"), if `phonenumbers` finds it a valid number.

    International numbers carry their country. A national number is read in the ad's `region`;
    one written North American (3-3-4, "1-855-833-5120") that is no valid number there (a US
    help desk in a Dutch ad) or in an ad of unknown country is read as North American. Any other
    national number in an ad of unknown country cannot be placed or checked: its one key is its
    digits as written ("02079460958"). That is why valid numbers carry their national digits too:
    a repost whose location names no country ("Belfast" against "Belfast, UK") still shares them.
    """
    if international:
        number = _valid_number("+" + cand.lstrip("(+ ").removeprefix("00"), None)
    else:
        number = _valid_number(cand, region) if region else None
        if (
            number is None
            and region != "US"
            and (_NANP_RE.match(cand) or _NANP_RE.match(cand[1:].strip(" -.")))
        ):
            number = _valid_number(cand, "US")
    if number is None:
        return (digits,) if region is None and not international else ()
    national = _NON_DIGIT_RE.sub(
        "", phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
    )
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164), national


def _valid_number(cand: str, region: str | None) -> phonenumbers.PhoneNumber | None:
    try:
        number = phonenumbers.parse(cand, region)
    except phonenumbers.NumberParseException:
        return None
    return number if phonenumbers.is_valid_number(number) else None


def _phones(contact: _Contact) -> tuple[str, ...] | None:
    if not contact.phone_hint:  # `_PHONE_HINT`: most ads hold no 8-digit run at all
        return None
    text = contact.clean
    if "(0)" in text:
        text = _TRUNK_IN_BRACKETS_RE.sub(" ", text)
    keys: set[str] = set()
    for m in _phone_matches(text):
        cand = m.group(0).strip(" ()-./")
        digits = _NON_DIGIT_RE.sub("", cand)
        international = m.group(0).lstrip("( ").startswith("+") or digits.startswith("00")
        if _written_as_phone(cand, digits, international):
            written = m.group(0).strip(" )-./") if international else cand
            keys.update(_phone_keys(written, digits, international, contact.region))
    return tuple(sorted(keys)) or None


def extract_phones(s: pd.Series, regions: pd.Series | None = None) -> pd.Series:
    """Phone numbers found in free text: E.164 ("+442079460958") and national digits ("02079460958").

    Candidates must be written like phone numbers: international ("+44 ...", "0044 ..."), with a
    trunk "0" ("020 7946 0958", "07582/620430") or North American ("(214) 555-0142"), 8-15
    digits; dates and salary ranges are skipped. Each is parsed and checked by `phonenumbers`
    (Google's libphonenumber metadata): a national number is read in the ad's country (`regions`,
    ISO 3166 alpha-2 codes such as "GB", "DE", "IL"; see `features.normalize.regions`), so
    "+44 20 7946 0958" and "020 7946 0958" in a British ad are the same number. Each valid number
    gives two keys, its E.164 form and the digits it is dialled with inside its country; a national
    number in an ad of unknown country is read as North American when written 3-3-4, else its
    digits as written are its one key, so it still matches the same number in an ad whose
    country is known (the location of a repost often names no country).

    Args:
        s: free texts, NA allowed.
        regions: each row's country code, NA where unknown; None: unknown everywhere.

    Returns:
        object Series of sorted tuples of keys; NA where there are none.

    Example:
        >>> extract_phones(pd.Series(["Call +44 20 7946 0958", "Tel. 020 7946 0958", "01.02.2024"]),
        ...                pd.Series([None, "GB", "DE"])).tolist()
        [('+442079460958', '02079460958'), ('+442079460958', '02079460958'), <NA>]
    """
    return _map_contacts(_check_series(s, "extract_phones"), [_phones], _PHONE_HINT, regions)[0]
