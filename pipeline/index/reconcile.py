"""Reconciliation: a batch's clusters mapped onto the index's stable group ids.

Old ads never leave their group: an old group belongs to the cluster holding most of its members;
a new ad joins the old group its cluster holds; a cluster holding two old groups merges them under
the older id; other new ads form new groups named after their smallest `ad_id`.

Example:
    >>> # new_gid, merges, group_size, existing = reconcile(store, labels, n, new_id, ...)
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components

from jobdedup.pipeline.index.store import IndexStore


def reconcile(
    store: IndexStore,
    labels: np.ndarray,
    n: int,
    new_id: np.ndarray,
    new_ad_ids: np.ndarray,
    old_gid: np.ndarray,
    in_touched: np.ndarray,
    old_id: np.ndarray,
) -> tuple[np.ndarray, pd.DataFrame, np.ndarray, np.ndarray]:
    """New ads' gids, the merges, new ads' final group sizes and whether they joined an old group."""
    old_labels = labels[n:]
    touched_labels = old_labels[in_touched]
    touched_gids = old_gid[in_touched]
    # An old group stays whole: it belongs to the cluster holding most of its members (ties: the
    # cluster with new ads, then the smaller label). Old groups sharing a cluster are merged.
    new_labels = labels[:n]
    with_new = np.isin(touched_labels, new_labels)
    votes = pd.DataFrame({"gid": touched_gids, "label": touched_labels, "with_new": with_new})
    votes = votes.groupby(["gid", "label"], as_index=False).agg(
        n=("with_new", "size"), with_new=("with_new", "first")
    )
    votes = votes.sort_values(["gid", "n", "with_new", "label"], ascending=[True, False, False, True])
    main = votes.drop_duplicates("gid")
    touched_gids, touched_labels = main["gid"].to_numpy(), main["label"].to_numpy()
    gid_codes, gid_values = pd.factorize(touched_gids)
    label_codes, label_values = pd.factorize(touched_labels)
    k = len(gid_values)
    survivor = {}
    if k:
        graph = coo_matrix(
            (np.ones(len(gid_codes)), (gid_codes, k + label_codes)), shape=(k + len(label_values),) * 2
        )
        component = connected_components(graph, directed=False)[1][:k]
        oldest = pd.Series(gid_values).groupby(component).transform("min").to_numpy()
        survivor = dict(zip(gid_values.tolist(), oldest.tolist()))
    cluster_gid = pd.Series(touched_gids, index=touched_labels).groupby(level=0).min()
    cluster_gid = cluster_gid.map(lambda g: survivor[g])
    new_labels = labels[:n]
    joined = cluster_gid.reindex(new_labels).to_numpy()
    existing = ~np.isnan(joined)
    new_gid = np.empty(n, dtype=np.int64)
    new_gid[existing] = joined[existing].astype(np.int64)
    # New groups: the founding ad is the member with the smallest ad_id.
    fresh = np.flatnonzero(~existing)
    if len(fresh):
        frame = pd.DataFrame({"label": new_labels[fresh], "ad_id": new_ad_ids[fresh], "id": new_id[fresh]})
        founder = frame.sort_values(["label", "ad_id"]).groupby("label")["id"].first()
        new_gid[fresh] = founder.reindex(frame["label"]).to_numpy()
    # Merges and sizes.
    old_sizes = pd.Series(old_gid[in_touched]).value_counts()
    absorbed = [(g, s) for g, s in survivor.items() if g != s]
    names = store.group_names(np.asarray([x for pair in absorbed for x in pair], dtype=np.int64))
    merges = pd.DataFrame(
        {
            "gid": [g for g, _ in absorbed],
            "into_gid": [s for _, s in absorbed],
            "name": [names.get(g) for g, _ in absorbed],
            "into_name": [names.get(s) for _, s in absorbed],
            "ads_moved": [int(old_sizes.get(g, 0)) for g, _ in absorbed],
        },
        columns=["gid", "into_gid", "name", "into_name", "ads_moved"],
    ).astype({"gid": np.int64, "into_gid": np.int64, "ads_moved": np.int64})
    final_old = pd.Series(old_gid[in_touched]).map(lambda g: survivor.get(g, g))
    total = pd.concat([final_old, pd.Series(new_gid)]).value_counts()
    group_size = total.reindex(new_gid).to_numpy(dtype=np.int64)
    return new_gid, merges, group_size, existing


def new_group_names(
    store: IndexStore, founders: np.ndarray, new_id: np.ndarray, new_ad_ids: np.ndarray
) -> list[str]:
    """A new group is named after its founding ad; a name still held by an old group gets a suffix."""
    position = {ad: at for at, ad in enumerate(new_id.tolist())}  # (a Series' reindex costs ~0.1 ms)
    names = new_ad_ids[[position[founder] for founder in founders.tolist()]].tolist()
    taken = store.names_taken(names)
    return [f"{name}#{gid}" if name in taken else name for name, gid in zip(names, founders.tolist())]


def final_gids(old_gid: np.ndarray, merges: pd.DataFrame) -> np.ndarray:
    """Old ads' gids after `merges` (an absorbed group's gid becomes the one it merged into)."""
    if not len(merges):
        return old_gid
    mapping = dict(zip(merges["gid"].tolist(), merges["into_gid"].tolist()))
    return np.asarray([mapping.get(g, g) for g in old_gid.tolist()], dtype=np.int64)
