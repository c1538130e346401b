"""Adding a 10,000-ad batch to an incremental index of N ads: time, peak memory, size on disk.

The corpus is `benchmarks.corpus.build` (the labelled generator's real ads with reposts and hard
negatives, replicated with per-replica spellings; needs `make labels`), N + 10,000 ads, cached in
out/index_bench. The first N ads are added to a fresh index in batches of `--build-batch` ads
(default 100,000) through `Index.add`, the real path (matched within the batch and against the
index, grouped, stored): a bulk build is just fewer, larger adds — ten adds for 1,000,000 ads
instead of a hundred 10,000-ad ones, each re-preparing the indexed ads its new ads meet. The next
10,000 ads, whose reposts partly sit in the index, are then added to a copy of the index in a
*fresh process* (`--repeat` times, each on a fresh copy; the machine is shared, so the median is
reported with the load average), so peak RSS is the batch's own. Index files are reused (delete
out/index_bench/index_N.* to rebuild). --write appends a table to benchmarks/RESULTS.md.

Run: .venv/bin/python -m benchmarks.index_bench --size 100000 1000000 [--build-batch 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "index_bench"
BUILD_BATCH = 100_000


def _model():
    from jobdedup.pipeline.engine import Deduplicator

    return Deduplicator.load(ROOT / "models" / "default" / "model.json").with_config(show_progress=False)


def _readable(index_path: Path) -> bool:
    """Whether this jobdedup reads the cached index (one of an older schema or format is rebuilt)."""
    from jobdedup.pipeline.index import Index
    from jobdedup.pipeline.index.errors import IndexFileError
    from jobdedup.pipeline.index.meta import check_model_read

    try:
        with Index.open(index_path, read_only=True) as index:
            check_model_read(index.store, _model().config)
            return True
    except IndexFileError as error:
        print(f"  rebuilding {index_path.name}: {error}", flush=True)
        return False


def build(size: int, batch: int, build_batch: int) -> tuple[Path, Path, dict]:
    """The index of the first `size` ads and the file of the next `batch` ads (reused if present).

    Returns the paths and how the index was built (`build_batch`, `build_seconds`, per-add seconds).
    """
    if size % 10_000 or build_batch % 10_000:
        raise SystemExit("--size and --build-batch must be multiples of 10,000 (the corpus's row groups)")
    import pyarrow.parquet as pq

    from benchmarks.corpus import build as build_corpus
    from jobdedup.pipeline.index import Index

    OUT.mkdir(parents=True, exist_ok=True)
    index_path, batch_path = OUT / f"index_{size}.jdx", OUT / f"index_batch_{size}.parquet"
    log_path = index_path.with_suffix(".build.json")
    if index_path.exists() and batch_path.exists() and log_path.exists() and _readable(index_path):
        return index_path, batch_path, json.loads(log_path.read_text())
    corpus = OUT / f"ads_{size + batch}.parquet"
    if not corpus.exists():
        ads = build_corpus(size + batch)[0]
        ads.to_parquet(corpus, index=False, row_group_size=10_000)
        del ads
    tail = pq.ParquetFile(corpus)
    tail.read_row_groups(list(range(size // 10_000, tail.num_row_groups))).to_pandas().iloc[
        :batch
    ].to_parquet(batch_path)
    model = _model()
    partial = index_path.with_suffix(".partial")
    for leftover in OUT.glob(partial.name + "*"):
        leftover.unlink()
    start = time.perf_counter()
    adds = []
    source = pq.ParquetFile(corpus)
    with Index.open(partial) as index:
        for first in range(0, size, build_batch):
            began = time.perf_counter()
            rows = range(first // 10_000, min(size, first + build_batch) // 10_000)
            result = index.add(source.read_row_groups(list(rows)).to_pandas(), model)
            adds.append(
                {
                    "ads": min(size, first + build_batch) - first,
                    "seconds": round(time.perf_counter() - began, 1),
                    "index_ads_read": result.report.get("index_ads_read", 0),
                    "timings": result.report.get("timings", {}),
                }
            )
            print(
                f"  built {min(size, first + build_batch)} ads, {time.perf_counter() - start:.0f} s "
                f"({adds[-1]})",
                flush=True,
            )
    for side in OUT.glob(partial.name + "-*"):  # empty -wal/-shm after the closing checkpoint
        side.unlink()
    partial.rename(index_path)
    log = {"build_batch": build_batch, "build_seconds": round(time.perf_counter() - start), "adds": adds}
    log_path.write_text(json.dumps(log, indent=1))
    return index_path, batch_path, log


def size_breakdown(path: Path) -> dict[str, float]:
    """Bytes per indexed ad by table (SQLite's dbstat), for the index file at `path`."""
    import sqlite3

    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    ads = db.execute("SELECT COUNT(*) FROM ads").fetchone()[0] or 1
    out = {}
    for name, size in db.execute("SELECT name, SUM(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC"):
        out[name] = round(size / ads, 1)
    page = db.execute("PRAGMA page_size").fetchone()[0]
    out["(free pages)"] = round(db.execute("PRAGMA freelist_count").fetchone()[0] * page / ads, 1)
    spaces = dict(db.execute("SELECT space, SUM(LENGTH(data)) FROM key_parts GROUP BY space").fetchall())
    out["key blobs: band+field keys"] = round(spaces.get(0, 0) / ads, 1)
    out["key blobs: ad_id hashes"] = round(spaces.get(1, 0) / ads, 1)
    out["key blobs: block sightings"] = round(spaces.get(2, 0) / ads, 1)
    out["ads.row (compressed rows)"] = round(
        db.execute("SELECT SUM(LENGTH(row)) FROM ads").fetchone()[0] / ads, 1
    )
    out["dictionaries (count)"] = db.execute("SELECT COUNT(*) FROM dictionaries").fetchone()[0]
    out["rows stored against a reference row (share)"] = round(
        db.execute("SELECT COUNT(*) FROM ads WHERE ref IS NOT NULL").fetchone()[0] / ads, 3
    )
    db.close()
    return out


def measure(index_path: Path, batch_path: Path) -> dict:
    """Add the batch to a copy of the index (in this process) and report."""
    import shutil

    import pandas as pd

    from jobdedup.pipeline.index import Index

    work = index_path.with_suffix(".work")
    shutil.copyfile(index_path, work)
    ads = pd.read_parquet(batch_path)
    model = _model()
    load = os.getloadavg()[0]
    with Index.open(work) as index:
        before = index.stats()
        start = time.perf_counter()
        result = index.add(ads, model)
        seconds = time.perf_counter() - start
        # The add's peak (with reading the batch and the model), before the size checks below.
        peak_mb = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    with Index.open(work, read_only=True) as index:
        after = index.stats()
    breakdown = size_breakdown(work)
    for leftover in OUT.glob(work.name + "*"):
        leftover.unlink()
    return {
        "load_before": round(load, 1),
        "load_after": round(os.getloadavg()[0], 1),
        "bytes_per_ad_before": before["bytes_per_ad"],
        "key_runs": after.get("key_runs"),
        "breakdown": breakdown,
        "index_ads": before["ads"],
        "batch_ads": len(ads),
        "seconds": round(seconds, 1),
        "peak_rss_mb": peak_mb,
        "size_mb_before": round(before["size_bytes"] / 1e6, 1),
        "bytes_per_ad": after["bytes_per_ad"],
        "index_pairs": result.report["index_pairs"],
        "index_pairs_fields_only": int((result.pairs["b_in_index"] & ~result.pairs["via_lsh"]).sum()),
        "within_pairs": result.report["within_pairs"],
        "index_ads_read": result.report["index_ads_read"],
        "joined_existing_groups": result.report["joined_existing_groups"],
        "rows_stored_against_reference": result.report.get("rows_stored_against_reference"),
        "dictionaries_trained": result.report.get("dictionaries_trained"),
        "timings": result.report["timings"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs="+", default=[100_000])
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--build-batch", type=int, default=BUILD_BATCH, help="ads per add when building")
    parser.add_argument("--repeat", type=int, default=1, help="measurements per size (the median is shown)")
    parser.add_argument("--write", action="store_true", help="append the table to benchmarks/RESULTS.md")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure[0]), Path(args.measure[1]))))
        return
    rows = []
    for size in args.size:
        index_path, batch_path, log = build(size, args.batch, args.build_batch)
        runs = []
        for _ in range(args.repeat):
            done = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "benchmarks.index_bench",
                    "--measure",
                    str(index_path),
                    str(batch_path),
                ],
                capture_output=True,
                text=True,
                cwd=ROOT,
                check=True,
            )
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(runs[-1], flush=True)
        runs.sort(key=lambda r: r["seconds"])
        rows.append(
            {
                **runs[len(runs) // 2],
                "all_seconds": [r["seconds"] for r in runs],
                "loads": [r["load_before"] for r in runs],
                "build": log,
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    table = [
        (
            "| index ads | built in | batch | time (s), median | all runs (s) | load avg | peak RSS (MB) | "
            "index size before (MB) | bytes/ad after | pairs vs index | index ads re-read | stage seconds |"
        ),
        "|---:|---|---:|---:|---|---|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["timings"].items() if v >= 0.05)
        built = f"{len(r['build']['adds'])} adds, {r['build']['build_seconds'] / 60:.0f} min"
        table.append(
            f"| {r['index_ads']:,} | {built} | {r['batch_ads']:,} | {r['seconds']} | {r['all_seconds']} | {r['loads']} | "
            f"{r['peak_rss_mb']} | {r['size_mb_before']} | {r['bytes_per_ad']} | {r['index_pairs']:,} | "
            f"{r['index_ads_read']:,} | {stages} |"
        )
    print("\n".join(table))
    if args.write:
        header = (
            f"\n## Incremental index ({time.strftime('%Y-%m-%d')}, {platform.machine()}, "
            f"{platform.processor() or 'cpu'}, 2 cores, Python {platform.python_version()})\n\n"
            "`.venv/bin/python -m benchmarks.index_bench --size ... --write`: a 10,000-ad batch added to an index\n"
            "built from `benchmarks.corpus` (SQLite backend).\n\n"
        )
        with open(ROOT / "benchmarks" / "RESULTS.md", "a", encoding="utf-8") as handle:
            handle.write(header + "\n".join(table) + "\n")


if __name__ == "__main__":
    main()
