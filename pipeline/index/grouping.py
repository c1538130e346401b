"""A batch's groups: its new ads with the whole old groups they touch, anti-chaining and employer guards.

Example:
    >>> # labels, inner_scored = group_batch(model, inputs, (left, right, p, features), accepted, ...)
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from jobdedup.features.pairs import PairInputs, build_pair_features
from jobdedup.pipeline.decide import decide_groups, employer_links
from jobdedup.pipeline.group import GroupReport
from jobdedup.pipeline.index.pairs import inner_pairs

ScoredPairs = tuple[np.ndarray, np.ndarray, np.ndarray, pd.DataFrame]
"""Candidate pairs (`left`, `right`: rows of the inputs), their probabilities and features."""


def group_batch(
    model: Any,
    inputs: PairInputs,
    scored: ScoredPairs,
    accepted: np.ndarray,
    old_gid: np.ndarray,
    in_touched: np.ndarray,
    report: GroupReport,
) -> tuple[np.ndarray, int]:
    """Group labels of every row of `inputs` (the batch's new ads, then the old ads read back, whose
    groups are `old_gid`) and how many inner pairs of old groups were scored.

    `decide_groups` clusters the accepted pairs plus the inner pairs of the touched old groups
    (`in_touched`), passed whole, so the average-linkage guard sees the whole group a new ad wants
    to join; the employer guard then sees what it sees in `dedup`: the accepted pairs (an old
    group's inner pairs only where accepted) and the evidence links among them.
    """
    left, right, probability, features = scored
    n = len(inputs.words) - len(old_gid)
    inner_left, inner_right = inner_pairs(old_gid, in_touched)
    inner_left, inner_right = inner_left + n, inner_right + n
    inner_features = build_pair_features(inputs, inner_left, inner_right) if len(inner_left) else None
    inner_probability = (
        model.predict_proba(inner_features)[:, 1] if inner_features is not None else np.zeros(0)
    )
    edges = pd.DataFrame(
        {
            "i": np.concatenate([left[accepted], inner_left]),
            "j": np.concatenate([right[accepted], inner_right]),
            "probability": np.concatenate([probability[accepted], inner_probability]),
        }
    )

    def score(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if len(a) == 0:
            return np.zeros(0)
        return model.predict_proba(build_pair_features(inputs, a, b))[:, 1]

    inner_accepted = inner_probability >= model.threshold_
    guard_edges = pd.concat(
        [edges.iloc[: int(accepted.sum())], edges.iloc[int(accepted.sum()) :][inner_accepted]],
        ignore_index=True,
    )
    guard_features = features[accepted]
    if inner_features is not None:
        guard_features = pd.concat([guard_features, inner_features[inner_accepted]], ignore_index=True)
    labels = decide_groups(
        len(inputs.words),
        edges,
        score,
        model.threshold_,
        inputs.fields,
        model.policy,
        links=employer_links(guard_edges, guard_features),
        guard_edges=guard_edges,
        report=report,
    )
    return labels, len(inner_left)
