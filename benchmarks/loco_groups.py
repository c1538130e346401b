"""In-group pair precision out of fold: each development corpus is grouped by a model trained
without it, and every pair of ads inside one of its groups is listed with its label when one is
known (issue 50, item 5: a big group weighs by its pairs).

With `--draw N --round-dir DIR`, a uniform sample of N never-read in-group pairs is written as a
reading round (`labelling.draw_pairs_to_judge.write_round`: pairs.csv, one batch per reader,
assignments.csv, and strata.csv with the pool sizes). Round 16 was drawn so (model seed 1,
draw seed 1607, 240 pairs, three readers).

Run: PYTHONPATH=. .venv/bin/python -m benchmarks.loco_groups --out out/loco_in_group.parquet \
         [--seed 1] [--draw 240 --round-dir out/judging16 --round 16 --readers 3]
"""

from __future__ import annotations

import argparse
import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from benchmarks.ablation import left_out_scores
from benchmarks.quality import _corpus, _training_sets, development_ads, natural_pairs
from jobdedup.models.rules import apply_rules
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.progress import Progress
from jobdedup.pipeline.training import training_table
from labelling.draw_pairs_to_judge import _judged_pairs, write_round


def _pair_key(a: str, b: str) -> tuple[str, str]:
    return (min(a, b), max(a, b))


def in_group_pairs(seed: int) -> pd.DataFrame:
    """Every in-group pair of every labelled development corpus under its left-out model:
    corpus, ad_id_a, ad_id_b, group_size, probability (NaN when not a candidate), label."""
    config = Config(seed=seed, show_progress=False)
    table = training_table(config, *_training_sets(None), Progress(False))
    ads_all, natural = development_ads(), natural_pairs()
    labels = {
        _pair_key(a, b): label
        for a, b, label in zip(natural["ad_id_a"], natural["ad_id_b"], natural["label"])
    }
    corpus_a, corpus_b = _corpus(natural["ad_id_a"]), _corpus(natural["ad_id_b"])
    rows = []
    for corpus in sorted(set(corpus_a[corpus_a == corpus_b])):
        ads = ads_all[ads_all["corpus"] == corpus].reset_index(drop=True)
        model, batch, left, right, features, raw = left_out_scores(table, corpus, ads, config)
        probability = apply_rules(raw, features, model.policy)
        groups, _ = model.group(batch, left, right, probability, features)
        score = {(int(i), int(j)): p for i, j, p in zip(left, right, probability)}
        ids = batch.ads["ad_id"].astype(str).to_numpy()
        for members in pd.Series(np.arange(len(ids))).groupby(groups).apply(list):
            for i, j in itertools.combinations(sorted(members), 2):
                p = score.get((i, j), score.get((j, i), np.nan))
                key = _pair_key(ids[i], ids[j])
                rows.append((corpus, *key, len(members), p, labels.get(key)))
        print(f"{corpus}: {len(ads)} ads, {sum(r[0] == corpus for r in rows)} in-group pairs", flush=True)
    columns = ["corpus", "ad_id_a", "ad_id_b", "group_size", "probability", "label"]
    return pd.DataFrame(rows, columns=columns)


def draw_round(pairs: pd.DataFrame, n: int, seed: int, round_number: int, readers: int, out: Path) -> None:
    """A uniform sample of `n` never-read in-group pairs, written as a reading round."""
    judged = _judged_pairs()
    fresh = pairs[[_pair_key(a, b) not in judged for a, b in zip(pairs["ad_id_a"], pairs["ad_id_b"])]]
    fresh = fresh.reset_index(drop=True)
    rng = np.random.default_rng(seed)
    pick = fresh.loc[np.sort(rng.choice(len(fresh), min(n, len(fresh)), replace=False))]
    drawn = pd.DataFrame(
        {
            "pair_id": [f"r{round_number}p{k:04d}" for k in range(len(pick))],
            "ad_id_a": pick["ad_id_a"].to_numpy(),
            "ad_id_b": pick["ad_id_b"].to_numpy(),
            "probability": pick["probability"].to_numpy(),
            "same_group": True,
            "corpus": pick["corpus"].to_numpy(),
            "stratum": "loco_group_uniform",
        }
    )
    write_round(out, drawn, readers, round_number)
    pd.DataFrame(
        {"stratum": ["loco_group_uniform"], "pool_size": [len(fresh)], "drawn": [len(drawn)]}
    ).to_csv(out / "strata.csv", index=False)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True, help="parquet file of the in-group pairs")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--draw", type=int, default=0, help="never-read pairs to sample for reading")
    parser.add_argument("--round-dir", type=Path, help="with --draw: the reading round's folder")
    parser.add_argument("--round", type=int, default=16, help="with --draw: the round's number")
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--draw-seed", type=int, default=1607, help="seed of the sample (round 16: 1607)")
    args = parser.parse_args()
    if development_ads() is None:
        raise SystemExit("../shared/data/real_ads.parquet: not found (this benchmark needs ../shared)")
    pairs = in_group_pairs(args.seed)
    pairs.to_parquet(args.out)
    labelled = pd.to_numeric(pairs["label"], errors="coerce")
    print(
        f"{len(pairs)} in-group pairs, {labelled.notna().sum()} labelled, precision by label {labelled.mean():.3f}"
    )
    if args.draw:
        if args.round_dir is None:
            raise SystemExit("--draw needs --round-dir")
        draw_round(pairs, args.draw, args.draw_seed, args.round, args.readers, args.round_dir)


if __name__ == "__main__":
    main()
