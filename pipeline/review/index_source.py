"""The review page over an incremental index: its groups, read-only, and their pairs scored.

The index holds keys, not texts: the ads come from the ads file, the groups from the index (the
table `jobdedup index groups` writes), and every pair of ads sharing a group is scored once at
launch with the model the index was built with, as `dedup` scores a candidate pair
(`build_pair_features`, `predict_proba`), into the frame the page reads from pairs.parquet.

Example:
    >>> # groups, boilerplate = read_index(Path("ads.jdx"), model)
    >>> # ads = indexed_ads(read_ads(path), groups, path, Path("ads.jdx"))
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from jobdedup.pipeline.errors import JobdedupError

if TYPE_CHECKING:
    from jobdedup.pipeline.engine import Deduplicator
    from jobdedup.pipeline.prepare import PreparedBatch


def read_index(path: Path, model: Deduplicator) -> tuple[pd.DataFrame, np.ndarray]:
    """The index's groups (`ad_id`, `group_id`, `group_size`, as `jobdedup index groups` writes
    them) and the boilerplate it learnt, in one read of the file opened read-only; a one-line error
    for a missing or foreign file, or a model other than the one the index was built with."""
    from jobdedup.pipeline.index.meta import check_model_read
    from jobdedup.pipeline.index.store import open_store

    store = open_store(path, read_only=True)
    try:
        with store.read():
            check_model_read(store, model.config)
            built_with = [m for m in store.models() if m != "unknown"]
            groups, boilerplate = store.all_groups(), store.boilerplate()
    finally:
        store.close()
    mine = getattr(model, "training_", {}).get("fingerprint", "unknown")
    if built_with and mine not in built_with:
        raise JobdedupError(
            f"{path}: built with another model (fingerprint {', '.join(built_with)}, this one {mine}); "
            "give --model the model `jobdedup index add` used"
        )
    return groups, boilerplate


def indexed_ads(ads: pd.DataFrame, groups: pd.DataFrame, ads_path: Path, index_path: Path) -> pd.DataFrame:
    """The ads of the index, in the ads file's order; a one-line error if some are not in the file."""
    ids = ads["ad_id"].astype(str)
    missing = ~groups["ad_id"].astype(str).isin(ids)
    if missing.any():
        raise JobdedupError(
            f"{int(missing.sum())} of the {len(groups)} ads in {index_path} are not in {ads_path} "
            f"(e.g. {groups['ad_id'][missing].iloc[0]}); give --ads the ads the index was built from"
        )
    return ads[ids.isin(groups["ad_id"].astype(str)).to_numpy()].reset_index(drop=True)


def in_group_pairs(batch: PreparedBatch, groups: pd.DataFrame, model: Deduplicator) -> pd.DataFrame:
    """Every pair of ads sharing a group, scored by `model`: `ad_id_a` < `ad_id_b`, `probability`,
    `is_duplicate` (probability at or over the threshold), the columns of pairs.parquet."""
    from jobdedup.features.pairs import build_pair_features
    from jobdedup.pipeline.index.pairs import inner_pairs

    ids = batch.ads["ad_id"].astype(str).to_numpy()
    group_of = groups.assign(ad_id=groups["ad_id"].astype(str)).set_index("ad_id")
    codes, _ = pd.factorize(group_of["group_id"].reindex(ids), sort=True)
    size = group_of["group_size"].reindex(ids).to_numpy()
    i, j = inner_pairs(codes, size > 1)
    a, b = np.where(ids[i] < ids[j], i, j), np.where(ids[i] < ids[j], j, i)
    order = np.lexsort((ids[b], ids[a], codes[a]))  # (by group, then by the pair's ad_ids)
    a, b = a[order], b[order]
    probability = (
        model.predict_proba(build_pair_features(batch.inputs, a, b))[:, 1] if len(a) else np.zeros(0)
    )
    return pd.DataFrame(
        {
            "ad_id_a": ids[a],
            "ad_id_b": ids[b],
            "probability": probability,
            "is_duplicate": probability >= model.threshold_,
        }
    )


__all__ = ["in_group_pairs", "indexed_ads", "read_index"]
