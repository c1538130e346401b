"""Job-title keys: the text key without gender tags, work-mode qualifiers, salaries or requisition ids."""

from __future__ import annotations

import re

import pandas as pd

from jobdedup.features.normalize.text import (
    _fixpoint,
    _key,
    _preclean,
)
from jobdedup.features.normalize.unique import _check_series, _map_unique

# --------------------------------------------------------------------------------------------
# Titles
# --------------------------------------------------------------------------------------------

# German gender-inclusive endings: "Entwickler:in", "Entwickler*in", "Entwickler/in",
# "Entwickler/-in", "Entwickler_in", "Entwickler(in)", "Mitarbeiter*innen", "EntwicklerIn".
_DE_GENDER_SUFFIX_RE = re.compile(r"(?<=\w)(?:[:*_]|/-?)(?:in|innen)\b|(?<=\w)\((?:in|innen)\)", re.I)
_DE_BINNEN_I_RE = re.compile(r"(?<=[a-zäöüß]er)In(?:nen)?\b")
# French inclusive endings: "Développeur(se)", "Chargé(e)", "Ingénieur·e".
_FR_GENDER_SUFFIX_RE = re.compile(
    r"(?<=\w)(?:\((?:e|es|se|ne|euse|rice|trice|ère)\)|[·•](?:e|es|se|ne|euse|rice|trice|ère)\b)", re.I
)
# Hebrew slash/dot gender forms: "מנהל/ת", "מנהל.ת", "דרוש/ה", "סטודנט/ית", "דרוש/דרושה".
_HE_GENDER_RE = re.compile("(?<=[\u05d0-\u05ea])[/.](?:ת|ה|ית|יות|ים|ות|ית)(?![\u05d0-\u05ea])")
_HE_REPEAT_RE = re.compile("\\b([\u05d0-\u05ea]{2,})/\\1[\u05d0-\u05ea]{0,3}(?![\u05d0-\u05ea])")
# Gender tags as word runs after punctuation removal: "m w d", "f m x", "h f", "m v x", "w m div".
_GENDER_LETTERS = frozenset({"m", "w", "f", "d", "h", "v", "x", "div", "divers", "diverse", "*"})
_GENDER_PHRASES_RE = re.compile(
    r"\b(?:all|alle|any)\s+(?:genders?|geschlechter)\b|\bgender\s*(?:neutral|inclusive)\b|"
    r"\bgenderneutral\b|\bgn\b|\bmwd\b|\bwmd\b|\bmfd\b|\bfmd\b|\bhf\b(?=\s*$)"
)

# Trailing qualifiers: "- Remote", "| Hybrid", "(Remote)", "| Germany | Remote", "- Part-Time".
_QUALIFIER_WORDS = frozenset(
    "remote hybrid onsite on site office fully full part time contract contractor permanent temporary "
    "temp freelance freelancer ftc fixed term w2 c2c 1099 home homeoffice wfh work working from "
    "telework teletravail mobile flexible cdi cdd interim or and in the only based first 100 "
    "worldwide anywhere global usa us uk united states kingdom emea europe european eu apac latam "
    "americas north america dach benelux germany deutschland netherlands nederland canada israel india "
    "france austria osterreich ireland spain poland portugal voll moglich vollzeit teilzeit befristet "
    "unbefristet festanstellung mobil mobiles arbeiten fulltime parttime thuiswerken hybride "
    "teletravail partiel month months week weeks year years maternity cover".split()
)
_TRAILING_PAREN_RE = re.compile(r"\s*[(\[]([^()\[\]]*)[)\]]\s*$")
_TRAILING_SEGMENT_RE = re.compile(r"(?:\s*[|,;]|\s+[-–—/]+|[-–—]{2,}|[-–—/]+\s)\s*([^|,;–—()]*?)\s*$")
# Requisition ids at the end: "– R01536322", "ג- 100001512", "(JR-123456)", "(Ref.Nr.: 46111)".
_TRAILING_ID_RE = re.compile(
    r"(?:^|[\s\-–—#:(\[])\s*(?:(?:ref|req|requisition|job|id|nr|no|kennziffer)[\s.:#-]*)*"
    r"[a-z]{0,4}[-_]?\d{5,}\s*[)\]]?\s*$",
    re.I,
)
# Salary at the end ("– €70,000–€80,000", "£30k - £35k per annum") and Adzuna's masked "****k".
_TRAILING_SALARY_RE = re.compile(
    r"[\s\-–—|,(]*(?:up\s+to\s+)?[£$€]\s?\d[\d,.]*\s*k?(?:\s*(?:[-–—]|to)\s*[£$€]?\s?\d[\d,.]*\s*k?)?"
    r"(?:\s*(?:per|p|/)\s*(?:annum|year|hour|day|a|h|hr))?\s*\)?\s*$",
    re.I,
)
_MASKED_SALARY_RE = re.compile(r"\*{3,}\s*k?\b", re.I)
# Characters without which the regexes above cannot match: they only run on titles that have them.
_GENDER_SUFFIX_MARK_RE = re.compile("[:*_/(·•]")
_SEGMENT_SEP_RE = re.compile("[|,;/–—-]")
_CURRENCY_RE = re.compile("[£$€]")
_FIVE_DIGITS_RE = re.compile(r"\d{5}")

_TITLE_ABBREVIATIONS = {
    "sr": "senior",
    "snr": "senior",
    "jr": "junior",
    "jnr": "junior",
    "mgr": "manager",
    "eng": "engineer",
    "engr": "engineer",
    "dev": "developer",
    "asst": "assistant",
    "assoc": "associate",
    "mgmt": "management",
    "vp": "vice president",
}
_ROMAN_ANYWHERE = {"ii": "2", "iii": "3", "iv": "4", "vi": "6"}
_ROMAN_LAST = {"i": "1", "v": "5"}
TITLE_WORDS_ADDED = frozenset(
    " ".join([*_TITLE_ABBREVIATIONS.values(), *_ROMAN_ANYWHERE.values(), *_ROMAN_LAST.values()]).split()
)
"""Words `normalize_title` writes that the raw title may not hold ("Sr." becomes "senior")."""
# A word's abbreviation expansion, then its Roman numeral as a number, in one look-up.
_TITLE_WORD_MAP = {
    w: _ROMAN_ANYWHERE.get(x, x)
    for w in _TITLE_ABBREVIATIONS.keys() | _ROMAN_ANYWHERE.keys()
    for x in [_TITLE_ABBREVIATIONS.get(w, w)]
}


def _is_qualifier(segment: str) -> bool:
    words = _key(segment).split()
    return bool(words) and all(w in _QUALIFIER_WORDS or w.isdigit() for w in words)


def _trailing_segment(title: str) -> re.Match[str] | None:
    """The `_TRAILING_PAREN_RE` match, else the `_TRAILING_SEGMENT_RE` one (each run only if it can match)."""
    if title.rstrip().endswith((")", "]")) and (m := _TRAILING_PAREN_RE.search(title)):
        return m
    return _TRAILING_SEGMENT_RE.search(title) if _SEGMENT_SEP_RE.search(title) else None


def _strip_title_qualifiers(title: str) -> str:
    has_currency = _CURRENCY_RE.search(title) is not None
    for _ in range(6):
        m = _TRAILING_SALARY_RE.search(title) if has_currency else None
        if m and m.start() > 0 and _key(title[: m.start()]):
            title = title[: m.start()]
            continue
        m = _trailing_segment(title)
        if not m or not _is_qualifier(m.group(1)) or not _key(title[: m.start()]):
            break
        title = title[: m.start()]
    return title


def _drop_gender_runs(words: list[str]) -> list[str]:
    """Remove runs of 2-4 gender letters ("m w d", "h f", "f m x") that name two genders."""
    if _GENDER_LETTERS.isdisjoint(words):
        return words
    out: list[str] = []
    i = 0
    while i < len(words):
        j = i
        while j < len(words) and j - i < 4 and words[j] in _GENDER_LETTERS:
            j += 1
        run = set(words[i:j])
        if j - i >= 2 and run & {"m", "h"} and run & {"w", "f", "v"}:
            i = j
            continue
        out.append(words[i])
        i += 1
    return out


def _title_words(key: str) -> str:
    key = _GENDER_PHRASES_RE.sub(" ", key)
    words = [_TITLE_WORD_MAP.get(w, w) for w in _drop_gender_runs(key.split())]
    if len(words) > 1:
        words[-1] = _ROMAN_LAST.get(words[-1], words[-1])
    return " ".join(words)  # the words and their expansions hold no stray spaces


def _title(text: str) -> str | None:
    text = _preclean(text)
    if not text.isascii():
        text = _HE_GENDER_RE.sub("", text)
        text = _HE_REPEAT_RE.sub(r"\1", text)
    if "***" in text:
        text = _MASKED_SALARY_RE.sub(" ", text)
    if "In" in text:
        text = _DE_BINNEN_I_RE.sub("", text)
    if _GENDER_SUFFIX_MARK_RE.search(text):
        text = _DE_GENDER_SUFFIX_RE.sub("", text)
        text = _FR_GENDER_SUFFIX_RE.sub("", text)
    # Gender tags before the qualifier pass, so "Developer (m/w/d) - Remote" loses both.
    text = " ".join(_drop_gender_runs(text.split())) if "/" not in text else text
    text = _strip_title_qualifiers(_strip_gender_tags_raw(text))
    # The title without a trailing requisition id, unless nothing else is left.
    key = _key(_TRAILING_ID_RE.sub("", text)) if _FIVE_DIGITS_RE.search(text) else ""
    return _fixpoint(_title_words, key or _key(text)) or None


_RAW_GENDER_TAG_RE = re.compile(
    r"[(\[]?\s*\b(?:m|w|f|d|h|v|x|div|divers)\s*"
    r"(?:[/|,]\s*(?:m|w|f|d|h|v|x|div|divers)\b\s*){1,3}\*?\s*[)\]]?",
    re.I,
)


def _strip_gender_tags_raw(text: str) -> str:
    if "/" not in text and "|" not in text and "," not in text:  # every tag has a separator
        return text

    def repl(m: re.Match[str]) -> str:
        letters = set(re.findall(r"[a-z]+", m.group(0).lower()))
        return " " if letters & {"m", "h"} and letters & {"w", "f", "v"} else m.group(0)

    return _RAW_GENDER_TAG_RE.sub(repl, text)


def normalize_title(s: pd.Series) -> pd.Series:
    """Job-title key: text key without gender tags, work-mode qualifiers or requisition ids.

    Removes gender tags ("(m/w/d)", "(H/F)", "(all genders)", "m/v/x", "Entwickler:in",
    "מנהל/ת", "Chargé(e)"), trailing remote/hybrid/contract/country qualifiers ("- Remote",
    "| Hybrid", "(Remote)", "| Germany | Remote"), a trailing requisition id, and expands
    sr/snr, jr/jnr, mgr, eng, dev, asst, assoc, mgmt, vp as whole words. Seniority is kept.

    Example:
        >>> normalize_title(pd.Series(["Sr. Java Entwickler:in (m/w/d) - Remote",
        ...                            "Chef de projet (H/F)"])).tolist()
        ['senior java entwickler', 'chef de projet']
    """
    return _map_unique(_check_series(s, "normalize_title"), _title, "string")
