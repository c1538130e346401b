"""Realistic benchmark corpora of 10,000 to 1,000,000 ads, built from the labelled generator's output.

The generator (`data.make_labels`, run by `make labels` into `out/labels_full/`) turns the real ads
of `../shared` into ~11,000 ads with reposts and hard negatives. To reach larger sizes, that set is
replicated: replica r spells every text field with three common letters cycled (a different cycle
per replica, `str.translate`, so it runs at C speed). Within a replica the duplicate structure is
exactly the generator's; across replicas texts share almost no 5-word shingle, as different
vacancies of a real crawl would, while lengths, vocabulary size growth, HTML, languages and field
formats stay those of real ads. Locations are kept, so field blocking meets real bucket sizes.

Run: .venv/bin/python -m benchmarks.corpus --size 100000   (writes out/bench/ads_100000.parquet)
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "out" / "labels_full"
OUT = ROOT / "out" / "bench"
TEXT_COLUMNS = ["description", "title", "company", "contact"]


COMMON_LETTERS = "etaoinsrhl"
CYCLES = [(a, b, c) for a, b, c in itertools.permutations(COMMON_LETTERS, 3) if a < b and a < c]


def _translation(replica: int) -> dict[int, int]:
    """A str.translate table for replica r: a cycle of three of the ten most common letters, a
    different cycle per replica (240 exist), so nearly every word of a replica changes."""
    if replica == 0:
        return {}
    a, b, c = CYCLES[(replica - 1) % len(CYCLES)]
    table = {ord(a): ord(b), ord(b): ord(c), ord(c): ord(a)}
    table.update({ord(x.upper()): ord(y.upper()) for x, y in ((a, b), (b, c), (c, a))})
    return table


def base_ads() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The generator's full train + test ads and group labels (needs `make labels`)."""
    ads = [pd.read_parquet(LABELLED / f"{split}_ads.parquet") for split in ("train", "test")]
    labels = [pd.read_parquet(LABELLED / f"{split}_labels.parquet") for split in ("train", "test")]
    return pd.concat(ads, ignore_index=True), pd.concat(labels, ignore_index=True)


def build(size: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """`size` ads (and their group labels), whole replicas of the base set, cut to size."""
    ads, labels = base_ads()
    order = np.random.default_rng(seed).permutation(len(ads))
    ads = ads.iloc[order].reset_index(drop=True)
    parts, label_parts = [], []
    replica, total = 0, 0
    while total < size:
        table = _translation(replica)
        part = ads.iloc[: size - total].copy()
        for column in TEXT_COLUMNS:
            part[column] = part[column].astype(object).map(lambda v: v.translate(table) if isinstance(v, str) else v)
        group = part["ad_id"].map(labels.set_index("ad_id")["group_id"])
        part["ad_id"] = part["ad_id"] + f"~{replica}"
        parts.append(part)
        label_parts.append(pd.DataFrame({"ad_id": part["ad_id"], "group_id": group + f"~{replica}"}))
        total += len(part)
        replica += 1
    return pd.concat(parts, ignore_index=True), pd.concat(label_parts, ignore_index=True)


def corpus_path(size: int) -> Path:
    """Where the corpus of this size is cached."""
    return OUT / f"ads_{size}.parquet"


def ensure(size: int) -> Path:
    """Build and cache the corpus of this size unless it exists; return its ads path."""
    path = corpus_path(size)
    if not path.exists():
        ads, labels = build(size)
        path.parent.mkdir(parents=True, exist_ok=True)
        ads.to_parquet(path, index=False, compression="zstd")
        labels.to_parquet(path.with_name(f"labels_{size}.parquet"), index=False, compression="zstd")
    return path


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, action="append", required=True, help="number of ads (repeatable)")
    args = parser.parse_args()
    for size in args.size:
        print(ensure(size))


if __name__ == "__main__":
    main()
