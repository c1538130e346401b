"""Finding contact details in free text: the pre-checks over whole columns (RE2), one pass per
distinct text, and e-mail addresses.
"""

from __future__ import annotations

import operator
import re
import unicodedata
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from jobdedup.features.normalize.text import (
    _INVISIBLE,
    _INVISIBLE_RE,
    _code_point_runs,
)
from jobdedup.features.normalize.unique import FEW_VALUES, _check_series

# --------------------------------------------------------------------------------------------
# Contacts: e-mails, phones, domains
# --------------------------------------------------------------------------------------------

_EMAIL_DEOBFUSCATE = [
    (re.compile(r"\s*[(\[{]\s*(?:at|ät|@)\s*[)\]}]\s*", re.I), "@"),
    (re.compile(r"\s*[(\[{]\s*(?:dot|punkt|point)\s*[)\]}]\s*", re.I), "."),
]
_OBFUSCATED_AT_RE = re.compile(r"[(\[{]\s*(?:at|ät)\s*[)\]}]", re.I)
# Markdown escapes in scraped descriptions: "e\-mail", "\+31 348", "name\_x@acme\.nl".
_MD_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|@~<>])")
_EMAIL_LOCAL_RE = re.compile(r"[a-z0-9][a-z0-9._%+-]{0,63}$", re.I)
_EMAIL_DOMAIN_RE = re.compile(r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}(?![a-z0-9-])", re.I)
_FILE_TLDS = frozenset({"png", "jpg", "jpeg", "gif", "svg", "webp", "bmp", "ico", "pdf", "js", "css"})

# The extractors' pre-checks, run over all texts at once in RE2 (pyarrow.compute): a text none of
# them matches is never converted to a Python string. A few texts are searched with Python's `re`
# instead: compiling the RE2 form costs more than that (~0.6 ms for the phone hint's digit classes).
# Each is written once as a template, spelled for both: RE2's \s and \d are ASCII-only, so Python's
# Unicode classes are spelled out for RE2 (tests check they agree on every code point).
_RE2_SPACE = r"[\s\p{Z}\x{0b}\x{1c}-\x{1f}\x{85}]"
# Python's \d; RE2's \p{Nd} follows a newer Unicode version, with more digits.
_RE2_DIGITS = "".join(rf"\x{{{a:x}}}-\x{{{b:x}}}" for a, b in _code_point_runs(str.isdecimal))
_SPELLINGS = {"<S>": (_RE2_SPACE, r"\s"), "<D>": (_RE2_DIGITS, r"\d"), "<END>": ("$", r"\Z")}
"""Template marker: (RE2, Python) spelling of a white-space character, the digits (a class body) and
the end of the text."""


class _PreCheck(NamedTuple):
    """A pre-check pattern in RE2 spelling and compiled for Python's `re` (both search anywhere)."""

    re2: str
    python: re.Pattern[str]


def _pre_check(*templates: str) -> _PreCheck:
    """The pre-check matching where any of `templates` (with `_SPELLINGS`' markers) matches."""
    re2 = python = "|".join(templates)
    for marker, (in_re2, in_python) in _SPELLINGS.items():
        re2, python = re2.replace(marker, in_re2), python.replace(marker, in_python)
    return _PreCheck(re2, re.compile(python))


def _any_of(*checks: _PreCheck) -> _PreCheck:
    """The pre-check matching where any of `checks` matches."""
    return _PreCheck("|".join(c.re2 for c in checks), re.compile("|".join(c.python.pattern for c in checks)))


_OBFUSCATED_AT = r"[(\[{]<S>*[aAäÄ][tT]<S>*[)\]}]"  # `_OBFUSCATED_AT_RE`
_MAY_HAVE_EMAILS = _pre_check("@", _OBFUSCATED_AT)
# At least 8 digits and separators in a row; the phone extractor's only pre-check.
_PHONE_HINT = _pre_check(r"[<D>][<D> ().\-/\xa0\\]{6,30}[<D>]")
# E-mail, URL, "www." or a text that is one token (a looser form of `_BARE_DOMAIN_RE`; [\t\n\f\r ]
# is RE2's \s).
_MAY_HAVE_DOMAINS = _pre_check(
    "@", _OBFUSCATED_AT, "://", r"[wW]{3}\.", r"^<S>*[^\t\n\f\r /:?#]*<S>*(?:[/:?#][^\n]*)?\n?<END>"
)
_HAS_INVISIBLE = _pre_check(f"[{_INVISIBLE}]")  # NFKC never makes these: a text without them stays so


class _Contact:
    """One distinct contact text; its cleaned form and e-mail addresses are computed on first use."""

    def __init__(self, raw: str, phone_hint: bool, invisible: bool, region: str | None = None) -> None:
        self.raw = raw
        self.region = region  # the ad's country (ISO 3166 alpha-2) if known: phone numbers' default
        self.phone_hint = phone_hint  # whether `raw` matches `_PHONE_HINT`
        self.invisible = invisible  # whether `raw` holds `_INVISIBLE` characters
        self._clean: str | None = None
        self._emails: set[str] | None = None

    @property
    def clean(self) -> str:
        if self._clean is None:
            self._clean = _contact_text(self.raw, self.invisible)
        return self._clean

    @property
    def emails(self) -> set[str]:
        if self._emails is None:
            self._emails = _emails_in(self.clean)
        return self._emails


_Extractor = Callable[[_Contact], tuple[str, ...] | None]
"""A contact extractor: a sorted tuple of the items found in a text, or None."""


def _arrow_text(s: pd.Series) -> pa.Array:
    """`s` as one Arrow string array, missing values null (no copy when `s` is Arrow text)."""
    strings = pa.array(s.astype(str).array)
    return strings.combine_chunks() if isinstance(strings, pa.ChunkedArray) else strings


def _matches(texts: pa.Array, pattern: _PreCheck) -> np.ndarray:
    """Whether `pattern` matches somewhere in each text (False for null), by RE2."""
    return pc.match_substring_regex(texts, pattern.re2).fill_null(False).to_numpy(zero_copy_only=False)


def _contact_checks(texts: pa.Array, pattern: _PreCheck) -> np.ndarray:
    """Rows x whether each text matches (`pattern`, `_PHONE_HINT`, `_HAS_INVISIBLE`).

    The last two are only searched for in the texts `pattern` matches (False elsewhere). Up to
    `FEW_VALUES` texts are searched one by one with Python's `re` (`_text_checks`), more with RE2.
    """
    if len(texts) <= FEW_VALUES:
        return np.array([_text_checks(t, pattern) for t in texts.to_pylist()], dtype=bool).reshape(-1, 3)
    checks = np.zeros((len(texts), 3), dtype=bool)
    rows = np.flatnonzero(_matches(texts, pattern))
    candidates = texts.take(rows)
    checks[rows, 0] = True
    checks[rows, 1] = _matches(candidates, _PHONE_HINT)
    checks[rows, 2] = _matches(candidates, _HAS_INVISIBLE)
    return checks


def _text_checks(text: str | None, pattern: _PreCheck) -> tuple[bool, bool, bool]:
    """`_contact_checks` of one text (all False for None), with Python's `re`."""
    if text is None or not pattern.python.search(text):
        return False, False, False
    return True, _PHONE_HINT.python.search(text) is not None, _HAS_INVISIBLE.python.search(text) is not None


def _contact_items(
    text: str | None, checks: tuple[bool, bool, bool], extractors: list[_Extractor], region: str | None
) -> list[tuple[str, ...] | None]:
    """What each extractor finds in `text` (its `_contact_checks`; the ad's `region`), all None where
    the pre-check did not match."""
    found, phone_hint, invisible = checks
    if not found or text is None:
        return [None] * len(extractors)
    contact = _Contact(text, phone_hint, invisible, region)
    return [extract(contact) for extract in extractors]


def _contact_series(
    texts: list[str],
    rows: np.ndarray,
    checks: np.ndarray,
    extractors: list[_Extractor],
    s: pd.Series,
    regions: pd.Series | None = None,
) -> list[pd.Series]:
    """Per extractor, a Series like `s` with its results for `texts` at `rows` (NA elsewhere).

    `checks` are the texts' `_contact_checks`; `regions` (aligned to `s`, NA allowed) the ads'
    countries. Each distinct (text, region) is looked at once.
    """
    results = [np.full(len(s), pd.NA, dtype=object) for _ in extractors]
    done: dict[tuple[str, str | None], list[tuple[str, ...] | None]] = {}
    region_of = _regions_at(regions, rows)
    for row, text, region, text_checks in zip(rows, texts, region_of, checks):
        if (found := done.get((text, region))) is None:
            found = done[text, region] = _contact_items(text, tuple(text_checks), extractors, region)
        for out, items in zip(results, found):
            if items is not None:
                out[row] = items
    return [pd.Series(out, index=s.index, dtype=object, name=s.name) for out in results]


def _regions_at(regions: pd.Series | None, rows: np.ndarray) -> list[str | None]:
    """The region of each of `rows` (None where unknown, or for all when `regions` is None)."""
    if regions is None:
        return [None] * len(rows)
    values = regions.to_numpy(dtype=object)[rows]
    return [v if isinstance(v, str) else None for v in values]


def _map_contacts(
    s: pd.Series, extractors: list[_Extractor], pattern: _PreCheck, regions: pd.Series | None = None
) -> list[pd.Series]:
    """`extractors` applied to each distinct text of `s` that `pattern` matches; NA elsewhere.

    `pattern` must match every text in which an extractor can find something.
    """
    texts = _arrow_text(s)
    checks = _contact_checks(texts, pattern)
    rows = np.flatnonzero(checks[:, 0])
    return _contact_series(texts.take(rows).to_pylist(), rows, checks[rows], extractors, s, regions)


def _find_all(text: str, sub: str) -> list[int]:
    """Start of every occurrence of `sub` in `text` (a fast string search, unlike a regex scan)."""
    found: list[int] = []
    at = text.find(sub)
    while at != -1:
        found.append(at)
        at = text.find(sub, at + 1)
    return found


def _has_obfuscated_at(text: str) -> bool:
    """Whether `_OBFUSCATED_AT_RE` matches anywhere; tried only at the brackets it starts with."""
    for bracket in "([{":
        at = text.find(bracket)
        while at != -1:
            if _OBFUSCATED_AT_RE.match(text, at):
                return True
            at = text.find(bracket, at + 1)
    return False


def _contact_text(text: str, invisible: bool) -> str:
    """NFKC, invisible characters and Markdown backslash escapes removed.

    `invisible=False` says the text holds no `_INVISIBLE` characters, so they are not searched for.
    """
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        if invisible:
            text = _INVISIBLE_RE.sub("", text)
    return _MD_ESCAPE_RE.sub(operator.itemgetter(1), text) if "\\" in text else text


def _emails_in(text: str) -> set[str]:
    if _has_obfuscated_at(text):
        for pattern, repl in _EMAIL_DEOBFUSCATE:
            text = pattern.sub(repl, text)
    found: set[str] = set()
    start = text.find("@")
    while start != -1:
        local = _EMAIL_LOCAL_RE.search(text, max(0, start - 64), start)
        domain = _EMAIL_DOMAIN_RE.match(text, start + 1)
        if local and domain:
            email = f"{local.group(0).lstrip('.')}@{domain.group(0)}".lower()
            if email.rsplit(".", 1)[-1] not in _FILE_TLDS and ".." not in email and not email.startswith("@"):
                found.add(email)
        start = text.find("@", start + 1)
    return found


def _emails(contact: _Contact) -> tuple[str, ...] | None:
    if "@" not in contact.raw and not _has_obfuscated_at(contact.raw):
        return None
    return tuple(sorted(contact.emails)) or None


def extract_emails(s: pd.Series) -> pd.Series:
    """Lower-cased e-mail addresses found in free text (contact field or description).

    "name(at)firma(dot)de" style obfuscation is undone.

    Returns:
        object Series of sorted tuples of unique addresses; NA where there are none.

    Example:
        >>> extract_emails(pd.Series(["Jobs@ACME.co.uk, hr@acme.co.uk", "bewerbung(at)firma.de",
        ...                           "none"])).tolist()
        [('hr@acme.co.uk', 'jobs@acme.co.uk'), ('bewerbung@firma.de',), <NA>]
    """
    return _map_contacts(_check_series(s, "extract_emails"), [_emails], _MAY_HAVE_EMAILS)[0]
