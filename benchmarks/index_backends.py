"""DuckDB vs SQLite for the incremental index's storage workload (the numbers behind README's choice).

The workload is the one `pipeline.index` puts on its store when a batch of 10,000 ads is added to an
index of N ads: 42 band keys per ad in a key → ad store, one compressed ad row (~800 bytes, real rows
compressed with a zstd dictionary) per ad, then per batch

- look up 420,000 band keys at once (a join, never one query per ad),
- fetch the rows of ~20,000 candidate ads by internal id,
- insert 10,000 rows and 420,000 keys in one transaction,
- and, concurrently, can another process read while a writer holds its transaction open?

Three stores: SQLite with a (key, ad) WITHOUT ROWID B-tree (jobdedup's first layout, 47-bit keys),
DuckDB with a plain table and hash joins, and the layout `pipeline.index.sqlite_store` uses now: SQLite
with the keys as sorted, delta-coded runs in blobs (36-bit keys), looked up with numpy.

Run: .venv/bin/python -m benchmarks.index_backends --ads 100000 1000000
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

BANDS = 42
BATCH = 10_000
KEY_MASK = (1 << 47) - 1


def _rows(n: int, rng: np.random.Generator) -> list[bytes]:
    """n compressed ad rows of realistic size (real ads, zstd with a trained dictionary)."""
    import zstandard

    from jobdedup.pipeline.io import read_ads

    ads = read_ads(Path(__file__).resolve().parent.parent / "data" / "test_ads.parquet")
    raw = ["\x1f".join("" if pd.isna(v) else str(v) for v in r).encode() for r in ads.itertuples(index=False)]
    dictionary = zstandard.train_dictionary(112_000, raw)
    compressor = zstandard.ZstdCompressor(level=9, dict_data=dictionary)
    packed = [compressor.compress(r) for r in raw]
    return [packed[i] for i in rng.integers(0, len(packed), n)]


def _keys(n_ads: int, first_ad: int, rng: np.random.Generator) -> pd.DataFrame:
    keys = rng.integers(0, KEY_MASK, size=n_ads * BANDS, dtype=np.int64)
    return pd.DataFrame({"key": keys, "ad": np.repeat(np.arange(first_ad, first_ad + n_ads), BANDS)})


def _hits(base: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """Lookup keys of a new batch: 10 % of them are keys of existing ads (duplicates), the rest new."""
    keys = rng.integers(0, KEY_MASK, size=BATCH * BANDS, dtype=np.int64)
    shared = rng.random(len(keys)) < 0.1
    keys[shared] = base["key"].to_numpy()[rng.integers(0, len(base), int(shared.sum()))]
    return pd.DataFrame({"key": keys, "doc": np.repeat(np.arange(BATCH), BANDS)})


class Sqlite:
    name = "SQLite (WAL, WITHOUT ROWID key table)"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA cache_size=-262144")
        self.db.execute("CREATE TABLE bands (key INTEGER, ad INTEGER, PRIMARY KEY (key, ad)) WITHOUT ROWID")
        self.db.execute("CREATE TABLE ads (id INTEGER PRIMARY KEY, row BLOB)")

    def load(self, keys: pd.DataFrame, rows: list[bytes], first: int) -> None:
        self.db.execute("BEGIN")
        self.db.executemany("INSERT INTO ads VALUES (?, ?)", zip(range(first, first + len(rows)), rows))
        ordered = keys.sort_values(["key", "ad"])
        self.db.executemany(
            "INSERT INTO bands VALUES (?, ?)", zip(ordered["key"].tolist(), ordered["ad"].tolist())
        )
        self.db.execute("COMMIT")

    def lookup(self, hits: pd.DataFrame) -> int:
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS q (key INTEGER, doc INTEGER)")
        self.db.execute("DELETE FROM q")
        self.db.executemany("INSERT INTO q VALUES (?, ?)", zip(hits["key"].tolist(), hits["doc"].tolist()))
        found = self.db.execute("SELECT q.doc, b.ad FROM q JOIN bands b ON b.key = q.key").fetchall()
        return len(found)

    def fetch(self, ids: np.ndarray) -> int:
        self.db.execute("CREATE TEMP TABLE IF NOT EXISTS w (id INTEGER PRIMARY KEY)")
        self.db.execute("DELETE FROM w")
        self.db.executemany("INSERT OR IGNORE INTO w VALUES (?)", ((int(i),) for i in ids))
        return len(self.db.execute("SELECT a.id, a.row FROM w JOIN ads a ON a.id = w.id").fetchall())

    def begin_hold(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("INSERT INTO ads VALUES (-1, x'00')")

    def end_hold(self) -> None:
        self.db.execute("ROLLBACK")

    def close(self) -> None:
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.close()

    reader = (
        "import sqlite3,sys; d=sqlite3.connect(sys.argv[1], timeout=1);"
        "print(d.execute('select count(*) from ads').fetchone()[0])"
    )

    @classmethod
    def reopen(cls, path: Path) -> Sqlite:
        store = cls.__new__(cls)
        store.path = path
        store.db = sqlite3.connect(path, isolation_level=None)
        store.db.execute("PRAGMA journal_mode=WAL")
        store.db.execute("PRAGMA cache_size=-262144")
        return store


class SqliteRuns:
    """`pipeline.index.sqlite_store.SqliteStore`'s key runs and row table (the real code, not a copy)."""

    name = "SQLite, keys as sorted runs in blobs (jobdedup now)"

    def __init__(self, path: Path) -> None:
        from jobdedup.pipeline.index.sqlite_store import SqliteStore

        self.path = path
        self.store = SqliteStore(path)
        self.db = self.store.db

    @staticmethod
    def _key(keys: np.ndarray) -> np.ndarray:
        from jobdedup.pipeline.index.rows import KEY_BITS

        return (np.asarray(keys, dtype=np.int64) >> (47 - KEY_BITS)).astype(np.uint64)

    def load(self, keys: pd.DataFrame, rows: list[bytes], first: int) -> None:
        with self.store.write(timeout=60):
            self.db.executemany(
                "INSERT INTO ads (id, gid, ref, row) VALUES (?, ?, NULL, ?)",
                ((i, i, r) for i, r in zip(range(first, first + len(rows)), rows)),
            )
            self.store.insert_keys(self._key(keys["key"].to_numpy()), keys["ad"].to_numpy())

    def lookup(self, hits: pd.DataFrame) -> int:
        from jobdedup.pipeline.index.key_runs import SPACE_KEYS

        keys = self._key(hits["key"].to_numpy())
        from jobdedup.features.shingle_sets import sorted_unique

        unique = sorted_unique(keys)
        position, ads = self.store._runs_lookup(SPACE_KEYS, unique)
        found = pd.DataFrame({"key": unique[position], "ad": ads})
        return len(pd.DataFrame({"key": keys, "doc": hits["doc"].to_numpy()}).merge(found, on="key"))

    def fetch(self, ids: np.ndarray) -> int:
        return Sqlite.fetch(self, ids)

    def begin_hold(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")
        self.db.execute("INSERT INTO ads VALUES (-1, -1, NULL, x'00')")

    def end_hold(self) -> None:
        self.db.execute("ROLLBACK")

    def close(self) -> None:
        self.store.close()

    reader = Sqlite.reader

    @classmethod
    def reopen(cls, path: Path) -> SqliteRuns:
        return cls(path)


class Duck:
    name = "DuckDB (no ART index, hash join)"

    def __init__(self, path: Path) -> None:
        import duckdb

        self.path = path
        self.db = duckdb.connect(str(path))
        self.db.execute("CREATE TABLE bands (key BIGINT, ad BIGINT)")
        self.db.execute("CREATE TABLE ads (id BIGINT, row BLOB)")

    def load(self, keys: pd.DataFrame, rows: list[bytes], first: int) -> None:
        frame = pd.DataFrame({"id": np.arange(first, first + len(rows)), "row": rows})
        self.db.execute("BEGIN")
        self.db.register("frame", frame)
        self.db.execute("INSERT INTO ads SELECT * FROM frame")
        self.db.register("keys", keys)
        self.db.execute("INSERT INTO bands SELECT key, ad FROM keys")
        self.db.execute("COMMIT")

    def lookup(self, hits: pd.DataFrame) -> int:
        self.db.register("q", hits)
        return len(
            self.db.execute("SELECT q.doc, b.ad FROM q JOIN bands b ON b.key = q.key").fetchnumpy()["ad"]
        )

    def fetch(self, ids: np.ndarray) -> int:
        self.db.register("w", pd.DataFrame({"id": np.unique(ids)}))
        return len(self.db.execute("SELECT a.id, a.row FROM w JOIN ads a ON a.id = w.id").fetchall())

    def begin_hold(self) -> None:
        self.db.execute("BEGIN")
        self.db.execute("INSERT INTO ads VALUES (-1, '\\x00'::BLOB)")

    def end_hold(self) -> None:
        self.db.execute("ROLLBACK")

    def close(self) -> None:
        self.db.execute("CHECKPOINT")
        self.db.close()

    reader = (
        "import duckdb,sys; d=duckdb.connect(sys.argv[1], read_only=True);"
        "print(d.execute('select count(*) from ads').fetchone()[0])"
    )

    @classmethod
    def reopen(cls, path: Path) -> Duck:
        import duckdb

        store = cls.__new__(cls)
        store.path = path
        store.db = duckdb.connect(str(path))
        return store


def _size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


def measure(store_cls, n_ads: int, rows: list[bytes], rng_seed: int, folder: Path) -> dict:
    rng = np.random.default_rng(rng_seed)
    path = folder / f"{store_cls.__name__.lower()}.db"
    store = store_cls(path)
    base_parts = []
    start = time.perf_counter()
    chunk = 100_000
    for first in range(0, n_ads, chunk):
        size = min(chunk, n_ads - first)
        keys = _keys(size, first, rng)
        base_parts.append(keys.iloc[:: BANDS * 50])
        store.load(keys, [rows[i % len(rows)] for i in range(first, first + size)], first)
    build = time.perf_counter() - start
    store.close()
    size_before = _size(path)
    store = store_cls.reopen(path)
    hits = _hits(pd.concat(base_parts), rng)
    start = time.perf_counter()
    found = store.lookup(hits)
    lookup = time.perf_counter() - start
    start = time.perf_counter()
    fetched = store.fetch(rng.integers(0, n_ads, 20_000))
    fetch = time.perf_counter() - start
    start = time.perf_counter()
    store.load(
        _keys(BATCH, n_ads, rng),
        rows[:BATCH] if len(rows) >= BATCH else rows * (BATCH // len(rows) + 1),
        n_ads,
    )
    insert = time.perf_counter() - start
    store.begin_hold()
    reader = subprocess.run(
        [sys.executable, "-c", store_cls.reader, str(path)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    store.end_hold()
    store.close()
    return {
        "backend": store_cls.name,
        "index ads": n_ads,
        "build s": round(build, 1),
        "bytes/ad on disk": round(size_before / n_ads),
        "lookup 420k keys s": round(lookup, 2),
        "hits": found,
        "fetch 20k rows s": round(fetch, 2),
        "rows fetched": fetched,
        "insert 10k ads s": round(insert, 2),
        "reader during write": "reads"
        if reader.returncode == 0
        else "blocked: " + reader.stderr.strip().splitlines()[-1][:80],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ads", type=int, nargs="+", default=[100_000])
    parser.add_argument(
        "--backends", nargs="+", default=["sqlite", "duckdb", "runs"], choices=["sqlite", "duckdb", "runs"]
    )
    args = parser.parse_args()
    chosen = {"sqlite": Sqlite, "duckdb": Duck, "runs": SqliteRuns}
    rows = _rows(BATCH, np.random.default_rng(0))
    results = []
    for n_ads in args.ads:
        for store_cls in (chosen[name] for name in args.backends):
            with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as folder:
                results.append(measure(store_cls, n_ads, rows, 7, Path(folder)))
                print(results[-1], flush=True)
    print(pd.DataFrame(results).to_markdown(index=False) if _has_tabulate() else pd.DataFrame(results))


def _has_tabulate() -> bool:
    try:
        import tabulate  # noqa: F401
    except ImportError:
        return False
    return True


if __name__ == "__main__":
    main()
