"""End-to-end evaluation metrics over labelled pairs and groups.

A labelled duplicate that candidate generation never proposed has score 0 and counts as a false
negative: recall here is the recall of the whole system, not of the classifier alone.

Example:
    >>> m = pair_metrics(np.array([1, 1, 0]), np.array([1, 0, 0]), np.array([0.9, 0.1, 0.2]))
    >>> m["precision"], m["recall"]
    (1.0, 0.5)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import binomtest
from sklearn.metrics import average_precision_score


def pair_metrics(truth: np.ndarray, predicted: np.ndarray, scores: np.ndarray) -> dict[str, float]:
    """Precision, recall, F1 and PR-AUC (average precision) of pair decisions."""
    truth = np.asarray(truth, dtype=int)
    predicted = np.asarray(predicted, dtype=int)
    tp = int(((truth == 1) & (predicted == 1)).sum())
    fp = int(((truth == 0) & (predicted == 1)).sum())
    fn = int(((truth == 1) & (predicted == 0)).sum())
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    pr_auc = float(average_precision_score(truth, scores)) if 0 < truth.sum() < len(truth) else float("nan")
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "pr_auc": pr_auc,
        "true_positives": tp,
        "false_positives": fp,
        "false_negatives": fn,
    }


def bcubed(true_groups: pd.Series, predicted_groups: pd.Series) -> dict[str, float]:
    """B-cubed precision and recall of a clustering, over the ads present in `true_groups`.

    Both Series are indexed by ad id; values are group ids.
    """
    frame = pd.DataFrame({"truth": true_groups}).join(predicted_groups.rename("pred"), how="inner")
    if frame.empty:
        return {"bcubed_precision": float("nan"), "bcubed_recall": float("nan")}
    both = frame.groupby(["truth", "pred"]).size().rename("n").reset_index()
    truth_sizes = frame.groupby("truth").size()
    pred_sizes = frame.groupby("pred").size()
    # Each of the n ads in cell (t, p) has precision n/|p| and recall n/|t|.
    precision = (both["n"] ** 2 / both["pred"].map(pred_sizes)).sum() / len(frame)
    recall = (both["n"] ** 2 / both["truth"].map(truth_sizes)).sum() / len(frame)
    return {"bcubed_precision": float(precision), "bcubed_recall": float(recall)}


def reduction_ratio(candidate_pairs: int, n_ads: int) -> float:
    """1 − candidates / all possible pairs: the share of comparisons blocking saved."""
    possible = n_ads * (n_ads - 1) / 2
    return 1.0 - candidate_pairs / possible if possible else 0.0


def estimated_precision(labels: np.ndarray, confidence: float = 0.95) -> dict[str, float]:
    """Precision of accepted pairs estimated from a uniform sample of them judged by a reader
    (1 = true duplicate), with its Wilson score interval (`scipy.stats.binomtest`; sound for small
    samples and for precision near 1, where the normal approximation's interval would pass 1).

    Example:
        >>> s = estimated_precision(np.array([1] * 190 + [0] * 10))
        >>> round(s["precision"], 3), round(s["low"], 3), round(s["high"], 3)
        (0.95, 0.91, 0.973)
    """
    labels = np.asarray(labels, dtype=int)
    n, k = len(labels), int(labels.sum())
    if n == 0:
        return {
            "sample": 0,
            "duplicates": 0,
            "precision": float("nan"),
            "low": float("nan"),
            "high": float("nan"),
        }
    interval = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return {
        "sample": n,
        "duplicates": k,
        "precision": k / n,
        "low": float(interval.low),
        "high": float(interval.high),
    }
