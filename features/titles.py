"""Title features: another seniority, and words that only one title has and that specify the job.

Reposts reword titles ("Python Developer" / "Backend Developer - Python"), but a word that names a
team, product, specialism or seniority on one side only often marks another vacancy of the same
employer ("Frontend" / "Backend", "Accounting Summer Student" / "Summer Student"). Words that say
nothing about the job (gender tags, "remote", "hiring", "job", the ad's own place) do not count.

Example:
    >>> titles = pd.Series(["accounting summer student", "summer student"])
    >>> places = pd.Series([None, None])
    >>> only = specific_words_only_one_side(titles, places, np.array([0]), np.array([1]))
    >>> [x.tolist() for x in only]  # fewest and most specific words one title has alone
    [[0.0], [1.0]]
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from jobdedup.features.shingle_sets import intersection_sizes, word_sets

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
    present = titles.notna().to_numpy()
    title_codes, distinct_titles = pd.factorize(titles.astype(object).where(titles.notna(), ""))
    levels = [" ".join(sorted(set(t.split()) & LEVEL_WORDS)) for t in distinct_titles]
    level_code = pd.factorize(np.array(levels, dtype=object))[0][title_codes] if len(levels) else title_codes
    both = present[left] & present[right]
    return np.where(both, (level_code[left] != level_code[right]).astype(float), np.nan)


PLACE_FILLER_WORDS = frozenset("north south east west central greater city county area region".split())
"""Words of a place that do not tell two places apart ("East London" / "North London" share London)."""


def _per_title_and_place(
    titles: pd.Series, places: pd.Series, keep: Callable[[str, frozenset[str]], bool]
) -> pd.Series:
    """Each title's words `w` with `keep(w, words of the ad's place)`, joined by spaces ("" for none).
    Each distinct title and place is split once, each distinct (title, place) pair joined once."""
    title_codes, distinct_titles = pd.factorize(titles.astype(object).fillna(""))
    place_codes, distinct_places = pd.factorize(places.astype(object).fillna(""))
    width = max(len(distinct_places), 1)
    combos, combo_codes = np.unique(title_codes.astype(np.int64) * width + place_codes, return_inverse=True)
    title_words = [str(t).split() for t in distinct_titles]
    place_words = [frozenset(str(p).split()) for p in distinct_places]
    kept = [
        " ".join(w for w in title_words[combo // width] if keep(w, place_words[combo % width]))
        for combo in combos.tolist()
    ]
    return pd.Series(np.asarray(kept, dtype=object)[combo_codes], index=titles.index)


def _own_place_words(titles: pd.Series, places: pd.Series) -> pd.Series:
    """Each title's words that name the ad's own place ("amersham" of "support worker jobs amersham"
    listed at "amersham buckinghamshire"), filler and compass words aside; "" where there are none."""
    return _per_title_and_place(
        titles, places, lambda w, place: w in place and w not in TITLE_FILLER_WORDS and w not in PLACE_FILLER_WORDS
    )


def titles_name_other_places(
    titles: pd.Series, places: pd.Series, left: np.ndarray, right: np.ndarray
) -> np.ndarray:
    """Per pair: 1 where each title names its own ad's place and neither title has a word of the
    other's ("Support Worker Jobs Amersham" / "Support Worker Jobs High Wycombe": one template
    posted per town), 0 where both name their place and a word is shared, NaN otherwise.

    Example:
        >>> titles = pd.Series(["carer amersham", "carer high wycombe", "carer"])
        >>> places = pd.Series(["amersham bucks", "high wycombe bucks", "amersham"])
        >>> titles_name_other_places(titles, places, np.array([0, 0]), np.array([1, 2])).tolist()
        [1.0, nan]
    """
    # Only the ads of these pairs (a grouping step scores a few pairs of a big batch).
    ads, inverse = np.unique(np.concatenate([left, right]), return_inverse=True)
    left, right = inverse[: len(left)], inverse[len(left) :]
    titles, places = titles.iloc[ads].reset_index(drop=True), places.iloc[ads].reset_index(drop=True)
    own = word_sets(_own_place_words(titles, places))
    words = word_sets(titles)
    left_in_right = intersection_sizes(own, left, right, other=words)
    right_in_left = intersection_sizes(own, right, left, other=words)
    both = (own.sizes[left] > 0) & (own.sizes[right] > 0)
    other = (left_in_right == 0) & (right_in_left == 0)
    return np.where(both, other.astype(float), np.nan)


def _specific_titles(titles: pd.Series, places: pd.Series) -> pd.Series:
    """Each title without filler words and without the words of the ad's own place."""
    specific = _per_title_and_place(titles, places, lambda w, place: w not in TITLE_FILLER_WORDS and w not in place)
    return specific.where(titles.notna())


def specific_words_only_one_side(
    titles: pd.Series, places: pd.Series, left: np.ndarray, right: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per pair, how many specific words (not filler, not the ad's own place) each title has that the
    other title lacks: (the smaller count, the larger count); NaN where either title is missing.

    A smaller count above 0 means both titles name something the other does not ("Frontend" /
    "Backend"); a larger count above 0 with a smaller count of 0 means one title only adds words.
    """
    present = titles.notna().to_numpy()
    specific = word_sets(_specific_titles(titles, places))
    words = word_sets(titles)
    only_left = specific.sizes[left] - intersection_sizes(specific, left, right, other=words)
    only_right = specific.sizes[right] - intersection_sizes(specific, right, left, other=words)
    both = present[left] & present[right]
    smaller = np.where(both, np.minimum(only_left, only_right).astype(float), np.nan)
    larger = np.where(both, np.maximum(only_left, only_right).astype(float), np.nan)
    return smaller, larger
