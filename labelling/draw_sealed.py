"""Draw the sealed test's pairs: disjoint strata, each uniform, with its size kept for weighting.

    python -m labelling.draw_sealed --ads ../shared/data/more_ads.parquet --out out/sealed \
        [--model models/default/model.json] [--seed 50] [--readers 3]

The ads of the sealed corpora (`data/SEALED_CORPORA.txt`) are deduplicated by the model; the pool is
its candidate pairs, its in-group pairs and the pairs of one corpus sharing a normalised company or
title (as in `draw_pairs_to_judge`). The pool is cut into disjoint strata, first match wins:

| stratum | pairs |
|---|---|
| in_group | in one final group (a uniform sample of them measures pair precision) |
| apart_near | apart, near-identical: text Jaccard >= 0.5, or no text and same title and company |
| apart_same_employer | apart, same company and similar title (token set >= 0.6) |
| apart_scored | apart, probability >= 0.10 |
| apart_rest | every other pool pair |

Each stratum is sampled uniformly without replacement, so every labelled pair stands for
`pool_size / drawn` pool pairs: `models.metrics.stratified_estimate` turns the labels into precision
and recall of any model's groups over the pool. `strata.csv` records the pool sizes; the readers'
batches carry ids only (10 % read twice, blind).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from jobdedup.data import sealed_ads
from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.io import read_ads
from labelling import REPO
from labelling.draw_pairs_to_judge import _facts, _pool, write_round

QUOTAS = {"in_group": 150, "apart_near": 75, "apart_same_employer": 65, "apart_scored": 30, "apart_rest": 20}


def stratum_of(facts: pd.DataFrame) -> np.ndarray:
    """The one stratum of every pool pair (first match in `QUOTAS` order)."""
    apart = ~facts["same_group"].to_numpy()
    same_company = ((facts["company_equal"] == 1) | (facts["company_token_set"] >= 0.9)).to_numpy()
    no_text = (facts["len_max"] == 0).to_numpy()
    near = (facts["jaccard_full"] >= 0.5).to_numpy() | (
        no_text & same_company & (facts["title_token_set"] >= 0.85).to_numpy()
    )
    conditions = [
        ~apart,
        apart & near,
        apart & same_company & (facts["title_token_set"] >= 0.6).to_numpy(),
        apart & (facts["probability"] >= 0.10).to_numpy(),
    ]
    return np.select(conditions, list(QUOTAS)[:4], default="apart_rest")


def draw(
    facts: pd.DataFrame, ids: np.ndarray, seed: int, quotas: dict[str, int] = QUOTAS
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The drawn pairs (one stratum each) and the pool size of every stratum."""
    rng = np.random.default_rng(seed)
    strata = stratum_of(facts)
    rows, sizes = [], []
    for name, quota in quotas.items():
        members = np.flatnonzero(strata == name)
        chosen = np.sort(rng.choice(members, min(quota, len(members)), replace=False))
        part = facts.iloc[chosen].assign(stratum=name)
        rows.append(part)
        sizes.append({"stratum": name, "pool_size": len(members), "drawn": len(chosen)})
        print(f"{name:20s} {len(chosen):4d} of {len(members):7,d} in the pool")
    out = pd.concat(rows, ignore_index=True)
    left, right = ids[out["i"].to_numpy()], ids[out["j"].to_numpy()]
    out.insert(0, "ad_id_a", np.minimum(left, right))
    out.insert(1, "ad_id_b", np.maximum(left, right))
    out = out.drop(columns=["i", "j"])
    out.insert(0, "pair_id", [f"s{k:04d}" for k in range(len(out))])
    return out, pd.DataFrame(sizes)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--ads", type=Path, required=True, help="more_ads.parquet (only sealed corpora are used)"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", type=Path, default=REPO / "models/default/model.json")
    parser.add_argument("--readers", type=int, default=3)
    parser.add_argument("--seed", type=int, default=50)
    args = parser.parse_args()
    ads = read_ads(args.ads)
    ads = ads[sealed_ads(ads)].reset_index(drop=True)
    model = Deduplicator.load(args.model).with_config(show_progress=False)
    result = model.run(ads)
    pool = _pool(ads, result, args.seed)
    facts = _facts(ads, model, result, pool)
    ids = ads["ad_id"].astype(str).to_numpy()
    drawn, sizes = draw(facts, ids, args.seed)
    write_round(args.out, drawn, args.readers, args.seed)
    sizes.to_csv(args.out / "strata.csv", index=False)
    print(f"{len(drawn)} pairs from a pool of {len(pool):,}; threshold {model.threshold_:.3f}")


if __name__ == "__main__":
    main()
