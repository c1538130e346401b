"""The index's key store held in memory, for a long-running process checking single ads.

A batch `add` reads the whole key store once (it meets most of it anyway). A service answering one
ad at a time cannot: at 1,000,000 indexed ads that is ~47 million entries, decoded in ~1 s per
request. `KeyCache` keeps every key part decoded (sorted keys, packed to 2-4 bytes in large parts,
and 4-byte ids or block-sighting values: ~0.55 GB for the ~60 million entries at 1,000,000 ads),
the ad_id lists, the boilerplate and name vocabularies and the zstd
dictionaries of one index file, shared by all connections of the process. `CachedSqliteStore` is a
`SqliteStore` that answers `lookup` / `find_ads` (42 band keys + a few field keys → `searchsorted`
in each run), `boilerplate`, `name_words`, ad_id and dictionary reads from that cache, and
everything else (the candidate rows, their groups) from SQLite as before — so a check reads only
the candidate rows.

Staying current: every write transaction of any process bumps `meta.generation`
(`SqliteStore.generation`). Each transaction of a `CachedSqliteStore` starts by reading it; if it
differs from the cache's, the cache is brought to that state inside the same snapshot: key parts are
immutable blobs (a merge writes new ones), so only parts not seen before are decoded and those gone
are dropped. A view is consistent with the SQLite snapshot of the transaction that built it. Inside a
write transaction the cache is used until the transaction's first write, then the store falls back
to SQLite for the rest of it (what it wrote is not in the cache).

Example:
    >>> # cache = KeyCache()
    >>> # with open_cached("ads.jdx", cache) as index:
    >>> #     pairs, groups, merges = index.check(new_ads, model)
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import xxhash
import zstandard

from jobdedup.features.shingle_sets import sorted_union
from jobdedup.pipeline.index.blobs import decode_part, decode_sorted
from jobdedup.pipeline.index.key_files import (
    ID_SUFFIXES,
    PACKED_SUFFIXES,
    SUFFIXES,
    drop_stale_parts,
    shared_arrays,
)
from jobdedup.pipeline.index.key_runs import SPACE_AD_IDS, SPACE_KEYS, live_entries
from jobdedup.pipeline.index.key_search import (
    PACK_MIN_ENTRIES,
    PackedKeys,
    fences,
    matching_entries,
    pack_keys,
    packed_shift,
)
from jobdedup.pipeline.index.sqlite_reads import union_of_rows
from jobdedup.pipeline.index.sqlite_store import SqliteStore
from jobdedup.pipeline.tokenizer import utf8_buffer

PAGE_CACHE_KB = 4_096  # SQLite's page cache of a connection reading through a KeyCache (16 MB: no faster)
PART_FILE_VERSION = 3  # in a part's file name: files of older layouts (unpacked keys) go stale
VIEWS_KEPT = 2
"""Generations whose views stay, for transactions that began before a commit (a transaction holds
its own view whatever the cache drops), besides pinned ones. Only the newest and pinned ones keep
their derived tables (the name-word table, ~10 MB at 1,000,000 ads); an
older one builds them again if a lingering transaction asks."""

# A key part is identified by its catalogue row; blobs are never rewritten in place.
_PartId = tuple[int, int, int, int, int, int, int, int, int]


@dataclass(frozen=True)
class _Part:
    first_key: int
    last_key: int
    keys: np.ndarray | PackedKeys  # sorted uint64 (packed in a large part: `key_search.PackedKeys`)
    ads: np.ndarray  # `narrow_values`: int32 (ids < 2^31), uint32 (sighting values) or int64
    file: str = ""  # the name of its files in the cache's directory, if mapped from there
    fences: np.ndarray = field(init=False)  # `key_search.fences` of `keys`, held in memory

    def __post_init__(self) -> None:
        object.__setattr__(self, "fences", fences(self.keys))

    @property
    def nbytes(self) -> int:
        return int(self.keys.nbytes + self.ads.nbytes + self.fences.nbytes)


@dataclass(frozen=True)
class CacheView:
    """The index's keys and vocabularies as of one committed generation."""

    generation: int
    parts: dict[int, list[_Part]]  # by key space
    removed: np.ndarray
    boilerplate: np.ndarray
    name_words: np.ndarray
    spans: np.ndarray  # (first_id, n) of every ad_id list
    derived: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)  # `derived`
    _building: dict[Hashable, threading.Lock] = field(default_factory=dict, compare=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, compare=False, repr=False)

    @property
    def entries(self) -> int:
        return int(sum(len(p.keys) for parts in self.parts.values() for p in parts))

    def derive(self, name: Hashable, build: Callable[[], Any]) -> Any:
        """`build()`, built once and kept with the view: a thread asking while another builds it
        waits for that build instead of running its own beside it.

        The service's refresh thread and a check that arrives just after a commit both ask for the
        new view's boilerplate set and name-word table (tens of ms at 1,000,000 ads); built twice at
        once, the two builds shared one interpreter lock and the check waited for both.
        """
        found = self.derived.get(name)
        if found is not None:
            return found
        with self._lock:
            building = self._building.setdefault(name, threading.Lock())
        with building:
            found = self.derived.get(name)
            if found is None:
                found = self.derived.setdefault(name, build())
        return found


def _part_bounds(parts: list[_Part]) -> tuple[np.ndarray, np.ndarray]:
    """The first and last key of each part (uint64)."""
    first = np.array([part.first_key for part in parts], dtype=np.uint64)
    return first, np.array([part.last_key for part in parts], dtype=np.uint64)


class KeyCache:
    """Decoded key parts, ad_id lists and dictionaries of one index file (thread-safe, shared).

    Args:
        directory: where decoded parts are kept as files and memory-mapped (`key_directory`), so
            that processes over one index share them through the page cache and only the pages a
            look-up touches are resident; None: decoded parts are held in this process's memory.
        pack_min_entries: parts with this many keys or more hold them packed (`PackedKeys`).
    """

    def __init__(self, directory: Path | None = None, pack_min_entries: int = PACK_MIN_ENTRIES) -> None:
        self.directory = directory
        self.pack_min_entries = pack_min_entries
        self.lock = threading.Lock()
        self._parts: dict[_PartId, _Part] = {}
        self._views: OrderedDict[int, tuple[CacheView, frozenset[_PartId]]] = OrderedDict()
        self._pins: Counter[int] = Counter()  # open pinned snapshots by generation
        self._ad_ids: dict[int, pa.LargeStringArray] = {}
        self._id_files: set[str] = set()  # ad_id lists' files (never stale: lists stay)
        self._dictionaries: dict[int, bytes] = {}
        # `_batch_union`'s (rows, last batch, values) of each table
        self._unions: dict[str, tuple[int, int, np.ndarray]] = {}
        self.refreshes = 0  # views built (for tests and stats)

    def view(self, store: SqliteStore, generation: int, pin: bool = False) -> CacheView:
        """The view of `generation`, built from `store` (which must be inside a transaction that
        sees exactly that generation) if not held; `pin`: kept whole, derived tables included,
        until `unpin(generation)` (a reader holding that snapshot open, `CachedSqliteStore.pin`)."""
        with self.lock:
            held = self._views.get(generation)
            if held is not None:
                self._views.move_to_end(generation)
                view = held[0]
            else:
                view = self._add_view(store, generation)
            if pin:
                self._pins[generation] += 1
            return view

    def _add_view(self, store: SqliteStore, generation: int) -> CacheView:
        """Build `generation`'s view and let go of what no kept view needs (under `lock`)."""
        view, ids = self._build(store, generation)
        self._views[generation] = (view, ids)
        self._release_unpinned(keep=generation)
        live = frozenset().union(*(kept for _, kept in self._views.values()))
        for gone in set(self._parts) - live:
            del self._parts[gone]
        if self.directory is not None:
            drop_stale_parts(self.directory, {p.file for p in self._parts.values()} | self._id_files)
        self.refreshes += 1
        return view

    def unpin(self, generation: int) -> None:
        """One pin of `generation` released; the last one of an older view lets its derived tables
        and, beyond `VIEWS_KEPT`, the view itself go."""
        with self.lock:
            self._pins[generation] -= 1
            if self._pins[generation] > 0:
                return
            del self._pins[generation]
            if self._views:
                self._release_unpinned(keep=max(self._views))

    def _release_unpinned(self, keep: int) -> None:
        """Clear the derived tables of the unpinned views older than `keep`'s and drop unpinned
        views other than `keep`'s beyond `VIEWS_KEPT`, oldest first (under `lock`)."""
        for held_generation, (older, _) in self._views.items():
            if held_generation < keep and not self._pins[held_generation]:
                older.derived.clear()
        unpinned = [g for g in self._views if g != keep and not self._pins[g]]
        for gone in unpinned[: max(len(self._views) - VIEWS_KEPT, 0)]:
            del self._views[gone]

    def _build(self, store: SqliteStore, generation: int) -> tuple[CacheView, frozenset[_PartId]]:
        db = store.db
        catalogue = db.execute(
            "SELECT space, run, part, level, n, first_key, last_key, min_ad, length(data) "
            "FROM key_parts ORDER BY space, run, part"
        ).fetchall()
        parts: dict[int, list[_Part]] = {SPACE_KEYS: [], SPACE_AD_IDS: []}
        for row in catalogue:
            part_id: _PartId = tuple(int(v) for v in row)  # type: ignore[assignment]
            if part_id not in self._parts:
                space, run, number = part_id[:3]
                blob = db.execute(
                    "SELECT data FROM key_parts WHERE space = ? AND run = ? AND part = ?",
                    (space, run, number),
                ).fetchone()[0]
                self._parts[part_id] = self._decoded(blob, part_id[5], part_id[6], part_id[7], part_id[4])
            parts.setdefault(part_id[0], []).append(self._parts[part_id])
        spans = np.asarray(
            db.execute("SELECT first_id, n FROM ad_ids ORDER BY first_id").fetchall(), dtype=np.int64
        )
        view = CacheView(
            generation=generation,
            parts=parts,
            removed=SqliteStore._removed(store),
            boilerplate=self._batch_union(store, "blocks"),
            name_words=self._batch_union(store, "names").astype(np.uint32),
            spans=spans.reshape(-1, 2),
        )
        return view, frozenset(tuple(int(v) for v in row) for row in catalogue)  # type: ignore[misc]

    def _batch_union(self, store: SqliteStore, table: str) -> np.ndarray:
        """The sorted union of the values of `table` (`blocks`: boilerplate, `names`: name words; a
        row per batch, only ever appended), decoding only the rows added since the last view built.

        Decoding every batch's row and sorting their union took ~40 ms of a view after each add at
        1,000,000 ads, the most of it. A snapshot whose rows are not the held ones plus newer ones
        (an older generation's view, a rewritten table) is read whole and not kept.
        """
        db = store.db
        count, last = db.execute(f"SELECT COUNT(*), COALESCE(MAX(batch), 0) FROM {table}").fetchone()
        held = self._unions.get(table)
        if held is not None and last >= held[1]:
            added = db.execute(f"SELECT data FROM {table} WHERE batch > ?", (held[1],))
            new = [decode_sorted(blob) for (blob,) in added]
            if held[0] + len(new) == count:
                values = sorted_union(held[2], *new) if new else held[2]
                self._unions[table] = (count, last, values)
                return values
        values = union_of_rows(db, table)
        if held is None or last >= held[1]:
            self._unions[table] = (count, last, values)
        return values

    def _decoded(self, blob: bytes, first_key: int, last_key: int, min_ad: int, entries: int) -> _Part:
        """A part's keys (packed if it has `pack_min_entries` or more) and ads: mapped from the
        directory's files (written first if absent), or decoded into memory."""
        shift = packed_shift(first_key, last_key) if entries >= self.pack_min_entries else None

        def decoded() -> tuple[np.ndarray, ...]:
            keys, ads = _decode(blob, first_key, min_ad)
            return (*pack_keys(keys, first_key, shift), ads) if shift is not None else (keys, ads)

        if self.directory is None:
            arrays, name = decoded(), ""
        else:
            name = xxhash.xxh3_128_hexdigest(blob + f"|{first_key}|{min_ad}|{PART_FILE_VERSION}".encode())
            arrays, mapped = shared_arrays(
                self.directory, name, SUFFIXES if shift is None else PACKED_SUFFIXES, decoded
            )
            name = name if mapped else ""
        keys = PackedKeys(first_key, shift, *arrays[:2]) if shift is not None else arrays[0]
        return _Part(first_key, last_key, keys, arrays[-1], file=name)

    def ad_id_list(self, store: SqliteStore, first_id: int) -> pa.LargeStringArray:
        """The ad_ids of the committed list starting at `first_id` (lists are never rewritten), as
        UTF-8 bytes and offsets: mapped from the directory's files like key parts, so that every
        process over the index shares them (as Python strings, ~100 MB per process at 1,000,000 ads)."""
        found = self._ad_ids.get(first_id)
        if found is None:
            blob = store.db.execute("SELECT data FROM ad_ids WHERE first_id = ?", (first_id,)).fetchone()[0]
            if self.directory is None:
                offsets, chars = _id_arrays(blob)
            else:
                name = "ids" + xxhash.xxh3_128_hexdigest(blob)
                (offsets, chars), mapped = shared_arrays(
                    self.directory, name, ID_SUFFIXES, lambda: _id_arrays(blob)
                )
                if mapped:
                    self._id_files.add(name)
            found = pa.LargeStringArray.from_buffers(
                len(offsets) - 1, pa.py_buffer(offsets), pa.py_buffer(chars)
            )
            self._ad_ids[first_id] = found
        return found

    def dictionary(self, store: SqliteStore, dict_id: int) -> bytes:
        found = self._dictionaries.get(dict_id)
        if found is None:
            found = SqliteStore.dictionary(store, dict_id)
            self._dictionaries[dict_id] = found
        return found

    def nbytes(self) -> int:
        """Bytes held by decoded key parts (ad_id lists and dictionaries not counted)."""
        with self.lock:
            return sum(p.nbytes for p in self._parts.values())


def _id_arrays(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    """An ad_id list's blob (zstd-compressed JSON) as int64 offsets and UTF-8 bytes."""
    chars, offsets = utf8_buffer(json.loads(zstandard.ZstdDecompressor().decompress(blob)))
    return offsets, chars


def _decode(blob: bytes, first_key: int, min_ad: int) -> tuple[np.ndarray, np.ndarray]:
    keys, ads = decode_part(blob, first_key, min_ad)
    return keys, narrow_values(ads)


def narrow_values(values: np.ndarray) -> np.ndarray:
    """A part's ads (or block sightings' values) in the narrowest of int32, uint32 and int64 that
    holds them: ad ids fit int32, and a sighting's value (16-bit title and employer hashes) uint32,
    4 bytes an entry instead of 8 (~60 MB of the mapped files at 1,000,000 ads)."""
    if not len(values) or int(values.min()) < 0:
        return values
    largest = int(values.max())
    if largest < 2**31:
        return values.astype(np.int32)
    return values.astype(np.uint32) if largest < 2**32 else values


_WRITES = (
    "set_meta",
    "add_dictionary",
    "insert_ads",
    "update_rows",
    "insert_groups",
    "insert_keys",
    "insert_big_keys",
    "insert_boilerplate",
    "insert_block_sightings",
    "insert_name_words",
    "merge_groups",
    "log_batch",
    "remove_ads",
)


class CachedSqliteStore(SqliteStore):
    """A `SqliteStore` that reads keys, vocabularies, ad_ids and dictionaries from a `KeyCache`.

    Its connection may be used from any thread, one at a time (the service keeps a pool).
    """

    one_thread = False

    def __init__(self, path: Path, cache: KeyCache, read_only: bool = False) -> None:
        self.cache = cache
        self._view: CacheView | None = None
        self._pinned: CacheView | None = None  # the view of the snapshot `pin` holds open
        super().__init__(Path(path), read_only=read_only)
        # Keys come from the cache: a connection reads candidate rows and, once per part, a key
        # blob, which SQLite's default page cache here (256 MB per connection) would keep; the
        # operating system's file cache serves those reads again, shared by every process.
        self.db.execute(f"PRAGMA cache_size = -{PAGE_CACHE_KB}")

    # ---------------------------------------------------------------- transactions
    @contextlib.contextmanager
    def read(self) -> Iterator[None]:
        if self._pinned is not None:  # (the snapshot `pin` holds open)
            outer, self._view = self._view, self._pinned
            try:
                yield
            finally:
                self._view = outer
            return
        self.db.execute("BEGIN")
        try:
            self._view = self.cache.view(self, self.generation())
            yield
        finally:
            self._view = None
            self.db.execute("COMMIT")

    def pin(self) -> int:
        """Hold a read transaction open on the newest committed state, and its view, until `unpin`
        (or the next `pin`): every `read` until then sees that state and starts no transaction.
        Returns its generation.

        The service's readers are pinned: a commit then changes nothing under them until the
        service has built the new state's view and derived tables in the background and moves
        them on (`pipeline.service.readers`), so no check waits for that build.
        """
        self.unpin()
        self.db.execute("BEGIN")
        self._ad_id_cache.clear()
        try:
            generation = self.generation()
            self._pinned = self.cache.view(self, generation, pin=True)
        except BaseException:
            self.db.execute("COMMIT")
            raise
        return generation

    def unpin(self) -> None:
        """End the read transaction `pin` held open (nothing if none)."""
        pinned, self._pinned = self._pinned, None
        if pinned is not None:
            self.db.execute("COMMIT")
            self.cache.unpin(pinned.generation)

    @property
    def pinned_generation(self) -> int | None:
        """The generation `pin` holds, None when not pinned."""
        return None if self._pinned is None else self._pinned.generation

    def close(self) -> None:
        self.unpin()
        super().close()

    @contextlib.contextmanager
    def write(self, timeout: float) -> Iterator[None]:
        self.unpin()
        with super().write(timeout):
            self._view = self.cache.view(self, self.generation())
            try:
                yield
            finally:
                self._view = None

    def view(self) -> CacheView:
        """The current committed view (a short read transaction; builds the view if needed), or
        the pinned one (`pin`)."""
        with self.read():
            assert self._view is not None
            return self._view

    # ---------------------------------------------------------------- reads from the cache
    def _runs_lookup(self, space: int, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        view = self._view
        if view is None:
            return super()._runs_lookup(space, keys)
        positions, ads = [], []
        if len(keys):
            parts = view.parts.get(space, [])
            # (every part's range of keys at once: two searches a part cost ~5 µs, ~70 parts a check)
            first, last = self.derived(("part bounds", space), lambda: _part_bounds(parts))
            lows = np.searchsorted(keys, first, side="left").tolist()
            for part, lo, hi in zip(parts, lows, np.searchsorted(keys, last, side="right").tolist()):
                if lo == hi:
                    continue
                rows, entries = matching_entries(part.keys, keys[lo:hi], part.fences)
                if len(rows):
                    positions.append(lo + rows)
                    ads.append(part.ads[entries].astype(np.int64))
        return live_entries(positions, ads, space, self._removed)

    def _removed(self) -> np.ndarray:
        return self._view.removed if self._view is not None else super()._removed()

    def boilerplate(self) -> np.ndarray:
        return self._view.boilerplate if self._view is not None else super().boilerplate()

    def name_words(self) -> np.ndarray:
        return self._view.name_words if self._view is not None else super().name_words()

    def derived(self, name: Hashable, build: Callable[[], Any]) -> Any:
        """`build()`, kept with the view (every transaction of its generation gets the same)."""
        view = self._view
        return build() if view is None else view.derive(name, build)

    def dictionary(self, dict_id: int) -> bytes:
        # Committed dictionaries never change; one read in a dirty write transaction may be new.
        return self.cache.dictionary(self, dict_id) if self._view is not None else super().dictionary(dict_id)

    def _ad_ids(self, ids: np.ndarray) -> np.ndarray:
        view = self._view
        if view is None:
            return super()._ad_ids(ids)
        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty(len(ids), dtype=object)
        if not len(ids):
            return out
        spans = view.spans
        which = np.searchsorted(spans[:, 0], ids, side="right") - 1 if len(spans) else np.full(len(ids), -1)
        if (which < 0).any() or (ids >= spans[which, 0] + spans[which, 1]).any():
            return super()._ad_ids(ids)  # not a committed id: let the store say so
        for span in np.unique(which):
            first = int(spans[span, 0])
            mask = which == span
            out[mask] = (
                self.cache.ad_id_list(self, first).take(ids[mask] - first).to_numpy(zero_copy_only=False)
            )
        return out


def _falls_back(name: str) -> Any:
    method = getattr(SqliteStore, name)

    def write_method(self: CachedSqliteStore, *args: Any, **kwargs: Any) -> Any:
        self._view = None  # what this transaction writes is not in the cache
        return method(self, *args, **kwargs)

    write_method.__name__ = name
    write_method.__doc__ = method.__doc__
    return write_method


for _name in _WRITES:
    setattr(CachedSqliteStore, _name, _falls_back(_name))


def open_cached(path: str | Path, cache: KeyCache, *, timeout: float = 60.0, read_only: bool = False) -> Any:
    """An `Index` over `path` whose store reads keys from `cache` (shared by every `open_cached` of it)."""
    from jobdedup.pipeline.index.core import Index

    return Index(CachedSqliteStore(Path(path), cache, read_only=read_only), timeout=timeout)


__all__ = ["CacheView", "CachedSqliteStore", "KeyCache", "open_cached"]
