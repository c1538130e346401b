"""The key store of the SQLite index: a small log-structured merge tree of runs in blobs.

Each add writes a *run*: its (key, ad) entries sorted by key, cut into parts of at most
`PART_ENTRIES` entries (`pipeline.index.blobs`), one row of the `key_parts` table each. Runs of
similar size are merged (`FANIN` runs of one level into one) while they are small. A lookup
decodes the parts whose key range meets the sorted keys asked for and matches them with
`np.searchsorted`. Removed ads' entries stay in their runs, filtered out through the `removed`
table, until the run is merged. Space 0 holds LSH band and field-blocking keys, space 1 ad_id
hashes, space 2 block sightings (a 32-bit value in place of an ad, not tied to ads).

Example:
    >>> # store._add_run(SPACE_KEYS, keys, ids); store._runs_lookup(SPACE_KEYS, sorted_keys)
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from jobdedup.features.shingle_sets import sorted_member
from jobdedup.pipeline.index.blobs import KeyPart, decode_part, encode_part
from jobdedup.pipeline.index.key_search import matching_entries

SPACE_KEYS, SPACE_AD_IDS, SPACE_BLOCKS = 0, 1, 2
PART_ENTRIES = 1 << 20  # entries per key blob
RUN_BASE = 1 << 18  # a run of up to this many entries is level 0; level l holds up to BASE * FANIN**l
FANIN = 4  # this many runs of one level are merged into one
MAX_MERGE_LEVEL = 1  # runs above this level (> ~1M entries, ~25,000 ads) are not merged again,
# so a merge handles at most ~4M entries (under a second); a lookup decodes every run anyway


def live_entries(
    positions: list[np.ndarray], ads: list[np.ndarray], space: int, removed: Callable[[], np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """The (position in keys, ad) entries a look-up found part by part, without those of removed
    ads (`removed()`, asked only if any was found; a block sighting's "ad" is its value)."""
    if not positions:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    position, ad = np.concatenate(positions), np.concatenate(ads)
    gone = removed() if space != SPACE_BLOCKS else np.zeros(0, dtype=np.int64)
    if len(gone):
        live = ~sorted_member(ad, gone)
        position, ad = position[live], ad[live]
    return position, ad


def _level(entries: int) -> int:
    level = 0
    while entries > RUN_BASE * FANIN**level:
        level += 1
    return level


class KeyRuns:
    """The `key_parts` and `removed` tables of a `SqliteStore` (its base class)."""

    db: sqlite3.Connection

    def _temp(self, name: str, columns: str, rows: Any) -> None:
        self.db.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} ({columns})")
        self.db.execute(f"DELETE FROM temp.{name}")
        placeholders = ", ".join("?" * (columns.count(",") + 1))
        self.db.executemany(f"INSERT OR IGNORE INTO temp.{name} VALUES ({placeholders})", rows)

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
                part = KeyPart(blob, first_key, min_ad)
                rows, entries = matching_entries(part.keys, keys[lo:hi])
                if len(rows):
                    positions.append(lo + rows)
                    ads.append(part.ads(entries))
        return live_entries(positions, ads, space, self._removed)

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
