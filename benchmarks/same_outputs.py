"""Check that a change to the code leaves every output of `dedup` as it was.

`write` runs `dedup` on an ads file with the checked-out code and keeps what it produced at every
step: the prepared batch (normalised fields, shingle sets, signatures, word counts, employer and
place words, mentions, boilerplate, status), the pair features of every candidate pair, and the
pairs and groups. `compare` says, step by step, whether two such runs (e.g. before and after a
speed change, written from two commits) are identical, to the bit.

Run:
    git stash; .venv/bin/python -m benchmarks.same_outputs write --ads ADS --out out/same/before
    git stash pop; .venv/bin/python -m benchmarks.same_outputs write --ads ADS --out out/same/after
    .venv/bin/python -m benchmarks.same_outputs compare out/same/before out/same/after

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


def same(a: object, b: object) -> bool:
    """Equal to the bit (NaN equal to NaN in the same place)."""
    if isinstance(a, pd.DataFrame | pd.Series):
        try:
            (pd.testing.assert_frame_equal if isinstance(a, pd.DataFrame) else pd.testing.assert_series_equal)(
                a, b, check_exact=True
            )
        except AssertionError:
            return False
        return True
    return bool(np.array_equal(a, b, equal_nan=np.asarray(a).dtype.kind == "f"))


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    write = commands.add_parser("write", help="run dedup and keep every step's result")
    write.add_argument("--ads", type=Path, required=True)
    write.add_argument("--out", type=Path, required=True)
    write.add_argument("--jobs", type=int, default=2)
    compare = commands.add_parser("compare", help="compare two runs written by `write`")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "write":
        args.out.mkdir(parents=True, exist_ok=True)
        with open(args.out / "outputs.pickle", "wb") as file:
            pickle.dump(outputs(read_ads(args.ads), args.jobs), file)
        return
    with open(args.before / "outputs.pickle", "rb") as file:
        before = pickle.load(file)
    with open(args.after / "outputs.pickle", "rb") as file:
        after = pickle.load(file)
    differ = sorted(set(before) ^ set(after)) + [k for k in before if k in after and not same(before[k], after[k])]
    for key in before:
        size = len(before[key]) if hasattr(before[key], "__len__") else 1
        print(f"{key:24} {size:>12,}  {'DIFFERENT' if key in differ else 'identical'}")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
