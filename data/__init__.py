"""Bundled labelled sample, the lists of its labelled sets, and the scripts that make it.

`SYNTHETIC_SETS` are synthetic reposts and hard negatives made from real ads
(`python -m jobdedup.data.make_labels`); `NATURAL_SETS` the hand-judged natural pairs with their ads
(`python -m jobdedup.data.natural_bundle`), the demo's train / test split of rounds 1-4 and the later
rounds (`natural_pairs_late.csv`). `TRAINING_SETS` train the demo's model and `HELD_OUT_SETS`
evaluate it (other corpora and employers); the shipped default model is trained on
`ALL_LABELLED_SETS` (`make model`).
"""

from __future__ import annotations

from pathlib import Path

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
