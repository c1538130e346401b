"""The compressed blobs of the SQLite index: key parts and sorted value sets.

A key part holds sorted (key, ad) entries: the keys delta-coded, keys and ad offsets each cut into
byte planes (the low bytes of all values, then the next bytes, ...: compresses far better), zstd.
A sorted set (boilerplate block hashes, name words) is coded the same way without ads.

Example:
    >>> blob, low, high = encode_part(np.array([3, 9], dtype=np.uint64), np.array([7, 5]))
    >>> [a.tolist() for a in decode_part(blob, 3, low)]
    [[3, 9], [7, 5]]
"""

from __future__ import annotations

import numpy as np
import zstandard

_BLOB_LEVEL = 3


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


class KeyPart:
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
    part = KeyPart(blob, first_key, min_ad)
    return part.keys, part.ads()


def encode_sorted(values: np.ndarray) -> bytes:
    """Sorted unique uint64 values: count, first value, delta byte planes, zstd."""
    values = np.sort(np.asarray(values, dtype=np.uint64))
    deltas = np.diff(values, prepend=values[:1])
    width = _width(int(deltas.max()))
    header = (
        np.asarray([len(values), width, 0], dtype="<u4").tobytes() + np.asarray(values[:1], "<u8").tobytes()
    )
    return header + zstandard.ZstdCompressor(level=_BLOB_LEVEL).compress(_planes(deltas, width))


def decode_sorted(blob: bytes) -> np.ndarray:
    n, width, _ = (int(v) for v in np.frombuffer(blob, dtype="<u4", count=3))
    first = np.frombuffer(blob, dtype="<u8", count=1, offset=12).astype(np.uint64)
    body = zstandard.ZstdDecompressor().decompress(blob[20:], max_output_size=n * width + 1)
    return np.cumsum(_unplanes(body, n, width), dtype=np.uint64) + first[0]
