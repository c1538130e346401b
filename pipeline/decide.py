"""Stage 6, grouping: the one implementation of how accepted pairs become groups, which the
embedded engine (`pipeline.engine`), the index (`pipeline.index.grouping`) and Spark
(`pipeline.spark_engine.graph`) all call. A pair itself is decided by
`Deduplicator.predict_proba` (the classifier's score, then the rules of `models.rules`) and the
model's threshold; the steps here and every value they read come from a `DecisionPolicy`.

Example:
    >>> edges = pd.DataFrame({"i": [0], "j": [1], "probability": [0.9]})
    >>> fields = pd.DataFrame({"company": ["acme"] * 3, "title": ["analyst"] * 3, "city": ["leeds"] * 3,
    ...                        "listing": [None] * 3})
    >>> decide_groups(3, edges, lambda i, j: np.zeros(len(i)), 0.5, fields, DecisionPolicy(),
    ...               links=edges.iloc[:0, :2]).tolist()
    [0, 0, 1]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.models.policy import DecisionPolicy
from jobdedup.pipeline.employer_guard import split_mixed_employers
from jobdedup.pipeline.group import GroupReport, PairScorer, group_ads, grouping_units


def employer_links(accepted: pd.DataFrame, features: pd.DataFrame) -> pd.DataFrame:
    """The accepted pairs (`i`, `j`) whose company names differ but are linked by evidence (an
    agency ad naming its client, a shared contact or requisition number); `features` row k is
    pair k of `accepted`."""
    differ = (features["company_equal"].to_numpy() == 0) & (features["employer_conflict"].to_numpy() == 0)
    return accepted.loc[differ, ["i", "j"]].reset_index(drop=True)


def decide_groups(
    n_ads: int,
    edges: pd.DataFrame,
    score: PairScorer,
    threshold: float,
    fields: pd.DataFrame,
    policy: DecisionPolicy,
    links: pd.DataFrame,
    guard_edges: pd.DataFrame | None = None,
    report: GroupReport | None = None,
) -> np.ndarray:
    """Group label of each of `n_ads` ads.

    `edges` (`i`, `j`, `probability`) are the pairs to cluster: the accepted pairs, and for the
    index also the inner pairs of the old groups a batch touches. `score(i, j)` scores any other
    pair the average-linkage guard needs. The employer guard sees `guard_edges` (default `edges`)
    and the evidence `links` among them (`employer_links`). `fields` are the ads' normalised
    fields (`company`, `title`, `city`). The guard's splits are counted in `report`.
    """
    report = report if report is not None else GroupReport()
    units = grouping_units(fields, edges, policy.copy_probability) if policy.copy_units else None
    labels = group_ads(n_ads, edges, score, threshold, policy.max_group_size_exact, report, units=units)
    if policy.employer_guard:
        guarded = edges if guard_edges is None else guard_edges
        labels, report.employer_splits = split_mixed_employers(labels, fields["company"], guarded, links)
    return labels
