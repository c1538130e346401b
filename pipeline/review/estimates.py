"""Precision live: the pairs to show in the sampling modes and the running estimate.

The "accepted" mode shows a uniform sample of the pairs the dedup run accepts (every pair of ads in
one group: `label_loop.sample_accepted`, drawn once with the model's seed, so reloading the page
shows the same sample and answered pairs are skipped); the "uncertain" mode shows candidate pairs
nearest the threshold (`label_loop.uncertain_pairs`, as `jobdedup label` does). The estimate is
`engine.sample_estimates` over the labels file, the figures `jobdedup evaluate` prints (it calls
`models.metrics.estimated_precision`: Wilson 95 % interval).

Example:
    >>> # precision_estimate(store.table(), data)["estimated_precision"]
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jobdedup.pipeline.label_loop import sample_accepted, uncertain_pairs, with_probabilities

if TYPE_CHECKING:
    from jobdedup.pipeline.review.data import ReviewData

MODES = ("accepted", "uncertain")


def queue(data: ReviewData, mode: str, size: int, answered: set[frozenset[str]]) -> pd.DataFrame:
    """The pairs of a mode, in showing order: `ad_id_a`, `ad_id_b`, `probability`.

    "accepted": the same uniform sample each time (answered pairs stay in it: they are part of the
    sample); "uncertain": the unanswered candidate pairs nearest the threshold.
    """
    if mode == "accepted":
        drawn = sample_accepted(data.groups, size, seed=data.model.config.seed, known=set())
        return with_probabilities(drawn, data.pairs)
    if mode == "uncertain":
        nearest = uncertain_pairs(data.pairs, float(data.model.threshold_), answered)
        return nearest.head(size)[["ad_id_a", "ad_id_b", "probability"]]
    raise ValueError(f"unknown mode {mode!r}; one of {MODES}")


def precision_estimate(labels: pd.DataFrame, data: ReviewData) -> dict[str, Any]:
    """`jobdedup evaluate`'s estimate of the accepted pairs' precision from the labels' `accepted`
    sample, against this dedup run's groups; `{}` without such labels."""
    from jobdedup.pipeline.engine import sample_estimates
    from jobdedup.pipeline.io.validate import validate_labels

    if "sample" not in labels.columns or not (labels["sample"] == "accepted").any():
        return {}
    pairs = validate_labels(labels, source="labels").pairs  # (normalised as `evaluate` reads them)
    position = pd.Series(np.arange(len(data.groups)), index=data.groups["ad_id"].to_numpy())
    group_of = data.groups["group_id"].to_numpy()
    return sample_estimates(pairs, position, group_of)


def retrain(data: ReviewData, labels_path: Path, model_out: Path) -> dict[str, Any]:
    """Train a model on the ads and labels pooled with the bundled sets (as `label --retrain`)."""
    from jobdedup.pipeline.label_loop import retrain as retrain_model

    model = retrain_model(data.model, data.ads, labels_path, model_out)
    return {"model": str(model_out), "threshold": float(model.threshold_)}


__all__ = ["MODES", "precision_estimate", "queue", "retrain"]
