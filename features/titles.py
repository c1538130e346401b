"""Title features: another seniority, and words that only one title has and that specify the job.

Reposts reword titles ("Python Developer" / "Backend Developer - Python"), but a word that names a
team, product, specialism or seniority on one side only often marks another vacancy of the same
employer ("Frontend" / "Backend", "Accounting Summer Student" / "Summer Student"). Words that say
nothing about the job (gender tags, "remote", "hiring", "job", the ad's own place) do not count.

Example:
    >>> titles = pd.Series(["accounting summer student", "summer student"])
    >>> places = pd.Series([None, None])
    >>> only = specific_words_only_one_side(title_words(titles, places), np.array([0]), np.array([1]))
    >>> [x.tolist() for x in only]  # fewest and most specific words one title has alone
    [[0.0], [1.0]]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from jobdedup.features.normalize import FEW_VALUES, distinct
from jobdedup.features.shingle_sets import (
    ShingleSets,
    index_ranges,
    intersection_sizes,
    sets_of_rows,
    sorted_member,
    sorted_unique,
    split_words,
    texts_and_codes,
    word_hash,
    word_hashes,
)

LEVEL_WORDS = frozenset(
    [
        "senior",
        "junior",
        "lead",
        "principal",
        "staff",
        "head",
        "chief",
        "director",
        "manager",
        "intern",
        "internship",
        "trainee",
        "graduate",
        "entry",
        "associate",
        "assistant",
        "vp",
        "apprentice",
        "apprenticeship",
        "werkstudent",
        "praktikant",
        "praktikum",
        "stagiaire",
        "stage",
        "alternance",
        "medior",
        "mid",
        "student",
        "expert",
        "specialist",
        "supervisor",
        "coordinator",
        "officer",
        "1",
        "2",
        "3",
        "4",
        "5",
        "i",
        "ii",
        "iii",
        "iv",
        "v",
    ]
)


TITLE_FILLER_WORDS = frozenset(
    (
        "m w d f h x mwd wmd mfd fmd all gender genders diverse divers remote hybrid onsite site home "
        "office job jobs vacancy vacancies hiring urgent urgently immediate immediately start new "
        "opportunity role position wanted needed required the a an and or of for in at to with on "
        "de en und et la le der die das im bei fur für van het een el y e il di da"
    ).split()
)
"""Title words that never make two vacancies (gender tags, filler, prepositions)."""

TITLE_FORMAT_WORDS = frozenset(
    "full time fulltime part parttime permanent perm contract temporary temp fixed term freelance seasonal".split()
)
"""Contract and schedule words sites append to a title when they reformat it ("… - Full Time",
"… (Permanent)"); not evidence that the other ad describes another job."""


def title_level_differs(titles: pd.Series, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per pair: 1 where the seniority/level words of the two titles differ, 0 where they agree, NaN
    where either title is missing. A senior and a junior role, or level II and III, are different
    vacancies even when the body text is one template."""
    title_codes, distinct_titles = distinct(titles)
    levels = [" ".join(sorted(set(t.split()) & LEVEL_WORDS)) for t in distinct_titles]
    level_code = distinct(pd.Series(levels, dtype=object))[0][title_codes] if len(levels) else title_codes
    both = (title_codes[left] >= 0) & (title_codes[right] >= 0)
    return np.where(both, (level_code[left] != level_code[right]).astype(float), np.nan)


PLACE_FILLER_WORDS = frozenset("north south east west central greater city county area region".split())
"""Words of a place that do not tell two places apart ("East London" / "North London" share London)."""


@dataclass(frozen=True)
class TitleWords:
    """Word sets of each ad's title (row i = ad i), as 32-bit word hashes.

    Attributes:
        present: whether the ad has a title.
        words: all words of the title.
        specific: its words that are not filler and do not name the ad's own place.
        own_place: its words that name the ad's own place, filler and compass words aside.
    """

    present: np.ndarray
    words: ShingleSets
    specific: ShingleSets
    own_place: ShingleSets


def title_words(titles: pd.Series, places: pd.Series) -> TitleWords:
    """The `TitleWords` of ads with these titles and places. Each distinct title and place is split
    once, and each distinct (title, place) pair's words are sorted out in numpy; those of up to
    `FEW_VALUES` ads (a service's check) row by row in plain Python, which costs less for so few."""
    if len(titles) <= FEW_VALUES:
        return _few_title_words(titles.tolist(), places.tolist())
    title_codes, distinct_titles = texts_and_codes(titles)
    place_codes, distinct_places = texts_and_codes(places)
    title_of, title_word, place_of, place_word, vocabulary = _split_both(distinct_titles, distinct_places)
    hashes = word_hashes(vocabulary)
    filler = np.fromiter((w in TITLE_FILLER_WORDS for w in vocabulary), bool, len(vocabulary))
    place_filler = np.fromiter((w in PLACE_FILLER_WORDS for w in vocabulary), bool, len(vocabulary))
    width = max(len(distinct_places), 1)
    keys = title_codes.astype(np.int64) * width + place_codes
    combos = sorted_unique(keys)
    word_ptr = np.zeros(len(distinct_titles) + 1, dtype=np.int64)
    np.cumsum(np.bincount(title_of, minlength=len(distinct_titles)), out=word_ptr[1:])
    combo_title, combo_place = combos // width, combos % width
    counts = np.diff(word_ptr)[combo_title]
    combo = np.repeat(np.arange(len(combos)), counts)
    word = title_word[index_ranges(word_ptr[combo_title], counts)]
    in_place = sorted_member(
        combo_place[combo] * len(vocabulary) + word, sorted_unique(place_of * len(vocabulary) + place_word)
    )
    specific = ~filler[word] & ~in_place
    own = in_place & ~filler[word] & ~place_filler[word]
    combo_codes = np.searchsorted(combos, keys)
    return TitleWords(
        present=title_codes < len(distinct_titles) - 1,
        words=sets_of_rows(title_of, hashes[title_word], len(distinct_titles)).subset(title_codes),
        specific=sets_of_rows(combo[specific], hashes[word[specific]], len(combos)).subset(combo_codes),
        own_place=sets_of_rows(combo[own], hashes[word[own]], len(combos)).subset(combo_codes),
    )


def _few_title_words(titles: list[object], places: list[object]) -> TitleWords:
    """`title_words` of a few ads' titles and places (str, or missing)."""
    rows = [_title_row(title, place) for title, place in zip(titles, places)]
    words, specific, own_place = zip(*rows) if rows else ((), (), ())
    return TitleWords(
        present=np.array([isinstance(title, str) for title in titles], dtype=bool),
        words=ShingleSets.from_sets(words),
        specific=ShingleSets.from_sets(specific),
        own_place=ShingleSets.from_sets(own_place),
    )


def _title_row(title: object, place: object) -> tuple[set[int], set[int], set[int]]:
    """The hashes of one title's words, its specific words and those naming its own place."""
    words = title.split() if isinstance(title, str) else []
    in_place = set(place.split()) if isinstance(place, str) else set()
    specific = {word_hash(w) for w in words if w not in TITLE_FILLER_WORDS and w not in in_place}
    own = {
        word_hash(w)
        for w in words
        if w in in_place and w not in TITLE_FILLER_WORDS and w not in PLACE_FILLER_WORDS
    }
    return {word_hash(w) for w in words}, specific, own


def _split_both(
    titles: np.ndarray, places: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The words of each title and each place, as (title number, word code) and (place number,
    word code) in order, with the distinct words that the codes number."""
    title_of, title_words_found = split_words(titles)
    place_of, place_words_found = split_words(places)
    codes, vocabulary = pd.factorize(np.concatenate([title_words_found, place_words_found]))
    return (
        title_of,
        codes[: len(title_words_found)].astype(np.int64),
        place_of,
        codes[len(title_words_found) :].astype(np.int64),
        np.asarray(vocabulary, dtype=object),
    )


def specific_words_only_one_side(
    words: TitleWords, left: np.ndarray, right: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, how many specific words (not filler, not the ad's own place) each title has that the
    other title lacks: (the smaller count, the larger count); NaN where either title is missing.

    A smaller count above 0 means both titles name something the other does not ("Frontend" /
    "Backend"); a larger count above 0 with a smaller count of 0 means one title only adds words.
    """
    specific = words.specific
    only_left = specific.sizes[left] - intersection_sizes(specific, left, right, other=words.words)
    only_right = specific.sizes[right] - intersection_sizes(specific, right, left, other=words.words)
    both = words.present[left] & words.present[right]
    smaller = np.where(both, np.minimum(only_left, only_right).astype(float), np.nan)
    larger = np.where(both, np.maximum(only_left, only_right).astype(float), np.nan)
    return smaller, larger
