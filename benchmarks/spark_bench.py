"""The Spark engine in local mode beside the embedded engine, on `benchmarks.corpus` ads.

Each size runs the embedded engine (`Deduplicator.run`, `--jobs` workers) and the Spark engine
(`SparkDeduplicator`, `--master`, default local[*]) on the same Parquet file, times both end to end
(read → pairs and groups in pandas), and checks that they agree: the same candidate pairs,
probabilities, duplicate decisions and groups. `--write` appends a "Spark engine" section to
benchmarks/RESULTS.md.

Run: .venv/bin/python -m benchmarks.spark_bench --size 100000 [--size 1000000] [--write]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gc
import importlib.metadata
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.corpus import ensure
from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.io import read_ads

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
MODEL = ROOT / "models" / "default" / "model.json"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _agreement(embedded: tuple[pd.DataFrame, pd.DataFrame], spark: tuple[pd.DataFrame, pd.DataFrame]) -> dict:
    (pe, ge), (ps, gs) = embedded, spark
    merged = pe.merge(ps, on=["ad_id_a", "ad_id_b"], how="outer", indicator=True)
    both = merged[merged["_merge"] == "both"]
    dup_e = set(map(tuple, pe.loc[pe["is_duplicate"], ["ad_id_a", "ad_id_b"]].to_numpy()))
    dup_s = set(map(tuple, ps.loc[ps["is_duplicate"], ["ad_id_a", "ad_id_b"]].to_numpy()))
    return {
        "pairs_only_embedded": int((merged["_merge"] == "left_only").sum()),
        "pairs_only_spark": int((merged["_merge"] == "right_only").sum()),
        "max_probability_difference": float(np.abs(both["probability_x"] - both["probability_y"]).max())
        if len(both)
        else 0.0,
        "duplicate_pairs_jaccard": len(dup_e & dup_s) / max(len(dup_e | dup_s), 1),
        "groups_identical": bool(
            ge[["ad_id", "group_id", "group_size"]].equals(gs[["ad_id", "group_id", "group_size"]])
        ),
    }


def run(size: int, master: str, jobs: int, embedded: bool) -> dict:
    """Time both engines on `size` ads; return the figures."""
    from jobdedup.pipeline.spark_engine import SparkDeduplicator, spark_session

    path = ensure(size)
    model = Deduplicator.load(MODEL).with_config(show_progress=False, jobs=jobs)
    row: dict = {"size": size, "master": master}
    reference = None
    if embedded:
        start = time.perf_counter()
        ads = read_ads(path)
        result = model.run(ads)
        row["embedded_s"] = time.perf_counter() - start
        row["embedded_rss_mb"] = _rss_mb()
        reference = (result.pairs, result.groups)
        del ads, result
        gc.collect()
    spark = spark_session(master, conf={"spark.driver.memory": os.environ.get("SPARK_DRIVER_MEMORY", "8g")})
    start = time.perf_counter()
    spark_result = SparkDeduplicator(model, spark).run(path)
    got = spark_result.to_pandas()
    row["spark_s"] = time.perf_counter() - start
    spark_result.unpersist()
    row["spark_stages"] = spark_result.figures["seconds"]
    row["candidate_pairs"] = spark_result.figures["candidate_pairs"]
    row["duplicates"] = int(got[0]["is_duplicate"].sum())
    row["partitions"] = spark_result.figures["partitions"]
    row["cc_rounds"] = spark_result.figures["cc_rounds"]
    if reference is not None:
        row.update(_agreement(reference, got))
    spark.stop()
    return row


def _markdown(rows: list[dict], jobs: int) -> str:
    cores = os.cpu_count()
    memory_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    pyspark_version = importlib.metadata.version("pyspark")
    lines = [
        "",
        (
            f"## Spark engine ({dt.date.today().isoformat()}, {platform.machine()}, {cores} cores, "
            f"{memory_gb:.0f} GB RAM, Python {platform.python_version()}, pyspark {pyspark_version}, "
            f"pandas {pd.__version__})"
        ),
        "",
        (
            "`.venv/bin/python -m benchmarks.spark_bench --size ... --write`: `jobdedup dedup` work (read, "
            "prepare, candidates, score, group, results in pandas) on `benchmarks.corpus` ads, embedded engine "
            f"(`--jobs {jobs}`) beside the Spark engine in local mode on the same machine."
        ),
        "",
        "| ads | embedded (s) | Spark (s) | Spark stages (s) | candidate pairs | duplicates | same pairs & probabilities | same groups |",
        "|---:|---:|---:|---|---:|---:|---|---|",
    ]
    for row in rows:
        stages = ", ".join(f"{k} {v:.0f}" for k, v in row["spark_stages"].items())
        same_pairs = (
            "yes"
            if row.get("pairs_only_embedded") == 0
            and row.get("pairs_only_spark") == 0
            and row.get("max_probability_difference", 1) <= 1e-9
            else (
                "not compared"
                if "pairs_only_embedded" not in row
                else f"no ({row['pairs_only_embedded']}/{row['pairs_only_spark']} pairs on one side only, "
                f"max Δp {row['max_probability_difference']:.2g})"
            )
        )
        same_groups = (
            "not compared" if "groups_identical" not in row else ("yes" if row["groups_identical"] else "no")
        )
        embedded_s = f"{row['embedded_s']:.0f}" if "embedded_s" in row else "—"
        lines.append(
            f"| {row['size']:,} | {embedded_s} | {row['spark_s']:.0f} | {stages} | {row['candidate_pairs']:,} | "
            f"{row['duplicates']:,} | {same_pairs} | {same_groups} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, action="append", required=True, help="number of ads (repeatable)")
    parser.add_argument("--master", default="local[*]", help="Spark master (default local[*])")
    parser.add_argument("--jobs", type=int, default=2, help="embedded engine workers (default 2)")
    parser.add_argument("--no-embedded", action="store_true", help="run only the Spark engine")
    parser.add_argument("--write", action="store_true", help="append the figures to benchmarks/RESULTS.md")
    args = parser.parse_args()
    rows = []
    for size in args.size:
        row = run(size, args.master, args.jobs, not args.no_embedded)
        print(row, flush=True)
        rows.append(row)
    text = _markdown(rows, args.jobs)
    print(text)
    if args.write:
        with RESULTS.open("a", encoding="utf-8") as handle:
            handle.write(text)


if __name__ == "__main__":
    main()
