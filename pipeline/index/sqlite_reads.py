"""The read queries of the SQLite index: ads, groups, keys and vocabularies, and its reports.

`StoreReads` is the base of `pipeline.index.sqlite_store.SqliteStore`, which adds opening the file,
transactions and the writes; the tables are described there.

Example:
    >>> # with store.read(): store.find_ads(["ad-17"]), store.stats(top=10)
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import zstandard

from jobdedup.features.shingle_sets import sorted_member, sorted_unique
from jobdedup.pipeline.index.blobs import decode_sorted
from jobdedup.pipeline.index.errors import IndexFileError
from jobdedup.pipeline.index.key_runs import SPACE_AD_IDS, SPACE_BLOCKS, SPACE_KEYS, KeyRuns
from jobdedup.pipeline.index.tables import int64_table, sightings_table


def union_of_rows(db: sqlite3.Connection, table: str) -> np.ndarray:
    """The sorted union (uint64) of the values of a table of one row per batch (`blocks`:
    boilerplate, `names`: name words)."""
    rows = [decode_sorted(blob) for (blob,) in db.execute(f"SELECT data FROM {table}")]
    return sorted_unique(np.concatenate(rows)) if rows else np.zeros(0, dtype=np.uint64)


class StoreReads(KeyRuns):
    """What `SqliteStore` reads (`IndexStore`'s queries and reports)."""

    path: Path
    _ad_id_cache: dict[int, np.ndarray]

    def _id_table(self, name: str, column: str, ids: np.ndarray) -> None:
        """A temp table `name` holding the distinct integer `ids` as its primary key `column`."""
        distinct = sorted_unique(np.asarray(ids, dtype=np.int64)).tolist()
        self._temp(name, f"{column} INTEGER PRIMARY KEY", ((i,) for i in distinct))

    def _ad_ids(self, ids: np.ndarray) -> np.ndarray:
        """ad_id strings of internal ids (removed ads' too: the lists are never rewritten)."""
        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty(len(ids), dtype=object)
        if not len(ids):
            return out
        spans = np.asarray(
            self.db.execute("SELECT first_id, n FROM ad_ids ORDER BY first_id").fetchall(), dtype=np.int64
        )
        if not len(spans):
            raise IndexFileError(f"{self.path}: ids without ad_ids; the index is damaged")
        which = np.searchsorted(spans[:, 0], ids, side="right") - 1
        for span in sorted_unique(which):
            first = int(spans[span, 0])
            if first not in self._ad_id_cache:
                blob = self.db.execute("SELECT data FROM ad_ids WHERE first_id = ?", (first,)).fetchone()[0]
                self._ad_id_cache[first] = np.asarray(
                    json.loads(zstandard.ZstdDecompressor().decompress(blob)), dtype=object
                )
            mask = which == span
            out[mask] = self._ad_id_cache[first][ids[mask] - first]
        return out

    def find_ads(self, ad_ids: list[str]) -> pd.DataFrame:
        from jobdedup.pipeline.index.rows import ad_id_keys

        if not len(ad_ids):
            return _no_ads()
        wanted = np.asarray([str(a) for a in ad_ids], dtype=object)
        keys = ad_id_keys(wanted)
        distinct = sorted_unique(keys)
        position, ids = self._runs_lookup(SPACE_AD_IDS, distinct)
        if not len(ids):
            return _no_ads()
        hits = pd.DataFrame({"key": distinct[position], "id": ids})
        want = pd.DataFrame({"ad_id": wanted, "key": keys}).drop_duplicates("ad_id")
        hits = want.merge(hits, on="key")
        hits = hits[hits["ad_id"].to_numpy() == self._ad_ids(hits["id"].to_numpy())]
        present = self.gids(hits["id"].to_numpy())
        return hits[["ad_id", "id"]].merge(present, on="id")[["ad_id", "id", "gid"]].reset_index(drop=True)

    def lookup(self, keys: np.ndarray, docs: np.ndarray, lsh: np.ndarray) -> pd.DataFrame:
        """Every (key, doc, lsh) of the batch joined with the index ads holding that key.

        Returns `key`, `doc`, `lsh`, `ad`, `big` (True: `ad` is the hub of a capped bucket).
        """
        query = pd.DataFrame({"key": np.asarray(keys, dtype=np.int64), "doc": docs, "lsh": lsh})
        distinct = sorted_unique(query["key"].to_numpy())
        position, ads, big = self.key_hits(distinct)
        found = pd.DataFrame({"key": distinct[position], "ad": ads, "big": big})
        frame = query.merge(found, on="key")[["key", "doc", "lsh", "ad", "big"]]
        return frame.astype({"key": np.int64, "doc": np.int64, "lsh": bool, "ad": np.int64, "big": bool})

    def key_hits(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The index ads holding each of the sorted distinct int64 `keys`: (position in `keys`, ad,
        big), small buckets' ads first, then the hubs of capped buckets (`big` True)."""
        distinct = np.asarray(keys, dtype=np.int64)
        big = np.asarray(
            self.db.execute("SELECT key, hub FROM big_keys ORDER BY key").fetchall(), dtype=np.int64
        )
        big = big.reshape(-1, 2)
        is_big = sorted_member(distinct, big[:, 0])
        small_at = np.flatnonzero(~is_big)
        position, ads = self._runs_lookup(SPACE_KEYS, distinct[small_at].astype(np.uint64))
        hubs = big[sorted_member(big[:, 0], distinct[is_big])]
        return (
            np.concatenate([small_at[position], np.searchsorted(distinct, hubs[:, 0])]),
            np.concatenate([ads, hubs[:, 1]]).astype(np.int64),
            np.r_[np.zeros(len(ads), bool), np.ones(len(hubs), bool)],
        )

    def gids(self, ids: np.ndarray) -> pd.DataFrame:
        self._id_table("want_gids_of", "id", ids)
        found = self.db.execute(
            "SELECT a.id, a.gid FROM temp.want_gids_of w CROSS JOIN ads a ON a.id = w.id ORDER BY w.id"
        ).fetchall()
        return _id_gid_table(found)

    def group_members(self, gids: np.ndarray) -> pd.DataFrame:
        self._id_table("want_gids", "gid", gids)
        found = self.db.execute(
            "SELECT a.id, a.gid FROM temp.want_gids w CROSS JOIN ads a ON a.gid = w.gid"
        ).fetchall()
        return _id_gid_table(found)

    def rows(self, ids: np.ndarray) -> pd.DataFrame:
        """id, ad_id, gid, ref (id of the reference row or -1), row — in id order."""
        found = self._row_tuples(ids)
        # (typed columns: a frame of the tuples and `astype` cost ~0.6 ms for the few rows of a check)
        id_, gid, ref, row = zip(*found) if found else ((), (), (), ())
        found_ids = np.array(id_, dtype=np.int64)
        return pd.DataFrame(
            {
                "id": found_ids,
                "ad_id": self._ad_ids(found_ids),
                "gid": np.array(gid, dtype=np.int64),
                "ref": np.array(ref, dtype=np.int64),
                "row": np.array(row, dtype=object),
            }
        )

    def _row_tuples(self, ids: np.ndarray) -> list[tuple[int, int, int, bytes]]:
        """(id, gid, ref or -1, row) of the stored `ids`, in id order."""
        self._id_table("want_rows", "id", ids)
        return self.db.execute(
            "SELECT a.id, a.gid, COALESCE(a.ref, -1), a.row FROM temp.want_rows w CROSS JOIN ads a ON a.id = w.id "
            "ORDER BY w.id"
        ).fetchall()

    def group_names(self, gids: np.ndarray) -> pd.Series:
        gids = sorted_unique(np.asarray(gids, dtype=np.int64))
        names = pd.Series(self._ad_ids(gids), index=gids, dtype=object)
        self._id_table("want_names", "gid", gids)
        for gid, name in self.db.execute(
            "SELECT g.gid, g.name FROM temp.want_names w CROSS JOIN groups g ON g.gid = w.gid"
        ):
            names[gid] = name
        return names

    def group_sizes(self, gids: np.ndarray) -> pd.Series:
        self._id_table("want_sizes", "gid", gids)
        found = self.db.execute(
            "SELECT w.gid, COUNT(a.id) FROM temp.want_sizes w CROSS JOIN ads a ON a.gid = w.gid GROUP BY w.gid"
        ).fetchall()
        return pd.Series(dict(found), dtype=np.int64)

    def names_taken(self, names: list[str]) -> set[str]:
        """Names held by a group: stored ones, and the ad_ids of indexed founding ads."""
        self._temp("want_taken", "name TEXT PRIMARY KEY", ((n,) for n in names))
        taken = {
            r[0]
            for r in self.db.execute(
                "SELECT g.name FROM temp.want_taken w CROSS JOIN groups g ON g.name = w.name"
            )
        }
        founders = self.find_ads(list(names))
        if len(founders):  # (none for new ads' names: no pandas filtering of an empty table)
            taken.update(founders.loc[founders["id"] == founders["gid"], "ad_id"])
        return taken

    def boilerplate(self) -> np.ndarray:
        return union_of_rows(self.db, "blocks")

    def block_sightings(self, keys: np.ndarray) -> pd.DataFrame:
        """The stored sightings (`key`, `value`) of these block keys (`pipeline.index.blocks`)."""
        distinct = sorted_unique(np.asarray(keys, dtype=np.int64)).astype(np.uint64)
        position, values = self._runs_lookup(SPACE_BLOCKS, distinct)
        return sightings_table(distinct[position].astype(np.int64), values)

    def name_words(self) -> np.ndarray:
        return union_of_rows(self.db, "names").astype(np.uint32)

    def next_id(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(first_id + n), 1) FROM ad_ids").fetchone()[0])

    def next_batch(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM batches").fetchone()[0])

    def all_groups(self) -> pd.DataFrame:
        found = np.asarray(self.db.execute("SELECT id, gid FROM ads ORDER BY id").fetchall(), dtype=np.int64)
        found = found.reshape(-1, 2)
        ids, gids = found[:, 0], found[:, 1]
        sizes = pd.Series(gids).value_counts()
        names = self.group_names(sorted_unique(gids))
        return pd.DataFrame(
            {
                "ad_id": self._ad_ids(ids),
                "group_id": names.reindex(gids).to_numpy(dtype=object),
                "group_size": sizes.reindex(gids).to_numpy(dtype=np.int64),
            }
        )

    def models(self) -> list[str]:
        logged = (json.loads(info).get("model") for (info,) in self.db.execute("SELECT info FROM batches"))
        return sorted({str(model) for model in logged if model is not None})

    def stats(self, top: int) -> dict[str, Any]:
        ads = self.db.execute("SELECT COUNT(*) FROM ads").fetchone()[0]
        sizes = self.db.execute(
            "SELECT gid, COUNT(*) AS n FROM ads GROUP BY gid ORDER BY n DESC, gid"
        ).fetchall()
        largest = [(gid, n) for gid, n in sizes[:top] if n > 1]
        names = self.group_names(np.asarray([g for g, _ in largest], dtype=np.int64)) if largest else {}
        return {
            "ads": int(ads),
            "groups": len(sizes),
            "ads_with_duplicates": int(sum(n for _, n in sizes if n > 1)),
            "batches": int(self.db.execute("SELECT COUNT(*) FROM batches").fetchone()[0]),
            "merges": int(self.db.execute("SELECT COUNT(*) FROM merges").fetchone()[0]),
            "keys": int(
                self.db.execute(
                    "SELECT COALESCE(SUM(n), 0) FROM key_parts WHERE space = ?", (SPACE_KEYS,)
                ).fetchone()[0]
            ),
            "key_runs": int(
                self.db.execute(
                    "SELECT COUNT(DISTINCT run) FROM key_parts WHERE space = ?", (SPACE_KEYS,)
                ).fetchone()[0]
            ),
            "boilerplate_blocks": len(self.boilerplate()),
            "largest_groups": [{"group_id": names[g], "size": int(n)} for g, n in largest],
        }


_ID_GID = pd.Index(["id", "gid"])


def _id_gid_table(found: list[tuple[int, int]]) -> pd.DataFrame:
    """A query's (id, gid) rows as a table (a frame of the tuples costs ~80 µs)."""
    return int64_table(_ID_GID, np.array(found, dtype=np.int64).reshape(-1, 2).T)


_NO_ADS = pd.DataFrame(
    {"ad_id": np.empty(0, object), "id": np.empty(0, np.int64), "gid": np.empty(0, np.int64)}
)


def _no_ads() -> pd.DataFrame:
    """`find_ads`' answer when no ad is found: a copy of one table built once (~40 µs each time)."""
    return _NO_ADS.copy(deep=False)  # (copy-on-write: a caller's change stays in its copy)
