"""Per-ad evidence read from the tokens of a batch: names and places the text mentions, and which
texts may name a requisition number.

A pair of ads from two known employers is one vacancy only when one is an agency ad whose text
names the other's employer (or they share a contact or reference); a listing city that the other
ad's text names ("based in Bristol or London") is no conflict. Both checks compare *word sets*:

- `employer_words`, `place_words` and `area_words`: the words of each ad's company, of the most
  specific part of its location and of the town that part lies in ("Bristol" of "Filton,
  Bristol"), as the tokeniser hashes them (case-folded, accents kept, as in the text), without
  legal forms and generic words ("GmbH", "Group", "Solutions", "Remote"), and for
  employers without words the texts of many employers use ("Data", "Energy", "Share");
- `title_words`: the words of each ad's title without filler ("m/w/d", "remote", "job");
- `mention_sets`: the words of each ad's text that are a name or title word of *some* ad being
  prepared with it (the batch's vocabulary), so the sets stay small (tens of words per ad).

"Ad a's text names ad b's employer" is then `name_words(b) ⊆ mentions(a)`: two intersection
counts per pair, compiled and vectorised over pairs (`features.pairs`); a word of a's title that
neither b's title nor b's text names marks a job b does not describe.

Example:
    >>> companies = pd.Series(["Merkur Versicherung AG", "Vega International GmbH"])
    >>> employer_words(companies).sizes.tolist()  # the legal forms "AG" and "GmbH" name nobody
    [2, 2]
"""

from __future__ import annotations

from functools import cache
from itertools import pairwise
from pathlib import Path

import numpy as np
import pandas as pd

from jobdedup.features.mentions import PLACE_FLEXIBLE_HASHES
from jobdedup.features.normalize import (
    FEW_VALUES,
    LEGAL_FORM_WORDS,
    TITLE_WORDS_ADDED,
    distinct,
    short_town_name,
)
from jobdedup.features.normalize.locations import _district_town
from jobdedup.features.requisitions import LABEL_WORDS
from jobdedup.features.shingle_sets import ShingleSets, sets_of_rows, sorted_member, sorted_unique
from jobdedup.features.titles import PLACE_FILLER_WORDS, TITLE_FILLER_WORDS, TITLE_FORMAT_WORDS
from jobdedup.pipeline.evidence_kernels import Names, label_then_number, name_sets
from jobdedup.pipeline.sketch import tokenize
from jobdedup.pipeline.tokenizer import Tokens

GENERIC_NAME_WORDS = frozenset(
    (
        "the and und et of for de la le les der die das van von en y e & a an "
        "group holding holdings international global worldwide solutions solution services service "
        "systems system technologies technology tech consulting consultants consultancy partners partner "
        "recruitment recruiting recruiters staffing talent careers career jobs job people resources "
        "resourcing personnel management digital software company companies enterprises industries "
        "associates agency network networks labs lab studio studios ventures capital health care "
        "remote hybrid home office anywhere worldwide city stadt area region county district greater "
        "metropolitan north south east west central centre center new st saint"
    ).split()
)
"""Words that never identify an employer or a place on their own."""
REQUISITION_LOOKAHEAD = 3
"""A text may name a requisition number when a label word is followed within this many words by a
word holding a digit ("Req ID: 12903")."""


COMMON_WORDS_FILE = Path(__file__).resolve().parent.parent / "features" / "common_words.txt"
"""Words the texts of many employers use (made by `labelling.make_common_words`): never employer names."""


def _word_hashes(words: list[str]) -> np.ndarray:
    """Sorted 32-bit tokeniser hashes of these words."""
    return sorted_unique(tokenize(["\n".join(words)]).word_hash.astype(np.uint32))


@cache
def _generic_hashes() -> np.ndarray:
    return _word_hashes(sorted(GENERIC_NAME_WORDS | LEGAL_FORM_WORDS))


@cache
def _title_filler_hashes() -> np.ndarray:
    return _word_hashes(sorted(TITLE_FILLER_WORDS | TITLE_FORMAT_WORDS | PLACE_FILLER_WORDS))


@cache
def _not_employer_hashes() -> np.ndarray:
    common = COMMON_WORDS_FILE.read_text(encoding="utf-8").split()
    return sorted_unique(np.concatenate([_generic_hashes(), _word_hashes(common)]))


@cache
def _label_hashes() -> np.ndarray:
    return _word_hashes(LABEL_WORDS)


def employer_words(companies: pd.Series) -> ShingleSets:
    """Per ad, the words that identify its employer: the company's words without legal forms,
    generic words and words the texts of many employers use.

    Example:
        >>> employer_words(pd.Series(["ACME Data Solutions Ltd", None])).sizes.tolist()
        [1, 0]
    """
    return _name_words(companies, _not_employer_hashes())


def title_words(titles: pd.Series) -> ShingleSets:
    """Per ad, the words of its normalised title (`features.normalize.normalize_title`: "Sr." is
    "senior") without filler (gender tags, "remote", "job", prepositions), contract or schedule
    words ("full time", "permanent") and place filler ("area", "greater").

    Example:
        >>> title_words(pd.Series(["data engineer payments", "data engineer full time", None])).sizes.tolist()
        [3, 2, 0]
    """
    return _name_words(titles, _title_filler_hashes())


@cache
def words_normalising_adds() -> ShingleSets:
    """The words `normalize_title` writes that a raw title may not hold ("senior" for "Sr."), as
    one set: with the raw titles' `title_words`, a vocabulary holding every normalised title's words."""
    return ShingleSets.from_lists([_word_hashes(sorted(TITLE_WORDS_ADDED)).tolist()])


@cache
def place_flexible_words() -> ShingleSets:
    """`features.mentions.PLACE_FLEXIBLE_WORDS` as one set: in every vocabulary, so that mention
    sets say which texts call the job remote or a choice of offices."""
    return ShingleSets.from_lists([PLACE_FLEXIBLE_HASHES.tolist()])


def place_words(locations: pd.Series, cities: pd.Series) -> ShingleSets:
    """Per ad, the words of the most specific part of its raw location, as written ("München" of
    "München, Bayern") but without the river its full name adds ("Frankfurt" of "Frankfurt am
    Main", `short_town_name`), where the normalised location has a city; empty elsewhere (a
    country, a region, remote)."""
    # Split each distinct location once (a million ads have a few thousand); code -1 = missing.
    # (arrays, not Series and their `notna`: ~40 µs a call for a few ads)
    codes, once = distinct(locations)
    first = np.array(
        [None, *(short_town_name(text.split(",")[0]) if isinstance(text, str) else None for text in once)]
    )
    return _name_words(np.where(~cities.array.isna(), first[codes + 1], None), _generic_hashes())


def area_words(locations: pd.Series) -> ShingleSets:
    """Per ad, the words of the town its listed district lies in (`features.normalize.district_town`:
    "Bristol" of "Filton, Bristol", "London" of "The City, Central London", "Newcastle" of
    "Longbenton, Newcastle Upon Tyne", `short_town_name`); empty where the
    location's second part is a county, state, region or country, or there is none. Job boards file
    one job under districts of the town its text names ("based in Bristol or London").

    Example:
        >>> area_words(pd.Series(["Filton, Bristol", "Maidstone, Kent", "Dallas, TX", "Leeds", None])).sizes.tolist()
        [1, 0, 0, 0, 0]
    """
    codes, once = distinct(locations)  # (`district_town` of the distinct ones: its Series costs ~40 µs)
    towns = np.array(
        [None, *(_short_town_or_none(_district_town(v if isinstance(v, str) else str(v))) for v in once)],
        dtype=object,
    )
    return _name_words(towns[codes + 1], _generic_hashes())


def _short_town_or_none(town: str | None) -> str | None:
    """`short_town_name` of a town, None kept."""
    return None if town is None else short_town_name(town)


def _name_words(names: pd.Series | np.ndarray, stop: np.ndarray) -> ShingleSets:
    """Per row, the 32-bit hashes of the name's words not in `stop` (none where missing); each
    distinct name is tokenised once."""
    codes, once = distinct(names)
    tokens = tokenize([str(name) for name in once])
    hashes = tokens.word_hash.astype(np.uint32)
    keep = ~sorted_member(hashes, stop)
    if len(codes) <= FEW_VALUES:
        return _few_name_words(codes, hashes, keep, tokens.doc_ptr)
    doc = np.repeat(np.arange(len(once), dtype=np.uint64), tokens.words_per_doc)
    unique_sets = sets_of_rows(doc[keep], hashes[keep], len(once))
    missing = codes < 0
    rows = np.where(missing, 0, codes)
    sets = unique_sets.subset(rows) if len(once) else ShingleSets.from_lists([[] for _ in codes])
    if missing.any() and len(once):
        sizes = np.where(missing, 0, sets.sizes)
        keep_values = np.repeat(~missing, sets.sizes)
        indptr = np.zeros(len(codes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        sets = ShingleSets(indptr=indptr, values=sets.values[keep_values])
    return sets


def _few_name_words(
    codes: np.ndarray, hashes: np.ndarray, keep: np.ndarray, doc_ptr: np.ndarray
) -> ShingleSets:
    """`_name_words` of up to `FEW_VALUES` rows (a service's check) from their distinct names'
    words (`hashes`, those to `keep`, name i's from `doc_ptr[i]`), in plain Python: the sets' numpy
    steps cost ~30 µs a call for so few."""
    words, kept, bounds = hashes.tolist(), keep.tolist(), doc_ptr.tolist()
    named = [{w for w, k in zip(words[a:b], kept[a:b]) if k} for a, b in pairwise(bounds)]
    return ShingleSets.from_sets([named[code] if code >= 0 else () for code in codes.tolist()])


def vocabulary(*word_sets: ShingleSets) -> np.ndarray:
    """Sorted distinct word hashes of all these sets (the names a text may mention)."""
    return sorted_unique(np.concatenate([s.values for s in word_sets] or [np.zeros(0, np.uint32)]))


def mention_sets(tokens: Tokens, names: Names, keep: np.ndarray | None = None) -> ShingleSets:
    """Per document, the distinct words of its text that are in the vocabulary `names` (uint32 hashes,
    or parts whose union it is: `pipeline.evidence_kernels.Names`), sorted;
    with `keep`, only kept words count (the core text: a "similar jobs" widget naming other
    employers is page chrome, not the ad's own words). One compiled pass over the words."""
    indptr, values = name_sets(tokens.word_hash, tokens.doc_ptr, names, keep)
    return ShingleSets(indptr=indptr, values=values)


def may_name_requisition(tokens: Tokens) -> np.ndarray:
    """Per document: a requisition label word ("req", "ref", "vacancy", ...) is followed within
    `REQUISITION_LOOKAHEAD` words by a word holding a digit (only these texts are searched for
    requisition numbers with regular expressions). One compiled pass over the words."""
    return label_then_number(
        tokens.word_hash, tokens.word_is_number, tokens.doc_ptr, _label_hashes(), REQUISITION_LOOKAHEAD
    )
