"""The embedded `IndexStore`: one SQLite file in WAL mode (storage schema `SCHEMA_VERSION`).

Tables:

- `ads`       (id INTEGER PRIMARY KEY, gid, ref, row BLOB), indexes on gid and (partial) ref: one
              row per ad; `row` is the columns prepare reads, zstd-compressed with a trained
              dictionary, or against the row of `ref` (a row stored on its own: the first of the
              ad's group, or its most similar scored partner) — `pipeline.index.rows`.
- `ad_ids`    (first_id, n, data): the ad_ids of the ids first_id … first_id+n-1 (one add), as one
              compressed JSON list. Ids are never reused.
- `key_parts` the key store, a small log-structured merge tree in blobs: each add writes a *run*
              (its (key, ad) entries sorted by key; keys delta-coded, byte planes, zstd) cut into
              parts of ≤ 2^20 entries; runs of similar size are merged (fan-in 4) while under ~1M
              entries. 36-bit keys: ~4 bytes per entry, ~190 bytes per ad. Space 0 holds LSH band
              keys and field-blocking keys, space 1 ad_id hashes. A batch's lookup decodes the runs
              and matches its sorted keys with `np.searchsorted`: the whole key store is read per
              batch anyway (470,000 random probes touch every page of a B-tree on keys), so the
              compact store is also the fast one. Space 2 holds block sightings
              (`pipeline.index.blocks`): a 48-bit block key and, in place of an ad, a 32-bit value
              (title and employer hashes); not tied to ads, they stay when ads are removed.
- `removed`   ids of removed ads whose entries still sit in some run (dropped when it is merged).
- `big_keys`  (key → hub): keys whose bucket outgrew `max_bucket_size`; new ads pair with the hub only.
- `groups`    (gid → name) only where a group's name is not its founding ad's ad_id (a name clash,
              or the founding ad was removed). gid is the internal id of the founding ad, so a
              smaller gid is older.
- `blocks`    boilerplate block hashes learnt per batch (the new ones, delta-coded, a blob per
              batch); `names` likewise the employer and place words of each batch's ads
              (`pipeline.prepare.name_vocabulary`), so a new batch's texts are searched for the
              names of every indexed ad; `merges`, `batches`: the log; `dictionaries` (trained zstd dictionaries, stored
              zstd-compressed: their samples of ad text shrink ~3x); `meta`.

Writers take SQLite's write lock for the whole `add` (`BEGIN IMMEDIATE`, waiting up to `timeout`
seconds for another writer), so a batch is matched against a state no one else changes, and commit
once: a killed process leaves the index as it was. WAL mode lets readers read the last committed
state while a writer works. Every committed write transaction adds one to `meta.generation`, so a
process holding derived state (the service's in-memory keys, `pipeline.index.cache`) tells with
one small read whether any process changed the file.

`SqliteStore` opens the file and holds the transactions and the writes; its base classes hold the
reads (`pipeline.index.sqlite_reads`) and the key store's runs (`pipeline.index.key_runs`, blobs
coded by `pipeline.index.blobs`).

Example:
    >>> # store = SqliteStore(Path("ads.jdx")); with store.write(timeout=60): store.insert_ads(...)
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Callable, Hashable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import zstandard

from jobdedup.features.shingle_sets import sorted_member, sorted_unique
from jobdedup.pipeline.index.blobs import encode_sorted
from jobdedup.pipeline.index.errors import IndexFileError, IndexLockedError
from jobdedup.pipeline.index.key_runs import SPACE_AD_IDS, SPACE_BLOCKS, SPACE_KEYS
from jobdedup.pipeline.index.sqlite_reads import StoreReads

SCHEMA_VERSION = 5  # 4: block sightings (key space 2); 5: names hold the words of titles too


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ads (id INTEGER PRIMARY KEY, gid INTEGER NOT NULL, ref INTEGER, row BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS ads_gid ON ads (gid);
CREATE INDEX IF NOT EXISTS ads_ref ON ads (ref) WHERE ref IS NOT NULL;
CREATE TABLE IF NOT EXISTS ad_ids (first_id INTEGER PRIMARY KEY, n INTEGER NOT NULL, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS key_parts (
    space INTEGER NOT NULL, run INTEGER NOT NULL, part INTEGER NOT NULL, level INTEGER NOT NULL,
    n INTEGER NOT NULL, first_key INTEGER NOT NULL, last_key INTEGER NOT NULL,
    min_ad INTEGER NOT NULL, max_ad INTEGER NOT NULL, data BLOB NOT NULL,
    PRIMARY KEY (space, run, part));
CREATE TABLE IF NOT EXISTS removed (id INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS big_keys (key INTEGER PRIMARY KEY, hub INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS groups (gid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS blocks (batch INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS names (batch INTEGER PRIMARY KEY, data BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS merges (batch INTEGER NOT NULL, group_id TEXT NOT NULL,
    merged_group_id TEXT NOT NULL, ads_moved INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS batches (batch INTEGER PRIMARY KEY, info TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dictionaries (seq INTEGER PRIMARY KEY, dict_id INTEGER NOT NULL UNIQUE,
    ratio REAL NOT NULL, data BLOB NOT NULL);
"""


def _i64(values: np.ndarray) -> list[int]:
    """uint64/int64 numpy values as Python ints that fit SQLite's signed 64-bit integers."""
    return np.asarray(values).astype(np.uint64).view(np.int64).tolist()


class SqliteStore(StoreReads):
    """`IndexStore` in one SQLite file (WAL mode; see the module docstring for the schema)."""

    one_thread = True  # the connection is used by the thread that opened it (sqlite3's check)

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._ad_id_cache: dict[int, np.ndarray] = {}
        # (No `open(path)` here to read the file's header: closing any handle of the file drops
        # all of this process's POSIX locks on it, those of its open SQLite connections too, and
        # another process closing the index then deletes the write-ahead log under them. SQLite
        # itself says "file is not a database", below.)
        if not path.exists() and read_only:
            raise IndexFileError(f"{path}: no index here; create one with `jobdedup index add`")
        if read_only:
            self.db = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=self.one_thread
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(
                path, isolation_level=None, timeout=0.0, check_same_thread=self.one_thread
            )
        self.db.execute("PRAGMA busy_timeout = 5000")
        try:
            has_meta = self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone()
            if not read_only:
                if not has_meta:
                    # For a new file: 32 KB pages waste ~2 % around ~0.7 KB rows (16 KB: ~4 %) and
                    # hold the key blobs in few overflow pages; freed pages go back to the OS.
                    self.db.execute("PRAGMA page_size = 32768")
                    self.db.execute("PRAGMA auto_vacuum = INCREMENTAL")
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = FULL")
            self.db.execute("PRAGMA cache_size = -262144")
            self.db.execute("PRAGMA temp_store = MEMORY")
            if has_meta:
                self._check_schema()
            elif read_only:
                raise IndexFileError(f"{path}: not a jobdedup index (no meta table)")
            else:
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    if not self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
                        for statement in _SCHEMA.strip().split(";\n"):
                            self.db.execute(statement)
                        self.set_meta({"schema_version": SCHEMA_VERSION})
                    self.db.execute("COMMIT")
                except BaseException:
                    self.db.execute("ROLLBACK")
                    raise
                self._check_schema()
        except sqlite3.DatabaseError as error:
            self.db.close()
            if "locked" in str(error) or "busy" in str(error):
                raise IndexLockedError(
                    f"{path}: the index is being created by another process; try again in a moment"
                ) from None
            if "not a database" in str(error):
                raise IndexFileError(
                    f"{path}: not a jobdedup index (not an SQLite file); give another --index path"
                ) from None
            raise IndexFileError(f"{path}: not a usable jobdedup index ({error})") from None

    def _check_schema(self) -> None:
        found = self.meta().get("schema_version", 1)
        if found != SCHEMA_VERSION:
            self.db.close()
            raise IndexFileError(
                f"{self.path}: index storage schema {found} (written by "
                f"{'an older' if found < SCHEMA_VERSION else 'a newer'} jobdedup); this jobdedup reads schema "
                f"{SCHEMA_VERSION}. Build a new index: add the ads again with `jobdedup index add` to a new --index file"
            )

    # ------------------------------------------------------------------ transactions
    @contextlib.contextmanager
    def write(self, timeout: float) -> Iterator[None]:
        if self.read_only:
            raise IndexFileError(f"{self.path}: opened read-only")
        self.db.execute(f"PRAGMA busy_timeout = {int(max(timeout, 0) * 1000)}")
        started = time.monotonic()
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise IndexLockedError(
                    f"{self.path}: another process is writing to this index (waited "
                    f"{time.monotonic() - started:.0f} s); try again later or raise --wait"
                ) from None
            raise
        self._ad_id_cache.clear()
        try:
            yield
            self._shrink()
            self._next_generation()
        except BaseException:
            self.db.execute("ROLLBACK")
            self._ad_id_cache.clear()
            raise
        else:
            self.db.execute("COMMIT")

    @contextlib.contextmanager
    def read(self) -> Iterator[None]:
        self.db.execute("BEGIN")
        self._ad_id_cache.clear()
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    def generation(self) -> int:
        """How many write transactions have committed (0 for a file written before the counter).

        Anyone holding derived state (`pipeline.index.cache`) compares it to know the file changed.
        """
        found = self.db.execute("SELECT value FROM meta WHERE name = 'generation'").fetchone()
        return int(json.loads(found[0])) if found else 0

    def derived(self, name: Hashable, build: Callable[[], Any]) -> Any:
        """`build()`, something computed from the transaction's committed state (the known
        boilerplate, the name vocabulary) and named `name`; a store holding that state in memory
        keeps it for later transactions of the same state (`pipeline.index.cache`)."""
        return build()

    def _next_generation(self) -> None:
        self.db.execute(
            "INSERT INTO meta VALUES ('generation', '1') "
            "ON CONFLICT (name) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
        )

    def _shrink(self) -> None:
        """Give free pages back when they are over 10 % of the file (after merges and removals)."""
        pages = self.db.execute("PRAGMA page_count").fetchone()[0]
        free = self.db.execute("PRAGMA freelist_count").fetchone()[0]
        if free > 0.1 * pages:
            self.db.execute(f"PRAGMA incremental_vacuum({free})").fetchall()

    # ------------------------------------------------------------------ meta and dictionaries
    def meta(self) -> dict[str, Any]:
        return {name: json.loads(value) for name, value in self.db.execute("SELECT name, value FROM meta")}

    def set_meta(self, values: dict[str, Any]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [(name, json.dumps(value, sort_keys=True)) for name, value in values.items()],
        )

    def dictionary(self, dict_id: int) -> bytes:
        found = self.db.execute("SELECT data FROM dictionaries WHERE dict_id = ?", (int(dict_id),)).fetchone()
        if found is None:
            raise IndexFileError(f"{self.path}: zstd dictionary {dict_id} is missing; the index is damaged")
        return zstandard.ZstdDecompressor().decompress(found[0])

    def recent_dictionaries(self, limit: int) -> tuple[list[tuple[int, float]], int]:
        """(dict_id, ratio) of the `limit` newest dictionaries, newest first, and the next free id."""
        recent = self.db.execute(
            "SELECT dict_id, ratio FROM dictionaries ORDER BY seq DESC LIMIT ?", (int(limit),)
        ).fetchall()
        next_id = self.db.execute("SELECT COALESCE(MAX(dict_id), 0) + 1 FROM dictionaries").fetchone()[0]
        return [(int(i), float(r)) for i, r in recent], int(next_id)

    def add_dictionary(self, dict_id: int, data: bytes, ratio: float) -> None:
        """Store a trained dictionary (compressed itself: its samples of ad text shrink ~3x)."""
        self.db.execute(
            "INSERT INTO dictionaries (dict_id, ratio, data) VALUES (?, ?, ?)",
            (int(dict_id), float(ratio), zstandard.ZstdCompressor(level=9).compress(data)),
        )

    # ------------------------------------------------------------------ writes
    def insert_ads(self, ads: pd.DataFrame) -> None:
        """New ads with consecutive ids; `ref` is the reference row's id or None/-1."""
        from jobdedup.pipeline.index.rows import ad_id_keys

        if not len(ads):
            return
        ids = ads["id"].to_numpy(dtype=np.int64)
        if not (np.diff(ids) == 1).all() or ids[0] < self.next_id():
            raise ValueError("insert_ads takes new, consecutive ids")
        refs = [None if r is None or pd.isna(r) or r < 0 else int(r) for r in ads["ref"].tolist()]
        self.db.executemany(
            "INSERT INTO ads (id, gid, ref, row) VALUES (?, ?, ?, ?)",
            zip(ids.tolist(), ads["gid"].astype(int).tolist(), refs, ads["row"].tolist()),
        )
        ad_ids = ads["ad_id"].astype(str).tolist()
        blob = zstandard.ZstdCompressor(level=19).compress(
            json.dumps(ad_ids, ensure_ascii=False, separators=(",", ":")).encode()
        )
        self.db.execute("INSERT INTO ad_ids VALUES (?, ?, ?)", (int(ids[0]), len(ids), blob))
        self._add_run(SPACE_AD_IDS, ad_id_keys(ad_ids), ids)

    def update_rows(self, ids: np.ndarray, rows: list[bytes], refs: list[int | None]) -> None:
        self.db.executemany(
            "UPDATE ads SET row = ?, ref = ? WHERE id = ?",
            zip(rows, refs, np.asarray(ids).astype(int).tolist()),
        )

    def insert_groups(self, groups: pd.DataFrame) -> None:
        """Names of new groups; stored only where not the founding ad's ad_id (call after insert_ads)."""
        if not len(groups):
            return
        gids = groups["gid"].to_numpy(dtype=np.int64)
        names = groups["name"].astype(str).to_numpy()
        special = names != self._ad_ids(gids)
        self.db.executemany(
            "INSERT INTO groups (gid, name) VALUES (?, ?)",
            zip(gids[special].tolist(), names[special].tolist()),
        )

    def insert_keys(self, keys: np.ndarray, ids: np.ndarray) -> None:
        self._add_run(SPACE_KEYS, np.asarray(keys).astype(np.uint64), np.asarray(ids, dtype=np.int64))

    def insert_block_sightings(self, keys: np.ndarray, values: np.ndarray) -> None:
        """New block sightings: 48-bit block keys and their 32-bit values, as one run."""
        self._add_run(SPACE_BLOCKS, np.asarray(keys).astype(np.uint64), np.asarray(values, dtype=np.int64))

    def insert_big_keys(self, keys: np.ndarray, hubs: np.ndarray) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO big_keys (key, hub) VALUES (?, ?)",
            zip(_i64(keys), np.asarray(hubs).astype(int).tolist()),
        )

    def insert_boilerplate(self, batch: int, blocks: np.ndarray) -> None:
        """Block hashes of this batch not already stored."""
        blocks = sorted_unique(np.asarray(blocks, dtype=np.uint64))
        blocks = blocks[~sorted_member(blocks, self.boilerplate())]
        if len(blocks):
            self.db.execute("INSERT INTO blocks VALUES (?, ?)", (int(batch), encode_sorted(blocks)))

    def insert_name_words(self, batch: int, words: np.ndarray) -> None:
        """Employer and place words of this batch not already stored."""
        words = sorted_unique(np.asarray(words, dtype=np.uint32))
        words = words[~sorted_member(words, self.name_words())]
        if len(words):
            self.db.execute("INSERT INTO names VALUES (?, ?)", (int(batch), encode_sorted(words)))

    def merge_groups(self, merges: pd.DataFrame, batch: int) -> None:
        for gid, into, name, into_name, moved in zip(
            merges["gid"], merges["into_gid"], merges["name"], merges["into_name"], merges["ads_moved"]
        ):
            self.db.execute("UPDATE ads SET gid = ? WHERE gid = ?", (int(into), int(gid)))
            self.db.execute("DELETE FROM groups WHERE gid = ?", (int(gid),))
            self.db.execute("INSERT INTO merges VALUES (?, ?, ?, ?)", (batch, into_name, name, int(moved)))

    def log_batch(self, batch: int, info: dict[str, Any]) -> None:
        self.db.execute("INSERT INTO batches VALUES (?, ?)", (batch, json.dumps(info, sort_keys=True)))

    def dependents(self, ids: np.ndarray) -> pd.DataFrame:
        """id, ref of the ads (not in `ids`) whose rows are stored against one of `ids`."""
        self._id_table("refd", "id", ids)
        found = self.db.execute(
            "SELECT a.id, a.ref FROM temp.refd r CROSS JOIN ads a ON a.ref = r.id "
            "WHERE a.ref IS NOT NULL AND a.id NOT IN (SELECT id FROM temp.refd)"
        ).fetchall()
        return pd.DataFrame(found, columns=["id", "ref"], dtype=np.int64)

    def remove_ads(self, ids: np.ndarray) -> dict[str, int]:
        """Delete ads; groups keep their ids (and names), empty groups disappear.

        Rows stored against a removed row must have been rewritten first (`update_rows`). Their key
        entries stay in the runs, filtered out, until the run is merged.
        """
        ids = sorted_unique(np.asarray(ids, dtype=np.int64))
        self._id_table("gone", "id", ids)
        gone = self.db.execute(
            "SELECT a.id, a.gid FROM temp.gone g CROSS JOIN ads a ON a.id = g.id"
        ).fetchall()
        gids = sorted({gid for _, gid in gone})
        founders = [i for i, gid in gone if i == gid]
        # A founding ad leaves: its group keeps the name (stored now, as the ad_id list is the only
        # other place holding it).
        if founders:
            names = self._ad_ids(np.asarray(founders, dtype=np.int64))
            self.db.executemany(
                "INSERT OR IGNORE INTO groups (gid, name) VALUES (?, ?)", zip(founders, names.tolist())
            )
        self.db.execute("DELETE FROM ads WHERE id IN (SELECT id FROM temp.gone)")
        self.db.executemany("INSERT OR IGNORE INTO removed VALUES (?)", ((int(i),) for i in ids))
        keys_removed = self._count_entries(ids)
        # Capped buckets whose hub left: the oldest remaining holder becomes the hub.
        hubs = self.db.execute(
            "SELECT key, hub FROM big_keys WHERE hub IN (SELECT id FROM temp.gone)"
        ).fetchall()
        if hubs:
            keys = sorted_unique(np.asarray([k for k, _ in hubs], dtype=np.int64)).astype(np.uint64)
            position, holders = self._runs_lookup(SPACE_KEYS, keys)
            new_hub = pd.Series(holders).groupby(keys[position].view(np.int64)).min()
            for key in keys.view(np.int64).tolist():
                if key in new_hub.index:
                    self.db.execute("UPDATE big_keys SET hub = ? WHERE key = ?", (int(new_hub[key]), key))
                else:
                    self.db.execute("DELETE FROM big_keys WHERE key = ?", (key,))
        self._temp("touched", "gid INTEGER PRIMARY KEY", ((g,) for g in gids))
        emptied = self.db.execute(
            "SELECT COUNT(*) FROM temp.touched t WHERE NOT EXISTS (SELECT 1 FROM ads a WHERE a.gid = t.gid)"
        ).fetchone()[0]
        self.db.execute(
            "DELETE FROM groups WHERE gid IN (SELECT gid FROM temp.touched) "
            "AND NOT EXISTS (SELECT 1 FROM ads a WHERE a.gid = groups.gid)"
        )
        return {"keys_removed": int(keys_removed), "groups_emptied": int(emptied)}

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def close(self) -> None:
        if not self.read_only:
            with contextlib.suppress(sqlite3.OperationalError):
                # Without waiting: a truncating checkpoint waits for every reader to leave the log
                # and holds off writers meanwhile, and a service's readers never all leave it
                # (`pipeline.service.readers`): a CLI `index add` then blocked the service's writes
                # for its whole --wait. With readers, this copies what it can, as a passive one.
                self.db.execute("PRAGMA busy_timeout = 0")
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()
