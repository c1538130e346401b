"""CPU of `Index.check` in one process, as the service runs it: per single-ad check and per step.

The index is `benchmarks.index_bench`'s (out/index_bench/index_N.jdx, built there if absent) read
through a `KeyCache` like `jobdedup serve` does (keys decoded into the files beside the index and
mapped). The ads are the next batch's (`index_batch_N.parquet`, whose reposts partly sit in the
index), checked one at a time with the service's single-ad model (`jobs=1`), then 1,000 at a time
with the default model, as `POST /v1/check` does. Figures: CPU time per single-ad check
(`time.process_time`: percentiles, unlike wall time barely moved by other load on a shared
machine), the median and mean of each step `Index.check` records in `report["timings"]`, and the
1,000-ad check's wall and CPU time. Nothing is written to the index.

Run: .venv/bin/python -m benchmarks.check_cpu --size 100000 [--checks 200]
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.index_bench import BUILD_BATCH, OUT, _model, build


def run(index_path: Path, batch_path: Path, checks: int, batch_ads: int) -> dict:
    """Single-ad checks, then one `batch_ads`-ad check, over a cached read of the index."""
    from jobdedup.features.normalize import FEW_VALUES
    from jobdedup.pipeline.index.cache import KeyCache, open_cached
    from jobdedup.pipeline.index.key_files import key_directory

    ads = pd.read_parquet(batch_path)
    model = _model()
    single = model.with_config(jobs=1)
    with open_cached(index_path, KeyCache(key_directory(index_path)), read_only=True) as index:
        index.store.view()
        for i in range(3):  # compiled kernels and caches warmed, as the service's warm-up does
            index.check(ads.iloc[[i]], single)
        index.check(ads.iloc[: FEW_VALUES + 1], single)  # (and the batch paths' RE2 patterns)
        gc.collect()
        gc.freeze()  # (as the service's warm-up does)
        cpu, steps = [], {}
        for i in range(checks):
            started = time.process_time()
            result = index.check(ads.iloc[[3 + i]], single)
            cpu.append(time.process_time() - started)
            for step, seconds in result.report.get("timings", {}).items():
                steps.setdefault(step, []).append(seconds)
        part = ads.iloc[len(ads) - batch_ads :]
        wall, started = time.perf_counter(), time.process_time()
        result = index.check(part, model)
        batch = {"ads": len(part), "wall_s": round(time.perf_counter() - wall, 3),
                 "cpu_s": round(time.process_time() - started, 3),
                 "duplicate_pairs": int(result.pairs["is_duplicate"].sum())}  # fmt: skip
    ms = np.asarray(cpu) * 1000
    return {
        "checks": checks,
        "cpu_ms": {f"p{q}": round(float(np.percentile(ms, q)), 1) for q in (50, 90, 99)} | {"mean": round(float(ms.mean()), 1)},
        "steps_ms": {step: (round(float(np.median(v)) * 1000, 1), round(float(np.mean(v)) * 1000, 1)) for step, v in steps.items()},
        "batch": batch,
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000, help="indexed ads (multiple of 10,000)")
    parser.add_argument("--checks", type=int, default=200, help="single-ad checks")
    parser.add_argument("--batch-ads", type=int, default=1000, help="ads in the one batch check")
    args = parser.parse_args()
    index_path, batch_path, _ = build(args.size, 10_000, BUILD_BATCH)
    found = run(index_path, batch_path, args.checks, args.batch_ads)
    cpu = found["cpu_ms"]
    print(f"index {index_path.relative_to(OUT.parent.parent)}; load average {found['load_average']}")
    print(
        f"single-ad check, CPU ms: p50 {cpu['p50']} / p90 {cpu['p90']} / p99 {cpu['p99']} / mean {cpu['mean']}"
    )
    print("| step | median ms | mean ms |\n|---|---:|---:|")
    for step, (median, mean) in found["steps_ms"].items():
        print(f"| {step} | {median} | {mean} |")
    print(f"{found['batch']['ads']}-ad check: {found['batch']}")


if __name__ == "__main__":
    main()
