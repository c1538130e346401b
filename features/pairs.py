"""Stage 4: features of candidate pairs, vectorised over pairs.

Text overlap comes from shingle sets (exact Jaccard and containment, on the full text and on the
*core* text with corpus boilerplate removed) and MinHash signatures; field similarity from
rapidfuzz's batch scorers on normalised fields. Every feature is symmetric in the pair, and a
feature that cannot be computed (a field missing on either side) is NaN, never 0.

Example:
    >>> FEATURES[:3]
    ['minhash_core', 'jaccard_full', 'containment_full_max']
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from rapidfuzz import fuzz
from rapidfuzz.process import cpdist

from jobdedup.features.employers import employer_conflict
from jobdedup.features.kernels import equal_counts
from jobdedup.features.mentions import (
    both_texts_say_place_flexible,
    named_in_other_text,
    words_other_ad_leaves_unnamed,
)
from jobdedup.features.normalize import FEW_VALUES, distinct, distinct_pairs
from jobdedup.features.salaries import salary_bands_disjoint
from jobdedup.features.shingle_sets import (
    ShingleSets,
    ads_of_pairs,
    index_ranges,
    intersection_sizes,
    phrase_hash_set,
    phrase_sets,
    sorted_member,
)
from jobdedup.features.titles import (
    specific_words_only_one_side,
    title_level_differs,
    title_words,
)

FEATURES: list[str] = [
    "minhash_core",
    "jaccard_full",
    "containment_full_max",
    "containment_full_min",
    "jaccard_core",
    "containment_core_max",
    "containment_core_min",
    "numbers_jaccard",
    "numbers_only_one_side",
    "words_ratio",
    "log_words_min",
    "log_words_max",
    "core_share_min",
    "core_share_max",
    "title_ratio",
    "title_token_set",
    "title_equal",
    "title_level_differs",
    "title_specific_only_min",
    "title_specific_only_max",
    "title_words_unnamed",
    "company_token_set",
    "company_equal",
    "employer_conflict",
    "employer_named_in_text",
    "occupation_token_set",
    "location_conflict",
    "place_equal",
    "place_named_in_text",
    "requisition_match",
    "salary_bands_disjoint",
    "same_listing",
    "email_match",
    "phone_match",
    "domain_match",
    "date_gap_days",
    "same_source",
    "sides_without_text",
]

# Computed for `dup_type`, the decision rules and the labelling tools, but not learnt from: on
# natural pairs of a corpus left out of training, `place_equal` pushed true reposts of one listing
# under several cities below the threshold (its trees learnt "same town" from synthetic reposts,
# which always keep the town), and `same_source` pushed re-scrapes of one site below it (synthetic
# reposts always change the site; in the natural labels most same-site pairs are templates):
# karriere.at re-scrapes with 80 % of their text shared scored 0.44-0.68. Left out, pooled leave-one-corpus-out
# F1 rose from 0.862 to 0.881 (fast harness: classifier per fold on cached features).
# `title_words_unnamed` and `salary_bands_disjoint` decide through
# rules (`models.rules`), not the trees.
NOT_LEARNT_FEATURES = {
    "place_equal",
    "title_words_unnamed",
    "salary_bands_disjoint",
    "same_source",
}
# The columns the classifier is trained on, in order.
MODEL_FEATURES: list[str] = [name for name in FEATURES if name not in NOT_LEARNT_FEATURES]
_FEATURE_COLUMNS = pd.Index(FEATURES)  # (made once: pandas makes a list of names an Index in ~35 µs)


@dataclass(frozen=True)
class PairInputs:
    """Everything pair features need about a set of ads (row i = ad i).

    Attributes:
        fields: normalised fields (see `features.fields.normalize_fields`).
        full: shingle sets of the whole cleaned description.
        core: shingle sets after corpus boilerplate removal.
        numbers: sets of number-bearing words (salaries, reference numbers, postcodes).
        signatures: MinHash signatures of the core text, (n_ads, num_perm).
        words: word count of the whole description per ad.
        core_words: word count of the core text per ad.
        employer_words: words naming the ad's employer (`pipeline.evidence.employer_words`).
        place_words: words naming the ad's most specific place (`pipeline.evidence.place_words`).
        area_words: words naming the town that place lies in (`pipeline.evidence.area_words`).
        title_words: the normalised title's words without filler (`pipeline.evidence.title_words`).
        mentions: the employer, place and title words of the batch that the ad's text contains.
    """

    fields: pd.DataFrame
    full: ShingleSets
    core: ShingleSets
    numbers: ShingleSets
    signatures: np.ndarray
    words: np.ndarray
    core_words: np.ndarray
    employer_words: ShingleSets
    place_words: ShingleSets
    area_words: ShingleSets
    title_words: ShingleSets
    mentions: ShingleSets


def _overlap(sets: ShingleSets, left: np.ndarray, right: np.ndarray, threads: int) -> tuple[np.ndarray, ...]:
    """Jaccard, max and min containment of each pair; NaN where either side is empty."""
    inter = intersection_sizes(sets, left, right, threads=threads).astype(float)
    size_l = sets.sizes[left].astype(float)
    size_r = sets.sizes[right].astype(float)
    union = size_l + size_r - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        jaccard = inter / union
        cont_l = inter / size_l
        cont_r = inter / size_r
    either_empty = (size_l == 0) | (size_r == 0)
    jaccard[either_empty] = np.nan
    cont_max = np.where(either_empty, np.nan, np.fmax(cont_l, cont_r))
    cont_min = np.where(either_empty, np.nan, np.fmin(cont_l, cont_r))
    return jaccard, cont_max, cont_min


def _string_similarity(
    values: pd.Series,
    left: np.ndarray,
    right: np.ndarray,
    scorer: Callable[..., float],
    threads: int,
) -> np.ndarray:
    """rapidfuzz score in 0..1 for each pair; NaN where either string is missing. Each distinct
    (left value, right value) is scored once: ads blocked on one title repeat the same strings."""
    codes, uniques = distinct(values)
    strings = np.array([str(u) for u in uniques], dtype=object)
    both = np.flatnonzero((codes[left] >= 0) & (codes[right] >= 0))
    out = np.full(len(left), np.nan)
    if len(both):
        firsts, seconds, pair_of = distinct_pairs(codes[left[both]], codes[right[both]], len(strings))
        scores = cpdist(strings[firsts], strings[seconds], scorer=scorer, workers=threads)
        out[both] = (np.asarray(scores, dtype=float) / 100.0)[pair_of]
    return out


def _equal(values: pd.Series, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """1.0 where both values are present and equal, 0.0 where both present and different, else NaN."""
    codes = distinct(values)[0]
    out = np.where(codes[left] == codes[right], 1.0, 0.0)
    out[(codes[left] < 0) | (codes[right] < 0)] = np.nan
    return out


def _shared_item(values: pd.Series, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """For tuple-valued fields (e-mails, phones, domains): 1 if any item is shared, 0 if none, NaN if a side has none."""
    if len(values) <= FEW_VALUES:
        return _shared_item_few(values, left, right)
    owned, width = _ad_items(values)
    doc = owned // width
    has_items = np.zeros(len(values), dtype=bool)
    has_items[doc] = True
    out = np.full(len(left), np.nan)
    both = np.flatnonzero(has_items[left] & has_items[right])
    out[both] = 0.0
    if len(both):
        # Each pair's left items, looked up as (right ad, item) among every ad's (ad, item).
        first = np.searchsorted(doc, left[both])
        count = np.searchsorted(doc, left[both], side="right") - first
        pair = np.repeat(both, count)
        wanted = right[pair] * width + owned[index_ranges(first, count)] % width
        out[pair[sorted_member(wanted, owned)]] = 1.0
    return out


def _ad_items(values: pd.Series) -> tuple[np.ndarray, np.int64]:
    """Every distinct (ad, item) of the ads' tuples as one sorted key `ad * width + item code`, and
    `width`; missing items and values that are no tuple (NA) are left out."""
    exploded = values.reset_index(drop=True).explode().dropna()
    codes = pd.factorize(exploded.astype(str))[0]
    width = np.int64(codes.max() + 1 if len(codes) else 1)
    return np.unique(exploded.index.to_numpy(dtype=np.int64) * width + codes), width


def _shared_item_few(values: pd.Series, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """`_shared_item` for up to `FEW_VALUES` ads (a service's check), in plain Python."""
    items = [
        {str(item) for item in value if not pd.isna(item)}
        if isinstance(value, (tuple, list, np.ndarray))
        else set()
        for value in values.tolist()
    ]
    return np.array(
        [
            (1.0 if items[a] & items[b] else 0.0) if items[a] and items[b] else np.nan
            for a, b in zip(left, right)
        ],
        dtype=float,
    )


def _location_conflict(fields: pd.DataFrame, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """1 where both ads name a place and neither place appears in the other's location (its words
    in order: "East London" is not in "North London, London South East"), or where
    one side names only a region and the two name different states, provinces or Länder ("Florida"
    / "Dallas, TX"; `subdivision`); 0 where they agree, one names the other's city ("Filton,
    Bristol" / "Bristol"), or one side is only generic (a country, "remote", the other's region);
    NaN where either ad gives no location at all.

    Sites write one place many ways, so only two different specific places count against a pair.
    """
    if len(fields) <= FEW_VALUES:
        return _location_conflict_few(
            fields["city"].tolist(), fields["subdivision"].tolist(), fields["location"].tolist(), left, right
        )
    city_same = _equal(fields["city"], left, right)
    out = np.where(np.isnan(city_same), 0.0, 1.0 - city_same)
    cities, places = phrase_sets(fields["city"]), phrase_sets(fields["location"])
    a_in_b = intersection_sizes(cities, left, right, other=places) == cities.sizes[left]
    b_in_a = intersection_sizes(cities, right, left, other=places) == cities.sizes[right]
    out[(out == 1.0) & (a_in_b | b_in_a)] = 0.0
    out[np.isnan(city_same) & (_equal(fields["subdivision"], left, right) == 0)] = 1.0
    located = fields["location"].notna().to_numpy()
    out[~(located[left] & located[right])] = np.nan
    return out


def _location_conflict_few(
    cities: list[object],
    subdivisions: list[object],
    locations: list[object],
    left: np.ndarray,
    right: np.ndarray,
) -> np.ndarray:
    """`_location_conflict` of up to `FEW_VALUES` ads (a service's check), pair by pair in plain
    Python: its columns' codes and word sets cost ~0.3 ms even for one pair."""
    city_words = [phrase_hash_set(city) for city in cities]
    place_words = [phrase_hash_set(location) for location in locations]

    def conflict(a: int, b: int) -> float:
        if not (isinstance(locations[a], str) and isinstance(locations[b], str)):
            return np.nan
        if not (isinstance(cities[a], str) and isinstance(cities[b], str)):
            regions = subdivisions[a], subdivisions[b]
            return float(all(isinstance(r, str) for r in regions) and regions[0] != regions[1])
        if cities[a] == cities[b]:
            return 0.0
        named = city_words[a] <= place_words[b] or city_words[b] <= place_words[a]
        return 0.0 if named else 1.0

    return np.array([conflict(a, b) for a, b in zip(left.tolist(), right.tolist())], dtype=float)


def _signature_agreement(
    signatures: np.ndarray, left: np.ndarray, right: np.ndarray, threads: int
) -> np.ndarray:
    """Share of equal MinHash values per pair."""
    return equal_counts(signatures, left, right, threads) / signatures.shape[1]


def _fields_of_pairs(
    fields: pd.DataFrame, left: np.ndarray, right: np.ndarray
) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """The fields of only the ads these pairs name, and the pairs numbered in them: field features
    then cost what the pairs need, not the batch (`shingle_sets.ads_of_pairs`). Up to `FEW_VALUES`
    ads (a service's check) are all kept: taking some costs more (~70 µs) than it saves."""
    if len(fields) <= FEW_VALUES:
        return fields, left, right
    ads, ads_left, ads_right = ads_of_pairs(left, right)
    if len(ads) == len(fields):
        return fields, left, right
    return fields.iloc[ads].reset_index(drop=True), ads_left, ads_right


def build_pair_features(
    inputs: PairInputs, left: np.ndarray, right: np.ndarray, threads: int = 1
) -> pd.DataFrame:
    """The `FEATURES` columns for pairs (left[p], right[p]) of ads in `inputs`; set overlaps and
    string similarities run on `threads` threads.

    Example:
        >>> # features = build_pair_features(inputs, np.array([0]), np.array([1]))
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    out = _text_features(inputs, left, right, threads)
    fields, field_left, field_right = _fields_of_pairs(inputs.fields, left, right)
    out.update(_field_features(fields, field_left, field_right, out, threads))
    # One float array the frame holds as it is: from a dict of columns pandas copies them into one
    # (~0.15 ms for a few pairs). Stacked as rows, each feature's values stay contiguous.
    return pd.DataFrame(np.stack([out[name] for name in FEATURES]).T, columns=_FEATURE_COLUMNS, copy=False)


def float_columns(features: pd.DataFrame, names: Sequence[str]) -> list[np.ndarray]:
    """`features[name].to_numpy(dtype=np.float64)` for each of `names`.

    A table of only float64 columns (as `build_pair_features` makes) gives views of its one array:
    a column of a frame costs ~10 µs, a selection of columns ~0.2 ms, even for a few pairs.
    """
    at = {name: i for i, name in enumerate(features.columns.tolist())}
    positions = [at.get(name) for name in names]
    if None in positions or len(at) < features.shape[1] or any(t != np.float64 for t in features.dtypes):
        return [features[name].to_numpy(dtype=np.float64) for name in names]
    values = features.to_numpy()
    return [values[:, i] for i in positions]


def _text_features(
    inputs: PairInputs, left: np.ndarray, right: np.ndarray, threads: int
) -> dict[str, np.ndarray]:
    """The features of the texts' shingle, word and mention sets, signatures and word counts."""
    out: dict[str, np.ndarray] = {}
    minhash = _signature_agreement(inputs.signatures, left, right, threads)
    core_empty = (inputs.core.sizes[left] == 0) | (inputs.core.sizes[right] == 0)
    out["minhash_core"] = np.where(core_empty, np.nan, minhash)
    out["jaccard_full"], out["containment_full_max"], out["containment_full_min"] = _overlap(
        inputs.full, left, right, threads
    )
    out["jaccard_core"], out["containment_core_max"], out["containment_core_min"] = _overlap(
        inputs.core, left, right, threads
    )
    numbers_jaccard, _, _ = _overlap(inputs.numbers, left, right, threads)
    out["numbers_jaccard"] = numbers_jaccard
    has_l, has_r = inputs.numbers.sizes[left] > 0, inputs.numbers.sizes[right] > 0
    out["numbers_only_one_side"] = (has_l != has_r).astype(float)
    words_l, words_r = inputs.words[left].astype(float), inputs.words[right].astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out["words_ratio"] = np.fmin(words_l, words_r) / np.fmax(words_l, words_r)
        share_l = inputs.core_words[left] / words_l
        share_r = inputs.core_words[right] / words_r
    out["log_words_min"] = np.log1p(np.fmin(words_l, words_r))
    out["log_words_max"] = np.log1p(np.fmax(words_l, words_r))
    out["core_share_min"] = np.fmin(share_l, share_r)
    out["core_share_max"] = np.fmax(share_l, share_r)
    # One text names the other's listing place, or the town that place lies in ("Filton, Bristol").
    out["place_named_in_text"] = np.fmax(
        named_in_other_text(inputs.place_words, inputs.mentions, left, right),
        named_in_other_text(inputs.area_words, inputs.mentions, left, right),
    )
    out["employer_named_in_text"] = named_in_other_text(inputs.employer_words, inputs.mentions, left, right)
    out["place_words_equal"] = _equal_nonempty_sets(inputs.place_words, left, right)
    same_numbers = (numbers_jaccard == 1) | ~(has_l | has_r)
    out["places_flexible"] = _places_flexible(inputs, left, right, same_numbers)
    no_text_left, no_text_right = inputs.words[left] == 0, inputs.words[right] == 0
    # (Against an ad without text only its title could name the word: no evidence.)
    own_places = (inputs.place_words, inputs.area_words)
    unnamed = words_other_ad_leaves_unnamed(inputs.title_words, own_places, inputs.mentions, left, right)
    unnamed[no_text_left | no_text_right] = np.nan
    out["title_words_unnamed"] = unnamed
    out["sides_without_text"] = no_text_left.astype(float) + no_text_right
    return out


def _equal_nonempty_sets(sets: ShingleSets, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per pair, whether both sides' sets hold the same values and are not empty."""
    shared = intersection_sizes(sets, left, right)
    sizes_left = sets.sizes[left]
    return (sizes_left > 0) & (shared == sizes_left) & (shared == sets.sizes[right])


def _places_flexible(
    inputs: PairInputs, left: np.ndarray, right: np.ndarray, same_numbers: np.ndarray
) -> np.ndarray:
    """Per pair, whether its listing towns need not be where the job is: both texts call the job
    remote or a choice of offices (`features.mentions.PLACE_FLEXIBLE_WORDS`), neither text names
    its own listing place, and both name the same number-bearing words (`same_numbers`, per pair).
    Deloitte's one text under many cities, a remote project filed under Glasgow and Manchester. An
    employer's template per town names its own town in the text or another salary: the
    definition's two vacancies, which the synthetic per-town copies are (one that keeps the old
    salary in its header and changes it further down has its numbers nested, not equal)."""
    flexible = both_texts_say_place_flexible(inputs.mentions, left, right)
    rows = np.flatnonzero(flexible)  # (a tenth of the pairs or fewer: the rest need no more sets)
    a, b = left[rows], right[rows]
    names_own_place = [
        intersection_sizes(inputs.place_words, side, side, other=inputs.mentions) > 0 for side in (a, b)
    ]
    flexible[rows] = ~(names_own_place[0] | names_own_place[1]) & same_numbers[rows]
    return flexible


def _field_features(
    fields: pd.DataFrame, left: np.ndarray, right: np.ndarray, text: dict[str, np.ndarray], threads: int
) -> dict[str, np.ndarray]:
    """The features of the normalised fields; `text` holds the pairs' `_text_features`, which the
    location and employer conflicts weigh."""
    out: dict[str, np.ndarray] = {}
    title, company = fields["title"], fields["company"]  # (read once: a frame's column costs ~10 µs)
    out["title_ratio"] = _string_similarity(title, left, right, fuzz.ratio, threads)
    out["title_token_set"] = _string_similarity(title, left, right, fuzz.token_set_ratio, threads)
    out["title_equal"] = _equal(fields["title_tokens"], left, right)
    out["title_level_differs"] = title_level_differs(title, left, right)
    titles = title_words(title, fields["location"])
    only_min, only_max = specific_words_only_one_side(titles, left, right)
    out["title_specific_only_min"], out["title_specific_only_max"] = only_min, only_max
    out["company_token_set"] = _string_similarity(company, left, right, fuzz.token_set_ratio, threads)
    out["company_equal"] = _equal(company, left, right)
    out["occupation_token_set"] = _string_similarity(
        fields["occupation"], left, right, fuzz.token_set_ratio, threads
    )
    # A listing city that the other ad's text names ("based in Bristol or London") is no conflict,
    # nor are two listing towns of a job both texts call remote or a choice of offices
    # (`_places_flexible`). Two districts of one town ("East London" / "North London": both
    # places' words are "London") are not linked by a text naming that town: it names its own.
    conflict = _location_conflict(fields, left, right)
    named = (text["place_named_in_text"] == 1) & ~text["place_words_equal"]
    conflict[(conflict == 1) & (named | text["places_flexible"])] = 0.0
    out["location_conflict"] = conflict
    out["place_equal"] = _equal(fields["city"], left, right)
    out["same_listing"] = _equal(fields["listing"], left, right)
    out["requisition_match"] = _shared_item(fields["refs"], left, right)
    out["salary_bands_disjoint"] = salary_bands_disjoint(fields["salary_band"], left, right)
    out["email_match"] = _shared_item(fields["emails"], left, right)
    out["phone_match"] = _shared_item(fields["phones"], left, right)
    out["domain_match"] = _shared_item(fields["domains"], left, right)
    shared_contact = np.fmax.reduce(
        [
            out[name]
            for name in ("email_match", "phone_match", "domain_match", "requisition_match", "same_listing")
        ]
    )
    out["employer_conflict"] = employer_conflict(
        company,
        left,
        right,
        out["company_token_set"],
        text["employer_named_in_text"],
        shared_contact,
        text["containment_core_max"],
    )
    posted = fields["posted_at"].to_numpy(dtype="datetime64[ns]")
    gap = np.abs((posted[left] - posted[right]).astype("timedelta64[h]").astype(float)) / 24.0
    gap[np.isnat(posted[left]) | np.isnat(posted[right])] = np.nan
    out["date_gap_days"] = gap
    out["same_source"] = _equal(fields["source"], left, right)
    return out


# +1: a higher value can only make a duplicate more likely (keeps the model sane on data unlike
# its training data); 0: no constraint.
INCREASING_FEATURES = {
    "minhash_core",
    "jaccard_full",
    "containment_full_max",
    "containment_full_min",
    "jaccard_core",
    "containment_core_max",
    "containment_core_min",
    "numbers_jaccard",
    "title_ratio",
    "title_token_set",
    "title_equal",
    "company_token_set",
    "company_equal",
    "email_match",
    "phone_match",
    "domain_match",
    "requisition_match",
    "same_listing",
    "place_named_in_text",
}
# -1: a higher value can only make a duplicate less likely.
DECREASING_FEATURES = {
    "title_level_differs",
    "title_specific_only_min",
    "title_specific_only_max",
    "location_conflict",
    "employer_conflict",
}


def monotone_constraints(feature_names: list[str]) -> list[int]:
    """LightGBM `monotone_constraints` for these features, in order."""
    return [
        1 if name in INCREASING_FEATURES else -1 if name in DECREASING_FEATURES else 0
        for name in feature_names
    ]
