"""Rows in the store: read back (decoded against their references) and what new rows are stored against.

A row is stored on its own or against a *reference* row stored on its own (`pipeline.index.rows`):
a new ad against the root row of the group it joins, else against its most probable scored partner.

Example:
    >>> # packer = row_packer(store); rows, columns, raw = read_rows(store, packer, ids)
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd

from jobdedup.features.normalize.unique import assigned_objects, frame_of_arrays
from jobdedup.features.shingle_sets import sorted_unique
from jobdedup.pipeline.index.rows import RECENT, ROW_COLUMNS, RowPacker
from jobdedup.pipeline.index.store import IndexStore

ROW_TABLE = {"id": np.int64, "ad_id": object, "gid": np.int64, "ref": np.int64, "row": object}
"""The columns of `IndexStore.rows` and their dtypes."""


def row_packer(store: IndexStore, threads: int = 2) -> RowPacker:
    """A `RowPacker` with the index's most recent dictionaries (any other loaded from the store when needed)."""
    recent, next_id = store.recent_dictionaries(RECENT)
    return RowPacker(store.dictionary, recent, next_id, threads=threads)


def read_rows(
    store: IndexStore, packer: RowPacker, ids: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame, list[bytes]]:
    """Stored rows of `ids` (id, ad_id, gid, ref, row), their columns and raw bytes.

    A row stored against another (`ref`) needs that one decoded first: the first row of its
    group (read anyway when whole groups are read) or a similar ad's, read here if missing.
    """
    rows = store.rows(ids)
    every_id, every_ref = rows["id"].to_numpy(), rows["ref"].to_numpy()
    missing = np.setdiff1d(every_ref[every_ref >= 0], every_id)
    every = pd.concat([rows, store.rows(missing)], ignore_index=True) if len(missing) else rows
    if len(missing):
        every_id, every_ref = every["id"].to_numpy(), every["ref"].to_numpy()
    # (a dict of positions, not an Index's `get_indexer`: ~30 µs for a check's few rows)
    position = {row_id: at for at, row_id in enumerate(every_id.tolist())}
    references = [position.get(ref) for ref in every_ref.tolist()]
    columns, raw = packer.unpack(every["row"].tolist(), references)
    n = len(rows)
    if len(every) > n:  # (references read only to decode: a check mostly reads none)
        columns, raw = columns.iloc[:n].reset_index(drop=True), raw[:n]
    return rows, columns, raw


def read_groups(
    store: IndexStore, candidate_ids: np.ndarray
) -> tuple[pd.DataFrame, pd.DataFrame, list[bytes]]:
    """`read_rows` of the candidate index ads and the other members of their groups (sorted by id),
    the columns with `ad_id` first; no store query without candidates (most single-ad checks)."""
    if not len(candidate_ids):
        rows, columns = _no_rows()
        return rows.copy(), columns.copy(), []
    members = store.group_members(store.gids(candidate_ids)["gid"].to_numpy())
    ids = sorted_unique(np.concatenate([candidate_ids, members["id"].to_numpy()]))
    rows, columns, raw = read_rows(store, row_packer(store), ids)
    return rows, _with_ad_ids(columns, rows["ad_id"].to_numpy()), raw


_AD_ROW_INDEX = pd.Index(["ad_id", *ROW_COLUMNS])


def _with_ad_ids(columns: pd.DataFrame, ad_ids: np.ndarray) -> pd.DataFrame:
    """The stored `columns` (an object table, `RowPacker.unpack`'s) after an `ad_id` column, as
    `insert` makes them (~70 µs for a check's few rows; from the blocks, ~20 µs)."""
    return frame_of_arrays(
        _AD_ROW_INDEX, [assigned_objects(ad_ids), *columns.to_numpy(dtype=object).T], columns.index
    )


@cache
def _no_rows() -> tuple[pd.DataFrame, pd.DataFrame]:
    """`read_groups`' tables without candidates, built once (typed empty columns cost ~0.5 ms)."""
    return pd.DataFrame({c: pd.Series(dtype=t) for c, t in ROW_TABLE.items()}), pd.DataFrame(
        {"ad_id": pd.Series(dtype=object)}
    )


def root_references(
    new_id: np.ndarray,
    new_gid: np.ndarray,
    new_raw: list[bytes],
    old_id: np.ndarray,
    old_final_gid: np.ndarray,
    old_ref: np.ndarray,
    old_raw: list[bytes],
) -> tuple[np.ndarray, list[bytes | None]]:
    """Per new ad, the root row of its group to store it against: (its id or -1, its raw row or None).

    The root of an old group is its oldest member stored on its own (every member of a group a new
    ad joins was read back); in a new group it is the founding ad, itself stored on its own.
    """
    roots = (
        pd.Series(np.arange(len(old_id)), index=old_id)[old_ref < 0]
        .groupby(old_final_gid[old_ref < 0])
        .first()
    )
    first = int(new_id[0]) if len(new_id) else 0
    reference_id = np.full(len(new_id), -1, dtype=np.int64)
    references: list[bytes | None] = [None] * len(new_id)
    old_position = roots.reindex(new_gid).to_numpy()
    for i, (gid, position) in enumerate(zip(new_gid.tolist(), old_position.tolist())):
        if not np.isnan(position):
            reference_id[i], references[i] = old_id[int(position)], old_raw[int(position)]
        elif gid != new_id[i] and gid >= first:
            reference_id[i], references[i] = gid, new_raw[gid - first]
    return reference_id, references


def similar_references(
    n: int,
    left: np.ndarray,
    right: np.ndarray,
    probability: np.ndarray,
    used: np.ndarray,
    new_id: np.ndarray,
    targets: set[int],
    new_raw: list[bytes],
    old_id: np.ndarray,
    old_ref: np.ndarray,
    old_raw: list[bytes],
) -> tuple[np.ndarray, list[bytes | None]]:
    """Per new ad stored on its own, its most probable scored partner stored on its own (or -1/None).

    A partner must stay a root: an old ad with no reference, or an earlier new ad that neither uses
    a reference nor gets one here. New ads already referred to by their group (`targets`) keep
    their own storage, so every reference stays one step deep.
    """
    pairs = pd.DataFrame(
        {
            "i": np.concatenate([left, right[right < n]]),
            "j": np.concatenate([right, left[right < n]]),
            "p": np.concatenate([probability, probability[right < n]]),
        }
    )
    pairs = pairs[(pairs["i"] < n) & ((pairs["j"] >= n) | (pairs["j"] < pairs["i"]))]
    pairs = pairs[
        ~used[pairs["i"].to_numpy()] & ~pd.Series(new_id).isin(targets).to_numpy()[pairs["i"].to_numpy()]
    ]
    old_root = np.r_[old_ref < 0, False]  # (a sentinel, for new partners and no old ads)
    j = pairs["j"].to_numpy()
    pairs = pairs[(j < n) | old_root[np.where(j >= n, j - n, len(old_ref))]]
    pairs = pairs.sort_values(["i", "p"], ascending=[True, False])
    reference_id = np.full(n, -1, dtype=np.int64)
    references: list[bytes | None] = [None] * n
    delta = used.copy()
    for i, partner in zip(pairs["i"].tolist(), pairs["j"].tolist()):
        if references[i] is not None or (partner < n and delta[partner]):
            continue
        if partner < n:
            reference_id[i], references[i] = new_id[partner], new_raw[partner]
        else:
            reference_id[i], references[i] = old_id[partner - n], old_raw[partner - n]
        delta[i] = True
    return reference_id, references
