"""What `Index.add` and `Index.check` return: pairs, groups and merges of a batch.

Example:
    >>> pairs, groups, merges = AddResult(empty_pairs(), pd.DataFrame(), empty_merges())
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from jobdedup.features.normalize.unique import assigned_objects, frame_of_arrays
from jobdedup.features.shingle_sets import sorted_unique
from jobdedup.pipeline.index.reconcile import final_gids, new_group_names
from jobdedup.pipeline.index.store import IndexStore

STATUS_ALREADY_INDEXED = "already_indexed"


@dataclass
class AddResult:
    """What `Index.add` did. Unpacks as `pairs, groups, merges`.

    Attributes:
        pairs: candidate pairs with a new ad (`ad_id_a` new, `ad_id_b` new or from the index),
            `probability`, `is_duplicate`, `via_lsh`, `via_fields`, `b_in_index`.
        groups: every input ad: `ad_id`, `group_id`, `group_size` (after the add, old members
            counted), `status` (`already_indexed` for skipped ads), `existing_group`.
        merges: old groups joined by this batch: `group_id` (kept, older), `merged_group_id`, `ads_moved`.
        skipped: ad_ids that were already in the index (nothing done for them).
        report: counts and timings.
    """

    pairs: pd.DataFrame
    groups: pd.DataFrame
    merges: pd.DataFrame
    skipped: list[str] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)

    def __iter__(self) -> Iterator[pd.DataFrame]:
        return iter((self.pairs, self.groups, self.merges))


def empty_pairs() -> pd.DataFrame:
    """The pairs table of a batch with no new ad."""
    return pd.DataFrame(
        {
            "ad_id_a": pd.Series(dtype=object),
            "ad_id_b": pd.Series(dtype=object),
            "probability": pd.Series(dtype=float),
            "is_duplicate": pd.Series(dtype=bool),
            "via_lsh": pd.Series(dtype=bool),
            "via_fields": pd.Series(dtype=bool),
            "b_in_index": pd.Series(dtype=bool),
        }
    )


def empty_merges() -> pd.DataFrame:
    """The merge table of a batch that merged no groups."""
    return pd.DataFrame(
        {
            "group_id": pd.Series(dtype=object),
            "merged_group_id": pd.Series(dtype=object),
            "ads_moved": pd.Series(dtype=np.int64),
        }
    )


_PAIR_COLUMNS = pd.Index(
    ["ad_id_a", "ad_id_b", "probability", "is_duplicate", "via_lsh", "via_fields", "b_in_index", "dup_type"]
)
_GROUP_COLUMNS = pd.Index(["ad_id", "group_id", "group_size", "status", "existing_group"])
_MERGE_COLUMNS = pd.Index(["group_id", "merged_group_id", "ads_moved"])


def would_add(
    store: IndexStore,
    status: np.ndarray,
    new_id: np.ndarray,
    new_ad_ids: np.ndarray,
    new_gid: np.ndarray,
    merges: pd.DataFrame,
    group_size: np.ndarray,
    existing: np.ndarray,
    old: pd.DataFrame,
    old_gid: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    probability: np.ndarray,
    accepted: np.ndarray,
    features: pd.DataFrame | None,
    via_lsh: np.ndarray,
    via_fields: np.ndarray,
    known: pd.DataFrame,
    skipped: list[str],
    ad_ids: list[str],
    info: dict[str, Any],
) -> AddResult:
    """`check`'s outputs: `add`'s, built without writing (new groups named as `add` would name them)."""
    from jobdedup.models.dup_types import assign_dup_types

    n = len(new_id)
    final_gid_of_old = final_gids(old_gid, merges)
    founders = sorted_unique(new_gid[np.isin(new_gid, new_id)])
    old_gids = sorted_unique(
        np.concatenate([new_gid[~np.isin(new_gid, new_id)], merges["into_gid"].to_numpy()])
    )
    # (a dict, not a Series and its reindex: ~0.1 ms of a single-ad check)
    gid_names = dict(zip(founders.tolist(), new_group_names(store, founders, new_id, new_ad_ids)))
    if len(old_gids):
        gid_names.update(store.group_names(old_gids).items())
    final_gid = np.concatenate([new_gid, final_gid_of_old])
    all_ad_ids = np.concatenate([new_ad_ids, old["ad_id"].astype(str).to_numpy()])
    is_duplicate = accepted & (final_gid[left] == final_gid[right])
    dup_type = np.full(len(left), None, dtype=object)
    if features is not None and is_duplicate.any():
        dup_type[is_duplicate] = assign_dup_types(features[is_duplicate].reset_index(drop=True))
    # (frames from their blocks: of a dict, ~0.2 ms each for a single ad)
    pairs = frame_of_arrays(
        _PAIR_COLUMNS,
        [
            assigned_objects(all_ad_ids[left]),
            assigned_objects(all_ad_ids[right]),
            probability,
            is_duplicate,
            via_lsh,
            via_fields,
            right >= n,
            pd.array(dup_type, dtype=pd.StringDtype()),  # (= "string", not looked up by name)
        ],
        pd.RangeIndex(len(left)),
    )
    group_id = np.array([gid_names[gid] for gid in new_gid.tolist()], dtype=object)
    groups, merge_table = output_tables(
        store,
        frame_of_arrays(
            _GROUP_COLUMNS,
            [*map(assigned_objects, (new_ad_ids, group_id)), group_size, assigned_objects(status), existing],
            pd.RangeIndex(n),
        ),
        known,
        skipped,
        ad_ids,
        merges,
    )
    info = {
        "new_ads": int(n),
        "skipped": len(skipped),
        **info,
        "index_ads_read": len(old),
        "duplicate_pairs": int(is_duplicate.sum()),
        "joined_existing_groups": int(existing.sum()),
        "merges": len(merges),
    }
    return AddResult(pairs, groups, merge_table, skipped, info)


def output_tables(
    store: IndexStore,
    groups: pd.DataFrame,
    known: pd.DataFrame,
    skipped: list[str],
    ad_ids: list[str],
    merges: pd.DataFrame,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The groups table of a batch (skipped ads added, every ad in input order) and its merge
    table, as `add` and `check` return them."""
    if skipped:
        groups = pd.concat([groups, skipped_groups(store, known, skipped)], ignore_index=True)
        order = pd.Series(np.arange(len(ad_ids)), index=ad_ids)
        groups = groups.iloc[np.argsort(order.reindex(groups["ad_id"]).to_numpy(), kind="stable")]
        groups = groups.reset_index(drop=True)
    merge_table = frame_of_arrays(
        _MERGE_COLUMNS,
        [
            assigned_objects(merges["into_name"].to_numpy(dtype=object)),
            assigned_objects(merges["name"].to_numpy(dtype=object)),
            merges["ads_moved"].to_numpy(dtype=np.int64),
        ],
        pd.RangeIndex(len(merges)),
    )
    return groups, merge_table


def skipped_groups(store: IndexStore, known: pd.DataFrame, skipped: list[str]) -> pd.DataFrame:
    """Groups-table rows of the ads already indexed (`known`: ad_id, id, gid), in `skipped` order."""
    rows = known.set_index("ad_id").reindex(skipped)
    gids = rows["gid"].to_numpy(dtype=np.int64)
    names = store.group_names(gids)
    sizes = store.group_sizes(gids)
    return pd.DataFrame(
        {
            "ad_id": skipped,
            "group_id": names.reindex(gids).to_numpy(),
            "group_size": sizes.reindex(gids).to_numpy(dtype=np.int64),
            "status": STATUS_ALREADY_INDEXED,
            "existing_group": True,
        }
    )
