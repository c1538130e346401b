"""Check that a change to the code leaves every output of `dedup` as it was.

`write` runs `dedup` on an ads file with the checked-out code and keeps what it produced at every
step: the prepared batch (normalised fields, shingle sets, signatures, word counts, employer and
place words, mentions, boilerplate, status), the pair features of every candidate pair, and the
pairs and groups. `write-checks` keeps what `Index.check` answers over an index, read as the
service reads it (pairs with probabilities and dup_types, groups, merges): for each of the first
`--singles` ads of an ads file alone, odd ads (empty, HTML, Hebrew, Chinese, no text, fields only)
alone and together, the last 1,000 ads together, and those with ten ads the index already holds.
`compare` says, step by step, whether two such runs (e.g. before and after a speed change, written
from two commits) are identical, to the bit.

Run:
    git stash; .venv/bin/python -m benchmarks.same_outputs write --ads ADS --out out/same/before
    git stash pop; .venv/bin/python -m benchmarks.same_outputs write --ads ADS --out out/same/after
    .venv/bin/python -m benchmarks.same_outputs compare out/same/before out/same/after
    (or, from each commit: write-checks --index out/index_bench/index_100000.jdx
     --ads out/index_bench/index_batch_100000.parquet --indexed out/index_bench/ads_110000.parquet
     --out DIR)

The files are pickles of this tool's own results: read only ones you wrote.
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from jobdedup.features.pairs import build_pair_features
from jobdedup.features.shingle_sets import ShingleSets
from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.io import read_ads

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "default" / "model.json"


def outputs(ads: pd.DataFrame, jobs: int) -> dict[str, object]:
    """Every step's result of one `dedup` run on `ads`, as plain arrays and tables."""
    model = Deduplicator.load(MODEL).with_config(show_progress=False, jobs=jobs)
    result = model.run(ads)
    batch = result.batch
    found: dict[str, object] = {}
    for field in dataclasses.fields(batch.inputs):
        value = getattr(batch.inputs, field.name)
        if isinstance(value, ShingleSets):
            found[f"{field.name}.indptr"], found[f"{field.name}.values"] = value.indptr, value.values
        else:
            found[field.name] = value
    found["batch_boilerplate"] = batch.batch_boilerplate
    found["status"] = batch.status
    candidates, _ = model._candidates(batch)
    found["candidates"] = candidates
    left, right = candidates["i"].to_numpy(), candidates["j"].to_numpy()
    found["pair_features"] = build_pair_features(batch.inputs, left, right, jobs)
    found["pairs"] = result.pairs
    found["groups"] = result.groups
    return found


ODD_ADS = pd.DataFrame(
    {
        "ad_id": ["odd-empty", "odd-html", "odd-hebrew", "odd-chinese", "odd-none", "odd-fields"],
        "description": ["", "<p>Senior <b>Python</b> developer</p><ul><li>Berlin &amp; remote</li></ul>",
                        "מפתח תוכנה בכיר בתל אביב, משרה מלאה", "高级软件工程师 北京 全职", None, "   "],
        "title": [None, "Python Developer", "מפתח תוכנה", "软件工程师", "Nurse", "Welder"],
        "company": [None, "ACME GmbH", "נתיבי ישראל", "北京科技", "NHS", None],
        "location": [None, "Berlin", "Tel Aviv", None, "Filton, Bristol", "Leeds"],
        "contact": [None, "jobs@acme.de, +49 30 1234567", None, None, "www.nhs.uk", None],
    }
)  # fmt: skip
"""Ads of every odd shape a service is sent."""


def check_outputs(index: Path, ads: pd.DataFrame, indexed: pd.DataFrame, singles: int) -> dict[str, object]:
    """`Index.check`'s pairs, groups and merges over the index at `index` (through a `KeyCache`, as
    `jobdedup serve` reads it): the first `singles` of `ads` one at a time and the odd ads one at a
    time with the one-thread model, then with the default model the odd ads together, the last
    1,000 of `ads`, and those with the first ten of `indexed` (ads the index holds)."""
    from benchmarks.index_bench import _model
    from jobdedup.pipeline.index.cache import KeyCache, open_cached
    from jobdedup.pipeline.index.key_files import key_directory

    model = _model()
    single = model.with_config(jobs=1)
    batches = {f"single {i}": (ads.iloc[[i]], single) for i in range(singles)}
    batches |= {f"odd {i}": (ODD_ADS.iloc[[i]], single) for i in range(len(ODD_ADS))}
    batches["odd together"] = ODD_ADS, model
    batches["1,000"] = ads.iloc[-1000:], model
    batches["1,000 and indexed"] = pd.concat([ads.iloc[-1000:], indexed.iloc[:10]]), model
    found: dict[str, object] = {}
    with open_cached(index, KeyCache(key_directory(index)), read_only=True) as opened:
        for name, (batch, used) in batches.items():
            result = opened.check(batch, used)
            found |= {f"{name}: {part}": getattr(result, part) for part in ("pairs", "groups", "merges")}
            found[f"{name}: skipped"] = np.array(result.skipped, dtype=object)
    return found


def same(a: object, b: object) -> bool:
    """Equal to the bit (NaN equal to NaN in the same place)."""
    if isinstance(a, pd.DataFrame | pd.Series):
        try:
            (
                pd.testing.assert_frame_equal
                if isinstance(a, pd.DataFrame)
                else pd.testing.assert_series_equal
            )(a, b, check_exact=True)
        except AssertionError:
            return False
        return True
    return bool(np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind == "f"))


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("write", help="run dedup and keep every step's result")
    write.add_argument("--ads", type=Path, required=True)
    write.add_argument("--out", type=Path, required=True)
    write.add_argument("--jobs", type=int, default=2)
    checks = commands.add_parser("write-checks", help="check ads against an index and keep the answers")
    checks.add_argument("--index", type=Path, required=True)
    checks.add_argument("--ads", type=Path, required=True, help="ads to check (not in the index)")
    checks.add_argument("--indexed", type=Path, required=True, help="ads whose first ten the index holds")
    checks.add_argument("--singles", type=int, default=300)
    checks.add_argument("--out", type=Path, required=True)
    compare = commands.add_parser("compare", help="compare two runs written by `write` or `write-checks`")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command in ("write", "write-checks"):
        if args.command == "write":
            found = outputs(read_ads(args.ads), args.jobs)
        else:
            indexed = pq.ParquetFile(args.indexed).read_row_group(0).to_pandas().iloc[:10]
            found = check_outputs(args.index, pd.read_parquet(args.ads), indexed, args.singles)
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "outputs.pickle", "wb") as file:
            pickle.dump(found, file)
        return
    with open(args.before / "outputs.pickle", "rb") as file:
        before = pickle.load(file)
    with open(args.after / "outputs.pickle", "rb") as file:
        after = pickle.load(file)
    differ = sorted(set(before) ^ set(after)) + [
        k for k in before if k in after and not same(before[k], after[k])
    ]
    for key in before:
        size = len(before[key]) if hasattr(before[key], "__len__") else 1
        if key in differ or len(before) < 100:
            print(f"{key:24} {size:>12,}  {'DIFFERENT' if key in differ else 'identical'}")
    rows = sum(len(v) for v in before.values() if isinstance(v, pd.DataFrame))
    print(f"{len(before) - len(differ)} of {len(before)} results identical ({rows:,} table rows)")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
