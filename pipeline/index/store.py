"""Storage of the incremental index: one small protocol, an embedded SQLite file by default.

The algorithm (`pipeline.index.core`) only talks to an `IndexStore`; like datasketch's
`storage.py`, other backends (a server database, a shared key-value store) can sit behind the same
protocol and be chosen by `open_store`. The embedded default is one SQLite file in WAL mode:

- `ads`       (id INTEGER PRIMARY KEY, ad_id TEXT UNIQUE, gid, batch, row BLOB): one row per ad; `row`
              is the ad's contract columns as zstd-compressed JSON (with a dictionary trained on the
              index's first batch), re-prepared when the ad turns up as a candidate.
- `keys`      (key, ad) WITHOUT ROWID, primary key (key, ad): 48-bit LSH band keys and field-blocking
              keys → internal ad ids. A batch lookup is one join of a temp table against it.
- `big_keys`  (key → hub): keys whose bucket outgrew `max_bucket_size`; new ads pair with the hub only.
- `groups`    (gid → name): gid is the internal id of the founding ad, so a smaller gid is older.
- `blocks`    boilerplate block hashes learnt from the batches; `merges`, `batches`: the log; `meta`.

Writers take SQLite's write lock for the whole `add` (`BEGIN IMMEDIATE`, waiting up to `timeout`
seconds for another writer), so a batch is matched against a state no one else changes, and commit
once: a killed process leaves the index as it was. WAL mode lets readers read the last committed
state while a writer works.

Example:
    >>> # store = open_store("ads.jdx"); with store.write(timeout=60): store.insert_ads(...)
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import pandas as pd

from pipeline.errors import JobdedupError

SCHEMA_VERSION = 1
KEY_BITS = 48
KEY_MASK = np.uint64((1 << KEY_BITS) - 1)
SQLITE_MAGIC = b"SQLite format 3\x00"


class IndexFileError(JobdedupError):
    """The index cannot be used as asked (locked, foreign file, other sketch parameters)."""


class IndexLockedError(IndexFileError):
    """Another process is adding to or removing from the index."""


class IndexStore(Protocol):
    """What the index algorithm needs from a storage backend.

    Ids: `id` is the store's internal integer id of an ad (increasing in insertion order), `gid` the
    internal id of a group (the id of its founding ad, so smaller = older). Keys are int64.
    """

    path: Path

    def write(self, timeout: float) -> contextlib.AbstractContextManager[None]:
        """One write transaction: exclusive among writers, atomic, invisible to readers until commit."""
        ...

    def read(self) -> contextlib.AbstractContextManager[None]:
        """A consistent read snapshot (never blocked by a writer)."""
        ...

    def meta(self) -> dict[str, Any]: ...
    def set_meta(self, values: dict[str, Any]) -> None: ...
    def find_ads(self, ad_ids: list[str]) -> pd.DataFrame: ...  # ad_id, id, gid
    def lookup(self, keys: np.ndarray, docs: np.ndarray, lsh: np.ndarray) -> pd.DataFrame: ...
    def group_members(self, gids: np.ndarray) -> pd.DataFrame: ...  # id, gid
    def rows(self, ids: np.ndarray) -> pd.DataFrame: ...  # id, ad_id, gid, row
    def group_names(self, gids: np.ndarray) -> pd.Series: ...
    def group_sizes(self, gids: np.ndarray) -> pd.Series: ...
    def names_taken(self, names: list[str]) -> set[str]: ...
    def boilerplate(self) -> np.ndarray: ...
    def next_id(self) -> int: ...
    def next_batch(self) -> int: ...
    def insert_ads(self, ads: pd.DataFrame) -> None: ...  # id, ad_id, gid, batch, row
    def insert_groups(self, groups: pd.DataFrame) -> None: ...  # gid, name
    def insert_keys(self, keys: np.ndarray, ids: np.ndarray) -> None: ...
    def insert_big_keys(self, keys: np.ndarray, hubs: np.ndarray) -> None: ...
    def insert_boilerplate(self, blocks: np.ndarray) -> None: ...
    def merge_groups(self, merges: pd.DataFrame, batch: int) -> None: ...  # gid, into_gid, name, into_name
    def log_batch(self, batch: int, info: dict[str, Any]) -> None: ...
    def remove_ads(self, ids: np.ndarray) -> dict[str, int]: ...
    def all_groups(self) -> pd.DataFrame: ...
    def stats(self, top: int) -> dict[str, Any]: ...
    def size_bytes(self) -> int: ...
    def close(self) -> None: ...


def open_store(path: str | Path, backend: str = "sqlite", read_only: bool = False) -> IndexStore:
    """The store at `path` (created if absent unless `read_only`). Only `sqlite` is built in."""
    if backend != "sqlite":
        raise IndexFileError(f"unknown index backend {backend!r}; the built-in one is 'sqlite'")
    return SqliteStore(Path(path), read_only=read_only)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ads (
    id INTEGER PRIMARY KEY, ad_id TEXT NOT NULL UNIQUE, gid INTEGER NOT NULL,
    batch INTEGER NOT NULL, row BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS ads_gid ON ads (gid);
CREATE TABLE IF NOT EXISTS keys (key INTEGER NOT NULL, ad INTEGER NOT NULL,
    PRIMARY KEY (key, ad)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS big_keys (key INTEGER PRIMARY KEY, hub INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS groups (gid INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS blocks (hash INTEGER PRIMARY KEY);
CREATE TABLE IF NOT EXISTS merges (batch INTEGER NOT NULL, group_id TEXT NOT NULL,
    merged_group_id TEXT NOT NULL, ads_moved INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS batches (batch INTEGER PRIMARY KEY, info TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dictionaries (dict_id INTEGER PRIMARY KEY, data BLOB NOT NULL);
"""


def _i64(values: np.ndarray) -> list[int]:
    """uint64/int64 numpy values as Python ints that fit SQLite's signed 64-bit integers."""
    return np.asarray(values).astype(np.uint64).view(np.int64).tolist()


class SqliteStore:
    """`IndexStore` in one SQLite file (WAL mode; see the module docstring for the schema)."""

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        if path.exists():
            with open(path, "rb") as handle:
                head = handle.read(16)
            if head and head != SQLITE_MAGIC:
                raise IndexFileError(
                    f"{path}: not a jobdedup index (not an SQLite file); give another --index path"
                )
        elif read_only:
            raise IndexFileError(f"{path}: no index here; create one with `jobdedup index add`")
        if read_only:
            self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None, timeout=0.0)
        self.db.execute("PRAGMA busy_timeout = 5000")
        try:
            if not read_only:
                # Larger pages waste less space around ~1 KB compressed rows (only takes on a new file).
                self.db.execute("PRAGMA page_size = 16384")
                self.db.execute("PRAGMA journal_mode = WAL")
                self.db.execute("PRAGMA synchronous = FULL")
            self.db.execute("PRAGMA cache_size = -262144")
            self.db.execute("PRAGMA temp_store = MEMORY")
            if not read_only:
                self.db.executescript(_SCHEMA)
            elif not self.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone():
                raise IndexFileError(f"{path}: not a jobdedup index (no meta table)")
        except sqlite3.DatabaseError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise IndexLockedError(
                    f"{path}: the index is being created by another process; try again in a moment"
                ) from None
            raise IndexFileError(f"{path}: not a usable jobdedup index ({error})") from None

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
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        else:
            self.db.execute("COMMIT")

    @contextlib.contextmanager
    def read(self) -> Iterator[None]:
        self.db.execute("BEGIN")
        try:
            yield
        finally:
            self.db.execute("COMMIT")

    # ------------------------------------------------------------------ reads
    def meta(self) -> dict[str, Any]:
        return {name: json.loads(value) for name, value in self.db.execute("SELECT name, value FROM meta")}

    def set_meta(self, values: dict[str, Any]) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)",
            [(name, json.dumps(value, sort_keys=True)) for name, value in values.items()],
        )

    def dictionaries(self) -> dict[int, bytes]:
        return dict(self.db.execute("SELECT dict_id, data FROM dictionaries").fetchall())

    def add_dictionary(self, dict_id: int, data: bytes) -> None:
        self.db.execute("INSERT OR REPLACE INTO dictionaries VALUES (?, ?)", (dict_id, data))

    def _temp(self, name: str, columns: str, rows: Any) -> None:
        self.db.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} ({columns})")
        self.db.execute(f"DELETE FROM temp.{name}")
        placeholders = ", ".join("?" * (columns.count(",") + 1))
        self.db.executemany(f"INSERT OR IGNORE INTO temp.{name} VALUES ({placeholders})", rows)

    def find_ads(self, ad_ids: list[str]) -> pd.DataFrame:
        self._temp("want_ids", "ad_id TEXT PRIMARY KEY", ((a,) for a in ad_ids))
        found = self.db.execute(
            "SELECT a.ad_id, a.id, a.gid FROM temp.want_ids w JOIN ads a ON a.ad_id = w.ad_id"
        ).fetchall()
        return pd.DataFrame(found, columns=["ad_id", "id", "gid"])

    def lookup(self, keys: np.ndarray, docs: np.ndarray, lsh: np.ndarray) -> pd.DataFrame:
        """Every (key, doc, lsh) of the batch joined with the index ads holding that key.

        Returns `key`, `doc`, `lsh`, `ad`, `big` (True: `ad` is the hub of a capped bucket).
        """
        order = np.argsort(keys, kind="stable")
        self._temp(
            "q",
            "key INTEGER, doc INTEGER, lsh INTEGER",
            zip(_i64(keys[order]), docs[order].tolist(), lsh[order].astype(int).tolist()),
        )
        small = self.db.execute(
            "SELECT q.key, q.doc, q.lsh, k.ad, 0 FROM temp.q q JOIN keys k ON k.key = q.key "
            "WHERE NOT EXISTS (SELECT 1 FROM big_keys b WHERE b.key = q.key)"
        ).fetchall()
        big = self.db.execute(
            "SELECT q.key, q.doc, q.lsh, b.hub, 1 FROM temp.q q JOIN big_keys b ON b.key = q.key"
        ).fetchall()
        frame = pd.DataFrame(small + big, columns=["key", "doc", "lsh", "ad", "big"])
        return frame.astype({"key": np.int64, "doc": np.int64, "lsh": bool, "ad": np.int64, "big": bool})

    def group_members(self, gids: np.ndarray) -> pd.DataFrame:
        self._temp("want_gids", "gid INTEGER PRIMARY KEY", ((int(g),) for g in np.unique(gids)))
        found = self.db.execute(
            "SELECT a.id, a.gid FROM temp.want_gids w JOIN ads a ON a.gid = w.gid"
        ).fetchall()
        return pd.DataFrame(found, columns=["id", "gid"]).astype(np.int64)

    def rows(self, ids: np.ndarray) -> pd.DataFrame:
        self._temp("want_rows", "id INTEGER PRIMARY KEY", ((int(i),) for i in np.unique(ids)))
        found = self.db.execute(
            "SELECT a.id, a.ad_id, a.gid, a.row FROM temp.want_rows w JOIN ads a ON a.id = w.id ORDER BY a.id"
        ).fetchall()
        return pd.DataFrame(found, columns=["id", "ad_id", "gid", "row"])

    def group_names(self, gids: np.ndarray) -> pd.Series:
        self._temp("want_names", "gid INTEGER PRIMARY KEY", ((int(g),) for g in np.unique(gids)))
        found = self.db.execute(
            "SELECT g.gid, g.name FROM temp.want_names w JOIN groups g ON g.gid = w.gid"
        ).fetchall()
        return pd.Series(dict(found), dtype=object)

    def group_sizes(self, gids: np.ndarray) -> pd.Series:
        self._temp("want_sizes", "gid INTEGER PRIMARY KEY", ((int(g),) for g in np.unique(gids)))
        found = self.db.execute(
            "SELECT w.gid, COUNT(a.id) FROM temp.want_sizes w JOIN ads a ON a.gid = w.gid GROUP BY w.gid"
        ).fetchall()
        return pd.Series(dict(found), dtype=np.int64)

    def names_taken(self, names: list[str]) -> set[str]:
        self._temp("want_taken", "name TEXT PRIMARY KEY", ((n,) for n in names))
        found = self.db.execute("SELECT g.name FROM temp.want_taken w JOIN groups g ON g.name = w.name")
        return {row[0] for row in found}

    def boilerplate(self) -> np.ndarray:
        found = [row[0] for row in self.db.execute("SELECT hash FROM blocks")]
        return np.sort(np.asarray(found, dtype=np.int64).view(np.uint64))

    def next_id(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM ads").fetchone()[0])

    def next_batch(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM batches").fetchone()[0])

    # ------------------------------------------------------------------ writes
    def insert_ads(self, ads: pd.DataFrame) -> None:
        self.db.executemany(
            "INSERT INTO ads (id, ad_id, gid, batch, row) VALUES (?, ?, ?, ?, ?)",
            zip(
                ads["id"].astype(int).tolist(),
                ads["ad_id"].tolist(),
                ads["gid"].astype(int).tolist(),
                ads["batch"].astype(int).tolist(),
                ads["row"].tolist(),
            ),
        )

    def insert_groups(self, groups: pd.DataFrame) -> None:
        self.db.executemany(
            "INSERT INTO groups (gid, name) VALUES (?, ?)",
            zip(groups["gid"].astype(int).tolist(), groups["name"].tolist()),
        )

    def insert_keys(self, keys: np.ndarray, ids: np.ndarray) -> None:
        order = np.lexsort((ids, keys))
        self.db.executemany(
            "INSERT OR IGNORE INTO keys (key, ad) VALUES (?, ?)",
            zip(_i64(keys[order]), np.asarray(ids)[order].astype(int).tolist()),
        )

    def insert_big_keys(self, keys: np.ndarray, hubs: np.ndarray) -> None:
        self.db.executemany(
            "INSERT OR REPLACE INTO big_keys (key, hub) VALUES (?, ?)",
            zip(_i64(keys), np.asarray(hubs).astype(int).tolist()),
        )

    def insert_boilerplate(self, blocks: np.ndarray) -> None:
        self.db.executemany("INSERT OR IGNORE INTO blocks (hash) VALUES (?)", ((h,) for h in _i64(blocks)))

    def merge_groups(self, merges: pd.DataFrame, batch: int) -> None:
        for gid, into, name, into_name, moved in zip(
            merges["gid"], merges["into_gid"], merges["name"], merges["into_name"], merges["ads_moved"]
        ):
            self.db.execute("UPDATE ads SET gid = ? WHERE gid = ?", (int(into), int(gid)))
            self.db.execute("DELETE FROM groups WHERE gid = ?", (int(gid),))
            self.db.execute("INSERT INTO merges VALUES (?, ?, ?, ?)", (batch, into_name, name, int(moved)))

    def log_batch(self, batch: int, info: dict[str, Any]) -> None:
        self.db.execute("INSERT INTO batches VALUES (?, ?)", (batch, json.dumps(info, sort_keys=True)))

    def remove_ads(self, ids: np.ndarray) -> dict[str, int]:
        """Delete ads (and their keys); groups keep their ids, empty groups disappear."""
        self._temp("gone", "id INTEGER PRIMARY KEY", ((int(i),) for i in np.unique(ids)))
        gids = [
            row[0]
            for row in self.db.execute("SELECT DISTINCT a.gid FROM temp.gone g JOIN ads a ON a.id = g.id")
        ]
        self.db.execute("DELETE FROM ads WHERE id IN (SELECT id FROM temp.gone)")
        # The key table is keyed by key, so this is one pass over it (no second index to keep small).
        keys_removed = self.db.execute("DELETE FROM keys WHERE ad IN (SELECT id FROM temp.gone)").rowcount
        self.db.execute(
            "UPDATE big_keys SET hub = (SELECT MIN(k.ad) FROM keys k WHERE k.key = big_keys.key) "
            "WHERE hub IN (SELECT id FROM temp.gone)"
        )
        self.db.execute("DELETE FROM big_keys WHERE hub IS NULL")
        self._temp("touched", "gid INTEGER PRIMARY KEY", ((g,) for g in gids))
        emptied = self.db.execute(
            "DELETE FROM groups WHERE gid IN (SELECT gid FROM temp.touched) "
            "AND NOT EXISTS (SELECT 1 FROM ads a WHERE a.gid = groups.gid)"
        ).rowcount
        return {"keys_removed": int(keys_removed), "groups_emptied": int(emptied)}

    # ------------------------------------------------------------------ reports
    def all_groups(self) -> pd.DataFrame:
        found = self.db.execute(
            "SELECT a.ad_id, g.name, s.n FROM ads a JOIN groups g ON g.gid = a.gid "
            "JOIN (SELECT gid, COUNT(*) AS n FROM ads GROUP BY gid) s ON s.gid = a.gid ORDER BY a.id"
        ).fetchall()
        return pd.DataFrame(found, columns=["ad_id", "group_id", "group_size"])

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
            "keys": int(self.db.execute("SELECT COUNT(*) FROM keys").fetchone()[0]),
            "boilerplate_blocks": int(self.db.execute("SELECT COUNT(*) FROM blocks").fetchone()[0]),
            "largest_groups": [{"group_id": names[g], "size": int(n)} for g, n in largest],
        }

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def close(self) -> None:
        if not self.read_only:
            with contextlib.suppress(sqlite3.OperationalError):
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()
