"""`pipeline.index.quick_check` gives exactly what the DataFrame steps of `Index.add` give; so do the
numpy steps a single check runs through (boilerplate blocks)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from jobdedup.features.shingle_sets import sorted_member, sorted_unique
from jobdedup.pipeline.boilerplate import find_boilerplate_blocks, merge_block_sets
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.index.blocks import learn_boilerplate, sighting_keys
from jobdedup.pipeline.index.pairs import cross_pairs
from jobdedup.pipeline.index.quick_check import (
    Hits,
    check_cross_pairs,
    check_reconcile,
    distinct_query,
    join_hits,
)
from jobdedup.pipeline.index.reconcile import reconcile


def _random_lookup(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A random batch query (`key`, `doc`, `lsh`, distinct on key and doc) and its index hits."""
    n_keys, n_docs = int(rng.integers(1, 12)), int(rng.integers(1, 6))
    query = pd.DataFrame(
        {
            "key": rng.integers(0, n_keys, 40).astype(np.int64),
            "doc": rng.integers(0, n_docs, 40).astype(np.int64),
            "lsh": rng.random(40) < 0.7,
        }
    ).drop_duplicates(["key", "doc"])
    big_keys = set(rng.choice(n_keys, int(rng.integers(0, 3)), replace=False).tolist())
    stored = {k: ([int(rng.integers(100, 110))] if k in big_keys else rng.integers(100, 130, rng.integers(0, 8)).tolist())
              for k in range(n_keys)}  # fmt: skip
    rows = [(k, d, lsh, ad, k in big_keys) for k, d, lsh in query.itertuples(index=False) for ad in stored[k]]
    hits = pd.DataFrame(rows, columns=["key", "doc", "lsh", "ad", "big"]).astype(
        {"key": np.int64, "doc": np.int64, "lsh": bool, "ad": np.int64, "big": bool}
    )
    return query, hits


def hit_arrays(hits: pd.DataFrame) -> Hits:
    """The columns of `IndexStore.lookup`'s table as `Hits`."""
    return Hits(*(hits[c].to_numpy() for c in Hits._fields))


@pytest.mark.parametrize("seed", range(40))
def test_check_cross_pairs_are_add_cross_pairs(seed):
    rng = np.random.default_rng(seed)
    query, hits = _random_lookup(rng)
    cap = int(rng.integers(2, 8))
    expected = cross_pairs(query, hits, cap)[0]
    found = check_cross_pairs(*(query[c].to_numpy() for c in ("key", "doc", "lsh")), hit_arrays(hits), cap)
    pd.testing.assert_frame_equal(
        found.reset_index(drop=True), expected.reset_index(drop=True), check_dtype=False
    )


@pytest.mark.parametrize("seed", range(20))
def test_join_hits_is_lookups_merge(seed):
    """`join_hits` over `key_hits` gives `StoreReads.lookup`'s rows in its order (a pandas merge)."""
    rng = np.random.default_rng(seed)
    query, _ = _random_lookup(rng)
    key, doc, lsh = (query[c].to_numpy() for c in ("key", "doc", "lsh"))
    distinct = np.unique(key)
    n_hits = int(rng.integers(0, 15))
    hits = (
        rng.integers(0, len(distinct), n_hits).astype(np.int64),
        rng.integers(100, 130, n_hits).astype(np.int64),
        rng.random(n_hits) < 0.2,
    )
    found = pd.DataFrame({"key": distinct[hits[0]], "ad": hits[1], "big": hits[2]})
    expected = query.merge(found, on="key")[["key", "doc", "lsh", "ad", "big"]]
    joined = join_hits(key, doc, lsh, hits)
    for column, values in zip(joined._fields, joined):
        assert values.tolist() == expected[column].tolist(), column


def test_distinct_query_keeps_the_first_of_each_key_and_doc():
    key, doc, lsh = (
        np.array([3, 1, 3, 3, 1]),
        np.array([0, 0, 0, 1, 0]),
        np.array([True, True, False, False, False]),
    )
    frame = pd.DataFrame({"key": key, "doc": doc, "lsh": lsh}).drop_duplicates(["key", "doc"])
    found = distinct_query(key, doc, lsh)
    assert [a.tolist() for a in found] == [frame[c].tolist() for c in ("key", "doc", "lsh")]


class _Names:
    """The one store method reconciling reads: a group's name."""

    def group_names(self, gids: np.ndarray) -> pd.Series:
        gids = np.unique(np.asarray(gids, dtype=np.int64))
        return pd.Series([f"g{g}" for g in gids.tolist()], index=gids, dtype=object)


@pytest.mark.parametrize("seed", range(60))
def test_check_reconcile_is_add_reconcile(seed):
    rng = np.random.default_rng(seed)
    n, n_old = int(rng.integers(1, 6)), int(rng.integers(0, 12))
    labels = rng.integers(0, int(rng.integers(1, 8)), n + n_old)
    old_gid = rng.integers(0, 5, n_old).astype(np.int64)
    in_touched = np.isin(old_gid, rng.choice(5, int(rng.integers(0, 6)), replace=False))
    new_id = np.arange(50, 50 + n, dtype=np.int64)
    new_ad_ids = np.asarray([f"ad-{x}" for x in rng.permutation(n).tolist()], dtype=object)
    names = _Names()
    expected = reconcile(names, labels, n, new_id, new_ad_ids, old_gid, in_touched, old_gid)  # type: ignore[arg-type]
    found = check_reconcile(labels, n, new_id, new_ad_ids, old_gid, in_touched, names.group_names)
    for a, b in zip(found, expected):
        if isinstance(b, pd.DataFrame):
            pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))
        else:
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("seed", range(20))
def test_find_boilerplate_blocks_counts_distinct_titles_and_employers(seed):
    rng = np.random.default_rng(seed)
    n, docs = int(rng.integers(0, 60)), int(rng.integers(1, 10))
    block_hash = rng.integers(0, 8, n).astype(np.uint64) * np.uint64(2**61)  # (high bits set too)
    block_doc = rng.integers(0, docs, n)
    titles, employers = rng.integers(0, 4, docs), rng.integers(0, 4, docs)
    least_titles, least_employers = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    seen: dict[int, tuple[set, set]] = {}
    for block, doc in zip(block_hash.tolist(), block_doc.tolist()):
        seen.setdefault(block, (set(), set()))[0].add(titles[doc])
        seen[block][1].add(employers[doc])
    expected = sorted(b for b, (t, e) in seen.items() if len(t) >= least_titles or len(e) >= least_employers)
    found = find_boilerplate_blocks(block_hash, block_doc, titles, least_titles, employers, least_employers)
    assert found.dtype == np.uint64 and found.tolist() == expected


def _reference_learn_boilerplate(batch_boilerplate, seen, stored, config):
    """`blocks.learn_boilerplate` in its DataFrame form (before the numpy one), as the reference."""
    both = pd.concat([stored[["key", "value"]], seen[["key", "value"]]], ignore_index=True).drop_duplicates()
    value = both["value"].to_numpy(dtype=np.int64)
    reached = find_boilerplate_blocks(
        both["key"].to_numpy().astype(np.uint64), np.arange(len(both)), value >> 16,
        config.boilerplate_min_titles, value & 0xFFFF, config.boilerplate_min_employers,
    ).astype(np.int64)  # fmt: skip
    now = sorted_member(seen["key"].to_numpy(), reached)
    learnt = merge_block_sets(batch_boilerplate, seen["block"].to_numpy()[now])
    now |= sorted_member(seen["block"].to_numpy(), learnt)
    affected = sorted_unique(seen["doc"].to_numpy()[now])
    new = seen.loc[~now, ["key", "value"]].drop_duplicates()
    if len(stored) and len(new):
        key, value = (new[c].to_numpy().astype(np.uint64) for c in ("key", "value"))
        old_key, old_value = (stored[c].to_numpy().astype(np.uint64) for c in ("key", "value"))
        s, low = np.uint64(16), np.uint64(0xFFFF)
        title = sorted_member((key << s) | (value >> s), sorted_unique((old_key << s) | (old_value >> s)))
        employer = sorted_member(
            (key << s) | (value & low), sorted_unique((old_key << s) | (old_value & low))
        )
        new = new[~(title & employer)]
    return learnt, affected, new.reset_index(drop=True)


@pytest.mark.parametrize("seed", range(30))
def test_learnt_boilerplate_is_that_of_the_dataframe_form(seed):
    rng = np.random.default_rng(seed)
    n_seen, n_stored = int(rng.integers(0, 30)), int(rng.integers(0, 30))
    blocks = rng.integers(1, 2**63, 8).astype(np.uint64)
    block = blocks[rng.integers(0, 8, n_seen)]
    pair_value = lambda n: (rng.integers(0, 4, n) << 16) | rng.integers(0, 4, n)
    seen = pd.DataFrame(
        {
            "doc": rng.integers(0, 5, n_seen),
            "block": block,
            "key": sighting_keys(block),
            "value": pair_value(n_seen),
        }
    )
    stored = pd.DataFrame(
        {"key": sighting_keys(blocks[rng.integers(0, 8, n_stored)]), "value": pair_value(n_stored)}
    )
    batch = SimpleNamespace(batch_boilerplate=np.sort(blocks[rng.integers(0, 8, int(rng.integers(0, 2)))]))
    config = Config(boilerplate_min_titles=3, boilerplate_min_employers=2)
    found = learn_boilerplate(batch, seen, stored, config)
    expected = _reference_learn_boilerplate(batch.batch_boilerplate, seen, stored, config)
    assert np.array_equal(found[0], expected[0]) and np.array_equal(found[1], expected[1])
    pd.testing.assert_frame_equal(found[2], expected[2])


def test_value_hashes_and_field_keys_are_those_of_the_pandas_forms():
    """`value_hashes` and `field_keys` read missing values with numpy: the same hashes and keys as
    the pandas forms they replaced (stored keys must not change)."""
    from xxhash import xxh3_64_intdigest

    from jobdedup.features.fields import normalize_fields
    from jobdedup.pipeline.candidates import FIELD_COMBOS, blocking_columns
    from jobdedup.pipeline.index.blocks import _NO_VALUE, value_hashes
    from jobdedup.pipeline.index.rows import field_keys
    from tests.conftest import DATA

    fields = normalize_fields(pd.read_parquet(DATA / "natural_train_ads.parquet"))
    for column in ("title_tokens", "company"):
        values = fields[column].astype(object).where(fields[column].notna(), _NO_VALUE)
        expected = [xxh3_64_intdigest(str(v).encode()) for v in values]
        assert value_hashes(fields[column]).tolist() == expected
        assert fields[column].isna().any()
    docs, _ = field_keys(fields)
    columns = blocking_columns(fields)
    combo_docs = [
        np.flatnonzero((columns[a].notna() & columns[b].notna()).to_numpy()) for a, b in FIELD_COMBOS.values()
    ]
    assert docs[: sum(map(len, combo_docs))].tolist() == np.concatenate(combo_docs).tolist()
