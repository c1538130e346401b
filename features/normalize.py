"""Field normalisers: canonical keys for titles, companies, locations and contact details.

Every public function takes a `pd.Series` of strings (NA allowed) and returns a Series with the
same index. Missing input stays `pd.NA`, and a value that normalises to nothing becomes `pd.NA`.
String results have dtype ``"string"``; the ``extract_*`` functions return an object Series of
sorted, de-duplicated tuples.

Each function normalises every *distinct* value once (`pd.factorize` + a Python function per
unique value) and broadcasts the result back, so a million rows with fifty thousand distinct
values cost fifty thousand normalisations. The rules use Python's `re`, which is Unicode-aware;
pandas' pyarrow-backed ``.str.replace`` runs RE2, whose ``\\w`` is ASCII-only, so it would break
Hebrew, Cyrillic or CJK text. RE2 (pyarrow.compute) only runs the contact extractors' pre-checks
over whole columns of long texts, with Python's character classes spelled out: the few texts that
can hold an e-mail, phone number or URL go on to the Python rules.

Example:
    >>> import pandas as pd
    >>> normalize_company(pd.Series(["ACME Ltd", "Acme Limited", "acme", None])).tolist()
    ['acme', 'acme', 'acme', <NA>]
"""

from __future__ import annotations

import functools
import html
import operator
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "FREE_MAIL_DOMAINS",
    "GENERIC_DOMAINS",
    "JOB_BOARD_DOMAINS",
    "extract_contacts",
    "extract_domains",
    "extract_emails",
    "extract_phones",
    "location_and_city",
    "location_city",
    "normalize_company",
    "normalize_location",
    "normalize_occupation",
    "normalize_text_key",
    "normalize_title",
]

# --------------------------------------------------------------------------------------------
# Vectorisation helper
# --------------------------------------------------------------------------------------------


def _check_series(s: Any, func: str) -> pd.Series:
    if not isinstance(s, pd.Series):
        raise TypeError(
            f"{func}() expects a pandas Series of strings, got {type(s).__name__}; "
            f"wrap the values with pd.Series(...)."
        )
    return s


def _unique_results(s: pd.Series, func: Callable[[str], Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes of `s` (-1 = missing) and `func` of each of its distinct non-missing values."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    return codes, [func(v if isinstance(v, str) else str(v)) for v in np.asarray(uniques, dtype=object)]


def _broadcast(results: list[Any], codes: np.ndarray, s: pd.Series, dtype: str | None) -> pd.Series:
    """Per-distinct-value results back on the rows of `s`; None and missing input become `pd.NA`."""
    values = np.empty(len(results) + 1, dtype=object)
    for i, r in enumerate(results):
        values[i] = pd.NA if r is None else r
    values[-1] = pd.NA  # code -1 (missing input) indexes the last slot
    return pd.Series(values[codes], index=s.index, dtype=object if dtype is None else dtype, name=s.name)


def _map_unique(s: pd.Series, func: Callable[[str], Any], dtype: str | None) -> pd.Series:
    """Apply `func` once per distinct non-missing value of `s` and broadcast the results.

    `func` returns None for "nothing left"; that and missing input both become `pd.NA`.
    """
    codes, results = _unique_results(s, func)
    return _broadcast(results, codes, s, dtype)


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
# Text that was UTF-8 decoded as cp1252/latin-1 ("NestlÃ©", "â€™").
_MOJIBAKE_RE = re.compile(
    "[\u00c2\u00c3\u00c5\u00e2][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178"
    "\u017d\u017e\u0192\u02c6\u02dc\u2013-\u203a\u20ac\u2122]"
)


def _fix_mojibake(text: str) -> str:
    if not _MOJIBAKE_RE.search(text):
        return text
    for codec in ("cp1252", "latin-1"):
        try:
            return text.encode(codec).decode("utf-8")
        except UnicodeError:
            continue
    return text


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


# --------------------------------------------------------------------------------------------
# Companies
# --------------------------------------------------------------------------------------------

_TICKER_RE = re.compile(r"\(\s*(?:nyse|nasdaq|lse|tsx|asx|nse|bse|xetra|euronext|otc)\s*:[^)]*\)", re.I)
_DOTTED_ABBR_RE = re.compile(r"(?<![\w.])((?:[^\W\d_]\.){2,})(?![\w])")
_SPECIAL_LEGAL = [
    (re.compile(r"\bges\.?\s*m\.?\s*b\.?\s*h\b\.?", re.I), " gesmbh "),
    (re.compile(r"\bsp[.\s]*z[.\s]*o[.\s]*o\b\.?", re.I), " spzoo "),
    (re.compile(r"\ba/s\b", re.I), " as "),
    (re.compile(r"\(\s*p\s*\)\s*(?=lt|limited)", re.I), " pvt "),
    (re.compile(r"\bs\.\s?a\.?\s?s\b\.?", re.I), " sas "),
    (re.compile(r"\bs\.\s?a\b\.?(?!\w)", re.I), " sa "),
    (re.compile(r"\bpte\.?\s*ltd\b", re.I), " pte ltd "),
]
# Each `_SPECIAL_LEGAL` pattern holds one of these; names without any (most) skip them all.
_SPECIAL_LEGAL_HINT_RE = re.compile(r"ges|sp|a/s|\(|s\.|pte", re.IGNORECASE)
# Web suffix glued to a name: "Amazon.com", "Booking.com", "Haeven.ai".
_WEB_SUFFIX_RE = re.compile(r"(?<=\w)\.(?:com|net|org|io|ai|co|de|nl|at|in|ca|fr|il|co\.uk|com\.au)\b", re.I)
# Forms that end the name wherever they appear after the first word ("Wipro Limited",
# "Amazon Web Services EMEA SARL, Dutch Branch", "Acme GmbH & Co. KG").
_LEGAL_CUT = frozenset(
    "ltd limited plc llc llp lllp pllc inc incorporated corp corporation gmbh mbh gesmbh kgaa bv "
    "sarl sasu eurl srl spzoo pvt pty pte oyj bhd sdn ulc ltee ltda ug בעמ".split()
)
# Short forms that are also ordinary words: removed only at the end of the name.
_LEGAL_TRAILING = (
    frozenset(
        "co cos company ag kg se sa sas as asa ab oy nv spa sl lp pc ev eg og kft cv vof private "
        "group holding holdings and und et plc aor dutch branch ער".split()
    )
    | _LEGAL_CUT
)
# Country/region words at the end: "The Works UK", "MBE - Netherlands", "Amazon ... EMEA".
LEGAL_FORM_WORDS = _LEGAL_TRAILING
"""Words of legal forms that normalised company names drop ("gmbh", "ltd", "inc", "bv", "ag", ...)."""
_COMPANY_TRAILING_GEO = frozenset(
    "uk usa emea europe eu india germany deutschland netherlands nederland israel canada france "
    "austria osterreich schweiz switzerland international".split()
)
_COMPANY_LEADING = frozenset({"the", "het"})


def _company_words(key: str) -> str:
    words = key.split()
    if len(words) > 1 and words[0].isdigit() and len(words[0]) >= 5:  # "330779353 CoreLogic ..."
        words = words[1:]
    if len(words) > 1 and words[0] in _COMPANY_LEADING:
        words = words[1:]
    for i in range(1, len(words)):
        if words[i] in _LEGAL_CUT:
            words = words[:i]
            break
    while len(words) > 1 and (words[-1] in _LEGAL_TRAILING or words[-1] in _COMPANY_TRAILING_GEO):
        words = words[:-1]
    return " ".join(words)


def _company(text: str) -> str | None:
    text = _TICKER_RE.sub(" ", _preclean(text))
    text = _WEB_SUFFIX_RE.sub(" ", text)
    if _SPECIAL_LEGAL_HINT_RE.search(text):
        for pattern, repl in _SPECIAL_LEGAL:
            text = pattern.sub(repl, text)
    text = _DOTTED_ABBR_RE.sub(lambda m: m.group(1).replace(".", ""), text)
    return _fixpoint(_company_words, _key(text)) or None


def normalize_company(s: pd.Series) -> pd.Series:
    """Company key: text key without legal forms, a leading "the" or trailing country words.

    Legal forms of many countries are removed: ltd/limited/plc/llp (UK), inc/llc/corp (US),
    pvt/private limited (IN), gmbh/ag/kg/& co. kg/e.v./gesmbh (DE, AT), b.v./n.v. (NL),
    sa/sas/sarl (FR), srl/spa (IT), ab/as/oy (Nordics), pty (AU), בע"מ (IL), ... A form after
    the first word ends the name ("Amazon Web Services EMEA SARL, Dutch Branch" -> "amazon web
    services"); short ones that are also words (co, ag, se, as, sa, group) only at the end.

    Example:
        >>> normalize_company(pd.Series(["ACME Ltd", "Acme Limited", "acme", "Grüne Erde GmbH",
        ...                              'קומבלק איי.טי. בע"מ'])).tolist()
        ['acme', 'acme', 'acme', 'grune erde', 'קומבלק איי טי']
    """
    return _map_unique(_check_series(s, "normalize_company"), _company, "string")


# --------------------------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------------------------


def _table(spec: str) -> dict[str, str]:
    """Parse "name|alias=code; ..." into {folded name: code}."""
    out: dict[str, str] = {}
    for item in spec.split(";"):
        if item.strip():
            names, code = item.rsplit("=", 1)
            for name in names.split("|"):
                out[_key(name)] = code.strip()
    return out


_REGIONS = _table(
    # US states
    "alabama=al;alaska=ak;arizona=az;arkansas=ar;california=ca;colorado=co;connecticut=ct;"
    "delaware=de;florida=fl;georgia=ga;hawaii=hi;idaho=id;illinois=il;indiana=in;iowa=ia;kansas=ks;"
    "kentucky=ky;louisiana=la;maine=me;maryland=md;massachusetts=ma;michigan=mi;minnesota=mn;"
    "mississippi=ms;missouri=mo;montana=mt;nebraska=ne;nevada=nv;new hampshire=nh;new jersey=nj;"
    "new mexico=nm;new york|new york state=ny;north carolina=nc;north dakota=nd;ohio=oh;oklahoma=ok;"
    "oregon=or;pennsylvania=pa;rhode island=ri;south carolina=sc;south dakota=sd;tennessee=tn;"
    "texas=tx;utah=ut;vermont=vt;virginia=va;washington|washington state=wa;west virginia=wv;"
    "wisconsin=wi;wyoming=wy;district of columbia=dc;puerto rico=pr;"
    # Canadian provinces
    "alberta=ab;british columbia=bc;manitoba=mb;new brunswick=nb;newfoundland and labrador=nl;"
    "nova scotia=ns;ontario=on;prince edward island=pe;quebec=qc;saskatchewan=sk;"
    "northwest territories=nt;nunavut=nu;yukon=yt;"
    # German Länder
    "baden-württemberg=bw;bavaria|bayern=by;berlin=be;brandenburg=bb;bremen=hb;hamburg=hh;"
    "hesse|hessen=he;lower saxony|niedersachsen=ni;mecklenburg-vorpommern|"
    "mecklenburg-western pomerania=mv;north rhine-westphalia|nordrhein-westfalen|nrw=nw;"
    "rhineland-palatinate|rheinland-pfalz=rp;saarland=sl;saxony|sachsen=sn;"
    "saxony-anhalt|sachsen-anhalt=st;schleswig-holstein=sh;thuringia|thüringen=th;"
    # Dutch provinces
    "north holland|noord-holland=nh;south holland|zuid-holland=zh;utrecht=ut;"
    "north brabant|noord-brabant=nb;gelderland=ge;overijssel=ov;groningen=gr;friesland|fryslân=fr;"
    "drenthe=dr;flevoland=fl;limburg=li;zeeland=ze;"
    # Indian states
    "karnataka=ka;maharashtra=mh;tamil nadu=tn;telangana=tg;andhra pradesh=ap;kerala=kl;"
    "delhi|nct of delhi=dl;haryana=hr;uttar pradesh=up;gujarat=gj;west bengal=wb;rajasthan=rj;"
    "punjab=pb;madhya pradesh=mp;odisha=od;goa=ga;chandigarh=ch;"
    # Israeli districts (Indeed writes TA, HM, HA, JM, HZ, HD)
    "tel aviv district=ta;center district|central district=hm;haifa district=ha;"
    "jerusalem district=jm;north district|northern district=hz;south district|southern district=hd;"
    # French regions (ISO) and the old codes Indeed still uses
    "île-de-france|ile de france|a8=idf;hauts-de-france=hdf;occitanie=occ;pays de la loire|b5=pdl;"
    "auvergne-rhône-alpes=ara;nouvelle-aquitaine=naq;provence-alpes-côte d'azur=pac;"
    "bretagne|brittany=bre;normandie|normandy=nor;grand est=ges;bourgogne-franche-comté=bfc;"
    "centre-val de loire=cvl;corse|corsica=cor"
)
_REGION_CODES = frozenset(_REGIONS.values()) | {"ts"}
_US_STATE_CODES = frozenset(
    "al ak az ar ca co ct de fl ga hi id il in ia ks ky la me md ma mi mn ms mo mt ne nv nh nj nm ny "
    "nc nd oh ok or pa ri sc sd tn tx ut vt va wa wv wi wy dc pr".split()
)
# Names that are a city as well as a region: kept as a city when they stand alone.
_CITY_STATES = frozenset(
    _key(n)
    for n in (
        "new york",
        "washington",
        "utrecht",
        "groningen",
        "berlin",
        "hamburg",
        "bremen",
        "delhi",
        "quebec",
        "salzburg",
        "limburg",
    )
)

_COUNTRIES = _table(
    "united states|united states of america|usa|us|u s|u s a=united states;"
    "united kingdom|uk|u k|great britain|gb|britain|england|scotland|wales|northern ireland="
    "united kingdom;netherlands|the netherlands|nederland|holland|nl=netherlands;"
    "germany|deutschland|de=germany;austria|österreich|oesterreich|at=austria;"
    "israel|il|ישראל=israel;india|in|bharat=india;canada|ca=canada;france|fr=france;"
    "belgium|belgie|belgique|be=belgium;switzerland|schweiz|suisse|ch=switzerland;ireland|ie=ireland;"
    "spain|espana|es=spain;italy|italia|it=italy;poland|polska|pl=poland;portugal|pt=portugal;"
    "sweden|se=sweden;denmark|dk=denmark;norway|no=norway;finland|fi=finland;"
    "luxembourg|lu=luxembourg;czech republic|czechia|cz=czechia;australia|au=australia;"
    "singapore|sg=singapore;new zealand|nz=new zealand;mexico|mx=mexico;brazil|br=brazil;"
    "japan|jp=japan;china|cn=china;greece|gr=greece;romania|ro=romania"
)
_COUNTRY_CODES = frozenset(k for k in _COUNTRIES if len(k) == 2)

_CITY_ALIASES = _table(
    "münchen|muenchen=munich;köln|koeln=cologne;nürnberg|nuernberg=nuremberg;"
    "frankfurt am main|frankfurt main|frankfurt a m=frankfurt;düsseldorf|duesseldorf=dusseldorf;"
    "wien=vienna;den haag|s gravenhage|'s-gravenhage|the hague=the hague;"
    "s hertogenbosch|'s-hertogenbosch|hertogenbosch|den bosch=den bosch;"
    "bangalore|bangalore urban|bengaluru urban=bengaluru;gurgaon=gurugram;bombay=mumbai;"
    "new delhi=delhi;new york city|nyc|manhattan=new york;"
    "tel aviv yafo|tel aviv jaffa|tel aviv-yafo|תל אביב|תל אביב יפו=tel aviv;"
    "ירושלים=jerusalem;חיפה=haifa;הרצליה=herzliya;"
    "פתח תקווה|פתח תקוה|petach tikva|petah tiqwa|petah tikvah=petah tikva;"
    "רעננה|raanana=raanana;באר שבע|beersheba|be er sheva=beer sheva;רמת גן=ramat gan;"
    "נתניה=netanya;יקנעם|yokneam illit=yokneam;montréal=montreal"
)
# Districts of a big city collapse to the city: "Amsterdam Zuid", "Berlin-Kreuzberg".
_MAJOR_CITIES = tuple(
    _key(c) + " "
    for c in (
        "amsterdam",
        "berlin",
        "london",
        "munich",
        "hamburg",
        "paris",
        "rotterdam",
        "bengaluru",
        "toronto",
        "tel aviv",
        "vienna",
        "dublin",
        "madrid",
        "cologne",
        "frankfurt",
        "glasgow",
        "manchester",
        "birmingham",
        "edinburgh",
        "dallas",
        "houston",
        "chicago",
        "new york",
    )
)

_PAREN_RE = re.compile(r"\([^()]*\)|\[[^\[\]]*\]")
_POSTCODE_RE = re.compile(
    r"\b[A-Z]{1,2}\d[A-Z\d]?\s*\d[A-Z]{2}\b"  # UK: SW1A 1AA, M1 1AE
    r"|\b\d{4}\s?[A-Z]{2}\b"  # NL: 1012 AB
    r"|\b\d{5}-\d{4}\b|\b\d{4,7}\b",  # US ZIP+4, ZIP, DE/FR/AT/IL/IN postcodes
    re.I,
)
_REMOTE_RE = re.compile(
    r"\b(?:fully\s+)?remote(?:\s+(?:job|work|first|only|friendly))?\b|\bwork(?:ing)?\s+from\s+home\b|"
    r"\bwfh\b|\bhome\s*-?\s*office\b|\bwerk\s+van(?:uit)?\s+thuis\b|\bthuiswerk(?:en)?\b|"
    r"\btele-?travail\b|\btélétravail\b|\banywhere\b|\bworldwide\b|\bglobal\b",
    re.I,
)
_LOCATION_NOISE_RE = re.compile(
    r"\bhybrid(?:\s+work)?\b|\bon-?site\b|\bflexible\b|\b(?:multiple|various|several)\s+locations?\b|"
    r"\bselect\s+locations?\b|\bnationwide\b|\btime\s*zones?\b|\btimezones?\b|"
    r"\bcity\s+cent(?:re|er)\b|\bcentrum\b|"
    r"\bmetropolitan\b|\bmetroplex\b|\bmetro\b|\bgreater\b|\barea\b|\bregion\b|\bcentral\b(?!\s+district)",
    re.I,
)
_LIST_SPLIT_RE = re.compile(r"\s*(?:;|\||\s/\s|/|\s+-\s+|\s+or\s+|\s+&\s+)\s*", re.I)
_DIGIT_RE = re.compile(r"\d")
_LEADING_IN_RE = re.compile(r"^\s*(?:in|near|bei|im)\s+(?=\S)", re.I)


def _canonical_part(part: str) -> str:
    key = _key(part)
    if key in _CITY_ALIASES:
        return _CITY_ALIASES[key]
    for city in _MAJOR_CITIES if key.startswith(_MAJOR_CITIES) else ():
        if key.startswith(city) and not all(w in _REGION_CODES for w in key[len(city) :].split()):
            return city.strip()
    words = ["st" if w in ("saint", "sankt") else "fort" if w == "ft" else w for w in key.split()]
    return " ".join(words)


def _parse_location(text: str) -> tuple[str | None, str | None]:
    """(canonical location, most specific place) of one raw location string."""
    text = _preclean(text)
    if "(" in text or "[" in text:
        text = _PAREN_RE.sub(" ", text)
    if _DIGIT_RE.search(text):  # every postcode has digits
        text = _POSTCODE_RE.sub(" ", text)
    remote = bool(_REMOTE_RE.search(text))
    if remote:
        text = _REMOTE_RE.sub(" ", text)
    text = _LOCATION_NOISE_RE.sub(" ", text)
    first = next((seg for seg in _LIST_SPLIT_RE.split(text) if _key(seg)), "")
    parts = [_key(_LEADING_IN_RE.sub("", p)) for p in first.split(",")]
    parts = [p for p in parts if p]
    # Countries in the middle ("Cheshire, UK, Cheshire").
    parts = [
        p
        for i, p in enumerate(parts)
        if i == 0
        or i == len(parts) - 1
        or not (
            p in _COUNTRIES
            and (p not in _COUNTRY_CODES or p not in _US_STATE_CODES and p not in _REGION_CODES)
        )
    ]

    country: str | None = None
    # Trailing countries: full names always; 2-letter codes in "City, Region, CC" or after a
    # region ("KA, IN"); in "City, XX" a US state code wins ("Sharon, CA" = California).
    while parts:
        last = parts[-1]
        prev = parts[-2] if len(parts) > 1 else None
        is_name = last in _COUNTRIES and last not in _COUNTRY_CODES
        is_code = (
            last in _COUNTRY_CODES
            and prev is not None
            and (len(parts) >= 3 or prev in _REGION_CODES or prev in _REGIONS or last not in _US_STATE_CODES)
        )
        if not (is_name or is_code) or len(parts) == 1 and not is_name:
            break
        country = country or _COUNTRIES[last]
        parts.pop()
    # A country written first ("UK, Greater London") unless a region follows ("Italy, TX").
    if len(parts) > 1 and parts[0] in _COUNTRIES and parts[0] not in _COUNTRY_CODES:
        if parts[1] not in _REGIONS and parts[1] not in _REGION_CODES:
            country = country or _COUNTRIES[parts[0]]
            parts = parts[1:]
    if len(parts) == 1 and parts[0] in _COUNTRIES:
        country = _COUNTRIES[parts[0]]
        parts = []

    region_only = False
    if (
        len(parts) == 1
        and parts[0] not in _CITY_STATES
        and (parts[0] in _REGIONS or parts[0] in _REGION_CODES)
    ):
        parts = [_REGIONS.get(parts[0], parts[0])]
        region_only = True
    else:
        parts = [_canonical_part(parts[0])] + [_REGIONS.get(p, p) for p in parts[1:]] if parts else []
    parts = [p for i, p in enumerate(parts) if p not in parts[:i]]  # "London, London"

    if not parts:
        return ("remote" if remote else country), None
    city = None if region_only else parts[0]
    return " ".join(parts), city


def normalize_location(s: pd.Series) -> pd.Series:
    """Canonical "city[ region]" string of a free-text location.

    Trailing country names and codes, postcodes (UK, US ZIP, NL, 4-7 digit), words like greater,
    area, metropolitan, region, hybrid and "(+2 others)" are dropped; region names become codes
    (US states, Canadian provinces, German Länder, Dutch provinces, Indian states, Israeli
    districts, French regions); well-known spellings unify (München/Munich, Bangalore/Bengaluru,
    תל אביב/Tel Aviv-Yafo). Only the first of several listed locations is kept. A location that
    is only remote gives "remote"; one that is only a country gives its English name. Give it
    raw locations: the result has lost the commas that separate city and region, so normalising
    it again is not guaranteed to give the same string.

    Example:
        >>> normalize_location(pd.Series(["Dallas, TX", "Dallas, Texas, United States",
        ...     "Amsterdam, North Holland, Netherlands", "Amsterdam, NH, NL", "Remote - USA"])).tolist()
        ['dallas tx', 'dallas tx', 'amsterdam nh', 'amsterdam nh', 'remote']
    """
    return _map_unique(_check_series(s, "normalize_location"), lambda t: _parse_location(t)[0], "string")


def location_city(s: pd.Series) -> pd.Series:
    """The most specific place of a location (its first part), for blocking.

    NA when the location is only a country, a region or remote.

    Example:
        >>> location_city(pd.Series(["London, England, UK", "Dallas, TX", "Amsterdam Zuid, NH, NL",
        ...                          "Texas, United States", "Remote"])).tolist()
        ['london', 'dallas', 'amsterdam', <NA>, <NA>]
    """
    return _map_unique(_check_series(s, "location_city"), lambda t: _parse_location(t)[1], "string")


def location_and_city(s: pd.Series) -> tuple[pd.Series, pd.Series]:
    """`normalize_location` and `location_city` of `s`, parsing each distinct location once."""
    codes, results = _unique_results(_check_series(s, "location_and_city"), _parse_location)
    return (
        _broadcast([loc for loc, _ in results], codes, s, "string"),
        _broadcast([city for _, city in results], codes, s, "string"),
    )


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

# The extractors' pre-checks as RE2 patterns (pyarrow.compute), run over all texts at once: a text
# none of them matches is never converted to a Python string. RE2's \s and \d are ASCII-only, so
# Python's Unicode classes are spelled out (tests check they agree on every code point).
_RE2_SPACE = r"[\s\p{Z}\x{0b}\x{1c}-\x{1f}\x{85}]"
# Python's \d; RE2's \p{Nd} follows a newer Unicode version, with more digits.
_RE2_DIGITS = "".join(rf"\x{{{a:x}}}-\x{{{b:x}}}" for a, b in _code_point_runs(str.isdecimal))
_RE2_OBFUSCATED_AT = rf"[(\[{{]{_RE2_SPACE}*[aAäÄ][tT]{_RE2_SPACE}*[)\]}}]"  # `_OBFUSCATED_AT_RE`
_RE2_MAY_HAVE_EMAILS = rf"@|{_RE2_OBFUSCATED_AT}"
# At least 8 digits and separators in a row; the phone extractor's only pre-check.
_RE2_PHONE_HINT = rf"[{_RE2_DIGITS}][{_RE2_DIGITS} ().\-/\x{{a0}}\\]{{6,30}}[{_RE2_DIGITS}]"
# E-mail, URL, "www." or a text that is one token (a looser form of `_BARE_DOMAIN_RE`).
_RE2_MAY_HAVE_DOMAINS = (
    rf"{_RE2_MAY_HAVE_EMAILS}|://|[wW]{{3}}\.|^{_RE2_SPACE}*[^\s/:?#]*{_RE2_SPACE}*(?:[/:?#][^\n]*)?\n?$"
)
_RE2_INVISIBLE = f"[{_INVISIBLE}]"  # NFKC never makes these, so a text without them stays without


class _Contact:
    """One distinct contact text; its cleaned form and e-mail addresses are computed on first use."""

    def __init__(self, raw: str, phone_hint: bool, invisible: bool) -> None:
        self.raw = raw
        self.phone_hint = phone_hint  # whether `raw` matches `_RE2_PHONE_HINT`
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


def _re2_matches(texts: pa.Array, pattern: str) -> np.ndarray:
    """Whether RE2 `pattern` matches somewhere in each text (False for null)."""
    return pc.match_substring_regex(texts, pattern).fill_null(False).to_numpy(zero_copy_only=False)


def _contact_checks(texts: pa.Array, pattern: str) -> np.ndarray:
    """Rows x whether each text matches (RE2 `pattern`, `_RE2_PHONE_HINT`, `_RE2_INVISIBLE`).

    The last two are only searched for in the texts `pattern` matches (False elsewhere).
    """
    checks = np.zeros((len(texts), 3), dtype=bool)
    rows = np.flatnonzero(_re2_matches(texts, pattern))
    candidates = texts.take(rows)
    checks[rows, 0] = True
    checks[rows, 1] = _re2_matches(candidates, _RE2_PHONE_HINT)
    checks[rows, 2] = _re2_matches(candidates, _RE2_INVISIBLE)
    return checks


def _contact_series(
    texts: list[str], rows: np.ndarray, checks: np.ndarray, extractors: list[_Extractor], s: pd.Series
) -> list[pd.Series]:
    """Per extractor, a Series like `s` with its results for `texts` at `rows` (NA elsewhere).

    `checks` are the texts' `_contact_checks`; each distinct text is looked at once.
    """
    results = [np.full(len(s), pd.NA, dtype=object) for _ in extractors]
    done: dict[str, list[tuple[str, ...] | None]] = {}
    for row, text, (_, phone_hint, invisible) in zip(rows, texts, checks):
        if (found := done.get(text)) is None:
            contact = _Contact(text, phone_hint, invisible)
            found = done[text] = [extract(contact) for extract in extractors]
        for out, items in zip(results, found):
            if items is not None:
                out[row] = items
    return [pd.Series(out, index=s.index, dtype=object, name=s.name) for out in results]


def _map_contacts(s: pd.Series, extractors: list[_Extractor], pattern: str) -> list[pd.Series]:
    """`extractors` applied to each distinct text of `s` that RE2 `pattern` matches; NA elsewhere.

    `pattern` must match every text in which an extractor can find something.
    """
    texts = _arrow_text(s)
    checks = _contact_checks(texts, pattern)
    rows = np.flatnonzero(checks[:, 0])
    return _contact_series(texts.take(rows).to_pylist(), rows, checks[rows], extractors, s)


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
    return _map_contacts(_check_series(s, "extract_emails"), [_emails], _RE2_MAY_HAVE_EMAILS)[0]


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


# Job boards, aggregators and applicant-tracking systems: their domain says nothing about
# the employer, so they never count as a shared contact.
JOB_BOARD_DOMAINS: frozenset[str] = frozenset(
    """
    linkedin.com lnkd.in indeed.com indeed.co.uk indeed.nl indeed.de indeed.fr indeed.ca indeed.co.in
    indeed.at indeed.ch indeed.ie indeed.com.au indeed.co.il indeed.es indeed.it indeed.be indeed.jobs
    glassdoor.com glassdoor.co.uk glassdoor.nl glassdoor.de glassdoor.fr glassdoor.ca glassdoor.co.in
    glassdoor.at glassdoor.ch glassdoor.ie glassdoor.com.au glassdoor.be glassdoor.es glassdoor.it
    adzuna.co.uk adzuna.com adzuna.nl adzuna.de adzuna.fr adzuna.ca adzuna.in adzuna.at adzuna.com.au
    ziprecruiter.com ziprecruiter.co.uk monster.com monster.co.uk monster.de monster.fr monsterboard.nl
    monsterindia.com foundit.in careerbuilder.com dice.com simplyhired.com snagajob.com flexjobs.com
    usajobs.gov theladders.com themuse.com builtin.com wellfound.com angel.co hired.com lensa.com
    talent.com jooble.org bebee.com karkidi.com trabajo.org startup.jobs jobgether.com jobleads.com
    jobrapido.com careerjet.com careerjet.co.uk jora.com whatjobs.com recruit.net jobisjob.com
    remoteok.com remoteok.io remotive.com remotive.io weworkremotely.com remote.co dailyremote.com
    himalayas.app workingnomads.com arbeitnow.com arbeitnow.co.uk aijobs.net jobzmall.com otta.com
    joinhandshake.com jobright.ai careerpuck.com mysmartpros.com dejobs.org salary.com tealhq.com
    levels.fyi efinancialcareers.com joinrise.co clearedjobs.net builtinchicago.org builtinnyc.com
    builtinaustin.com builtinla.com builtinseattle.com builtinboston.com builtinsf.com climatetechlist.com
    localjobs.com simplify.jobs usnlx.com huzzle.app learn4good.com meet.jobs jointaro.com upwork.com
    mediabistro.com triangle-jobs.com quickrolehire.com ai-search.io theorg.com jobscore.com
    reed.co.uk totaljobs.com cv-library.co.uk cwjobs.co.uk jobsite.co.uk jobserve.com caterer.com
    catererandhotelkeeper.com careworx.co.uk planetrecruit.com jobs.ac.uk nhsjobs.com guardianjobs.co.uk
    stepstone.de stepstone.at stepstone.nl stepstone.com xing.com arbeitsagentur.de jobware.de
    kimeta.de jobs.de meinestadt.de karriere.at karriere.derstandard.at willhaben.at jobs.at ams.at
    nationalevacaturebank.nl werkzoeken.nl werk.nl intermediair.nl jobbird.com youngcapital.nl
    welcometothejungle.com apec.fr hellowork.com jobteaser.com francetravail.fr pole-emploi.fr
    naukri.com shine.com timesjobs.com instahyre.com iimjobs.com hirist.com cutshort.io apna.co
    alljobs.co.il drushim.co.il jobmaster.co.il gotfriends.co.il jobnet.co.il
    jobbank.gc.ca workopolis.com eluta.ca seek.com.au
    greenhouse.io lever.co myworkdayjobs.com myworkdaysite.com workday.com smartrecruiters.com
    workable.com ashbyhq.com jobvite.com icims.com taleo.net successfactors.com successfactors.eu
    bamboohr.com recruitee.com personio.de personio.com teamtailor.com breezy.hr jazzhr.com
    applytojob.com oraclecloud.com join.com softgarden.io softgarden.de rippling.com dayforcehcm.com
    ultipro.com paylocity.com paycomonline.net adp.com brassring.com csod.com phenompeople.com
    eightfold.ai pinpointhq.com homerun.co recruiterbox.com zohorecruit.com zohorecruit.eu
    """.split()
)
# Free e-mail providers: an address there is a contact, its domain is not the employer's.
FREE_MAIL_DOMAINS: frozenset[str] = frozenset(
    """
    gmail.com googlemail.com yahoo.com yahoo.co.uk yahoo.co.in yahoo.fr yahoo.de ymail.com hotmail.com
    hotmail.co.uk hotmail.fr hotmail.de hotmail.nl outlook.com outlook.de live.com live.nl live.co.uk
    msn.com aol.com icloud.com me.com mac.com protonmail.com proton.me gmx.de gmx.net gmx.at gmx.com
    web.de t-online.de freenet.de mail.ru yandex.ru yandex.com zoho.com rediffmail.com orange.fr
    free.fr laposte.net sfr.fr wanadoo.fr ziggo.nl kpnmail.nl planet.nl walla.co.il 012.net.il
    bezeqint.net btinternet.com sky.com qq.com 163.com
    """.split()
)
# Links found in every ad of a kind (social networks, link shorteners, EEO/government boilerplate).
GENERIC_DOMAINS: frozenset[str] = frozenset(
    """
    facebook.com fb.com twitter.com x.com instagram.com youtube.com youtu.be tiktok.com pinterest.com
    bit.ly t.co tinyurl.com goo.gl forms.gle ow.ly buff.ly google.com googleapis.com gstatic.com
    w3.org schema.org wikipedia.org github.com medium.com eeoc.gov dol.gov uscis.gov
    e-verify.gov ada.gov ofccp.gov justice.gov
    """.split()
)
_NON_EMPLOYER_DOMAINS = JOB_BOARD_DOMAINS | FREE_MAIL_DOMAINS | GENERIC_DOMAINS

# Second-level labels under which registrations happen ("acme.co.uk", "acme.com.au", "tau.ac.il").
_PUBLIC_SECOND_LEVEL = frozenset(
    "co com org net ac gov edu ltd plc nhs gc gv or ne sch mil nic res gen".split()
)
_TWO_LABEL_SUFFIXES = frozenset({"github.io", "herokuapp.com", "azurewebsites.net", "blogspot.com", "co.com"})
_URL_HOST_RE = re.compile(
    r"(?:\b(?:https?|ftp)://(?:[^\s/@<>\"']*@)?|(?<![\w.@-])(?=www\.))"
    r"((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24})(?![a-z0-9-])",
    re.I,
)
_BARE_DOMAIN_RE = re.compile(
    r"^\s*((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,24})\.?\s*(?:[/:?#].*)?$", re.I
)


def _url_hosts(text: str) -> list[str]:
    """The hosts of `_URL_HOST_RE.finditer(text)`, trying the regex only where a match can start.

    A match starts 3-5 characters before a "://" (ftp, http, https) or at a "www." in any case
    (only "W" lower-cases to "w", and replacing it keeps every position).
    """
    starts = _find_all(text.replace("W", "w"), "www.")
    starts += [at + shift for at in _find_all(text, "://") for shift in (-5, -4, -3)]
    hosts: list[str] = []
    end = 0
    for start in sorted(starts):
        if start >= end and (m := _URL_HOST_RE.match(text, start)):
            hosts.append(m.group(1))
            end = m.end()
    return hosts


def _registrable(host: str) -> str | None:
    labels = host.lower().strip(".").split(".")
    if len(labels) < 2 or labels[-1] in _FILE_TLDS:
        return None
    n = 2
    if len(labels) >= 3 and (
        labels[-2] in _PUBLIC_SECOND_LEVEL or ".".join(labels[-2:]) in _TWO_LABEL_SUFFIXES
    ):
        n = 3
    return ".".join(labels[-n:])


def _is_non_employer(domain: str) -> bool:
    labels = domain.split(".")
    return any(".".join(labels[i:]) in _NON_EMPLOYER_DOMAINS for i in range(len(labels) - 1))


@functools.lru_cache(maxsize=1 << 16)
def _employer_domain(host: str) -> str | None:
    """The registrable domain of `host`; None for job boards, free mail and generic sites.

    Cached: the same few thousand hosts recur in every batch of ads.
    """
    dom = _registrable(host)
    return dom if dom and not _is_non_employer(host.lower()) and not _is_non_employer(dom) else None


def _domains(contact: _Contact) -> tuple[str, ...] | None:
    text = contact.raw
    if (  # cheap pre-check: no e-mail, URL or "www." anywhere
        "@" not in text
        and "://" not in text
        and "www." not in text.replace("W", "w")  # = text.lower(): only "W" lower-cases to "w"
        and not _has_obfuscated_at(text)
        and not _BARE_DOMAIN_RE.match(text)
    ):
        return None
    text = contact.clean
    hosts = _url_hosts(text) + [e.rsplit("@", 1)[1] for e in contact.emails]
    bare = _BARE_DOMAIN_RE.match(text)  # a contact field holding just "acme.com"
    if bare and "@" not in text:
        hosts.append(bare.group(1))
    return tuple(sorted({dom for host in hosts if (dom := _employer_domain(host))})) or None


def extract_domains(s: pd.Series) -> pd.Series:
    """Registrable employer domains from URLs and e-mail addresses in free text.

    "https://careers.acme.co.uk/job/1" and "jobs@acme.co.uk" both give "acme.co.uk" (second-level
    suffixes such as co.uk, com.au, co.il, co.in, org.uk, ac.uk are handled). Domains in
    `JOB_BOARD_DOMAINS`, `FREE_MAIL_DOMAINS` and `GENERIC_DOMAINS` (and their subdomains) are
    dropped, so a board's URL never counts as the employer's contact.

    Returns:
        object Series of sorted tuples of domains; NA where there are none.

    Example:
        >>> extract_domains(pd.Series(["https://careers.acme.co.uk/job/1",
        ...     "https://de.indeed.com/viewjob?jk=1", "Apply: jobs@acme.de or www.acme.com"])).tolist()
        [('acme.co.uk',), <NA>, ('acme.com', 'acme.de')]
    """
    return _map_contacts(_check_series(s, "extract_domains"), [_domains], _RE2_MAY_HAVE_DOMAINS)[0]


def extract_contacts(contact: pd.Series, description: pd.Series) -> tuple[pd.Series, pd.Series, pd.Series]:
    """`extract_emails`, `extract_phones` and `extract_domains` of ``contact + "\\n" + description``.

    Missing parts read as "". The texts are not joined where the contact is empty: there every
    pre-check gives the same answer on the description as on "\\n" + description (and a missing
    description leaves "\\n", in which nothing is found).

    Returns:
        (emails, phones, domains), object Series indexed like `contact`.
    """
    head = _check_series(contact, "extract_contacts").fillna("").astype(str)
    body = _check_series(description, "extract_contacts").astype(str)
    pattern = f"{_RE2_MAY_HAVE_EMAILS}|{_RE2_PHONE_HINT}|{_RE2_MAY_HAVE_DOMAINS}"
    has_head = (head != "").to_numpy()
    bodies = _arrow_text(body)
    checks = _contact_checks(bodies, pattern)
    checks[has_head] = _contact_checks(
        _arrow_text(head[has_head] + "\n" + body[has_head].fillna("")), pattern
    )
    rows = np.flatnonzero(checks[:, 0])
    heads = _arrow_text(head).take(rows).to_pylist()
    texts = [h + "\n" + (b or "") for h, b in zip(heads, bodies.take(rows).to_pylist())]
    emails, phones, domains = _contact_series(texts, rows, checks[rows], [_emails, _phones, _domains], head)
    return emails, phones, domains
