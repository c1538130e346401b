"""Bundle the hand-checked natural pairs with their ads, split like the synthetic data.

Pairs whose ads both come from training corpora go to training; pairs touching a test corpus
(`labelling.make_labels.DEFAULT_TEST_CORPORA`) are held out. The later rounds (`natural_pairs_late.csv`,
read after that split was fixed) only get their ads bundled: `make model` trains on them, the
demo's split does not hold them. Writes, into `--out`:

- `natural_train_ads.parquet`, `natural_train_pairs.csv`
- `natural_test_ads.parquet`, `natural_test_pairs.csv`
- `natural_late_ads.parquet` (the pairs stay in `natural_pairs_late.csv`)

Run (needs the real corpora, which are not bundled; the later rounds read ads of both files):
    python -m labelling.natural_bundle --ads ../shared/data/real_ads.parquet \
        --ads ../shared/data/more_ads.parquet --out data
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from labelling import DATA
from labelling.make_labels import DEFAULT_TEST_CORPORA

PAIRS_FILE = DATA / "natural_pairs.csv"
LATE_PAIRS_FILE = DATA / "natural_pairs_late.csv"
PAIR_COLUMNS = ["ad_id_a", "ad_id_b", "label", "dup_type", "stratum", "reason"]


def split_natural_pairs(pairs: pd.DataFrame, test_corpora: list[str]) -> dict[str, pd.DataFrame]:
    """Pairs by split: a pair touching any test corpus is held out."""
    corpus_a = pairs["ad_id_a"].str.split(":").str[0]
    corpus_b = pairs["ad_id_b"].str.split(":").str[0]
    is_test = corpus_a.isin(test_corpora) | corpus_b.isin(test_corpora)
    return {"train": pairs[~is_test], "test": pairs[is_test]}


def _write_ads(real_ads: pd.DataFrame, pairs: pd.DataFrame, path: Path) -> int:
    ids = pd.unique(pd.concat([pairs["ad_id_a"], pairs["ad_id_b"]]))
    ads = real_ads[real_ads["ad_id"].isin(ids)].copy()
    ads["origin"] = "natural"
    ads.sort_values("ad_id").to_parquet(path, index=False, compression="zstd")
    return len(ads)


def bundle(
    real_ads: pd.DataFrame,
    pairs: pd.DataFrame,
    out: Path,
    test_corpora: list[str],
    late: pd.DataFrame | None = None,
) -> None:
    """Write the ads and pairs of each split (and the ads of the `late` pairs); print a one-line
    summary per split."""
    out.mkdir(parents=True, exist_ok=True)
    splits = split_natural_pairs(pairs, test_corpora)
    for split, split_pairs in splits.items():
        count = _write_ads(real_ads, split_pairs, out / f"natural_{split}_ads.parquet")
        split_pairs[PAIR_COLUMNS].to_csv(out / f"natural_{split}_pairs.csv", index=False)
        print(
            f"{split}: {len(split_pairs)} pairs ({int((split_pairs['label'] == '1').sum())} duplicates), {count} ads"
        )
    if late is not None:
        count = _write_ads(real_ads, late, out / "natural_late_ads.parquet")
        print(f"late: {len(late)} pairs ({int((late['label'] == '1').sum())} duplicates), {count} ads")


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--ads",
        type=Path,
        action="append",
        required=True,
        help="real_ads.parquet, more_ads.parquet (repeatable)",
    )
    parser.add_argument("--pairs", type=Path, default=PAIRS_FILE, help="hand-checked pairs CSV")
    parser.add_argument("--late-pairs", type=Path, default=LATE_PAIRS_FILE, help="later rounds' pairs CSV")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    args = parser.parse_args()
    real_ads = pd.concat([pd.read_parquet(path) for path in args.ads], ignore_index=True)
    pairs = pd.read_csv(args.pairs, dtype=str)
    late = pd.read_csv(args.late_pairs, dtype=str) if args.late_pairs.exists() else None
    bundle(real_ads, pairs, args.out, DEFAULT_TEST_CORPORA, late)


if __name__ == "__main__":
    main()
