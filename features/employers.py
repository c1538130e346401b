"""Employer conflict: two known, clearly different employers are not one vacancy — unless one ad
is an agency (or reposting) ad whose details match the other.

Names are compared normalised (`features.normalize.normalize_company`: legal forms, case and
punctuation aside); "clearly different" means neither equal nor fuzzy-similar (rapidfuzz
token-set ratio below 0.9, so "DKB | Deutsche Kreditbank" and "Deutsche Kreditbank" agree) nor
one the initials of the other ("AMD" / "Advanced Micro Devices"). Evidence that links two
different names (the definition's agency rule): one ad's text names the other's employer, the ads
share an e-mail, phone or web domain, or a requisition number, or their core texts are largely
the same (an agency copying the employer's ad; the classifier then weighs the details).

Example:
    >>> companies = pd.Series(["advanced micro devices", "amd", "merkur versicherung"])
    >>> similarity = np.array([0.3, 0.2])
    >>> no = np.array([np.nan, np.nan])
    >>> employer_conflict(companies, np.array([0, 0]), np.array([1, 2]), similarity, no, no, no).tolist()
    [0.0, 1.0]
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from rapidfuzz import fuzz

from jobdedup.features.normalize import FEW_VALUES, distinct_pairs

SIMILAR_NAMES = 0.9
"""Token-set ratio (0..1) from which two normalised names are one employer written two ways."""
SHARED_TEXT_LINK = 0.5
"""Core-text containment from which two employers' ads are an agency copy of one ad."""


_LINK_WORDS = frozenset("of for and the de des du la le van von und et y".split())


def _is_acronym(a: str, b: str) -> bool:
    """One name is the initials of the other, with or without its small words ("amd" / "advanced
    micro devices", "nhs" / "national health service"), or an acronym of four letters or more that
    skips content words but starts and ends with the first and last ones ("nice" / "national
    institute for health and care excellence"). Short acronyms that skip words are not matched:
    they joined clearly different names of the real crawls ("sap" / "salt and pepper steakhouse");
    over the 3,867 company names of the real ads, the anchored form adds only NICE's pair."""
    short, long = sorted((a, b), key=len)
    short = short.replace(" ", "")
    words = long.split()
    if len(short) < 2 or len(words) < 2:
        return False
    every = "".join(w[0] for w in words)
    content = "".join(w[0] for w in words if w not in _LINK_WORDS)
    return short in (every, content) or _is_anchored_acronym(short, content)


def _is_anchored_acronym(short: str, initials: str) -> bool:
    """`short` (4+ letters) takes the first and last of `initials` and, in order, some of those
    between: "nice" in "nihce"."""
    if len(short) < 4 or len(initials) <= len(short) or short[0] != initials[0] or short[-1] != initials[-1]:
        return False
    between = iter(initials[1:-1])
    return all(letter in between for letter in short[1:-1])


def same_employer_names(a: str, b: str) -> bool:
    """Two normalised names that are one employer written two ways (fuzzy-similar, or initials).

    Example:
        >>> same_employer_names("dkb deutsche kreditbank", "deutsche kreditbank"), same_employer_names("amd", "advanced micro devices")
        (True, True)
    """
    return fuzz.token_set_ratio(a, b) / 100 >= SIMILAR_NAMES or _is_acronym(a, b)


def _may_be_acronyms(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per pair of names, whether `_is_acronym` can hold: the shorter name has between 2 and as many
    letters (spaces aside) as the longer has words (initials are one letter per word)."""
    codes, names = pd.factorize(np.concatenate([a, b]))
    text = pd.Series(names, dtype=object).astype(str)
    length = text.str.len().to_numpy()
    letters = length - text.str.count(" ").to_numpy()
    words = text.str.split().str.len().to_numpy()
    code_a, code_b = codes[: len(a)], codes[len(a) :]
    a_short = length[code_a] <= length[code_b]
    short = np.where(a_short, code_a, code_b)
    long = np.where(a_short, code_b, code_a)
    return (letters[short] >= 2) & (letters[short] <= words[long])


def _acronym_pairs(companies: pd.Series, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per pair, whether one company is the initials of the other; each distinct pair checked once,
    in Python only where its lengths allow it (up to `FEW_VALUES` pairs, a service's check: each
    pair checked directly, which costs less than the frames)."""
    names = companies.astype(object).to_numpy()
    if len(left) <= FEW_VALUES:
        return np.array([_is_acronym(str(names[a]), str(names[b])) for a, b in zip(left, right)], dtype=bool)
    codes, uniques = pd.factorize(names, use_na_sentinel=False)
    firsts, seconds, pair_of = distinct_pairs(codes[left], codes[right], len(uniques))
    a, b = uniques[firsts], uniques[seconds]
    verdict = _may_be_acronyms(a, b)
    verdict[verdict] = [_is_acronym(str(x), str(y)) for x, y in zip(a[verdict], b[verdict])]
    return verdict[pair_of]


def employer_conflict(
    companies: pd.Series,
    left: np.ndarray,
    right: np.ndarray,
    similarity: np.ndarray,
    named: np.ndarray,
    shared_contact: np.ndarray,
    shared_text: np.ndarray,
) -> np.ndarray:
    """1 where both employers are known, clearly different and nothing links them; 0 where they are
    one employer or linked by evidence; NaN where either is unknown.

    Args:
        companies: normalised company names, one per ad.
        similarity: token-set ratio of the two names, 0..1 (NaN where a name is missing).
        named: 1 where one ad's text names the other's employer
            (`features.mentions.named_in_other_text`).
        shared_contact: 1 where the ads share an e-mail, phone, web domain or requisition number
            (the largest of those features; NaN where none is known).
        shared_text: containment of the smaller core text in the larger (NaN without text).
    """
    present = companies.notna().to_numpy()
    known = present[left] & present[right]
    out = np.where(known, 1.0, np.nan)
    same = known & (similarity >= SIMILAR_NAMES)
    unsure = known & ~same
    if unsure.any():
        same[unsure] = _acronym_pairs(companies, left[unsure], right[unsure])
    linked = (named == 1) | (shared_contact == 1) | (shared_text >= SHARED_TEXT_LINK)
    out[known & (same | linked)] = 0.0
    return out
