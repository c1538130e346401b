"""Company keys: the text key without legal forms, a leading "the" or trailing country words."""

from __future__ import annotations

import re

import cleanco.clean
import pandas as pd

from jobdedup.features.normalize.text import (
    _fixpoint,
    _key,
    _preclean,
)
from jobdedup.features.normalize.unique import _check_series, _map_unique

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
# Short forms that are also ordinary words: removed only at the end of the name. Ours (cleanco's
# list lacks בע"מ, ULC/Ltée, UG, mbH, GesmbH, Pty, Pvt, Sdn, and "group"/"holding(s)"/"branch"),
# then every form of cleanco's maintained list (`_cleanco_forms`).
_OWN_TRAILING = (
    frozenset(
        "co cos company ag kg se sa sas as asa ab oy nv spa sl lp pc ev eg og kft cv vof private "
        "group holding holdings and und et plc aor dutch branch ער".split()
    )
    | _LEGAL_CUT
)


def _legal_key(form: str) -> str:
    """A legal form written as in a name ("S. de R.L.", "sp. z o.o.") as the words of its key."""
    text = _preclean(form)
    if _SPECIAL_LEGAL_HINT_RE.search(text):
        for pattern, repl in _SPECIAL_LEGAL:
            text = pattern.sub(repl, text)
    return _key(_DOTTED_ABBR_RE.sub(lambda m: m.group(1).replace(".", ""), text))


def _cleanco_forms() -> tuple[frozenset[str], tuple[tuple[str, ...], ...]]:
    """cleanco's legal forms (321 of 80 countries) as keys: one-word forms, and longer ones
    ("s de rl", "sdn bhd", "sa de cv") longest first."""
    keys = {_legal_key(form) for form in cleanco.clean.get_unique_terms()} - {""}
    multi = sorted({tuple(k.split()) for k in keys if " " in k}, key=lambda words: (-len(words), words))
    return frozenset(k for k in keys if " " not in k), tuple(multi)


_CLEANCO_WORDS, _LEGAL_PHRASES = _cleanco_forms()
_LEGAL_TRAILING = _OWN_TRAILING | _CLEANCO_WORDS
LEGAL_FORM_WORDS = _LEGAL_TRAILING
"""Words of legal forms that normalised company names drop ("gmbh", "ltd", "inc", "bv", "ag", ...)."""
# Country/region words at the end: "The Works UK", "MBE - Netherlands", "Amazon ... EMEA".
_COMPANY_TRAILING_GEO = frozenset(
    "uk usa emea europe eu india germany deutschland netherlands nederland israel canada france "
    "austria osterreich schweiz switzerland international".split()
)
_COMPANY_LEADING = frozenset({"the", "het"})
# An employer's own careers page as the poster: "Dell Careers", "Coinbase Careers Page", "Rubrik Job Board".
_CAREERS_PAGE_ENDS = (
    ("careers", "page"),
    ("careers", "site"),
    ("careers",),
    ("job", "board"),
    ("linkedin", "jobs"),
)
# Aggregators that post other employers' ads under their own name ("hackajob is collaborating with
# Barclays ...", "posted by Jobgether on behalf of a partner company"): the ad's employer is
# unknown. "Jobs via Dice" is LinkedIn's label for a partner board's ad. Boards that also hire
# under their own name (LinkedIn, Indeed, Glassdoor, ...) are not listed: their ads there are theirs.
JOB_BOARD_NAMES: frozenset[str] = frozenset(
    """
    hackajob mygwork mysmartpros vmysmartpros jobgether jobleads jobright lensa jooble whatjobs
    careerjet jobrapido clearancejobs clearedjobs efinancialcareers jobsinmass bcjobs
    """.split()
) | {"seen by indeed", "mygwork lgbtq business community", "top secret clearance jobs"}
_JOB_BOARD_PREFIX = "jobs via "
_PHRASE_ENDS = frozenset(p[-1] for p in (*_LEGAL_PHRASES, *_CAREERS_PAGE_ENDS))


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
    while len(words) > 1:
        if words[-1] in _LEGAL_TRAILING or words[-1] in _COMPANY_TRAILING_GEO:
            words = words[:-1]
        elif phrase := _trailing_phrase(words, _CAREERS_PAGE_ENDS) or _trailing_phrase(words, _LEGAL_PHRASES):
            words = words[: -len(phrase)]
        else:
            break
    return " ".join(words)


def _trailing_phrase(words: list[str], phrases: tuple[tuple[str, ...], ...]) -> tuple[str, ...] | None:
    """The first of `phrases` (longest first: "s de rl") the name ends with, leaving a word before it."""
    if words[-1] not in _PHRASE_ENDS:
        return None
    return next((p for p in phrases if len(words) > len(p) and tuple(words[-len(p) :]) == p), None)


def _company(text: str) -> str | None:
    text = _TICKER_RE.sub(" ", _preclean(text))
    text = _WEB_SUFFIX_RE.sub(" ", text)
    if _SPECIAL_LEGAL_HINT_RE.search(text):
        for pattern, repl in _SPECIAL_LEGAL:
            text = pattern.sub(repl, text)
    text = _DOTTED_ABBR_RE.sub(lambda m: m.group(1).replace(".", ""), text)
    name = _fixpoint(_company_words, _key(text))
    if name in JOB_BOARD_NAMES or name.startswith(_JOB_BOARD_PREFIX):
        return None
    return name or None


def normalize_company(s: pd.Series) -> pd.Series:
    """Company key: text key without legal forms, a leading "the" or trailing country words.

    Legal forms of many countries are removed (ours and cleanco's maintained list of 80
    countries' forms): ltd/limited/plc/llp (UK), inc/llc/corp (US),
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
