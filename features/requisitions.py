"""Requisition, reference and job numbers named in an ad's title, text or URL.

Employers number their openings ("Req ID: 12903", "Requisition ID: 423765", "Ref. No: 527649",
"Vacaturenr. 15601", "Position ID: J0526-1062", "**ReqID:** J10152946", a title ending in
"– R01536322", a Workday URL ending in "_R12345" or "_2601044", an Apple job page's id). The same
number on two ads is strong evidence of one vacancy — also when the ads name different cities — and
two different numbers of the same kind are strong evidence of two.
Numbers are kept as lower-case strings without separators ("jr-017958" → "jr017958").

Example:
    >>> requisition_numbers(pd.Series(["Data Engineer (JR-123456)"]), pd.Series(["Req ID: 12903"]),
    ...                     pd.Series([None])).tolist()
    [('12903', 'jr123456')]
    >>> requisition_numbers(pd.Series([None]), pd.Series(["Req 1016.238.2."]), pd.Series([None])).tolist()
    [('10162382',)]
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pandas as pd

from jobdedup.features.normalize import FEW_VALUES
from jobdedup.features.word_starts import finditer_at_words

# A label, then an id holding at least three digits: "Req ID: 12903", "Vacancy number\n15601".
_LABELS = r"req(?:uisition)?|job|position|vacancy|vacature|stellen|referenz|ref(?:erence)?|kennziffer"
_LABELLED_RE = re.compile(
    rf"\b(?:{_LABELS})"
    r"\.?[ \t]*(?:id|no|nr|number|nummer|code|num|#)?\.?[ \t]*[:#.\-]?\s*"
    r"([a-z]{0,4}[-_]?\d(?:[\w\-/]|\.(?=\w)){2,19})(?![\w%])",
    re.I,
)
# Ids that name themselves: "JR123456", "R-0123456", "REQ-2024-0042" (in text, titles and URLs).
_SELF_NAMED_RE = re.compile(r"(?<![a-z0-9])((?:jr|req|r)[-_]?\d{5,}(?:-\d+)?)(?![a-z0-9])", re.I)
# A trailing id in a title: "… – R01536322", "(Ref.Nr.: 46111)", "ג- 100001512".
_TITLE_TAIL_RE = re.compile(
    r"(?:^|[\s\-–—#:(\[])\s*(?:(?:ref|req|requisition|job|id|nr|no|kennziffer)[\s.:#-]*)*"
    r"([a-z]{0,4}[-_]?\d{5,})\s*[)\]]?\s*$",
    re.I,
)
# Workday job pages end in the requisition: ".../job/Petah-Tikva/Senior-Design-Engineer_2601044";
# Apple's name it before the location code: "jobs.apple.com/en-il/details/200626595-0865/...".
_WORKDAY_URL_RE = re.compile(r"myworkdayjobs\.com/.+_([a-z]{0,3}-?\d{5,}(?:-\d+)?)(?:[/?#]|$)", re.I)
_APPLE_URL_RE = re.compile(r"jobs\.apple\.com/.*/details/(\d{6,})", re.I)
# Words that introduce a number in text (as the tokeniser sees them: "Req ID: 12903" → req id 12903);
# a caller with tokens searches only the texts where one is followed by a number-bearing word.
# "number" is one for a label glued to the word before it by a scrape that dropped line breaks
# ("£30,000Reference Number: 10082": the tokeniser's word is "000reference"); it brings ~4 % more
# texts to the search, where `_LABELLED_RE` still needs the label itself.
LABEL_WORDS = (
    "req requisition job position vacancy vacature vacaturenr stellen referenz ref reference kennziffer jr r number"
).split()
# Markup between a label and its id ("**Req ID:** 5543", "<strong>Job ID: </strong>P77413") and
# words glued by a scraper that dropped line breaks ("Job reference: 10298Job Description",
# "£30,000 DOEReference Number: 10082").
_TAG_RE = re.compile(r"<[^<>]{0,200}>")
_STARS_RE = re.compile(r"\*+")
_UNDERSCORES_RE = re.compile(r"_{2,}")
# (An upper-case letter first: Python's re then skips to the next one in C instead of trying a
# look-behind at every character, 3× faster; the look-behind re-reads the letter it took.)
_GLUED_RE = re.compile(r"([A-Z])(?<=[a-zA-Z0-9][A-Z])(?=[a-z])")
# What marks "R25000" as rand: a range or a period after it, a pay word before it.
_MONEY_AFTER_RE = re.compile(
    r"\s*(?:(?:-|–|to|and)\s*R\s?\d|p[./]?\s?m\b|p[./]?a\b|per\b|/\s?(?:m|mo|month|pm|annum|year|yr|hr|hour|day)\b|k\b)",
    re.I,
)
_MONEY_BEFORE_RE = re.compile(
    r"(?:(?:salary|remuneration|ctc|package|earn\w*|pay|rate|stipend|bonus|from|to|between|up to|of)\W{0,4}"
    r"|R\s?\d[\d,.]*\s*(?:-|–|to|and)\s*)$",
    re.I,
)
_DATE_RE = re.compile(r"^\d{1,2}[/.\-]\d{1,2}[/.\-]\d{2,4}$|^(?:19|20)\d\d$")
_RANGE_RE = re.compile(r"^\d{1,4}-\d{1,5}$")
_SEPARATORS_RE = re.compile(r"[-_/.]")


def _clean(found: str) -> str | None:
    """The id as compared: lower-case, no separators; None for dates, years and number ranges."""
    found = found.strip("-_/").lower()
    if _DATE_RE.match(found) or _RANGE_RE.match(found):
        return None
    key = _SEPARATORS_RE.sub("", found)
    return key if sum(c.isdigit() for c in key) >= 3 else None


def _searchable(text: str) -> str:
    """`text` without HTML tags, entities and markdown emphasis, glued words split apart."""
    if "&" in text:
        text = html.unescape(text)
    return _GLUED_RE.sub(r" \1", _without_emphasis(_TAG_RE.sub(" ", text)))


def _without_emphasis(text: str) -> str:
    """`text` with each run of "*", each run of two or more "_" and each backslash made one space.
    (Each only where a literal test finds it: one regex of the three scanned every text, ~0.1 ms.)"""
    if "*" in text:
        text = _STARS_RE.sub(" ", text)
    if "__" in text:
        text = _UNDERSCORES_RE.sub(" ", text)
    return text.replace("\\", " ") if "\\" in text else text


def _found(text: object, patterns: tuple[re.Pattern[str], ...], clean: bool) -> set[str]:
    if not isinstance(text, str):
        return set()
    if clean:
        text = _searchable(text)
    return {m.group(1) for pattern in patterns for m in _matches(pattern, text) if not _rand_amount(text, m)}


# The literal start of each of `_LABELLED_RE`'s labels (its letters before any group).
_LABEL_STARTS = tuple(sorted({label.split("(")[0] for label in _LABELS.split("|")}))


def _matches(pattern: re.Pattern[str], text: str) -> Iterator[re.Match[str]]:
    """`pattern.finditer(text)`; for `_LABELLED_RE`, tried only where one of its label words
    starts (`features.word_starts`)."""
    if pattern is _LABELLED_RE:
        return finditer_at_words(pattern, text, _LABEL_STARTS)
    return pattern.finditer(text)


def _rand_amount(text: str, match: re.Match[str]) -> bool:
    """Whether a self-named id "R" + digits is a South African rand amount ("Salary R25000 - R30000
    per month"): a range or a pay period follows it, or a pay word comes just before it. Equal
    salaries read as one requisition would join two vacancies. "R-052795", "JR…", "REQ…" and an
    "R" id beside no pay word stay ids."""
    found = match.group(1)
    if found[:1] not in ("r", "R") or not found[1:2].isdigit():
        return False
    before = text[max(0, match.start(1) - 24) : match.start(1)]
    return bool(_MONEY_AFTER_RE.match(text, match.end(1)) or _MONEY_BEFORE_RE.search(before))


def matching_values(values: pd.Series, hint: str) -> list[tuple[int, str]]:
    """(position, value) of the values `hint` is found in: pandas' `str.contains`, which gives
    Python's `re` answer (by RE2 over Arrow-backed ASCII text: no Python loop); for a few values
    Python's `re` itself (pandas' checks of pattern and data, and its Series of the values found,
    cost ~140 µs a call, a single ad's whole search)."""
    if len(values) <= FEW_VALUES:
        pattern = re.compile(hint)
        return [(row, v) for row, v in enumerate(values.tolist()) if isinstance(v, str) and pattern.search(v)]
    values = values.reset_index(drop=True)
    found = values[values.str.contains(hint, regex=True, na=False).to_numpy(dtype=bool)]
    return list(zip(found.index, found.to_numpy(dtype=object)))


def requisition_numbers(titles: pd.Series, texts: pd.Series | None, urls: pd.Series) -> pd.Series:
    """Per ad, the sorted tuple of requisition / reference numbers it names; NA where none.

    Python's re reads a 3 KB text in ~50 µs: give `texts` only where a number may be named (e.g.
    where a `LABEL_WORDS` word is followed by a number-bearing word) and NA elsewhere, or None
    where no text may. Titles and URLs are searched only where a cheap RE2 test finds a possible id.
    """
    found: dict[int, set[str]] = {}
    searches = (  # (values, cheap test, patterns, markup removed first)
        (texts, r"\d{3}", (_LABELLED_RE, _SELF_NAMED_RE), True),
        (titles, r"\d{5}", (_TITLE_TAIL_RE, _SELF_NAMED_RE), False),
        (
            urls,
            r"(?i)(?:jr|req|r)[-_]?\d{5}|myworkdayjobs\.com/.*_|jobs\.apple\.com/",
            (_SELF_NAMED_RE, _WORKDAY_URL_RE, _APPLE_URL_RE),
            False,
        ),
    )
    for values, hint, patterns, clean in searches:
        for row, text in matching_values(values, hint) if values is not None else ():
            found.setdefault(row, set()).update(_found(text, patterns, clean))
    keys: list[tuple[str, ...] | None] = [None] * len(titles)
    for row, items in found.items():
        keys[row] = tuple(sorted({key for key in map(_clean, items) if key})) or None
    return pd.Series(keys, index=titles.index, dtype=object)
