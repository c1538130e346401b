"""Decision rules over pair features that the classifier's score cannot overrule.

The duplicate definition (`DUPLICATE_DEFINITION.md`) states some things outright; learnt from a
few thousand labels, a classifier can still score such pairs high (a generic title in one city at
two employers looks like a repost when only fields are known). Each rule caps the probability of
the pairs it holds for at `RULE_CAP`, below any decision threshold, and names itself:

- **different_employers** — two known, clearly different employers with nothing linking them
  (`employer_conflict == 1`; see `features.employers` for spelling variants and agency links).
- **fields_only_mismatch** — one side has no description, and employer, title, place and date do
  not all agree: the employers are not both known and the same (`employer_conflict != 0`), the
  titles differ (`title_token_set < 0.7`), the places conflict (`location_conflict == 1`), or the
  ads were posted more than `FIELDS_ONLY_MAX_GAP_DAYS` apart. Title and place alone never decide.

Example:
    >>> features = pd.DataFrame({"employer_conflict": [1.0, 0.0], "sides_without_text": [0.0, 0.0],
    ...     "title_token_set": [1.0, 1.0], "location_conflict": [0.0, 0.0], "date_gap_days": [1.0, 1.0]})
    >>> rule_names(features).tolist()
    ['different_employers', None]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

RULE_CAP = 0.01
"""Probability given to pairs a rule holds for (at most their score)."""
FIELDS_ONLY_MAX_GAP_DAYS = 62.0
FIELDS_ONLY_MIN_TITLE_SIMILARITY = 0.7
RULES = ("different_employers", "fields_only_mismatch")


def _values(features: pd.DataFrame, name: str) -> np.ndarray:
    return features[name].to_numpy(dtype=float)


def rule_names(features: pd.DataFrame) -> np.ndarray:
    """Per pair, the first rule that holds (object array of names; None where none holds)."""
    conflict = _values(features, "employer_conflict")
    fields_only = _values(features, "sides_without_text") > 0
    mismatch = fields_only & (
        (conflict != 0)  # NaN (an employer unknown) is no agreement either
        | (_values(features, "title_token_set") < FIELDS_ONLY_MIN_TITLE_SIMILARITY)
        | (_values(features, "location_conflict") == 1)
        | (_values(features, "date_gap_days") > FIELDS_ONLY_MAX_GAP_DAYS)
    )
    held = [conflict == 1, mismatch]
    return np.select(held, RULES, default=None).astype(object) if len(features) else np.zeros(0, object)


def apply_rules(probability: np.ndarray, features: pd.DataFrame) -> np.ndarray:
    """`probability` capped at `RULE_CAP` where a rule holds."""
    capped = np.asarray(probability, dtype=float).copy()
    held = pd.notna(rule_names(features))
    capped[held] = np.minimum(capped[held], RULE_CAP)
    return capped
