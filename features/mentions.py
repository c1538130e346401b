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

from jobdedup.features.shingle_sets import (
    ShingleSets,
    ads_of_pairs,
    difference_rows,
    intersection_sizes,
    union_rows,
)


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
    ads, left, right = ads_of_pairs(left, right)
    places = union_rows(own_places[0].subset(ads), own_places[1].subset(ads))
    own = difference_rows(words.subset(ads), places)
    named = union_rows(own, mentions.subset(ads))
    left_unnamed = own.sizes[left] - intersection_sizes(own, left, right, other=named)
    right_unnamed = own.sizes[right] - intersection_sizes(own, right, left, other=named)
    out = np.maximum(left_unnamed, right_unnamed).astype(float)
    out[(own.sizes[left] == 0) | (own.sizes[right] == 0)] = np.nan
    return out
