"""Whether one ad's text names what the other ad's fields name (its employer, its place, the
words of its title).

Per ad, `words` are the identifying words of a field (`pipeline.evidence.employer_words`,
`place_words`, `title_words`) and `mentions` the words of the batch's employers, places and titles
found in its text (`pipeline.evidence.mention_sets`); all are sorted 32-bit word hashes in
`ShingleSets`.

Example:
    >>> words = ShingleSets.from_lists([[7], [9, 11]])
    >>> mentions = ShingleSets.from_lists([[9, 11, 40], []])
    >>> named_in_other_text(words, mentions, np.array([0]), np.array([1])).tolist()
    [1.0]
"""

from __future__ import annotations

import numpy as np

from jobdedup.features.kernels import own_words_unnamed
from jobdedup.features.normalize import FEW_VALUES
from jobdedup.features.shingle_sets import (
    ShingleSets,
    ads_of_pairs,
    intersection_sizes,
)

PLACE_FLEXIBLE_WORDS = ("remote", "anywhere", "commuting")
"""Words by which a text says where the job is done is not the one town a site files it under: a
remote job ("fully remote", "remote from anywhere in the UK") or one at a choice of offices ("live
within commuting distance of one of our offices"). They are in every batch's vocabulary
(`pipeline.evidence.place_flexible_words`), so mention sets hold them; "remotely" is not one ("fix
problems remotely and on site" says nothing of the job's place)."""
PLACE_FLEXIBLE_HASHES = np.array([567254200, 1880109765, 2345035756], dtype=np.uint32)
"""The sorted tokeniser hashes of `PLACE_FLEXIBLE_WORDS` (features do not import the tokeniser, a
pipeline step; `tests/test_evidence.py` checks these against it)."""


def named_in_other_text(
    words: ShingleSets, mentions: ShingleSets, left: np.ndarray, right: np.ndarray
) -> np.ndarray:
    """1 where one ad's text holds every word of the other's field, 0 where a side has such words and
    neither text names the other's, NaN where neither side has any."""
    words_left = words.sizes[left]
    words_right = words.sizes[right]
    right_in_left = intersection_sizes(words, right, left, other=mentions)
    left_in_right = intersection_sizes(words, left, right, other=mentions)
    named = ((words_right > 0) & (right_in_left == words_right)) | (
        (words_left > 0) & (left_in_right == words_left)
    )
    out = named.astype(float)
    out[(words_left == 0) & (words_right == 0)] = np.nan
    return out


def words_other_ad_leaves_unnamed(
    words: ShingleSets,
    own_places: tuple[ShingleSets, ShingleSets],
    mentions: ShingleSets,
    left: np.ndarray,
    right: np.ndarray,
) -> np.ndarray:
    """Per pair, the most words one ad's set holds (its title's), its own place's words aside, that
    the other ad names neither in the same field nor in its text: "Payments" of "Data Engineer,
    Payments" against a generalist "Data Engineer" ad whose text never says payments. `own_places`:
    two sets of each ad's place words (e.g. its place and the town it lies in). NaN where a side
    has no such words. Only the ads of the pairs are looked at.

    Example:
        >>> words = ShingleSets.from_lists([[1, 2, 3], [1, 2]])  # "data engineer payments" / "data engineer"
        >>> places = (ShingleSets.from_lists([[], []]),) * 2
        >>> pair = np.array([0]), np.array([1])
        >>> words_other_ad_leaves_unnamed(words, places, ShingleSets.from_lists([[], [4]]), *pair).tolist()
        [1.0]
        >>> words_other_ad_leaves_unnamed(words, places, ShingleSets.from_lists([[], [3]]), *pair).tolist()
        [0.0]
    """
    if len(left) <= FEW_VALUES:
        ads, left, right = ads_of_pairs(left, right)
        word_sets, place_sets, area_sets, mention_sets = (
            _row_sets(rows, ads) for rows in (words, *own_places, mentions)
        )
        return _few_words_unnamed(word_sets, place_sets, area_sets, mention_sets, left, right)
    places, areas = own_places
    return own_words_unnamed(
        (words.indptr, words.values),
        (places.indptr, places.values),
        (areas.indptr, areas.values),
        (mentions.indptr, mentions.values),
        left,
        right,
    )


def _few_words_unnamed(
    words: list[set[int]],
    places: list[set[int]],
    areas: list[set[int]],
    mentions: list[set[int]],
    left: np.ndarray,
    right: np.ndarray,
) -> np.ndarray:
    """`words_other_ad_leaves_unnamed` of the pairs of up to `FEW_VALUES` ads (a service's check),
    from each ad's sets, pair by pair in plain Python: the sets' row operations cost ~0.15 ms even
    for one pair."""
    own = [w - p - a for w, p, a in zip(words, places, areas)]
    named = [o | m for o, m in zip(own, mentions)]

    def unnamed(a: int, b: int) -> float:
        if not own[a] or not own[b]:
            return np.nan
        return float(max(len(own[a] - named[b]), len(own[b] - named[a])))

    return np.array([unnamed(a, b) for a, b in zip(left.tolist(), right.tolist())], dtype=float)


def _row_sets(sets: ShingleSets, rows: np.ndarray) -> list[set[int]]:
    """The sets of these rows as Python sets."""
    return [
        set(sets.values[start:stop].tolist())
        for start, stop in zip(sets.indptr[rows].tolist(), sets.indptr[rows + 1].tolist())
    ]


def both_texts_say_place_flexible(mentions: ShingleSets, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per pair, whether both ads' texts hold a `PLACE_FLEXIBLE_WORDS` word: their listing towns
    need not be where the job is ("Data Analyst, fully remote UK" filed under London and under
    Leeds).

    Example:
        >>> remote = int(PLACE_FLEXIBLE_HASHES[0])
        >>> mentions = ShingleSets.from_lists([[remote, 7], [remote], [7]])
        >>> both_texts_say_place_flexible(mentions, np.array([0, 0]), np.array([1, 2])).tolist()
        [True, False]
    """
    # One pass per word over all mention sets (no copy of the pairs' sets: ~90 words per ad, and a
    # million ads' sets are 350 MB): the rows holding one of the words.
    found = np.zeros(len(mentions.values), dtype=bool)
    for word in PLACE_FLEXIBLE_HASHES:
        found |= mentions.values == word
    flexible = np.zeros(len(mentions.indptr) - 1, dtype=bool)
    flexible[np.searchsorted(mentions.indptr, np.flatnonzero(found), side="right") - 1] = True
    return flexible[left] & flexible[right]
