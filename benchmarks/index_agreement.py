"""Incremental index vs one `dedup`: do k shuffled `index add` batches find the same duplicates?

Duplicate pairs are the pairs of ads that end in one group (`dedup`'s groups vs the index's groups
after the last add). Printed per split seed:

- **agreement (Jaccard)** = |both| / |either| — the figure README quotes (pairs the index adds count
  against it as much as pairs it misses);
- coverage = |both| / |dedup's pairs|: the share of `dedup`'s duplicate pairs the index gives too;
- only in dedup / only in the index: pair counts.

--diff PREFIX writes each seed's differing pairs, with both groupings' group ids, to
PREFIX_seed<N>.parquet.

Run: .venv/bin/python -m benchmarks.index_agreement --ads ../shared/data/real_ads.parquet \
         --batches 4 --seeds 0 1 2 3 [--diff out/agreement]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent


def duplicate_pairs(groups: pd.DataFrame) -> set[tuple[str, str]]:
    """Pairs (a < b) of ad_ids that share a `group_id`."""
    g = groups[["ad_id", "group_id"]].astype(str)
    joined = g.merge(g, on="group_id")
    joined = joined[joined["ad_id_x"] < joined["ad_id_y"]]
    return set(zip(joined["ad_id_x"], joined["ad_id_y"]))


def shuffled_batches(ads: pd.DataFrame, k: int, seed: int) -> list[pd.DataFrame]:
    """`ads` in a random order (`seed`), cut into `k` batches of (nearly) equal size."""
    order = np.random.default_rng(seed).permutation(len(ads))
    return [ads.iloc[part].reset_index(drop=True) for part in np.array_split(order, k)]


def incremental_groups(ads: pd.DataFrame, model, k: int, seed: int, path: Path) -> pd.DataFrame:
    """Groups of the index after adding `ads` in `k` shuffled batches to a new index at `path`."""
    from jobdedup.pipeline.index import Index

    with Index.open(path) as index:
        for batch in shuffled_batches(ads, k, seed):
            index.add(batch, model)
        return index.groups()


def agreement(whole: set, incremental: set) -> dict[str, float | int]:
    """Pair counts and the two agreement figures of `dedup`'s pairs (`whole`) and the index's."""
    both = len(whole & incremental)
    return {
        "dedup_pairs": len(whole),
        "index_pairs": len(incremental),
        "both": both,
        "only_dedup": len(whole - incremental),
        "only_index": len(incremental - whole),
        "jaccard": both / max(len(whole | incremental), 1),
        "coverage": both / max(len(whole), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ads", default=str(ROOT.parent / "shared" / "data" / "real_ads.parquet"))
    parser.add_argument("--model", default=str(ROOT / "models" / "default" / "model.json"))
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--diff", metavar="PREFIX", help="write differing pairs to PREFIX_seed<N>.parquet")
    args = parser.parse_args()

    from jobdedup.pipeline.engine import Deduplicator
    from jobdedup.pipeline.io import read_ads

    ads = read_ads(args.ads)
    model = Deduplicator.load(args.model).with_config(show_progress=False)
    started = time.perf_counter()
    whole_groups = model.dedup(ads)[1]
    whole = duplicate_pairs(whole_groups)
    seconds = time.perf_counter() - started
    print(f"dedup over {len(ads):,} ads: {len(whole):,} duplicate pairs ({seconds:.0f} s)")
    figures = []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory() as folder:
            started = time.perf_counter()
            groups = incremental_groups(ads, model, args.batches, seed, Path(folder) / "ads.jdx")
            seconds = time.perf_counter() - started
        incremental = duplicate_pairs(groups)
        figure = agreement(whole, incremental)
        figures.append(figure)
        print(
            f"seed {seed}, {args.batches} batches ({seconds:.0f} s): agreement (Jaccard) "
            f"{figure['jaccard']:.4f}, coverage of dedup's pairs {figure['coverage']:.4f}; "
            f"{figure['both']:,} pairs in both, "
            f"{figure['only_dedup']} only in dedup, {figure['only_index']} only in the index "
            f"({figure['index_pairs']:,} index pairs)",
            flush=True,
        )
        if args.diff:
            _write_diff(f"{args.diff}_seed{seed}.parquet", whole, incremental, whole_groups, groups)
    jaccards, coverages = [f["jaccard"] for f in figures], [f["coverage"] for f in figures]
    print(
        f"over {len(figures)} split seed(s): agreement (Jaccard) min {min(jaccards):.4f}, mean "
        f"{np.mean(jaccards):.4f}; coverage min {min(coverages):.4f} ({time.strftime('%Y-%m-%d')}, "
        f"{platform.machine()}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f})"
    )


def _write_diff(
    path: str, whole: set, incremental: set, whole_groups: pd.DataFrame, groups: pd.DataFrame
) -> None:
    """The pairs only one side has (`only_in`), with each ad's group id in `dedup` and in the index."""
    rows = [(a, b, "dedup") for a, b in whole - incremental]
    rows += [(a, b, "index") for a, b in incremental - whole]
    diff = pd.DataFrame(rows, columns=["ad_id_a", "ad_id_b", "only_in"])
    batch_gid = whole_groups.set_index("ad_id")["group_id"].astype(str)
    index_gid = groups.set_index("ad_id")["group_id"].astype(str)
    for side in ("a", "b"):
        diff[f"dedup_group_{side}"] = batch_gid.reindex(diff[f"ad_id_{side}"]).to_numpy()
        diff[f"index_group_{side}"] = index_gid.reindex(diff[f"ad_id_{side}"]).to_numpy()
    diff.to_parquet(path)
    print(f"differing pairs written to {path}")


if __name__ == "__main__":
    main()
