"""Compact ad rows and stable keys for the index.

Rows: the columns `prepare_batch` reads (`description` and `features.fields.FIELD_SOURCE_COLUMNS`;
the outputs need only `ad_id`, kept apart) as a JSON list, zstd-compressed in one of two ways:

- *root* rows with a trained dictionary (re-scraped job ads share most of their vocabulary and
  markup). Ads that compress 30 % worse than the current dictionary's own ads did are tried with
  the few previous dictionaries; when 30 % of a slice of 10,000 new ads still do (a new source or
  language), a dictionary is trained on them;
- rows stored against a *reference* row (a raw-content dictionary: the last 32 KB of the current
  trained dictionary, then the reference's row): an ad whose group already has a row stored on its
  own is stored against that one (a repost costs a third of a fresh ad; it is read back with its
  group anyway); any other ad against its most probable scored partner stored on its own (another
  posting of the same employer, a near miss), where that saves at least 10 %. A reference is
  always a row stored on its own, so reading any row takes at most one other. These blobs start
  with the 2-byte id of the dictionary whose tail they used (0: none).

Keys: LSH band keys, field-blocking keys and ad_id hashes as 36-bit integers that do not depend on
the batch (batch mode factorizes field values per batch instead). Stored sorted and delta-coded, a
key entry costs about KEY_BITS - log2(keys per ad) + 1.4 bits plus the ad's id, so every bit cut
saves ~5 bytes per ad. A chance collision only adds a candidate pair that the classifier scores:
about (batch keys) x (index keys) / 2^36, ~320 extra index candidates for a 10,000-ad batch at
1,000,000 indexed ads (~1 % of the ads re-read), 10x that at 10 million.

Example:
    >>> packer = RowPacker()
    >>> packed = packer.pack(pd.DataFrame({"description": ["a b"], "title": [None]}))
    >>> packer.unpack(packed.rows, [None])[0]["title"].tolist()
    [None]
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import zstandard
from xxhash import xxh3_64_intdigest

from jobdedup.features.fields import FIELD_SOURCE_COLUMNS
from jobdedup.pipeline.candidates import FIELD_ITEMS, FIELD_KEY_ROWS, band_keys, blocking_columns
from jobdedup.pipeline.io import ADS_COLUMNS
from jobdedup.pipeline.sketch import EMPTY_SIGNATURE_VALUE

# What prepare reads, short fields first: the description often repeats title, company and place,
# and zstd only refers back.
_NEEDED = {"description", *FIELD_SOURCE_COLUMNS}
ROW_COLUMNS = tuple(c for c in ADS_COLUMNS if c in _NEEDED and c != "description") + ("description",)
_ROW_INDEX = pd.Index(ROW_COLUMNS)  # (made once: ~35 µs a table)
COMPRESSION_LEVEL = 7
THREADS = 2
DICTIONARY_MIN_ADS = 200
DICTIONARY_SAMPLE = 2000
DICTIONARY_BYTES_PER_AD = 48  # dictionary size per ad of the slice it is trained on...
DICTIONARY_MIN_BYTES = 64 * 1024  # ...within these bounds
DICTIONARY_MAX_BYTES = 1024 * 1024
SLICE = 10_000  # ads checked together for dictionary drift
OUTLIER = 1.3  # an ad compressing this much worse than its dictionary's average is an outlier...
DRIFT_SHARE = 0.3  # ...and this share of a slice (at least DICTIONARY_MIN_ADS) means it drifted
# (~10 % of the ads are outliers when the dictionary fits, ~80 % of a new language)
RECENT = 4  # outliers are tried with this many most recent dictionaries before training one,
PROBE = 200  # each first on this many of them
CHECK = 500  # held-out outliers a new dictionary's average ratio is measured on
MISFITS = 50  # outliers of a slice worth trying the other recent dictionaries for
REFERENCE_GAIN = 0.9  # use the group's root as reference only if it saves at least 10 %
REFERENCE_PREFIX = 32 * 1024  # bytes of the trained dictionary's tail put before the root's row
KEY_BITS = 36
_KEY_SHIFT = np.uint64(64 - KEY_BITS)


@dataclass
class Packed:
    """What `RowPacker.pack` returns.

    Attributes:
        rows: one compressed blob per ad.
        uses_reference: per ad, True where the blob needs its reference row to be read.
        dictionaries: dictionaries trained here, to store: (dict_id, bytes, ratio).
        training_seconds: time spent training and judging dictionaries.
        seconds: time `pack_roots` took (training included).
        raw: the ads' raw rows.
    """

    rows: list[bytes]
    uses_reference: np.ndarray
    dictionaries: list[tuple[int, bytes, float]] = field(default_factory=list)
    training_seconds: float = 0.0
    seconds: float = 0.0
    raw: list[bytes] = field(default_factory=list, repr=False)


class RowPacker:
    """Packs ads to compressed bytes and back.

    Args:
        loader: returns a stored dictionary's bytes by its id (dictionaries are loaded when needed).
        recent: (dict_id, ratio) of the most recent dictionaries, newest first; new root rows are
            compressed with the newest; ratio is compressed/raw on the ads it was trained for.
        next_id: the id the next trained dictionary gets (ids are the store's, not zstd's random ones).
        threads: compression threads for large sets of rows.
    """

    def __init__(
        self,
        loader: Callable[[int], bytes] | None = None,
        recent: Sequence[tuple[int, float]] = (),
        next_id: int = 1,
        threads: int = THREADS,
    ) -> None:
        self.threads = threads
        self.loader = loader
        self.cache: dict[int, zstandard.ZstdCompressionDict] = {}
        self.recent = list(recent)[:RECENT]
        self.next_id = next_id

    @property
    def current(self) -> int:
        """The id of the dictionary new rows are compressed with (0: none yet)."""
        return self.recent[0][0] if self.recent else 0

    def _dictionary(self, dict_id: int) -> zstandard.ZstdCompressionDict:
        if dict_id not in self.cache:
            if self.loader is None:
                raise KeyError(f"zstd dictionary {dict_id} is not known")
            self.cache[dict_id] = zstandard.ZstdCompressionDict(self.loader(dict_id))
        return self.cache[dict_id]

    # ------------------------------------------------------------------ pack
    def pack(
        self,
        ads: pd.DataFrame | None,
        references: Sequence[bytes | None] | None = None,
        train: bool = True,
        seed: int = 1,
        raw: list[bytes] | None = None,
    ) -> Packed:
        """One compressed blob per ad.

        Args:
            ads: the ads (or None when `raw` is given).
            references: per ad, the raw row of its group's root to compress against, or None.
            train: whether a dictionary may be trained (on the first slice, or a slice that drifted).
            seed: for the dictionary's training sample.
            raw: the ads' `raw_rows`, if already made.
        """
        packed = self.pack_roots(ads, train, seed, raw)
        if references is not None:
            self.pack_references(packed, references)
        return packed

    def preload(self) -> None:
        """Load the recent dictionaries now (so packing needs no store, e.g. in another thread)."""
        for dict_id, _ in self.recent:
            self._dictionary(dict_id)

    def pack_roots(
        self, ads: pd.DataFrame | None, train: bool = True, seed: int = 1, raw: list[bytes] | None = None
    ) -> Packed:
        """Every ad compressed on its own (with the current or a newly trained dictionary)."""
        started = time.perf_counter()
        raw = raw_rows(ads) if raw is None else raw
        packed = Packed(rows=[b""] * len(raw), uses_reference=np.zeros(len(raw), dtype=bool), raw=raw)
        for start in range(0, len(raw), SLICE):
            part = raw[start : start + SLICE]
            packed.rows[start : start + len(part)] = self._pack_slice(part, packed, train, seed + start)
        packed.seconds = time.perf_counter() - started
        return packed

    def _pack_slice(self, part: list[bytes], packed: Packed, train: bool, seed: int) -> list[bytes]:
        """Compress a slice with the current dictionary; then deal with the ads it does not fit.

        Outliers (ads compressing 30 % worse than the dictionary's own ads did) are tried with the
        other recent dictionaries (each first on a sample of them); if 30 % of the slice are still
        outliers (a new source or language), a dictionary is trained on them. Each ad keeps its
        smallest blob.
        """
        rng = np.random.default_rng(seed)
        blobs = self._compress(part)
        lengths = np.fromiter(map(len, part), dtype=np.int64, count=len(part))
        sizes = np.fromiter(map(len, blobs), dtype=np.int64, count=len(part))
        began = time.perf_counter()
        ratio = self.recent[0][1] if self.recent else 0.0
        outliers = np.flatnonzero(sizes > OUTLIER * ratio * lengths)
        trigger = max(DICTIONARY_MIN_ADS, DRIFT_SHARE * len(part))

        def adopt(rows: np.ndarray, new: list[bytes]) -> np.ndarray:
            new_sizes = np.fromiter(map(len, new), dtype=np.int64, count=len(new))
            for i, size, blob in zip(rows.tolist(), new_sizes.tolist(), new):
                if size < sizes[i]:
                    blobs[i], sizes[i] = blob, size
            return new_sizes

        for dict_id, old_ratio in self.recent[1:]:
            if len(outliers) < MISFITS:
                break
            # Tried on a sample first: a new language would otherwise be compressed RECENT times.
            probe = rng.choice(outliers, min(len(outliers), PROBE), replace=False)
            dictionary = self._dictionary(dict_id)
            if (
                np.mean(
                    self._sizes([part[i] for i in probe], dictionary) <= OUTLIER * old_ratio * lengths[probe]
                )
                < 0.5
            ):
                continue
            new_sizes = adopt(outliers, self._compress([part[i] for i in outliers], dictionary))
            still = (new_sizes > OUTLIER * old_ratio * lengths[outliers]) & (
                sizes[outliers] > OUTLIER * ratio * lengths[outliers]
            )
            outliers = outliers[still]
        if train and len(outliers) >= trigger:
            order = rng.permutation(outliers)
            learn, judge = order[:DICTIONARY_SAMPLE], order[DICTIONARY_SAMPLE:][:CHECK]
            if len(judge) < 50:
                judge = learn[:CHECK]  # few outliers: judged on (some of) its own training ads
            trained = self._train([part[i] for i in learn])
            if trained is not None:
                new = self._compress([part[i] for i in outliers], trained)
                if sum(map(len, new)) < 0.95 * int(sizes[outliers].sum()):
                    adopt(outliers, new)
                    at = pd.Index(outliers).get_indexer(judge)
                    new_ratio = sum(len(new[j]) for j in at) / max(int(lengths[judge].sum()), 1)
                    dict_id = trained.dict_id()
                    self.cache[dict_id] = trained
                    self.recent = [(dict_id, new_ratio)] + self.recent[: RECENT - 1]
                    packed.dictionaries.append((dict_id, trained.as_bytes(), new_ratio))
        packed.training_seconds += time.perf_counter() - began
        return blobs

    def _sizes(self, raw: list[bytes], dictionary: zstandard.ZstdCompressionDict | None) -> np.ndarray:
        return np.fromiter(map(len, self._compress(raw, dictionary)), dtype=np.int64, count=len(raw))

    def pack_references(self, packed: Packed, references: Sequence[bytes | None]) -> None:
        """Store ad i against `references[i]` (its group root's raw row) where that is smaller."""
        prefix_id = self.current if self.current < 1 << 16 else 0
        prefix = self._dictionary(prefix_id).as_bytes()[-REFERENCE_PREFIX:] if prefix_id else b""
        header = prefix_id.to_bytes(2, "little")
        by_reference: dict[int, list[int]] = {}
        for i, reference in enumerate(references):
            if reference is not None:
                by_reference.setdefault(id(reference), []).append(i)
        for members in by_reference.values():  # one compressor at a time: each holds MBs of tables
            root = references[members[0]]
            assert root is not None  # (only rows with a reference are in by_reference)
            compressor = zstandard.ZstdCompressor(
                level=COMPRESSION_LEVEL,
                dict_data=zstandard.ZstdCompressionDict(
                    prefix + root, dict_type=zstandard.DICT_TYPE_RAWCONTENT
                ),
            )
            for i in members:
                blob = header + compressor.compress(packed.raw[i])
                if len(blob) < REFERENCE_GAIN * len(packed.rows[i]):
                    packed.rows[i] = blob
                    packed.uses_reference[i] = True

    def _compress(
        self, raw: list[bytes], dictionary: zstandard.ZstdCompressionDict | None = None
    ) -> list[bytes]:
        if dictionary is None and self.current:
            dictionary = self._dictionary(self.current)
        compressor = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL, dict_data=dictionary)
        if len(raw) < 64:
            return [compressor.compress(r) for r in raw]
        # One call for all rows: it holds no GIL throughout (a call per row would wait for the GIL
        # after every row while the main thread works, and run several times slower).
        # (zstandard's stubs ask for a list of bytes | bytearray | memoryview: lists are invariant)
        out = compressor.multi_compress_to_buffer(raw, threads=max(self.threads, 1))  # type: ignore[arg-type]
        return [out[i].tobytes() for i in range(len(out))]

    def _train(self, sample: list[bytes]) -> zstandard.ZstdCompressionDict | None:
        size = int(np.clip(DICTIONARY_BYTES_PER_AD * SLICE, DICTIONARY_MIN_BYTES, DICTIONARY_MAX_BYTES))
        try:
            # accel=10: 2.5x faster fastCover training, same compression on job ads (measured).
            # (zstandard's stubs ask for a list of bytes | bytearray | memoryview: lists are invariant)
            trained = zstandard.train_dictionary(
                size,
                sample,  # type: ignore[arg-type]
                level=COMPRESSION_LEVEL,
                accel=10,
                dict_id=self.next_id,
            )
        except zstandard.ZstdError:
            return None
        self.next_id += 1
        return trained

    # ------------------------------------------------------------------ unpack
    def unpack(
        self, blobs: Sequence[bytes], references: Sequence[int | None]
    ) -> tuple[pd.DataFrame, list[bytes]]:
        """The stored columns back (missing values as None) and each row's raw bytes.

        `references[i]` is the position (in `blobs`) of row i's reference row, or None; every
        reference must itself be a root row (depth one).
        """
        raw: list[bytes] = [b""] * len(blobs)
        decompressors: dict[int, zstandard.ZstdDecompressor] = {}
        later = []
        for i, (blob, reference) in enumerate(zip(blobs, references)):
            if reference is not None:
                later.append(i)
                continue
            dict_id = zstandard.get_frame_parameters(blob).dict_id
            if dict_id not in decompressors:
                decompressors[dict_id] = zstandard.ZstdDecompressor(
                    dict_data=self._dictionary(dict_id) if dict_id else None
                )
            raw[i] = decompressors[dict_id].decompress(blob)
        prefixes: dict[int, bytes] = {0: b""}
        current: tuple[int, int] | None = None
        decompressor = zstandard.ZstdDecompressor()
        # Rows sharing a reference (and dictionary tail) share one decompressor.
        later.sort(key=lambda i: (references[i], blobs[i][:2]))
        for i in later:
            at = references[i]
            assert at is not None  # (`later` holds the rows with a reference)
            root = raw[at]
            if not root:
                raise ValueError("index row refers to a row that is not read or not a root")
            prefix_id = int.from_bytes(blobs[i][:2], "little")
            if current != (at, prefix_id):
                if prefix_id not in prefixes:
                    prefixes[prefix_id] = self._dictionary(prefix_id).as_bytes()[-REFERENCE_PREFIX:]
                dictionary = zstandard.ZstdCompressionDict(
                    prefixes[prefix_id] + root, dict_type=zstandard.DICT_TYPE_RAWCONTENT
                )
                decompressor = zstandard.ZstdDecompressor(dict_data=dictionary)
                current = (at, prefix_id)
            raw[i] = decompressor.decompress(blobs[i][2:])
        # One JSON document for all rows: far less per-call overhead than a loads() per row.
        records = json.loads(b"[" + b",".join(raw) + b"]") if raw else []
        return _object_table(records, _ROW_INDEX), raw


def _object_table(records: list[list[Any]], columns: pd.Index) -> pd.DataFrame:
    """An object table of `records` (lists of one scalar per column), from one array: a frame of
    the lists costs ~80 µs for the few rows of a check."""
    cells = np.empty((len(records), len(columns)), dtype=object)
    for at, record in enumerate(records):
        cells[at] = record
    return pd.DataFrame(cells, columns=columns, dtype=object, copy=False)


def raw_rows(ads: pd.DataFrame) -> list[bytes]:
    """Each ad's `ROW_COLUMNS` as compact JSON (a list, missing values null)."""
    columns = [
        ads[c].astype(object).where(ads[c].notna(), None).tolist() if c in ads else [None] * len(ads)
        for c in ROW_COLUMNS
    ]
    return [
        json.dumps(
            [None if v is None else str(v) for v in values], ensure_ascii=False, separators=(",", ":")
        ).encode()
        for values in zip(*columns)
    ]


def _mix(values: np.ndarray) -> np.ndarray:
    """A 64-bit finalizer (murmur3's), so every bit of the input reaches the top `KEY_BITS`."""
    x = np.asarray(values, dtype=np.uint64).copy()
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xFF51AFD7ED558CCD)
    x ^= x >> np.uint64(33)
    x *= np.uint64(0xC4CEB9FE1A85EC53)
    x ^= x >> np.uint64(33)
    return x


def lsh_keys(signatures: np.ndarray, bands: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(doc, KEY_BITS-bit key) of every band of every ad with a text signature."""
    usable = np.flatnonzero(signatures[:, 0] != EMPTY_SIGNATURE_VALUE)
    keys = _mix(band_keys(signatures[usable], bands, rows)) >> _KEY_SHIFT
    return np.repeat(usable, bands), keys.ravel()


def _string_keys(strings: list[str]) -> np.ndarray:
    hashed = np.fromiter(
        (xxh3_64_intdigest(s.encode()) for s in strings), dtype=np.uint64, count=len(strings)
    )
    return hashed >> _KEY_SHIFT


def ad_id_keys(ad_ids: Iterable[str]) -> np.ndarray:
    """KEY_BITS-bit hashes of ad_ids (the index finds ads by ad_id through these, then checks the text)."""
    return _string_keys([str(a) for a in ad_ids])


def field_keys(fields: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(doc, KEY_BITS-bit key) of every field-blocking key (the kinds of `field_block_keys`), batch-independent."""
    docs: list[int] = []
    strings: list[str] = []
    # (Plain lists, not pandas string operations: one check's few ads cost ~1 ms per pandas call.)
    columns = {name: column.to_numpy(dtype=object) for name, column in blocking_columns(fields).items()}
    for kind, first, second, unless in FIELD_KEY_ROWS:
        firsts, seconds = columns[first], columns[second]
        held = np.flatnonzero(~(pd.isna(firsts) | pd.isna(seconds))).tolist()
        if unless is not None:
            held = [
                doc for doc in held if pd.isna(columns[unless][doc]) or seconds[doc] != columns[unless][doc]
            ]
        docs += held
        strings += [f"{kind}\x1f{firsts[doc]}\x1f{seconds[doc]}" for doc in held]
    for name in FIELD_ITEMS:
        for doc, items in enumerate(fields[name].tolist()):
            for item in items if isinstance(items, (list, tuple, np.ndarray)) else (items,):
                if not pd.isna(item):
                    docs.append(doc)
                    strings.append(f"{name}\x1f{item}")
    return np.asarray(docs, dtype=np.int64), _string_keys(strings)
