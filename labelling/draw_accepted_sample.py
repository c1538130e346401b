"""Draw a uniform sample of the pairs a model accepts on the real ads for readers to judge, and
assemble their judgements into a labels file `jobdedup evaluate` estimates precision from.

    python -m labelling.draw_accepted_sample draw --groups out/real/groups.parquet --size 240 --readers 4 --out out/judging
    python -m labelling.draw_accepted_sample assemble --judging out/judging --out data/accepted_sample_labels.csv

The pairs are every pair of ads inside one final group of `dedup`'s `groups.parquet` (what a user
of the groups takes as duplicates), sampled uniformly with `pipeline.label_loop.sample_accepted`
(the sampler `jobdedup label --sample accepted` uses), pairs already labelled included so that the
sample stays uniform. Writes `accepted_pairs.csv` (pair_id, ad_id_a, ad_id_b) and one
`accepted_batch_K.csv` per reader for `labelling.show_pair --batch`; readers write
`accepted_labels_K.csv` (pair_id, label, dup_type, reason) as `data/judgements/READER_BRIEF.md`
says. `assemble` joins them to the pairs: `ad_id_a, ad_id_b, label, dup_type, sample, reason`
(`sample` = accepted; unsure pairs are left out and counted).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from jobdedup.pipeline.label_loop import sample_accepted


def draw(groups: pd.DataFrame, size: int, seed: int) -> pd.DataFrame:
    """`size` uniformly drawn pairs of ads sharing a group, with a `pair_id` (a0000, a0001, ...)."""
    sample = sample_accepted(groups, size, seed=seed, known=set())
    return sample.assign(pair_id=[f"a{k:04d}" for k in range(len(sample))])[["pair_id", "ad_id_a", "ad_id_b"]]


def assemble(judging: Path) -> pd.DataFrame:
    """The readers' decided judgements of `judging/accepted_pairs.csv` as a labels table."""
    pairs = pd.read_csv(judging / "accepted_pairs.csv", dtype=str)
    answers = pd.concat(
        [
            pd.read_csv(f, dtype=str, keep_default_na=False)
            for f in sorted(judging.glob("accepted_labels_*.csv"))
        ],
        ignore_index=True,
    )
    if answers["pair_id"].duplicated().any() or not set(answers["pair_id"]) <= set(pairs["pair_id"]):
        raise ValueError("accepted_labels_*.csv: a pair judged twice or a pair_id not in the sample")
    judged = pairs.merge(answers, on="pair_id", validate="one_to_one")
    decided = judged[judged["label"].isin(["0", "1"])]
    return decided.assign(sample="accepted")[["ad_id_a", "ad_id_b", "label", "dup_type", "sample", "reason"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    drawing = commands.add_parser("draw", help="draw the sample and cut it into reader batches")
    drawing.add_argument("--groups", type=Path, required=True, help="groups.parquet of a dedup run")
    drawing.add_argument("--size", type=int, default=240, help="pairs to draw")
    drawing.add_argument("--readers", type=int, default=4, help="batches to cut the sample into")
    drawing.add_argument("--seed", type=int, default=1)
    drawing.add_argument("--out", type=Path, required=True, help="folder for the sample and batches")
    assembling = commands.add_parser("assemble", help="join the readers' labels into one labels file")
    assembling.add_argument("--judging", type=Path, required=True, help="the folder `draw` wrote to")
    assembling.add_argument("--out", type=Path, required=True, help="labels CSV to write")
    args = parser.parse_args()
    if args.command == "assemble":
        labels = assemble(args.judging)
        labels.to_csv(args.out, index=False)
        print(f"{len(labels)} decided pairs ({int((labels['label'] == '1').sum())} duplicates) -> {args.out}")
        return
    sample = draw(pd.read_parquet(args.groups), args.size, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    sample.to_csv(args.out / "accepted_pairs.csv", index=False)
    for reader, rows in enumerate(np.array_split(np.arange(len(sample)), args.readers)):
        sample.iloc[rows].to_csv(args.out / f"accepted_batch_{reader}.csv", index=False)
    print(f"{len(sample)} accepted pairs in {args.readers} batches under {args.out}")


if __name__ == "__main__":
    main()
