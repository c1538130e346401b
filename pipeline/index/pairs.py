"""Candidate pairs of a batch against the index, and the pairs inside the old groups it touches.

Example:
    >>> left, right = inner_pairs(np.array([7, 7, 9, 7]), np.ones(4, dtype=bool))
    >>> left.tolist(), right.tolist()
    ([0, 0, 1], [1, 3, 3])
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.features.shingle_sets import sorted_unique


def cross_pairs(
    query: pd.DataFrame, hits: pd.DataFrame, cap: int
) -> tuple[pd.DataFrame, pd.DataFrame, tuple[np.ndarray, np.ndarray]]:
    """Batch-vs-index pairs from key hits, with batch mode's bucket cap.

    A key whose index bucket plus the batch's ads exceed `cap` becomes a *big* key: new ads pair
    only with its hub (the bucket's oldest ad) and their own keys are not stored for it.
    Returns the pairs (`doc`, `ad`, `via_lsh`, `via_fields`), the newly big keys (`key`, `hub`,
    `hub_is_new`) and the (doc, key) rows to store.
    """
    small = hits[~hits["big"]]
    # (value_counts over distinct rows: the same counts as groupby-nunique, several times faster)
    index_count = small[["key", "ad"]].drop_duplicates()["key"].value_counts()
    batch_count = query["key"].value_counts()  # query holds each (key, doc) once
    total = batch_count.add(index_count, fill_value=0)
    already_big = set(hits.loc[hits["big"], "key"].tolist())
    becoming = total[(total > cap)].index.difference(pd.Index(list(already_big), dtype=np.int64))
    becoming_set = set(becoming.tolist())
    keep = ~small["key"].isin(becoming_set)
    star_hubs = small[~keep].groupby("key")["ad"].min()
    star = query[query["key"].isin(set(star_hubs.index.tolist()))].copy()
    star["ad"] = star_hubs.reindex(star["key"]).to_numpy()
    parts = [
        small.loc[keep, ["doc", "ad", "lsh"]],
        hits.loc[hits["big"], ["doc", "ad", "lsh"]],
        star[["doc", "ad", "lsh"]],
    ]
    every = pd.concat(parts, ignore_index=True)
    every["fields"] = ~every["lsh"]
    cross = (
        every.groupby(["doc", "ad"], sort=True)
        .agg(via_lsh=("lsh", "any"), via_fields=("fields", "any"))
        .reset_index()
    )
    # Newly big keys: the hub is the oldest index ad holding the key, or the batch's first ad with it.
    first_doc = query[query["key"].isin(becoming_set)].groupby("key")["doc"].min()
    big = pd.DataFrame({"key": np.asarray(sorted(becoming_set), dtype=np.int64)})
    hub_old = star_hubs.reindex(big["key"]).to_numpy()
    big["hub_is_new"] = np.isnan(hub_old)
    big["hub"] = np.where(
        big["hub_is_new"], first_doc.reindex(big["key"]).to_numpy(), np.nan_to_num(hub_old)
    ).astype(np.int64)
    stored = query[~query["key"].isin(already_big | becoming_set)]
    # A newly big key whose hub is a batch ad keeps that one ad's key row.
    hub_rows = query.merge(
        big.loc[big["hub_is_new"], ["key", "hub"]], left_on=["key", "doc"], right_on=["key", "hub"]
    )
    stored = pd.concat([stored, hub_rows[["key", "doc", "lsh"]]], ignore_index=True)
    return cross, big, (stored["doc"].to_numpy(dtype=np.int64), stored["key"].to_numpy(dtype=np.int64))


def inner_pairs(gids: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs (positions into `gids`) of members of the same group, among positions where `mask`."""
    positions = np.flatnonzero(mask)
    order = positions[np.argsort(gids[positions], kind="stable")]
    sorted_gids = gids[order]
    starts = np.flatnonzero(np.r_[True, sorted_gids[1:] != sorted_gids[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    lefts, rights = [], []
    for size in sorted_unique(sizes[sizes >= 2]):
        block_starts = starts[sizes == size]
        a, b = np.triu_indices(int(size), 1)
        lefts.append(order[(block_starts[:, None] + a[None, :]).ravel()])
        rights.append(order[(block_starts[:, None] + b[None, :]).ravel()])
    if not lefts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(lefts).astype(np.int64), np.concatenate(rights).astype(np.int64)
