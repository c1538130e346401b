"""Duplicate types of accepted pairs, as in Eurostat's 2023 online-job-ad deduplication challenge.

The classifier decides *whether* two ads are the same vacancy; these documented rules over the
pair features (`features.pairs.FEATURES`) say *how* they are duplicates. Rules are tried in this
order and the first that holds gives the type:

1. **PARTIAL** — the same job, but a defining detail differs or one ad lacks information:
   `location_conflict == 1` (two different specific places), or `title_level_differs == 1`
   (another seniority word in the title), or `words_ratio < 0.5` (one text has less than half the
   words of the other: a snippet or a leading part).
2. **TEMPORAL** — the same vacancy re-advertised at a clearly different time:
   `date_gap_days > 30`. Thirty days is the spread of one posting wave across sites (the bundled
   synthetic reposts move `posted_at` by up to 30 days); a gap beyond it is a re-advertisement.
3. **FULL** — same text and metadata: `jaccard_full >= 0.98` and `words_ratio >= 0.98` on the
   cleaned text (case, HTML and Markdown do not count), and no field that is known on both sides
   differs: `title_equal != 0`, `company_equal != 0` (a missing field, NaN, is no difference).
4. **SEMANTIC** — everything else: the same vacancy reworded, reformatted, shortened a little,
   or with blurbs and footers added or dropped.

Example:
    >>> import pandas as pd
    >>> row = {name: float("nan") for name in ["location_conflict", "title_level_differs",
    ...        "date_gap_days", "title_equal", "company_equal"]}
    >>> assign_dup_types(pd.DataFrame([{**row, "words_ratio": 1.0, "jaccard_full": 1.0}])).tolist()
    ['FULL']
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from features.pairs import PairInputs, build_pair_features

DUP_TYPES: tuple[str, ...] = ("FULL", "SEMANTIC", "TEMPORAL", "PARTIAL")
TEMPORAL_GAP_DAYS = 30.0
FULL_MIN_JACCARD = 0.98
FULL_MIN_WORDS_RATIO = 0.98
PARTIAL_MAX_WORDS_RATIO = 0.5


def _is(values: pd.Series, target: float) -> np.ndarray:
    return values.to_numpy(dtype=float) == target


def _at_least(values: pd.Series, bound: float) -> np.ndarray:
    return values.to_numpy(dtype=float) >= bound  # NaN compares False


def assign_dup_types(features: pd.DataFrame) -> np.ndarray:
    """The duplicate type of each pair (object array of `DUP_TYPES` names), by the module's rules.

    Apply it to pairs already accepted as duplicates; the rules do not judge whether they are.

    Example:
        >>> # types = assign_dup_types(build_pair_features(inputs, left, right))
    """
    n = len(features)
    if n == 0:
        return np.zeros(0, dtype=object)
    gap = features["date_gap_days"].to_numpy(dtype=float)
    words_ratio = features["words_ratio"].to_numpy(dtype=float)
    partial = (
        _is(features["location_conflict"], 1.0)
        | _is(features["title_level_differs"], 1.0)
        | (words_ratio < PARTIAL_MAX_WORDS_RATIO)
    )
    temporal = gap > TEMPORAL_GAP_DAYS
    full = (
        _at_least(features["jaccard_full"], FULL_MIN_JACCARD)
        & (words_ratio >= FULL_MIN_WORDS_RATIO)
        & ~_is(features["title_equal"], 0.0)
        & ~_is(features["company_equal"], 0.0)
    )
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
