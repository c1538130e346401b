"""Bundled labelled sample and the lists of its labelled sets (the scripts that make it: `labelling`).

`SYNTHETIC_SETS` are synthetic reposts and hard negatives made from real ads
(`python -m labelling.make_labels`); `NATURAL_SETS` the hand-judged natural pairs with their ads
(`python -m labelling.natural_bundle`), the demo's train / test split of rounds 1-4 and the later
rounds (`natural_pairs_late.csv`). `TRAINING_SETS` train the demo's model and `HELD_OUT_SETS`
evaluate it (other corpora and employers); the shipped default model is trained on
`ALL_LABELLED_SETS` (`make model`). Every training weighs a natural pair `NATURAL_PAIR_WEIGHT`
against a synthetic one (`set_weights`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

BUNDLED_DATA = Path(__file__).resolve().parent
SYNTHETIC_SETS = [
    ("train_ads.parquet", "train_labels.parquet"),
    ("test_ads.parquet", "test_labels.parquet"),
]
NATURAL_SETS = [
    ("natural_train_ads.parquet", "natural_train_pairs.csv"),
    ("natural_test_ads.parquet", "natural_test_pairs.csv"),
    ("natural_late_ads.parquet", "natural_pairs_late.csv"),
]
TRAINING_SETS = [SYNTHETIC_SETS[0], NATURAL_SETS[0]]
HELD_OUT_SETS = [
    ("synthetic reposts and hard negatives", *SYNTHETIC_SETS[1]),
    ("hand-checked natural pairs", *NATURAL_SETS[1]),
]
ALL_LABELLED_SETS = [SYNTHETIC_SETS[0], NATURAL_SETS[0], SYNTHETIC_SETS[1], NATURAL_SETS[1], NATURAL_SETS[2]]
NATURAL_PAIR_WEIGHT = 0.5
"""A hand-judged natural pair's weight in training, against 1 for a synthetic pair. Chosen by
leave-one-corpus-out over three seeds (2026-11-29, README "Quality"): pooled F1 0.918 at weight 1,
0.920 at 0.5 (each seed higher), lower at 0.25, 2 and 4; the weak corpora gained most
(ryrk1020_dfw 0.809 -> 0.837)."""


def set_weights(sets: list[tuple[str, str]]) -> list[float]:
    """The training weight of each bundled (ads file, labels file) set: `NATURAL_PAIR_WEIGHT` for the
    natural sets, 1 for the synthetic ones.

    Example:
        >>> set_weights(TRAINING_SETS)
        [1.0, 0.5]
    """
    natural = {labels for _, labels in NATURAL_SETS}
    return [NATURAL_PAIR_WEIGHT if labels in natural else 1.0 for _, labels in sets]


def read_sets(sets: list[tuple[str, str]]) -> tuple[list[pd.DataFrame], list[Any], list[float]]:
    """The bundled `sets`' ads, their labels and `set_weights`: what `Deduplicator.fit` takes (the
    demo's model, the labelling loop's retraining, the quality benchmark)."""
    from jobdedup.pipeline.io import read_ads, read_labels

    ads = [read_ads(BUNDLED_DATA / ads_file) for ads_file, _ in sets]
    labels = [read_labels(BUNDLED_DATA / labels_file, ads=x) for (_, labels_file), x in zip(sets, ads)]
    return ads, labels, set_weights(sets)


def sealed_corpora() -> frozenset[str]:
    """The corpora of the sealed test (`data/SEALED_CORPORA.txt`, issue 50): never trained on.

    Example:
        >>> "naukri_india_data_analyst" in sealed_corpora()
        True
    """
    lines = (BUNDLED_DATA / "SEALED_CORPORA.txt").read_text(encoding="utf-8").splitlines()
    return frozenset(line.strip() for line in lines if line.strip())


def sealed_ads(ads: pd.DataFrame) -> pd.Series:
    """Per ad, whether it comes from a sealed corpus (its `corpus` column, or else the part of its
    `ad_id` before the first colon, as the bundled and shared ads write it)."""
    import numpy as np
    import pandas as pd

    from jobdedup.pipeline.training import ad_corpora

    return pd.Series(np.isin(ad_corpora(ads), list(sealed_corpora())), index=ads.index)
