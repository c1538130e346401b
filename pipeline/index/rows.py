"""Compact ad rows and stable keys for the index.

Rows: an ad's contract columns as JSON, zstd-compressed with a dictionary trained on the index's
first batch (re-scraped job ads share most of their vocabulary and markup, so a dictionary halves
the size of a short text against plain zstd). Keys: LSH band keys and field-blocking keys as 48-bit
integers that do not depend on the batch (batch mode factorizes field values per batch instead).

Example:
    >>> packer = RowPacker()
    >>> packer.unpack([packer.pack(pd.DataFrame({"description": ["a b"], "title": [None]}))[0]])["title"].tolist()
    [None]
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import zstandard
from xxhash import xxh3_64_intdigest

from pipeline.candidates import band_keys
from pipeline.io import ADS_COLUMNS
from pipeline.sketch import EMPTY_SIGNATURE_VALUE

STORED_COLUMNS = tuple(c for c in ADS_COLUMNS if c != "ad_id")
DICTIONARY_BYTES = 128 * 1024
DICTIONARY_MIN_ADS = 200
COMPRESSION_LEVEL = 7
KEY_MASK = np.uint64((1 << 48) - 1)
# Field-blocking kinds, as in `pipeline.candidates.field_block_keys`.
FIELD_COMBOS = {
    "company+title": ("company", "title_tokens"),
    "company+city": ("company", "city"),
    "title+city": ("title_tokens", "city"),
}
FIELD_ITEMS = ("emails", "phones")


class RowPacker:
    """Packs ads to compressed bytes and back; dictionaries are kept by id (0 = none)."""

    def __init__(self, dictionaries: dict[int, bytes] | None = None) -> None:
        self.dictionaries = {k: zstandard.ZstdCompressionDict(v) for k, v in (dictionaries or {}).items()}
        self.current = max(self.dictionaries) if self.dictionaries else 0

    def train(self, ads: pd.DataFrame, seed: int = 1) -> tuple[int, bytes] | None:
        """Train a dictionary on (a sample of) these ads if there are enough; returns (id, bytes)."""
        if self.current or len(ads) < DICTIONARY_MIN_ADS:
            return None
        sample = ads.sample(n=min(len(ads), 5000), random_state=seed) if len(ads) > 5000 else ads
        try:
            trained = zstandard.train_dictionary(DICTIONARY_BYTES, _raw(sample), level=COMPRESSION_LEVEL)
        except zstandard.ZstdError:
            return None
        self.dictionaries[trained.dict_id()] = trained
        self.current = trained.dict_id()
        return trained.dict_id(), trained.as_bytes()

    def pack(self, ads: pd.DataFrame) -> list[bytes]:
        """One compressed blob per ad."""
        if self.current:
            compressor = zstandard.ZstdCompressor(
                level=COMPRESSION_LEVEL, dict_data=self.dictionaries[self.current], write_content_size=True
            )
        else:
            compressor = zstandard.ZstdCompressor(level=COMPRESSION_LEVEL)
        return [compressor.compress(raw) for raw in _raw(ads)]

    def unpack(self, blobs: list[bytes]) -> pd.DataFrame:
        """The ads' stored columns back (missing values as None)."""
        decompressors: dict[int, zstandard.ZstdDecompressor] = {}
        records = []
        for blob in blobs:
            dict_id = zstandard.get_frame_parameters(blob).dict_id
            if dict_id not in decompressors:
                decompressors[dict_id] = zstandard.ZstdDecompressor(
                    dict_data=self.dictionaries[dict_id] if dict_id else None
                )
            records.append(json.loads(decompressors[dict_id].decompress(blob)))
        return pd.DataFrame(records, columns=list(STORED_COLUMNS), dtype=object)


def _raw(ads: pd.DataFrame) -> list[bytes]:
    columns = [
        ads[c].astype(object).where(ads[c].notna(), None).tolist() if c in ads else [None] * len(ads)
        for c in STORED_COLUMNS
    ]
    return [
        json.dumps(
            [None if v is None else str(v) for v in values], ensure_ascii=False, separators=(",", ":")
        ).encode()
        for values in zip(*columns)
    ]


def lsh_keys(signatures: np.ndarray, bands: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(doc, 48-bit key) of every band of every ad with a text signature."""
    usable = np.flatnonzero(signatures[:, 0] != EMPTY_SIGNATURE_VALUE)
    keys = band_keys(signatures[usable], bands, rows) & KEY_MASK
    return np.repeat(usable, bands), keys.ravel()


def field_keys(fields: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(doc, 48-bit key) of every field-blocking key (the kinds of `field_block_keys`), batch-independent."""
    docs, strings = [], []
    fields = fields.reset_index(drop=True)
    for name, (first, second) in FIELD_COMBOS.items():
        present = fields[first].notna() & fields[second].notna()
        docs.append(np.flatnonzero(present.to_numpy()))
        strings.append(
            (
                name
                + "\x1f"
                + fields[first][present].astype(str)
                + "\x1f"
                + fields[second][present].astype(str)
            ).tolist()
        )
    for name in FIELD_ITEMS:
        exploded = fields[name].explode().dropna()
        docs.append(exploded.index.to_numpy(dtype=np.int64))
        strings.append((name + "\x1f" + exploded.astype(str)).tolist())
    flat = [s for part in strings for s in part]
    keys = np.fromiter((xxh3_64_intdigest(s.encode()) for s in flat), dtype=np.uint64, count=len(flat))
    doc = np.concatenate(docs).astype(np.int64) if docs else np.zeros(0, dtype=np.int64)
    return doc, keys & KEY_MASK
