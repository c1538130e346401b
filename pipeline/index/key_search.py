"""Find sorted query keys in a sorted key part: one compiled pass instead of several numpy calls.

A look-up in the key store (`pipeline.index.key_runs`, `pipeline.index.cache`) searches the keys
asked for in every part of every run. With numpy that is a `searchsorted` for the first entry of
each key, a comparison, another `searchsorted` for the last entry of the keys found, and a
`repeat` / `cumsum` expansion of the matches: six or more calls per part, ~70 parts per look-up,
each call's fixed cost beside a single ad's ~50 keys, and each binary search over a memory-mapped
part of 1M keys touches ~12 pages (a page fault or TLB miss each, more than the compare costs).
`matching_entries` walks the sorted queries once, narrows each search with the part's `fences`
(every 512th key, kept in memory) to one page, searches onwards from where the previous key
ended, and returns the matches already expanded.

Example:
    >>> part = np.array([2, 5, 5, 9], dtype=np.uint64)
    >>> rows, entries = matching_entries(part, np.array([1, 5, 9], dtype=np.uint64))
    >>> rows.tolist(), entries.tolist()
    ([1, 1, 2], [1, 2, 3])
"""

from __future__ import annotations

import os

import numpy as np
from numba import njit

FENCE_STEP = 512
"""Keys between two fences (`fences`): 4 KB of keys, one memory page."""


def fences(part_keys: np.ndarray) -> np.ndarray:
    """Every `FENCE_STEP`-th key of a part, a small sorted copy a search starts from.

    Of a memory-mapped part the fences are read from its file (`os.pread`, ~1 µs each), not
    through the mapping: a fence every 4 KB would map every page of the part into this process
    (every key of every part resident in each service process, ~0.2 GB more at 1,000,000 ads),
    where a look-up maps only the pages it reads.
    """
    filename = getattr(part_keys, "filename", None)
    if not isinstance(part_keys, np.memmap) or filename is None or not part_keys.flags["C_CONTIGUOUS"]:
        return np.ascontiguousarray(part_keys[::FENCE_STEP])
    width = part_keys.dtype.itemsize
    found = np.empty((len(part_keys) + FENCE_STEP - 1) // FENCE_STEP, dtype=part_keys.dtype)
    with open(filename, "rb") as handle:
        for at, offset in enumerate(
            range(part_keys.offset, part_keys.offset + len(part_keys) * width, FENCE_STEP * width)
        ):
            found[at : at + 1] = np.frombuffer(
                os.pread(handle.fileno(), width, offset), dtype=part_keys.dtype
            )
    return found


def matching_entries(
    part_keys: np.ndarray, wanted: np.ndarray, part_fences: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every (i, e) with `part_keys[e] == wanted[i]`, in order of i then e.

    Args:
        part_keys: sorted uint64 keys (a key may repeat: one entry per ad holding it).
        wanted: sorted, distinct uint64 keys.
        part_fences: `fences(part_keys)`, if kept (made here otherwise).

    Returns:
        (rows, entries): int64 arrays of equal length; `rows` indexes `wanted`, `entries`
        `part_keys`.
    """
    if part_keys.dtype != np.uint64 or wanted.dtype != np.uint64:  # (compiled, uint64 against int64
        raise TypeError("matching_entries compares uint64 keys")  # compares as float64: wrong)
    if part_fences is None:
        part_fences = fences(part_keys)
    return _matching_entries(part_keys, part_fences, wanted, FENCE_STEP)


@njit(cache=True, nogil=True, inline="always")
def _first_at_least(values: np.ndarray, key: np.uint64, low: int, high: int) -> int:
    """The first index in [low, high) whose value is >= key (high if none)."""
    while low < high:
        middle = (low + high) >> 1
        if values[middle] < key:
            low = middle + 1
        else:
            high = middle
    return low


@njit(cache=True, nogil=True)
def _matching_entries(
    part_keys: np.ndarray, part_fences: np.ndarray, wanted: np.ndarray, step: int
) -> tuple[np.ndarray, np.ndarray]:
    # A key's first entry lies after the last fence below it and at or before the next fence: the
    # fences (cache-resident) narrow each search to one page of keys. Both cursors only advance.
    n = part_keys.size
    start = np.empty(wanted.size, dtype=np.int64)
    count = np.zeros(wanted.size, dtype=np.int64)
    total = 0
    fence = 0
    at = 0
    for i in range(wanted.size):
        key = wanted[i]
        fence = _first_at_least(part_fences, key, fence, part_fences.size)
        low = max(at, (fence - 1) * step + 1 if fence > 0 else 0)
        at = _first_at_least(part_keys, key, low, min(fence * step, n))
        first = at
        while at < n and part_keys[at] == key:
            at += 1
        start[i] = first
        count[i] = at - first
        total += at - first
    rows = np.empty(total, dtype=np.int64)
    entries = np.empty(total, dtype=np.int64)
    k = 0
    for i in range(wanted.size):
        for j in range(count[i]):
            rows[k] = i
            entries[k] = start[i] + j
            k += 1
    return rows, entries


__all__ = ["FENCE_STEP", "fences", "matching_entries"]
