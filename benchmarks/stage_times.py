"""Where `dedup`'s wall time goes on one ads file: read, each engine stage (`Deduplicator.run`'s
progress timings: prepare, candidates, score, group), write; with the candidate pairs, the
largest group and the peak memory of this process and its workers (issue 52, item 1).

For the CPU inside each stage, profile the same run with py-spy (not a dependency):
    py-spy record --subprocesses --native -r 50 -f speedscope -o out/prof.json -- \\
        .venv/bin/jobdedup dedup --ads ADS --out out/prof_dedup --quiet

Run: .venv/bin/python -m benchmarks.stage_times --ads out/stress_200k.parquet [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.io import read_ads


def stage_times(ads_path: Path) -> dict[str, float]:
    """Seconds per stage and the run's sizes, for one end-to-end run of the shipped model."""
    start = time.perf_counter()
    ads = read_ads(ads_path)
    read_s = time.perf_counter() - start
    model = Deduplicator.load(Path(__file__).resolve().parent.parent / "models" / "default" / "model.json")
    result = model.with_config(show_progress=False).run(ads, keep_text=False)
    written = time.perf_counter()
    out = Path("out") / "stage_times"
    out.mkdir(parents=True, exist_ok=True)
    result.pairs.to_parquet(out / "pairs.parquet")
    result.groups.to_parquet(out / "groups.parquet")
    write_s = time.perf_counter() - written
    peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return {
        "ads": len(ads),
        "read_s": read_s,
        **{f"{name}_s": seconds for name, seconds in result.timings.items()},
        "write_s": write_s,
        "total_s": time.perf_counter() - start,
        "candidate_pairs": len(result.pairs),
        "largest_group": int(result.groups["group_size"].max()),
        "peak_rss_mb": peak / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ads", type=Path, required=True)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    figures = stage_times(args.ads)
    for name, value in figures.items():
        print(f"{name:16s} {value:,.1f}" if isinstance(value, float) else f"{name:16s} {value:,}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
