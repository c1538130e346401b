"""Duplicate types of accepted pairs, as DUPLICATE_DEFINITION.md and Eurostat's 2023 online-job-ad
deduplication challenge define them.

The classifier decides *whether* two ads are the same vacancy; these documented rules over the
pair features (`features.pairs.FEATURES`) say *how* they are duplicates. Rules are tried in this
order and the first that holds gives the type:

1. **PARTIAL** — one ad carries only part of the information: exactly one side has a description
   (a title-only or fields-only listing against a full ad), or one text has less than half the
   words of the other (`words_ratio < 0.5`: a snippet, a preview, a leading part).
2. **TEMPORAL** — (nearly) the same ad posted clearly apart: `date_gap_days > 14` and the text is
   the same (see FULL's text test) or both are fields-only rows with the same fields.
3. **FULL** — text and metadata essentially identical: the same text (`jaccard_full >= 0.85` or
   `jaccard_core >= 0.9`, with `words_ratio >= 0.9`; case, HTML, Markdown and boilerplate blocks do
   not count) and the same title, employer and place, case, punctuation and legal forms aside
   (`title_ratio >= 0.95`, `company_equal != 0`, `place_equal != 0`; a field missing on a side is no
   difference; a title or employer name with words added or dropped, "Backend Engineer" / "Product
   Engineer (Backend-biased)", "Valvoline Global" / "Valvoline Global Operations", is metadata
   written differently: SEMANTIC); or two scrapes of one listing whose texts differ only by the page
   around them (`same_listing == 1`, `jaccard_full >= 0.7`); or two fields-only rows with the same
   title, employer and place.
4. **SEMANTIC** — everything else: the same vacancy reworded, restructured, moderately shortened,
   blocks added or dropped, or metadata written differently (another title wording, another name
   of the employer, another listing city of a multi-city requisition).

On the 742 hand-judged natural duplicates within one corpus the rules give the readers' type for 91 % of pairs (89 %
when titles and employers were compared as word sets, which call a title with words added the same;
the earlier rules: 72 %); FULL and SEMANTIC are where readers and rules part, on texts that differ by
a block or a field written another way (`benchmarks.quality` reports per-type precision and recall
leave-one-corpus-out).

Example:
    >>> import pandas as pd
    >>> same = {"sides_without_text": 0.0, "words_ratio": 1.0, "jaccard_full": 1.0, "jaccard_core": 1.0,
    ...         "title_ratio": 1.0, "company_equal": 1.0, "place_equal": 1.0, "same_listing": 0.0,
    ...         "date_gap_days": 1.0}
    >>> assign_dup_types(pd.DataFrame([same, {**same, "date_gap_days": 40.0}, {**same, "words_ratio": 0.2},
    ...                                {**same, "place_equal": 0.0}])).tolist()
    ['FULL', 'TEMPORAL', 'PARTIAL', 'SEMANTIC']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from jobdedup.features.pairs import PairInputs, build_pair_features

DUP_TYPES: tuple[str, ...] = ("FULL", "SEMANTIC", "TEMPORAL", "PARTIAL")
TEMPORAL_GAP_DAYS = 14.0
FULL_MIN_JACCARD = 0.85
FULL_MIN_CORE_JACCARD = 0.9
FULL_MIN_WORDS_RATIO = 0.9
FULL_MIN_TITLE_SIMILARITY = 0.95
SAME_LISTING_MIN_JACCARD = 0.7
PARTIAL_MAX_WORDS_RATIO = 0.5


def _values(features: pd.DataFrame, name: str) -> np.ndarray:
    return features[name].to_numpy(dtype=float)


def assign_dup_types(features: pd.DataFrame) -> np.ndarray:
    """The duplicate type of each pair (object array of `DUP_TYPES` names), by the module's rules.

    Apply it to pairs already accepted as duplicates; the rules do not judge whether they are.

    Example:
        >>> # types = assign_dup_types(build_pair_features(inputs, left, right))
    """
    if len(features) == 0:
        return np.zeros(0, dtype=object)
    without_text = _values(features, "sides_without_text")
    words_ratio = _values(features, "words_ratio")
    same_text = (
        (_values(features, "jaccard_full") >= FULL_MIN_JACCARD)
        | (_values(features, "jaccard_core") >= FULL_MIN_CORE_JACCARD)
    ) & (words_ratio >= FULL_MIN_WORDS_RATIO)
    title = np.nan_to_num(_values(features, "title_ratio"), nan=1.0)
    same_company = _values(features, "company_equal") != 0  # NaN (an employer unknown) is no difference
    same_place = _values(features, "place_equal") != 0
    same_fields = (title >= FULL_MIN_TITLE_SIMILARITY) & same_company & same_place
    fields_only_alike = (without_text == 2) & same_fields
    partial = (without_text == 1) | (words_ratio < PARTIAL_MAX_WORDS_RATIO)
    temporal = (_values(features, "date_gap_days") > TEMPORAL_GAP_DAYS) & (same_text | fields_only_alike)
    one_listing = (_values(features, "same_listing") == 1) & (
        _values(features, "jaccard_full") >= SAME_LISTING_MIN_JACCARD
    )
    full = (same_text & same_fields) | one_listing | fields_only_alike
    return np.select([partial, temporal, full], ["PARTIAL", "TEMPORAL", "FULL"], default="SEMANTIC").astype(
        object
    )


def dup_types_of_pairs(inputs: PairInputs, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Features and duplicate types of pairs (left[p], right[p]) of a prepared batch."""
    if len(left) == 0:
        return np.zeros(0, dtype=object)
    return assign_dup_types(build_pair_features(inputs, np.asarray(left), np.asarray(right)))


def per_type_metrics(
    truth: np.ndarray, truth_type: np.ndarray, predicted: np.ndarray, predicted_type: np.ndarray
) -> dict[str, dict[str, Any]]:
    """Precision and recall per duplicate type over labelled pairs.

    Args:
        truth: 1 = labelled duplicate, 0 = labelled different.
        truth_type: the labelled type of each duplicate (None / NaN where unknown or not a duplicate).
        predicted: 1 where the pipeline calls the pair a duplicate.
        predicted_type: the type the rules gave each predicted duplicate.

    For type T: `recall` = share of labelled T duplicates that were found *and* typed T
    (`found` counts those found at all, whatever type); `precision` = share of pairs typed T
    that are labelled T duplicates, among pairs whose label tells (labelled different, or a
    labelled duplicate with a known type).

    Example:
        >>> per_type_metrics(np.array([1, 0]), np.array(["FULL", None], dtype=object),
        ...                  np.array([1, 1]), np.array(["FULL", "FULL"], dtype=object))["FULL"]["precision"]
        0.5
    """
    truth = np.asarray(truth, dtype=int)
    predicted = np.asarray(predicted, dtype=int)
    truth_type = pd.Series(truth_type, dtype=object).where(truth == 1).to_numpy()
    predicted_type = pd.Series(predicted_type, dtype=object).where(predicted == 1).to_numpy()
    informative = (truth == 0) | pd.notna(truth_type)
    out: dict[str, dict[str, Any]] = {}
    for name in DUP_TYPES:
        labelled = truth_type == name
        typed = (predicted_type == name) & informative
        correct = labelled & (predicted_type == name)
        found = labelled & (predicted == 1)
        out[name] = {
            "labelled": int(labelled.sum()),
            "found": int(found.sum()),
            "typed": int(typed.sum()),
            "correct": int(correct.sum()),
            "precision": float(correct.sum() / typed.sum()) if typed.sum() else float("nan"),
            "recall": float(correct.sum() / labelled.sum()) if labelled.sum() else float("nan"),
        }
    return out
