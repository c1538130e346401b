"""Realistic benchmark corpora of 10,000 to 1,000,000 ads, built from the labelled generator's output.

The generator (`data.make_labels`, run by `make labels` into `out/labels_full/`) turns the real ads
of `../shared` into ~11,000 ads with reposts and hard negatives. To reach larger sizes, that set is
replicated, each replica r spelling its text differently (`str.translate`, C speed):
- description, company and contact: a substitution of all 26 letters and all 10 digits (its own
  per replica), so across replicas descriptions share no shingle and employers, e-mails and phone
  numbers differ, as different vacancies and employers of a real crawl do;
- title: a cycle of three of the ten most common letters, so a title without them (and there are
  many short ones) recurs across replicas as common job titles recur across employers;
- location: kept, so field blocking meets real city bucket sizes.
Within a replica the duplicate structure is exactly the generator's; lengths, HTML, languages and
field formats stay those of real ads. (An earlier version cycled three letters in every field: short
company names, titles and all phone numbers then repeated in every replica, which made field-blocking
buckets grow with the corpus and a million ads gave 27 times the candidate pairs of 100,000.)

Run: .venv/bin/python -m benchmarks.corpus --size 100000   (writes out/bench/ads_100000.parquet)
"""

from __future__ import annotations

import argparse
import itertools
import string
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
LABELLED = ROOT / "out" / "labels_full"
OUT = ROOT / "out" / "bench"
TEXT_COLUMNS = ["description", "company", "contact"]


COMMON_LETTERS = "etaoinsrhl"
CYCLES = [(a, b, c) for a, b, c in itertools.permutations(COMMON_LETTERS, 3) if a < b and a < c]


def _title_translation(replica: int) -> dict[int, int]:
    """A str.translate table for titles of replica r: a cycle of three of the ten most common
    letters, a different cycle per replica (240 exist)."""
    if replica == 0:
        return {}
    a, b, c = CYCLES[(replica - 1) % len(CYCLES)]
    table = {ord(a): ord(b), ord(b): ord(c), ord(c): ord(a)}
    table.update({ord(x.upper()): ord(y.upper()) for x, y in ((a, b), (b, c), (c, a))})
    return table


def _text_translation(replica: int) -> dict[int, int]:
    """A str.translate table for the other text fields of replica r: its own substitution of the
    26 letters (both cases) and the 10 digits."""
    if replica == 0:
        return {}
    rng = np.random.default_rng(replica)
    letters, digits = string.ascii_lowercase, string.digits
    new_letters = "".join(rng.permutation(list(letters)))
    new_digits = "".join(rng.permutation(list(digits)))
    return str.maketrans(letters + letters.upper() + digits, new_letters + new_letters.upper() + new_digits)


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
        part = ads.iloc[: size - total].copy()
        for column, table in (
            ("title", _title_translation(replica)),
            *((c, _text_translation(replica)) for c in TEXT_COLUMNS),
        ):
            part[column] = (
                part[column]
                .astype(object)
                .map(lambda v, t=table: v.translate(t) if isinstance(v, str) else v)
            )
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
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, action="append", required=True, help="number of ads (repeatable)")
    args = parser.parse_args()
    for size in args.size:
        print(ensure(size))


if __name__ == "__main__":
    main()
