"""Storage of the incremental index: one small protocol, an embedded SQLite file by default.

The algorithm (`pipeline.index.core`) only talks to an `IndexStore`; like datasketch's
`storage.py`, other backends (a server database, a shared key-value store) can sit behind the same
protocol and be chosen by `open_store`. The embedded default is one SQLite file in WAL mode
(storage schema 4):

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
import zstandard

from jobdedup.features.shingle_sets import sorted_member, sorted_unique
from jobdedup.pipeline.errors import JobdedupError

SCHEMA_VERSION = 4  # 4: block sightings (key space 2)
SQLITE_MAGIC = b"SQLite format 3\x00"
SPACE_KEYS, SPACE_AD_IDS, SPACE_BLOCKS = 0, 1, 2
PART_ENTRIES = 1 << 20  # entries per key blob
RUN_BASE = 1 << 18  # a run of up to this many entries is level 0; level l holds up to BASE * FANIN**l
FANIN = 4  # this many runs of one level are merged into one
MAX_MERGE_LEVEL = 1  # runs above this level (> ~1M entries, ~25,000 ads) are not merged again,
# so a merge handles at most ~4M entries (under a second); a lookup decodes every run anyway
_BLOB_LEVEL = 3


class IndexFileError(JobdedupError):
    """The index cannot be used as asked (locked, foreign file, other sketch parameters)."""


class IndexLockedError(IndexFileError):
    """Another process is adding to or removing from the index."""


class IndexStore(Protocol):
    """What the index algorithm needs from a storage backend.

    Ids: `id` is the store's internal integer id of an ad (increasing in insertion order, never
    reused), `gid` the internal id of a group (the id of its founding ad, so smaller = older).
    Keys are non-negative int64 (36-bit hashes, `pipeline.index.rows.KEY_BITS`).
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
    def dictionary(self, dict_id: int) -> bytes: ...
    def recent_dictionaries(self, limit: int) -> tuple[list[tuple[int, float]], int]: ...
    def add_dictionary(self, dict_id: int, data: bytes, ratio: float) -> None: ...
    def find_ads(self, ad_ids: list[str]) -> pd.DataFrame: ...  # ad_id, id, gid
    def lookup(self, keys: np.ndarray, docs: np.ndarray, lsh: np.ndarray) -> pd.DataFrame: ...
    def gids(self, ids: np.ndarray) -> pd.DataFrame: ...  # id, gid
    def group_members(self, gids: np.ndarray) -> pd.DataFrame: ...  # id, gid
    def rows(self, ids: np.ndarray) -> pd.DataFrame: ...  # id, ad_id, gid, ref, row
    def group_names(self, gids: np.ndarray) -> pd.Series: ...
    def group_sizes(self, gids: np.ndarray) -> pd.Series: ...
    def names_taken(self, names: list[str]) -> set[str]: ...
    def boilerplate(self) -> np.ndarray: ...
    def block_sightings(self, keys: np.ndarray) -> pd.DataFrame: ...  # key, value
    def name_words(self) -> np.ndarray: ...
    def next_id(self) -> int: ...
    def next_batch(self) -> int: ...
    def insert_ads(self, ads: pd.DataFrame) -> None: ...  # id (consecutive), ad_id, gid, ref, row
    def update_rows(self, ids: np.ndarray, rows: list[bytes], refs: list[int | None]) -> None: ...
    def dependents(self, ids: np.ndarray) -> pd.DataFrame: ...  # id, ref of rows stored against ids
    def insert_groups(self, groups: pd.DataFrame) -> None: ...  # gid, name
    def insert_keys(self, keys: np.ndarray, ids: np.ndarray) -> None: ...
    def insert_big_keys(self, keys: np.ndarray, hubs: np.ndarray) -> None: ...
    def insert_boilerplate(self, batch: int, blocks: np.ndarray) -> None: ...
    def insert_block_sightings(self, keys: np.ndarray, values: np.ndarray) -> None: ...
    def insert_name_words(self, batch: int, words: np.ndarray) -> None: ...
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


# ---------------------------------------------------------------------- key blobs
def _planes(values: np.ndarray, width: int) -> bytes:
    """The low `width` bytes of uint64 values, byte plane by byte plane (compresses far better)."""
    return np.ascontiguousarray(values.astype("<u8").view(np.uint8).reshape(-1, 8)[:, :width].T).tobytes()


def _unplanes(data: memoryview | bytes, n: int, width: int, at: np.ndarray | None = None) -> np.ndarray:
    """uint64 values back from `width` byte planes of `n` values (only those at positions `at`)."""
    planes = np.frombuffer(data, dtype=np.uint8, count=n * width).reshape(width, n)
    out = np.zeros(n if at is None else len(at), dtype=np.uint64)
    for j in range(width):
        plane = planes[j] if at is None else planes[j][at]
        out |= plane.astype(np.uint64) << np.uint64(8 * j)
    return out


def _width(max_value: int) -> int:
    return (int(max_value).bit_length() + 7) // 8


def encode_part(keys: np.ndarray, ads: np.ndarray) -> tuple[bytes, int, int]:
    """Sorted uint64 keys and their int64 ads → (blob, min_ad, max_ad)."""
    deltas = np.diff(keys, prepend=keys[:1])
    low, high = int(ads.min()), int(ads.max())
    offsets = (ads - low).astype(np.uint64)
    key_width, ad_width = _width(int(deltas.max())), _width(high - low)
    header = np.asarray([len(keys), key_width, ad_width], dtype="<u4").tobytes()
    body = _planes(deltas, key_width) + _planes(offsets, ad_width)
    return header + zstandard.ZstdCompressor(level=_BLOB_LEVEL).compress(body), low, high


class _Part:
    """One decoded key blob: all keys, and the ads of any entries asked for."""

    def __init__(self, blob: bytes, first_key: int, min_ad: int) -> None:
        self.n, self.key_width, self.ad_width = (int(v) for v in np.frombuffer(blob, dtype="<u4", count=3))
        self.body = zstandard.ZstdDecompressor().decompress(
            blob[12:], max_output_size=self.n * (self.key_width + self.ad_width) + 1
        )
        self.keys = np.cumsum(_unplanes(self.body, self.n, self.key_width), dtype=np.uint64)
        self.keys += np.uint64(first_key)
        self.min_ad = min_ad

    def ads(self, at: np.ndarray | None = None) -> np.ndarray:
        data = memoryview(self.body)[self.n * self.key_width :]
        return _unplanes(data, self.n, self.ad_width, at).astype(np.int64) + self.min_ad


def decode_part(blob: bytes, first_key: int, min_ad: int) -> tuple[np.ndarray, np.ndarray]:
    """(sorted uint64 keys, int64 ads) of one part."""
    part = _Part(blob, first_key, min_ad)
    return part.keys, part.ads()


def _encode_sorted(values: np.ndarray) -> bytes:
    """Sorted unique uint64 values: count, first value, delta byte planes, zstd."""
    values = np.sort(np.asarray(values, dtype=np.uint64))
    deltas = np.diff(values, prepend=values[:1])
    width = _width(int(deltas.max()))
    header = (
        np.asarray([len(values), width, 0], dtype="<u4").tobytes() + np.asarray(values[:1], "<u8").tobytes()
    )
    return header + zstandard.ZstdCompressor(level=_BLOB_LEVEL).compress(_planes(deltas, width))


def _decode_sorted(blob: bytes) -> np.ndarray:
    n, width, _ = (int(v) for v in np.frombuffer(blob, dtype="<u4", count=3))
    first = np.frombuffer(blob, dtype="<u8", count=1, offset=12).astype(np.uint64)
    body = zstandard.ZstdDecompressor().decompress(blob[20:], max_output_size=n * width + 1)
    return np.cumsum(_unplanes(body, n, width), dtype=np.uint64) + first[0]


def _level(entries: int) -> int:
    level = 0
    while entries > RUN_BASE * FANIN**level:
        level += 1
    return level


def _i64(values: np.ndarray) -> list[int]:
    """uint64/int64 numpy values as Python ints that fit SQLite's signed 64-bit integers."""
    return np.asarray(values).astype(np.uint64).view(np.int64).tolist()


class SqliteStore:
    """`IndexStore` in one SQLite file (WAL mode; see the module docstring for the schema)."""

    one_thread = True  # the connection is used by the thread that opened it (sqlite3's check)

    def __init__(self, path: Path, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self._ad_id_cache: dict[int, np.ndarray] = {}
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
            self.db = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=self.one_thread
            )
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite3.connect(path, isolation_level=None, timeout=0.0, check_same_thread=self.one_thread)
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
            if "locked" in str(error) or "busy" in str(error):
                raise IndexLockedError(
                    f"{path}: the index is being created by another process; try again in a moment"
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

    # ------------------------------------------------------------------ helpers
    def _temp(self, name: str, columns: str, rows: Any) -> None:
        self.db.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} ({columns})")
        self.db.execute(f"DELETE FROM temp.{name}")
        placeholders = ", ".join("?" * (columns.count(",") + 1))
        self.db.executemany(f"INSERT OR IGNORE INTO temp.{name} VALUES ({placeholders})", rows)

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

    def _removed(self) -> np.ndarray:
        """Sorted ids of removed ads whose key entries may still be stored."""
        return np.asarray(
            [r[0] for r in self.db.execute("SELECT id FROM removed ORDER BY id")], dtype=np.int64
        )

    def _runs_lookup(self, space: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For sorted unique uint64 `keys`: (position in keys, ad) of every live stored entry."""
        positions, ads = [], []
        if len(keys):
            parts = self.db.execute(
                "SELECT first_key, last_key, min_ad, data FROM key_parts WHERE space = ? ORDER BY run, part",
                (space,),
            )
            for first_key, last_key, min_ad, blob in parts:
                lo = np.searchsorted(keys, np.uint64(first_key), side="left")
                hi = np.searchsorted(keys, np.uint64(last_key), side="right")
                if lo == hi:
                    continue
                wanted = keys[lo:hi]
                part = _Part(blob, first_key, min_ad)
                start = np.minimum(np.searchsorted(part.keys, wanted, side="left"), part.n - 1)
                found = np.flatnonzero(part.keys[start] == wanted)
                if not len(found):
                    continue
                start = start[found]
                count = np.searchsorted(part.keys, wanted[found], side="right") - start
                offsets = np.arange(int(count.sum())) - np.repeat(np.cumsum(count) - count, count)
                positions.append(np.repeat(lo + found, count))
                ads.append(part.ads(np.repeat(start, count) + offsets))
        if not positions:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        position, ad = np.concatenate(positions), np.concatenate(ads)
        removed = self._removed() if space != SPACE_BLOCKS else np.zeros(0, dtype=np.int64)
        if len(removed):
            live = ~sorted_member(ad, removed)
            position, ad = position[live], ad[live]
        return position, ad

    def _write_run(self, space: int, keys: np.ndarray, ads: np.ndarray, run: int | None = None) -> None:
        """Store (key, ad) entries (any order) as one sorted run, cut into parts."""
        if not len(keys):
            return
        order = np.argsort(keys, kind="stable")  # timsort: fast on concatenated sorted runs
        keys, ads = np.asarray(keys, dtype=np.uint64)[order], np.asarray(ads, dtype=np.int64)[order]
        if run is None:
            run = int(
                self.db.execute(
                    "SELECT COALESCE(MAX(run), 0) + 1 FROM key_parts WHERE space = ?", (space,)
                ).fetchone()[0]
            )
        level = _level(len(keys))
        for part, start in enumerate(range(0, len(keys), PART_ENTRIES)):
            part_keys, part_ads = keys[start : start + PART_ENTRIES], ads[start : start + PART_ENTRIES]
            blob, low, high = encode_part(part_keys, part_ads)
            self.db.execute(
                "INSERT INTO key_parts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    space,
                    run,
                    part,
                    level,
                    len(part_keys),
                    int(part_keys[0]),
                    int(part_keys[-1]),
                    low,
                    high,
                    blob,
                ),
            )

    def _add_run(self, space: int, keys: np.ndarray, ads: np.ndarray) -> None:
        """A new run, then merges while some level up to `MAX_MERGE_LEVEL` holds `FANIN` runs."""
        self._write_run(space, keys, ads)
        while True:
            runs = self.db.execute(
                "SELECT run, level FROM key_parts WHERE space = ? AND part = 0 AND level <= ? ORDER BY level, run",
                (space, MAX_MERGE_LEVEL),
            ).fetchall()
            levels = pd.Series([level for _, level in runs], dtype=np.int64)
            full = levels.value_counts()
            full = full[full >= FANIN]
            if full.empty:
                break
            level = int(full.index.min())
            chosen = [run for run, lvl in runs if lvl == level]
            self._merge_runs(space, chosen)
        self.db.execute(
            "DELETE FROM removed WHERE NOT EXISTS "
            "(SELECT 1 FROM key_parts p WHERE p.space != ? AND removed.id BETWEEN p.min_ad AND p.max_ad)",
            (SPACE_BLOCKS,),
        )

    def _merge_runs(self, space: int, runs: list[int]) -> None:
        self._temp("merging", "run INTEGER PRIMARY KEY", ((r,) for r in runs))
        keys, ads = [], []
        for first_key, min_ad, blob in self.db.execute(
            "SELECT first_key, min_ad, data FROM key_parts WHERE space = ? AND run IN (SELECT run FROM temp.merging)",
            (space,),
        ):
            part_keys, part_ads = decode_part(blob, first_key, min_ad)
            keys.append(part_keys)
            ads.append(part_ads)
        all_keys, all_ads = np.concatenate(keys), np.concatenate(ads)
        removed = self._removed() if space != SPACE_BLOCKS else np.zeros(0, dtype=np.int64)
        if len(removed):
            live = ~sorted_member(all_ads, removed)
            all_keys, all_ads = all_keys[live], all_ads[live]
        self.db.execute(
            "DELETE FROM key_parts WHERE space = ? AND run IN (SELECT run FROM temp.merging)", (space,)
        )
        self._write_run(space, all_keys, all_ads, run=max(runs))

    # ------------------------------------------------------------------ reads
    def find_ads(self, ad_ids: list[str]) -> pd.DataFrame:
        from jobdedup.pipeline.index.rows import ad_id_keys

        empty = pd.DataFrame(
            {
                "ad_id": pd.Series(dtype=object),
                "id": pd.Series(dtype=np.int64),
                "gid": pd.Series(dtype=np.int64),
            }
        )
        if not len(ad_ids):
            return empty
        wanted = np.asarray([str(a) for a in ad_ids], dtype=object)
        keys = ad_id_keys(wanted)
        distinct = sorted_unique(keys)
        position, ids = self._runs_lookup(SPACE_AD_IDS, distinct)
        if not len(ids):
            return empty
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
        distinct = sorted_unique(query["key"].to_numpy()).astype(np.uint64)
        big = pd.DataFrame(
            self.db.execute("SELECT key, hub FROM big_keys ORDER BY key").fetchall(), columns=["key", "ad"]
        ).astype(np.int64)
        is_big = sorted_member(distinct.view(np.int64), big["key"].to_numpy())
        small_keys = distinct[~is_big]
        position, ads = self._runs_lookup(SPACE_KEYS, small_keys)
        small = pd.DataFrame({"key": small_keys[position].view(np.int64), "ad": ads, "big": False})
        big = big.assign(big=True)
        found = pd.concat([small, big[sorted_member(big["key"].to_numpy(), distinct[is_big].view(np.int64))]])
        frame = query.merge(found, on="key")[["key", "doc", "lsh", "ad", "big"]]
        return frame.astype({"key": np.int64, "doc": np.int64, "lsh": bool, "ad": np.int64, "big": bool})

    def gids(self, ids: np.ndarray) -> pd.DataFrame:
        self._id_table("want_gids_of", "id", ids)
        found = self.db.execute(
            "SELECT a.id, a.gid FROM temp.want_gids_of w CROSS JOIN ads a ON a.id = w.id ORDER BY w.id"
        ).fetchall()
        return pd.DataFrame(found, columns=["id", "gid"], dtype=np.int64)

    def group_members(self, gids: np.ndarray) -> pd.DataFrame:
        self._id_table("want_gids", "gid", gids)
        found = self.db.execute(
            "SELECT a.id, a.gid FROM temp.want_gids w CROSS JOIN ads a ON a.gid = w.gid"
        ).fetchall()
        return pd.DataFrame(found, columns=["id", "gid"], dtype=np.int64)

    def rows(self, ids: np.ndarray) -> pd.DataFrame:
        """id, ad_id, gid, ref (id of the reference row or -1), row — in id order."""
        self._id_table("want_rows", "id", ids)
        found = self.db.execute(
            "SELECT a.id, a.gid, COALESCE(a.ref, -1), a.row FROM temp.want_rows w CROSS JOIN ads a ON a.id = w.id "
            "ORDER BY w.id"
        ).fetchall()
        frame = pd.DataFrame(found, columns=["id", "gid", "ref", "row"])
        frame = frame.astype({"id": np.int64, "gid": np.int64, "ref": np.int64})
        frame.insert(1, "ad_id", self._ad_ids(frame["id"].to_numpy()))
        return frame

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
            for r in self.db.execute("SELECT g.name FROM temp.want_taken w CROSS JOIN groups g ON g.name = w.name")
        }
        founders = self.find_ads(list(names))
        taken.update(founders.loc[founders["id"] == founders["gid"], "ad_id"])
        return taken

    def boilerplate(self) -> np.ndarray:
        parts = [_decode_sorted(blob) for (blob,) in self.db.execute("SELECT data FROM blocks")]
        return sorted_unique(np.concatenate(parts)) if parts else np.zeros(0, dtype=np.uint64)

    def block_sightings(self, keys: np.ndarray) -> pd.DataFrame:
        """The stored sightings (`key`, `value`) of these block keys (`pipeline.index.blocks`)."""
        distinct = sorted_unique(np.asarray(keys, dtype=np.int64)).astype(np.uint64)
        position, values = self._runs_lookup(SPACE_BLOCKS, distinct)
        return pd.DataFrame({"key": distinct[position].astype(np.int64), "value": values})

    def name_words(self) -> np.ndarray:
        parts = [_decode_sorted(blob) for (blob,) in self.db.execute("SELECT data FROM names")]
        return sorted_unique(np.concatenate(parts)).astype(np.uint32) if parts else np.zeros(0, dtype=np.uint32)

    def next_id(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(first_id + n), 1) FROM ad_ids").fetchone()[0])

    def next_batch(self) -> int:
        return int(self.db.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM batches").fetchone()[0])

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
            self.db.execute("INSERT INTO blocks VALUES (?, ?)", (int(batch), _encode_sorted(blocks)))

    def insert_name_words(self, batch: int, words: np.ndarray) -> None:
        """Employer and place words of this batch not already stored."""
        words = sorted_unique(np.asarray(words, dtype=np.uint32))
        words = words[~sorted_member(words, self.name_words())]
        if len(words):
            self.db.execute("INSERT INTO names VALUES (?, ?)", (int(batch), _encode_sorted(words)))

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
        gone = self.db.execute("SELECT a.id, a.gid FROM temp.gone g CROSS JOIN ads a ON a.id = g.id").fetchall()
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

    def _count_entries(self, ids: np.ndarray) -> int:
        """How many key entries (space 0) belong to these ads (parts whose id range covers them)."""
        total = 0
        for first_key, min_ad, max_ad, blob in self.db.execute(
            "SELECT first_key, min_ad, max_ad, data FROM key_parts WHERE space = ?", (SPACE_KEYS,)
        ):
            lo, hi = np.searchsorted(ids, [min_ad, max_ad + 1])
            if lo < hi:
                total += int(sorted_member(decode_part(blob, first_key, min_ad)[1], ids[lo:hi]).sum())
        return total

    # ------------------------------------------------------------------ reports
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

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())

    def close(self) -> None:
        if not self.read_only:
            with contextlib.suppress(sqlite3.OperationalError):
                self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()
