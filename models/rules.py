"""Decision rules over pair features that the classifier's score cannot overrule.

The duplicate definition (`DUPLICATE_DEFINITION.md`) states some things outright; learnt from a
few thousand labels, a classifier can still score such pairs wrongly (one requisition filed under
two cities looks like a per-town template). Each rule names itself; the first that holds decides.
Every rule here but `no_shared_text` earns its place in leave-one-corpus-out over all labelled
corpora, three seeds (`benchmarks/ablation.py`, `docs/ablation.md`); `no_shared_text` costs F1
within the seeds' spread and states the definition's "only boilerplate shared". Five rules that
earned nothing (different employers,
different requisitions, fields-only mismatch, titles naming other places, posted far apart) were
removed in issue 50; the classifier's features already decide those pairs.

A pair scraped from one listing is accepted before anything else; then the rules that refuse a
pair cap its probability at the policy's `rule_cap`, below any decision threshold:

- **title_word_unnamed** — one title has a specific word the other lacks (a team, product,
  specialism or seniority: `title_specific_only_max >= 1`) and a word of one title is named
  nowhere in the other ad, neither its title nor its text (`title_words_unnamed >= 1`): "Data
  Engineer, Payments" against a generalist "Data Engineer" ad that never says payments, "Accounting
  Canada Summer Student Job" against "Canada Summer Student Job". On the natural labels the
  classifier accepted 17 such non-duplicates and no such duplicate. Checked after the accepting
  rules (a retitled re-scrape of one listing or requisition).
- **different_salary_bands** — both texts name a yearly salary band in one currency and the bands
  do not overlap (`salary_bands_disjoint == 1`; `features.salaries`): "up to £120,000 plus car
  allowance" against "up to £90,000" from one agency are two openings. On the natural labels, of
  the 79 labelled pairs with disjoint bands 75 were two vacancies; out of fold, the classifier had
  accepted 8 of those and 3 of the 4 duplicates. Checked after the accepting rules (one listing
  re-scraped after a pay change).
- **no_shared_text** — both ads carry a substantive text (at least `substantive_words` words and
  some text that is not corpus boilerplate) and the smaller core text shares less than
  `nothing_shared` of its shingles with the other (`containment_core_max`), with no e-mail or phone
  in common: beyond boilerplate the texts share nothing, so they describe two jobs (a recruiter's
  28 same-title ads of one day, each a different team's text; a company's "who is hiring" posts
  listing other roles). Checked after the accepting rules (a listing or requisition says so).

The rules that accept a pair raise its probability to at least the policy's `rule_floor`:

- **same_listing** — both ads were scraped from one job-board listing (`same_listing == 1`: the
  same URL, tracking parameters aside): a re-scrape, whatever else the scrapes changed.
- **same_requisition** — both ads name the same requisition number (`requisition_match == 1`),
  the employers do not conflict and the titles name the same level: one opening, also when it is
  filed under several cities.

Example:
    >>> features = pd.DataFrame({"same_listing": [1.0, np.nan, np.nan, np.nan],
    ...     "employer_conflict": [0.0] * 4, "requisition_match": [np.nan] * 4, "title_level_differs": [0.0] * 4,
    ...     "title_specific_only_max": [0.0] * 4, "title_words_unnamed": [0.0] * 4,
    ...     "salary_bands_disjoint": [1.0, 1.0, np.nan, np.nan], "containment_core_max": [0.0, 0.9, 0.0, 0.9],
    ...     "log_words_min": [5.0] * 4, "email_match": [np.nan] * 4, "phone_match": [np.nan] * 4})
    >>> rule_names(features).tolist()
    ['same_listing', 'different_salary_bands', 'no_shared_text', None]
    >>> apply_rules(np.array([0.5, 0.9, 0.9, 0.7]), features).tolist()
    [0.99, 0.01, 0.01, 0.7]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.features.pairs import float_columns
from jobdedup.models.policy import ACCEPTING_RULES, CHECK_ORDER, REFUSING_RULES, DecisionPolicy

DEFAULT_POLICY = DecisionPolicy()

_RULE_FEATURES = (
    "employer_conflict",
    "requisition_match",
    "same_listing",
    "title_level_differs",
    "title_specific_only_max",
    "title_words_unnamed",
    "salary_bands_disjoint",
    "containment_core_max",
    "log_words_min",
    "email_match",
    "phone_match",
)
"""The features the rules read."""


def rule_names(features: pd.DataFrame, policy: DecisionPolicy = DEFAULT_POLICY) -> np.ndarray:
    """Per pair, the first of the `policy`'s rules that holds (object array of names; None where
    none holds). Leaving a rule out is how `benchmarks.ablation` measures what it earns."""
    if not len(features):
        return np.zeros(0, dtype=object)
    value = dict(zip(_RULE_FEATURES, float_columns(features, _RULE_FEATURES)))
    listing = value["same_listing"] == 1
    same = (
        (value["requisition_match"] == 1)
        & (value["employer_conflict"] != 1)
        & (value["title_level_differs"] != 1)
    )
    unnamed_word = (value["title_specific_only_max"] >= 1) & (value["title_words_unnamed"] >= 1)
    salaries_apart = value["salary_bands_disjoint"] == 1
    substantive = value["log_words_min"] >= np.log1p(policy.substantive_words)
    contact_link = (value["email_match"] == 1) | (value["phone_match"] == 1)
    nothing_shared = substantive & (value["containment_core_max"] < policy.nothing_shared) & ~contact_link
    held = [listing, same, unnamed_word, salaries_apart, nothing_shared]  # (in CHECK_ORDER)
    if len(policy.rules) < len(CHECK_ORDER):
        held = [
            condition if name in policy.rules else np.zeros_like(condition)
            for condition, name in zip(held, CHECK_ORDER)
        ]
    # numpy's stubs take no None default (nor string choices) for np.select.
    return np.select(held, CHECK_ORDER, default=None).astype(object)  # type: ignore[call-overload]


def apply_rules(
    probability: np.ndarray, features: pd.DataFrame, policy: DecisionPolicy = DEFAULT_POLICY
) -> np.ndarray:
    """`probability` capped at the policy's `rule_cap` where a refusing rule holds, raised to its
    `rule_floor` where an accepting one does (of the policy's rules)."""
    adjusted = np.asarray(probability, dtype=float).copy()
    names = rule_names(features, policy)
    refused = np.isin(names, REFUSING_RULES)
    accepted = np.isin(names, ACCEPTING_RULES)
    adjusted[refused] = np.minimum(adjusted[refused], policy.rule_cap)
    adjusted[accepted] = np.maximum(adjusted[accepted], policy.rule_floor)
    return adjusted
