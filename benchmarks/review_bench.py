"""How fast `jobdedup review` opens a 60-ad group with 100,000 ads loaded (a benchmark, not a test).

The bundled test ads are repeated under new ids up to `--ads` ads and grouped in groups of 1-5,
with one group of 60 ads whose 1,770 pairs are all candidates; the page's API (FastAPI's
TestClient, the same app `jobdedup review` serves) is asked for that group and for the first page
of the groups list, `--repeat` times each, and the median and worst times are printed.

Example:
    python -m benchmarks.review_bench --ads 100000
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from jobdedup.pipeline.io import read_ads
from jobdedup.pipeline.model_files import load_model

DATA = Path(__file__).resolve().parent.parent / "data"
BIG_GROUP = 60


def synthetic_output(n_ads: int, seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """`n_ads` ads (the bundled ones repeated), their groups and candidate pairs."""
    base = read_ads(DATA / "test_ads.parquet")
    ads = base.iloc[np.arange(n_ads) % len(base)].reset_index(drop=True)
    ads["ad_id"] = [f"ad{k}" for k in range(n_ads)]
    rng = np.random.default_rng(seed)
    sizes = [BIG_GROUP]
    while sum(sizes) < n_ads:
        sizes.append(int(rng.integers(1, 6)))
    sizes[-1] -= sum(sizes) - n_ads
    group_ids = np.repeat([f"g{k}" for k in range(len(sizes))], sizes)
    groups = pd.DataFrame({"ad_id": ads["ad_id"], "group_id": group_ids})
    groups["group_size"] = groups.groupby("group_id")["ad_id"].transform("size")
    starts = np.cumsum([0, *sizes[:-1]])
    left, right = [], []
    for start, size in zip(starts, sizes):
        i, j = np.triu_indices(size, 1)
        left.append(start + i)
        right.append(start + j)
    a, b = np.concatenate(left), np.concatenate(right)
    pairs = pd.DataFrame(
        {
            "ad_id_a": ads["ad_id"].to_numpy()[a],
            "ad_id_b": ads["ad_id"].to_numpy()[b],
            "probability": rng.uniform(0.7, 1.0, len(a)),
            "is_duplicate": True,
        }
    )
    return ads, pairs, groups


def timed(call, repeat: int) -> tuple[float, float]:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds), max(seconds)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ads", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    from fastapi.testclient import TestClient

    from jobdedup.pipeline.review.app import create_review_app
    from jobdedup.pipeline.review.data import ReviewData
    from jobdedup.pipeline.review.labels import LabelStore

    ads, pairs, groups = synthetic_output(args.ads)
    started = time.perf_counter()
    data = ReviewData(ads, pairs, groups, load_model(None, show_progress=False))
    print(
        f"{len(ads)} ads, {len(data.summary)} groups, {len(pairs)} pairs indexed in {time.perf_counter() - started:.1f} s"
    )
    store = LabelStore(Path("out") / "review_bench_labels.csv")
    client = TestClient(create_review_app(data, store))
    for what, path, params in (
        (f"a {BIG_GROUP}-ad group", "/api/groups/g0", {}),
        ("groups list, first page", "/api/groups", {}),
        ("groups list, title filter", "/api/groups", {"title": "engineer", "min_size": 2}),
    ):
        assert client.get(path, params=params).status_code == 200
        median, worst = timed(lambda p=path, q=params: client.get(p, params=q), args.repeat)
        print(f"{what:<28} median {median * 1000:7.1f} ms   worst {worst * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
