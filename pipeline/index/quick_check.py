"""`Index.check`'s own steps where `add`'s DataFrame code costs more than the work: numpy for a few rows.

A single-ad check runs `add`'s matching path; most of its steps cost a fixed ~1 ms per pandas
operation, whatever the number of rows. The functions here give exactly what the steps of
`pipeline.index` give (tests compare them on random inputs), for what a check needs
and nothing it does not (a check writes nothing: no keys to store, no sightings to keep):

- `check_index_pairs` (`distinct_query`, `join_hits`, `check_cross_pairs`): the batch-vs-index
  pairs of `pairs.cross_pairs` (bucket cap included) from the store's `key_hits`, without the
  keys and big keys an add stores;
- `check_reconcile`: `reconcile.reconcile`'s group of each new ad, the merges and sizes.

Example:
    >>> import pandas as pd
    >>> hits = Hits(*(np.array([v]) for v in (5, 0, True, 9, False)))
    >>> check_cross_pairs(np.array([5]), np.array([0]), np.array([True]), hits, 200)["ad"].tolist()
    [9]
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import NamedTuple

import numpy as np
import pandas as pd

from jobdedup.features.normalize.unique import frame_of_arrays
from jobdedup.features.shingle_sets import first_occurrences, index_ranges, sorted_member, sorted_unique
from jobdedup.pipeline.index.store import IndexStore


class Hits(NamedTuple):
    """Query rows joined with the index ads holding their key (`IndexStore.lookup`'s columns)."""

    key: np.ndarray
    doc: np.ndarray
    lsh: np.ndarray
    ad: np.ndarray
    big: np.ndarray


def distinct_query(key: np.ndarray, doc: np.ndarray, lsh: np.ndarray) -> tuple[np.ndarray, ...]:
    """The (key, doc, lsh) rows with each (key, doc) once, the first kept (`drop_duplicates`)."""
    kept = first_occurrences(key, doc)
    return key[kept], doc[kept], lsh[kept]


def join_hits(
    key: np.ndarray, doc: np.ndarray, lsh: np.ndarray, hits: tuple[np.ndarray, np.ndarray, np.ndarray]
) -> Hits:
    """`IndexStore.lookup` from `key_hits` (its `hits` for `sorted_unique(key)`): each query row
    (`key`, `doc`, `lsh`) once per index ad holding its key."""
    position, ad, big = hits
    distinct = sorted_unique(key)
    order = np.argsort(position, kind="stable")
    count = np.bincount(position, minlength=len(distinct))
    start = np.cumsum(count) - count
    row_of = np.searchsorted(distinct, key)
    per_row = count[row_of]
    rows = np.repeat(np.arange(len(key)), per_row)
    at = order[index_ranges(start[row_of], per_row)]
    return Hits(key[rows], doc[rows], lsh[rows], ad[at], big[at])


_CROSS_COLUMNS = pd.Index(["doc", "ad", "via_lsh", "via_fields"])


def check_cross_pairs(
    key: np.ndarray, doc: np.ndarray, lsh: np.ndarray, hits: Hits, cap: int
) -> pd.DataFrame:
    """`pairs.cross_pairs(query, hits, cap)[0]` for the distinct query rows (`key`, `doc`, `lsh`).

    Returns `doc`, `ad`, `via_lsh`, `via_fields`, sorted by (doc, ad).
    """
    hit_key, hit_doc, hit_lsh, hit_ad, big = hits
    # Per key: distinct index ads (small hits) plus the batch's rows; over the cap -> a star.
    small_key, small_ad = hit_key[~big], hit_ad[~big]
    pair_order = np.lexsort((small_ad, small_key))
    sk, sa = small_key[pair_order], small_ad[pair_order]
    distinct_pair = np.ones(len(sk), dtype=bool)
    distinct_pair[1:] = (sk[1:] != sk[:-1]) | (sa[1:] != sa[:-1])
    keys = sorted_unique(np.concatenate([key, sk]))
    total = np.bincount(np.searchsorted(keys, key), minlength=len(keys)) + np.bincount(
        np.searchsorted(keys, sk[distinct_pair]), minlength=len(keys)
    )
    becoming = keys[(total > cap) & ~sorted_member(keys, sorted_unique(hit_key[big]))]
    capped = sorted_member(hit_key, becoming) & ~big
    # A capped key's hub: its smallest index ad (sorted pairs: the first of each key).
    hub_key, hub_at = np.unique(sk[sorted_member(sk, becoming)], return_index=True)
    hub_ad = sa[sorted_member(sk, becoming)][hub_at]
    starred = sorted_member(key, hub_key)
    star_ad = hub_ad[np.searchsorted(hub_key, key[starred])] if len(hub_key) else np.zeros(0, np.int64)
    pair_doc = np.concatenate([hit_doc[~capped], doc[starred]])
    pair_ad = np.concatenate([hit_ad[~capped], star_ad])
    pair_lsh = np.concatenate([hit_lsh[~capped], lsh[starred]])
    order = np.lexsort((pair_ad, pair_doc))
    pair_doc, pair_ad, pair_lsh = pair_doc[order], pair_ad[order], pair_lsh[order]
    start = np.flatnonzero(np.r_[True, (pair_doc[1:] != pair_doc[:-1]) | (pair_ad[1:] != pair_ad[:-1])])
    if not len(order):
        start = np.zeros(0, dtype=np.int64)
    lsh_count = np.add.reduceat(pair_lsh.astype(np.int64), start) if len(start) else np.zeros(0, np.int64)
    size = np.diff(np.r_[start, len(order)])
    # (from its blocks: a frame of a dict costs ~70 µs for a single ad's few pairs)
    return frame_of_arrays(
        _CROSS_COLUMNS,
        [pair_doc[start], pair_ad[start], lsh_count > 0, lsh_count < size],
        pd.RangeIndex(len(start)),
    )


def check_reconcile(
    labels: np.ndarray,
    n: int,
    new_id: np.ndarray,
    new_ad_ids: np.ndarray,
    old_gid: np.ndarray,
    in_touched: np.ndarray,
    group_names: Callable[[np.ndarray], pd.Series],
) -> tuple[np.ndarray, pd.DataFrame, np.ndarray, np.ndarray]:
    """`reconcile.reconcile` (its arguments, the store's `group_names` instead of the store): new ads' gids, the
    merges, new ads' final group sizes and whether each joined an old group."""
    old_labels = labels[n:]
    new_labels = labels[:n]
    touched_labels = old_labels[in_touched].tolist()
    touched_gids = old_gid[in_touched].tolist()
    new_label_set = set(new_labels.tolist())
    # An old group belongs to the cluster holding most of its members (ties: the cluster with new
    # ads, then the smaller label).
    votes: dict[tuple[int, int], int] = {}
    for gid, label in zip(touched_gids, touched_labels):
        votes[(gid, label)] = votes.get((gid, label), 0) + 1
    main: dict[int, int] = {}
    ranked = sorted(votes.items(), key=lambda v: (v[0][0], -v[1], v[0][1] not in new_label_set, v[0][1]))
    for (gid, label), _ in ranked:
        main.setdefault(gid, label)
    # Old groups sharing a cluster are merged under the oldest (smallest) gid.
    by_label: dict[int, list[int]] = {}
    for gid, label in main.items():
        by_label.setdefault(label, []).append(gid)
    cluster_gid = {label: min(gids) for label, gids in by_label.items()}
    survivor = {gid: cluster_gid[label] for gid, label in main.items()}
    new_gid = np.empty(n, dtype=np.int64)
    existing = np.zeros(n, dtype=bool)
    founder: dict[int, tuple[str, int]] = {}
    for i, label in enumerate(new_labels.tolist()):
        if label in cluster_gid:
            new_gid[i], existing[i] = cluster_gid[label], True
        else:
            candidate = (str(new_ad_ids[i]), int(new_id[i]))
            founder[label] = min(founder.get(label, candidate), candidate)
    for i, label in enumerate(new_labels.tolist()):
        if not existing[i]:
            new_gid[i] = founder[label][1]
    old_sizes: dict[int, int] = {}
    for gid in touched_gids:
        old_sizes[gid] = old_sizes.get(gid, 0) + 1
    absorbed = [(g, s) for g, s in survivor.items() if g != s]
    if absorbed:
        names = group_names(np.asarray([x for pair in absorbed for x in pair], dtype=np.int64))
        merges = _merge_table(absorbed, names, old_sizes)
    else:  # (most checks)
        merges = _no_merges().copy()
    total: dict[int, int] = {}
    for gid in [survivor.get(g, g) for g in touched_gids] + new_gid.tolist():
        total[gid] = total.get(gid, 0) + 1
    group_size = np.asarray([total[g] for g in new_gid.tolist()], dtype=np.int64)
    return new_gid, merges, group_size, existing


def _merge_table(
    absorbed: list[tuple[int, int]], names: pd.Series | dict[int, str], old_sizes: dict[int, int]
) -> pd.DataFrame:
    """`reconcile`'s merge table: per absorbed (gid, survivor), the names and the ads moved."""
    return pd.DataFrame(
        {
            "gid": [g for g, _ in absorbed],
            "into_gid": [s for _, s in absorbed],
            "name": [names.get(g) for g, _ in absorbed],
            "into_name": [names.get(s) for _, s in absorbed],
            "ads_moved": [old_sizes.get(g, 0) for g, _ in absorbed],
        },
        columns=["gid", "into_gid", "name", "into_name", "ads_moved"],
    ).astype({"gid": np.int64, "into_gid": np.int64, "ads_moved": np.int64})


@cache
def _no_merges() -> pd.DataFrame:
    """The merge table of no merge, built once (its dtype conversions cost a check ~1 ms)."""
    return _merge_table([], {}, {})


def check_index_pairs(
    store: IndexStore, lsh: tuple[np.ndarray, np.ndarray], fields: tuple[np.ndarray, np.ndarray], cap: int
) -> pd.DataFrame:
    """A check's candidate pairs against the index: its band keys `lsh` and field keys `fields`
    (each (doc, key)) looked up in `store`, as `pairs.cross_pairs` pairs them."""
    key = np.concatenate([lsh[1], fields[1]]).view(np.int64)
    doc = np.concatenate([lsh[0], fields[0]]).astype(np.int64)
    via_lsh = np.r_[np.ones(len(lsh[1]), bool), np.zeros(len(fields[1]), bool)]
    key, doc, via_lsh = distinct_query(key, doc, via_lsh)
    hits = join_hits(key, doc, via_lsh, store.key_hits(sorted_unique(key)))
    return check_cross_pairs(key, doc, via_lsh, hits, cap)
