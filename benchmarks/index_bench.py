"""Adding a 10,000-ad batch to an incremental index of N ads: time, peak memory, size on disk.

The corpus is `benchmarks.corpus.build` (the labelled generator's real ads with reposts and hard
negatives, replicated with letter swaps; needs `make labels`). The first N ads are added to a fresh
index in batches of 25,000 (`Index.add`, the real path: matched, grouped, stored); the next 10,000
ads, whose reposts partly sit in the index, are then added in a *fresh process*, so its peak RSS
is the batch's own. Results are appended to benchmarks/RESULTS.md with --write.

Run: .venv/bin/python -m benchmarks.index_bench --size 100000 [--write]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "bench"
BUILD_CHUNK = 25_000


def _model():
    from pipeline.engine import Deduplicator

    return Deduplicator.load(ROOT / "models" / "default" / "model.json").with_config(show_progress=False)


def build(size: int, batch: int) -> tuple[Path, Path]:
    """The index of the first `size` ads and the file of the next `batch` ads (reused if present)."""
    from benchmarks.corpus import build as build_corpus
    from pipeline.index import Index

    OUT.mkdir(parents=True, exist_ok=True)
    index_path, batch_path = OUT / f"index_{size}.jdx", OUT / f"index_batch_{size}.parquet"
    if index_path.exists() and batch_path.exists():
        return index_path, batch_path
    ads, _ = build_corpus(size + batch)
    ads.iloc[size:].to_parquet(batch_path)
    model = _model()
    partial = index_path.with_suffix(".partial")
    for leftover in OUT.glob(partial.name + "*"):
        leftover.unlink()
    start = time.perf_counter()
    with Index.open(partial) as index:
        for first in range(0, size, BUILD_CHUNK):
            index.add(ads.iloc[first : min(size, first + BUILD_CHUNK)], model)
            print(
                f"  built {min(size, first + BUILD_CHUNK)} ads, {time.perf_counter() - start:.0f} s",
                flush=True,
            )
    for side in OUT.glob(partial.name + "-*"):  # empty -wal/-shm after the closing checkpoint
        side.unlink()
    partial.rename(index_path)
    return index_path, batch_path


def measure(index_path: Path, batch_path: Path) -> dict:
    """Add the batch to a copy of the index (in this process) and report."""
    import shutil

    import pandas as pd

    from pipeline.index import Index

    work = index_path.with_suffix(".work")
    shutil.copyfile(index_path, work)
    ads = pd.read_parquet(batch_path)
    model = _model()
    with Index.open(work) as index:
        before = index.stats()
        start = time.perf_counter()
        result = index.add(ads, model)
        seconds = time.perf_counter() - start
    with Index.open(work, read_only=True) as index:
        after = index.stats()
    for leftover in OUT.glob(work.name + "*"):
        leftover.unlink()
    return {
        "index_ads": before["ads"],
        "batch_ads": len(ads),
        "seconds": round(seconds, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "size_mb_before": round(before["size_bytes"] / 1e6, 1),
        "bytes_per_ad": after["bytes_per_ad"],
        "index_pairs": result.report["index_pairs"],
        "within_pairs": result.report["within_pairs"],
        "index_ads_read": result.report["index_ads_read"],
        "joined_existing_groups": result.report["joined_existing_groups"],
        "timings": result.report["timings"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, nargs="+", default=[100_000])
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--write", action="store_true", help="append the table to benchmarks/RESULTS.md")
    parser.add_argument("--measure", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(Path(args.measure[0]), Path(args.measure[1]))))
        return
    rows = []
    for size in args.size:
        index_path, batch_path = build(size, args.batch)
        done = subprocess.run(
            [sys.executable, "-m", "benchmarks.index_bench", "--measure", str(index_path), str(batch_path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            check=True,
        )
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(rows[-1], flush=True)
    table = [
        (
            "| index ads | batch | time (s) | peak RSS (MB) | index size before (MB) | bytes/ad | pairs vs index | "
            "index ads re-read | joined old groups | stage seconds |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        stages = ", ".join(f"{k} {v:.1f}" for k, v in r["timings"].items() if v >= 0.05)
        table.append(
            f"| {r['index_ads']:,} | {r['batch_ads']:,} | {r['seconds']} | {r['peak_rss_mb']} | {r['size_mb_before']} | "
            f"{r['bytes_per_ad']} | {r['index_pairs']:,} | {r['index_ads_read']:,} | {r['joined_existing_groups']:,} | {stages} |"
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
