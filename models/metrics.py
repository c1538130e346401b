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


def stratified_estimate(
    labelled: pd.DataFrame, pool_sizes: pd.Series, resamples: int = 2000, seed: int = 0
) -> dict[str, float]:
    """Precision and recall of a model's groups over a pool of pairs cut into strata, each
    sampled uniformly and judged by readers (`labelling/draw_sealed.py`).

    Every labelled pair stands for `pool_size / drawn` pool pairs of its stratum. Precision is
    the weighted share of duplicates among labelled pairs the model puts in one group; recall the
    weighted share of labelled duplicates it puts in one group. Intervals (95 %) are percentiles of
    a bootstrap that resamples each stratum on its own (fixed seed: the same figures every run).

    Args:
        labelled: one row per decided pair: `stratum`, `label` (0 / 1), `grouped` (bool: in one
            group of the model scored).
        pool_sizes: pool pairs per stratum (index = stratum name).

    Example:
        >>> labelled = pd.DataFrame({"stratum": ["g"] * 4 + ["a"] * 4,
        ...     "label": [1, 1, 1, 0, 1, 0, 0, 0], "grouped": [True] * 4 + [False] * 4})
        >>> e = stratified_estimate(labelled, pd.Series({"g": 8, "a": 40}))
        >>> round(e["precision"], 3), round(e["recall"], 3)
        (0.75, 0.375)
    """
    rng = np.random.default_rng(seed)
    parts = []
    for stratum, part in labelled.groupby("stratum", sort=True):
        weight = float(pool_sizes[stratum]) / len(part)
        parts.append((part["label"].to_numpy(dtype=float), part["grouped"].to_numpy(dtype=bool), weight))

    def figures(chosen: list[tuple[np.ndarray, np.ndarray, float]]) -> tuple[float, float]:
        grouped = sum(w * g.sum() for _, g, w in chosen)
        true_grouped = sum(w * (y * g).sum() for y, g, w in chosen)
        duplicates = sum(w * y.sum() for y, _, w in chosen)
        precision = float(true_grouped / grouped) if grouped else float("nan")
        recall = float(true_grouped / duplicates) if duplicates else float("nan")
        return precision, recall

    precision, recall = figures(parts)
    draws = []
    for _ in range(resamples):
        resampled = []
        for y, g, w in parts:
            pick = rng.integers(0, len(y), len(y))
            resampled.append((y[pick], g[pick], w))
        draws.append(figures(resampled))
    low = np.nanpercentile(np.array(draws), 2.5, axis=0)
    high = np.nanpercentile(np.array(draws), 97.5, axis=0)
    grouped_labelled = labelled[labelled["grouped"].astype(bool)]
    return {
        "pairs": len(labelled),
        "grouped_pairs": len(grouped_labelled),
        "precision": precision,
        "precision_low": float(low[0]),
        "precision_high": float(high[0]),
        "recall": recall,
        "recall_low": float(low[1]),
        "recall_high": float(high[1]),
    }
