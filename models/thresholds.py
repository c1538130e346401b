"""Decision thresholds from validation scores.

Example:
    >>> threshold_for_precision(np.array([0.9, 0.8, 0.3, 0.2]), np.array([1, 1, 0, 1]), 0.99)
    0.8
"""

from __future__ import annotations

import numpy as np

FALLBACK_THRESHOLD = 0.5


def threshold_for_precision(
    scores: np.ndarray, labels: np.ndarray, target_precision: float, weights: np.ndarray | None = None
) -> float:
    """Lowest score threshold whose precision on (scores, labels) is at least the target.

    Among thresholds reaching the target, the lowest maximises recall. If none does, the
    threshold with the best precision is returned; with no positives at all, 0.5. With `weights`,
    each pair counts with its weight.
    """
    scores = np.asarray(scores, dtype=float)
    labels = np.asarray(labels, dtype=int)
    weights = np.ones(len(scores)) if weights is None else np.asarray(weights, dtype=float)
    if labels.sum() == 0 or len(scores) == 0:
        return FALLBACK_THRESHOLD
    order = np.argsort(-scores, kind="stable")
    sorted_scores = scores[order]
    true_pos = np.cumsum(labels[order] * weights[order])
    predicted = np.cumsum(weights[order])
    # Only cut between distinct scores: the last index of each run of equal scores.
    last_of_run = np.append(sorted_scores[1:] != sorted_scores[:-1], True)
    precision = true_pos / predicted
    candidates = np.flatnonzero(last_of_run & (precision >= target_precision))
    if len(candidates) == 0:
        cut = np.flatnonzero(last_of_run)[np.argmax(precision[last_of_run])]
    else:
        cut = candidates[-1]
    return float(sorted_scores[cut])
