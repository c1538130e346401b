"""The index's storage: key runs, compressed rows, references, names, the schema check."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from jobdedup.pipeline.index import Index, IndexFileError, key_runs
from jobdedup.pipeline.index.blobs import decode_part, encode_part
from jobdedup.pipeline.index.key_runs import SPACE_BLOCKS, SPACE_KEYS, KeyRuns
from jobdedup.pipeline.index.rows import ROW_COLUMNS, RowPacker, raw_rows
from jobdedup.pipeline.index.store import open_store


@pytest.mark.parametrize("n", [1, 2, 1000])
def test_key_part_round_trip(n):
    rng = np.random.default_rng(n)
    keys = np.sort(rng.integers(0, 1 << 40, n).astype(np.uint64))
    keys[n // 2 :: 7] = keys[n // 2]  # repeated keys
    keys = np.sort(keys)
    ads = rng.integers(5, 5 + 3 * n, n).astype(np.int64)
    blob, low, high = encode_part(keys, ads)
    back_keys, back_ads = decode_part(blob, int(keys[0]), low)
    assert (back_keys == keys).all() and (back_ads == ads).all()
    assert low == ads.min() and high == ads.max()


def _brute(
    entries: list[tuple[np.ndarray, np.ndarray]], query: np.ndarray, removed: set[int]
) -> set[tuple[int, int]]:
    keys = np.concatenate([k for k, _ in entries])
    ads = np.concatenate([a for _, a in entries])
    hit = np.isin(keys, query)
    return {(int(k), int(a)) for k, a in zip(keys[hit], ads[hit]) if int(a) not in removed}


def test_key_runs_merge_and_lookup_match_a_plain_scan(tmp_path, monkeypatch):
    monkeypatch.setattr(key_runs, "RUN_BASE", 64)
    monkeypatch.setattr(key_runs, "PART_ENTRIES", 50)
    store = open_store(tmp_path / "s.jdx")
    rng = np.random.default_rng(0)
    entries, removed = [], set()
    next_ad = 1
    with store.write(timeout=1):
        for batch in range(12):
            n_ads = int(rng.integers(3, 12))
            ads = np.repeat(np.arange(next_ad, next_ad + n_ads), 4)
            keys = rng.integers(0, 300, len(ads)).astype(np.uint64)  # small key space: many shared keys
            next_ad += n_ads
            store.insert_keys(keys, ads)
            entries.append((keys, ads))
            if batch == 5:
                gone = np.arange(2, 9)
                store.db.executemany("INSERT INTO removed VALUES (?)", [(int(i),) for i in gone])
                removed.update(gone.tolist())
            query = np.unique(rng.integers(0, 300, 80).astype(np.uint64))
            position, found = store._runs_lookup(SPACE_KEYS, query)
            assert {(int(query[p]), int(a)) for p, a in zip(position, found)} == _brute(
                entries, query, removed
            )
        runs = store.db.execute("SELECT COUNT(DISTINCT run) FROM key_parts WHERE space = 0").fetchone()[0]
        assert runs < 12  # runs were merged
        # Entries of removed ads are dropped by merges; ids no run covers leave the removed list.
        still = {r[0] for r in store.db.execute("SELECT id FROM removed")}
        assert still <= removed
    store.close()


@pytest.mark.slow
def test_rows_round_trip_with_dictionary_drift_and_references(test_ads):
    ads = test_ads.reset_index(drop=True)
    swapped = ads.copy()  # a "new language": the same ads with letters swapped
    table = str.maketrans("etaoinsrhlETAOINSRHL", "aoinsrhletAOINSRHLET")
    for column in ("description", "title", "company"):
        swapped[column] = swapped[column].map(lambda t: t.translate(table) if isinstance(t, str) else t)
    stored: dict[int, bytes] = {}
    packer = RowPacker(stored.__getitem__)
    first = packer.pack(ads, seed=3)
    assert len(first.dictionaries) == 1  # the first batch large enough trains one
    mixed = pd.concat([ads.iloc[:300], swapped], ignore_index=True)
    second = packer.pack(mixed, seed=3)
    assert len(second.dictionaries) == 1  # the swapped ads drifted: a dictionary of their own
    third = packer.pack(ads.iloc[300:], seed=3)
    assert not third.dictionaries  # back to the first "language": its dictionary is still there
    for dict_id, data, _ in first.dictionaries + second.dictionaries:
        stored[dict_id] = data
    rows = first.rows + second.rows + third.rows
    raw = raw_rows(pd.concat([ads, mixed, ads.iloc[300:]], ignore_index=True))
    # Ad i+1 stored against ad i (a reference row) where that is smaller; references must be roots.
    with_refs = RowPacker(stored.__getitem__, packer.recent).pack(
        None, [None] + raw[:-1], train=False, raw=raw
    )
    assert not with_refs.dictionaries
    positions = [i - 1 if used else None for i, used in enumerate(with_refs.uses_reference)]
    assert any(p is not None for p in positions)
    blobs = list(with_refs.rows)
    for i, p in enumerate(positions):
        if p is not None and positions[p] is not None:
            blobs[i], positions[i] = rows[i], None
    frame, back = RowPacker(stored.__getitem__).unpack(blobs, positions)
    assert back == raw
    assert frame["title"].tolist() == [json.loads(r)[ROW_COLUMNS.index("title")] for r in raw]


def _reference_rows(store, ids: np.ndarray) -> pd.DataFrame:
    """`rows` as a frame of the query's tuples, `astype` and an inserted ad_id column made it."""
    frame = pd.DataFrame(store._row_tuples(ids), columns=["id", "gid", "ref", "row"])
    frame = frame.astype({"id": np.int64, "gid": np.int64, "ref": np.int64})
    frame.insert(1, "ad_id", store._ad_ids(frame["id"].to_numpy()))
    return frame


def test_rows_are_those_of_a_frame_of_the_query(tmp_path, default_model, test_ads):
    """The stored rows come as typed columns built from the query's tuples (a check reads a few):
    the table a frame of them and `astype` gave, for no rows, some rows (some stored against a
    reference) and ids not in the index."""
    with Index.open(tmp_path / "ads.jdx") as index:
        assert index.add(test_ads.iloc[:80], default_model).report["rows_stored_against_reference"] > 0
        store = index.store
        with store.read():
            stored = np.asarray([i for (i,) in store.db.execute("SELECT id FROM ads")], dtype=np.int64)
            for ids in (stored[:0], stored[:1], stored[[5, 2, 2, 9]], stored, np.r_[stored[:3], 10**9]):
                rows = store.rows(ids)
                pd.testing.assert_frame_equal(rows, _reference_rows(store, ids))
                assert list(rows.columns) == ["id", "ad_id", "gid", "ref", "row"]
            assert (store.rows(stored)["ref"] >= 0).any()


def test_id_tables_and_unpacked_rows_are_those_of_frames_of_the_lists(tmp_path, default_model, test_ads):
    """Ids and groups, and unpacked rows, come as tables built from one array (a check reads a
    few): the tables a frame of the query's tuples (or of the rows' lists) gave; no ad found is an
    empty table a caller may change."""
    with Index.open(tmp_path / "ads.jdx") as index:
        index.add(test_ads.iloc[:80], default_model)
        store = index.store
        with store.read():
            stored = np.asarray([i for (i,) in store.db.execute("SELECT id FROM ads")], dtype=np.int64)
            for ids in (stored[:0], stored[:1], stored[[5, 2, 2, 9]], stored, np.r_[stored[:3], 10**9]):
                wanted = ",".join(map(str, ids.tolist())) or "NULL"
                found = store.db.execute(
                    f"SELECT id, gid FROM ads WHERE id IN ({wanted}) ORDER BY id"
                ).fetchall()
                gids = store.gids(ids)
                pd.testing.assert_frame_equal(
                    gids, pd.DataFrame(found, columns=["id", "gid"], dtype=np.int64)
                )
                members = store.group_members(gids["gid"].to_numpy())
                in_groups = ",".join(map(str, gids["gid"].tolist())) or "NULL"
                found = store.db.execute(f"SELECT id, gid FROM ads WHERE gid IN ({in_groups})").fetchall()
                reference = pd.DataFrame(sorted(found), columns=["id", "gid"], dtype=np.int64)
                pd.testing.assert_frame_equal(members.sort_values("id", ignore_index=True), reference)
                assert type(members.index) is pd.RangeIndex and len(members) >= len(set(gids["gid"]))
            alone = store.rows(stored).query("ref < 0")
            for some in (alone.iloc[:0], alone.iloc[:1], alone.iloc[:7], alone):
                columns, raw = RowPacker(store.dictionary, {}, 1).unpack(
                    some["row"].tolist(), [None] * len(some)
                )
                records = [json.loads(r) for r in raw]
                pd.testing.assert_frame_equal(
                    columns, pd.DataFrame(records, columns=list(ROW_COLUMNS), dtype=object)
                )
                assert (columns.dtypes == object).all() and len(columns) == len(some)
            query = "SELECT first_key, last_key FROM key_parts WHERE space = ?"
            sighted = [key for keys in store.db.execute(query, (SPACE_BLOCKS,)) for key in keys]
            for keys in (
                np.array(sighted[:0]),
                np.array([*sighted, 0, 2**40, 7, sighted[0]], dtype=np.int64),
            ):
                distinct = np.unique(keys).astype(np.uint64)
                position, values = KeyRuns._runs_lookup(store, SPACE_BLOCKS, distinct)
                reference = pd.DataFrame({"key": distinct[position].astype(np.int64), "value": values})
                pd.testing.assert_frame_equal(store.block_sightings(keys), reference)
            assert len(reference) >= len(sighted) > 0
            none = store.find_ads(["no such ad"])
            pd.testing.assert_frame_equal(none, pd.DataFrame(
                {"ad_id": np.empty(0, object), "id": np.empty(0, np.int64), "gid": np.empty(0, np.int64)}))  # fmt: skip
            none["ad_id"] = none["ad_id"].astype(str)
            assert store.find_ads([]).dtypes["ad_id"] == object


def test_references_removal_names_and_readding(tmp_path, default_model, test_ads, test_labels):
    path = tmp_path / "ads.jdx"
    sizes = test_labels.groups["group_id"].value_counts()
    big = test_labels.groups[test_labels.groups["group_id"].isin(sizes[sizes >= 3].index)]
    with Index.open(path) as index:
        result = index.add(test_ads, default_model)
        assert result.report["rows_stored_against_reference"] > 0
        assert result.report["dictionaries_trained"] == 1
        before = index.groups().set_index("ad_id")
        # Remove the founding ad of a group of 3+ whose other rows are stored against it.
        store = index.store
        refs = store.db.execute("SELECT ref, COUNT(*) FROM ads WHERE ref IS NOT NULL GROUP BY ref").fetchall()
        root = max(refs, key=lambda r: r[1])[0]
        root_ad = store.rows(np.asarray([root]))["ad_id"].iloc[0]
        group = before.loc[root_ad, "group_id"]
        members = before.index[before["group_id"] == group].tolist()
        outcome = index.remove([root_ad])
        assert outcome["removed"] == 1 and outcome["keys_removed"] > 0
        after = index.groups().set_index("ad_id")
        assert set(after.index) == set(before.index) - {root_ad}
        assert (after.loc[[m for m in members if m != root_ad], "group_id"] == group).all()  # name kept
        assert store.db.execute("SELECT COUNT(*) FROM ads WHERE ref = ?", (root,)).fetchone()[0] == 0
        # The rest of the group still reads back, and the removed ad comes back into its old group.
        again = index.add(test_ads[test_ads["ad_id"] == root_ad], default_model)
        assert again.groups["group_id"].iloc[0] == group
        assert again.groups["existing_group"].iloc[0]
        skipped = index.add(test_ads, default_model)
        assert skipped.report["new_ads"] == 0
    assert len(big)  # the bundled labels have groups of 3+


@pytest.mark.parametrize("schema", [None, 3, 4])
def test_old_index_file_is_refused_clearly(tmp_path, schema):
    # schema 3: no block sightings (boilerplate counted over the whole index, since schema 4);
    # schema 4: the names table lacks title words (texts are searched for them since schema 5)
    path = tmp_path / "old.jdx"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")
    db.execute("""INSERT INTO meta VALUES ('format', '"jobdedup.index"'), ('format_version', '1')""")
    if schema is not None:
        db.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(schema),))
    db.commit()
    db.close()
    for read_only in (False, True):
        with pytest.raises(
            IndexFileError, match=f"storage schema {schema or 1} .*older.*reads schema 5.*new --index file"
        ):
            Index.open(path, read_only=read_only)


@pytest.mark.parametrize("rows", [0, 1, 5, 1000])
def test_int64_tables_are_those_of_a_dict_of_columns(rows: int):
    """A table of one (columns, rows) array equals the table of a dict of its columns, each
    column's values side by side in memory as there; from int32 values too."""
    from jobdedup.pipeline.index.tables import int64_table

    rng = np.random.default_rng(rows)
    for names in (["id"], ["key", "value"], ["a", "b", "c", "d"]):
        values = rng.integers(-(2**62), 2**62, (len(names), rows), dtype=np.int64)
        for given in (values, values.astype(np.int32), list(values)):
            table = int64_table(pd.Index(names), given)
            reference = pd.DataFrame({name: np.asarray(v, dtype=np.int64) for name, v in zip(names, given)})
            pd.testing.assert_frame_equal(table, reference, check_exact=True)
            assert all(table[name].to_numpy().flags.c_contiguous for name in names)
