"""Compiled loops (numba) for the two set operations numpy cannot express without sorting everything.

- `sorted_unique_rows`: sort and de-duplicate each row of a CSR layout (per-document shingle sets).
- `intersection_counts`: size of the intersection of two sorted rows, for many pairs, in parallel.

Both are merge/sort loops over small sorted arrays: in numpy they need a global lexsort (seconds
per million rows); compiled they run at a few nanoseconds per element. Functions are cached on
disk after the first compilation.

Example:
    >>> indptr, values = sorted_unique_rows(np.array([0, 3]), np.array([5, 1, 5], dtype=np.uint64))
    >>> values.tolist()
    [1, 5]
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def _sort_unique_rows(
    indptr: np.ndarray, values: np.ndarray, out_indptr: np.ndarray, out_values: np.ndarray
) -> int:
    write = 0
    for row in range(indptr.shape[0] - 1):
        start, stop = indptr[row], indptr[row + 1]
        out_indptr[row] = write
        if stop > start:
            chunk = np.sort(values[start:stop])
            out_values[write] = chunk[0]
            write += 1
            for i in range(1, chunk.shape[0]):
                if chunk[i] != chunk[i - 1]:
                    out_values[write] = chunk[i]
                    write += 1
    out_indptr[indptr.shape[0] - 1] = write
    return write


def sorted_unique_rows(indptr: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each row's values sorted and de-duplicated; returns (indptr, values)."""
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    values = np.ascontiguousarray(values, dtype=np.uint64)
    out_indptr = np.empty_like(indptr)
    out_values = np.empty_like(values)
    written = _sort_unique_rows(indptr, values, out_indptr, out_values)
    return out_indptr, out_values[:written].copy()


@njit(cache=True, nogil=True, parallel=True)
def _intersections(
    indptr_a: np.ndarray,
    values_a: np.ndarray,
    indptr_b: np.ndarray,
    values_b: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    out: np.ndarray,
) -> None:
    for p in prange(left.shape[0]):
        i, i_end = indptr_a[left[p]], indptr_a[left[p] + 1]
        j, j_end = indptr_b[right[p]], indptr_b[right[p] + 1]
        count = 0
        while i < i_end and j < j_end:
            x, y = values_a[i], values_b[j]
            if x == y:
                count += 1
                i += 1
                j += 1
            elif x < y:
                i += 1
            else:
                j += 1
        out[p] = count


def intersection_counts(
    indptr_a: np.ndarray,
    values_a: np.ndarray,
    indptr_b: np.ndarray,
    values_b: np.ndarray,
    left: np.ndarray,
    right: np.ndarray,
    threads: int = 2,
) -> np.ndarray:
    """|row left[p] of A ∩ row right[p] of B| for every pair p (rows sorted and unique)."""
    out = np.zeros(len(left), dtype=np.int64)
    if len(left):
        numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
        _intersections(
            np.ascontiguousarray(indptr_a, dtype=np.int64),
            np.ascontiguousarray(values_a, dtype=np.uint64),
            np.ascontiguousarray(indptr_b, dtype=np.int64),
            np.ascontiguousarray(values_b, dtype=np.uint64),
            np.ascontiguousarray(left, dtype=np.int64),
            np.ascontiguousarray(right, dtype=np.int64),
            out,
        )
    return out


@njit(cache=True, nogil=True, parallel=True)
def _minhash_rows(
    indptr: np.ndarray, values: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray
) -> None:
    num_perm = a.shape[0]
    mask = np.uint64(0xFFFFFFFF)
    for row in prange(indptr.shape[0] - 1):
        start, stop = indptr[row], indptr[row + 1]
        if stop == start:
            continue
        best = np.full(num_perm, mask, dtype=np.uint64)
        for i in range(start, stop):
            # numba widens integer arithmetic to 64 bits, so every step is masked back to 32.
            h = values[i] & mask
            h ^= h >> np.uint64(16)
            h = (h * np.uint64(0x85EBCA6B)) & mask
            h ^= h >> np.uint64(13)
            h = (h * np.uint64(0xC2B2AE35)) & mask
            h ^= h >> np.uint64(16)
            for k in range(num_perm):
                v = (a[k] * h + b[k]) & mask
                if v < best[k]:
                    best[k] = v
        for k in range(num_perm):
            out[row, k] = np.uint32(best[k])


def minhash_rows(
    indptr: np.ndarray, values: np.ndarray, a: np.ndarray, b: np.ndarray, threads: int = 2
) -> np.ndarray:
    """datasketch affine32 MinHash of each row: min over its values of a·fmix32(low32(v)) + b (mod 2³²).

    Rows without values keep the all-max signature.
    """
    out = np.full((len(indptr) - 1, len(a)), np.uint32(0xFFFFFFFF), dtype=np.uint32)
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    _minhash_rows(
        np.ascontiguousarray(indptr, dtype=np.int64),
        np.ascontiguousarray(values, dtype=np.uint64),
        np.ascontiguousarray(a, dtype=np.uint64),
        np.ascontiguousarray(b, dtype=np.uint64),
        out,
    )
    return out
