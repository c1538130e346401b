"""Compiled loops (numba) for set and row operations numpy cannot express without sorting everything.

- `window_shingles`: per document, the sorted unique hashes of its k-word windows.
- `intersection_counts`: size of the intersection of two sorted rows, for many pairs, in parallel.
- `equal_counts`: how many columns two rows agree on, for many pairs (MinHash agreement).
- `own_words_unnamed`: per pair, the most of one ad's own words the other ad does not name.
- `minhash_rows`: datasketch-compatible affine32 MinHash of each row.

All are loops over small per-document arrays: in numpy they need a global lexsort (seconds per
million rows); compiled they run at a few nanoseconds per element, documents in parallel.
Functions are cached on disk after the first compilation.

Example:
    >>> mult = np.array([1, 1], dtype=np.uint64)
    >>> indptr, values = window_shingles(np.array([5, 1, 5], dtype=np.uint64), np.array([0, 3]), 2, mult)
    >>> values.tolist()
    [6]
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit, prange


def set_kernel_threads(threads: int, work: int, serial_below: int) -> None:
    """Run the next parallel kernel on `threads` threads, or on one when `work` < `serial_below`.

    Waking the other thread costs ~50 µs on an idle machine and several ms on a loaded one (5-15 ms
    measured with OpenMP at load 6 on 2 cores), far more than a single ad's or pair's work: the
    thresholds are where the work alone takes about a millisecond. Results do not depend on it.
    """
    # numba.config sets its NUMBA_* names through globals(), which its types do not declare.
    most = numba.config.NUMBA_NUM_THREADS  # type: ignore[attr-defined]
    numba.set_num_threads(1 if work < serial_below else max(1, min(threads, most)))


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
        # Branch-free steps: which side advances is data, not a jump the CPU mispredicts half the time.
        while i < i_end and j < j_end:
            x, y = values_a[i], values_b[j]
            count += x == y
            i += x <= y
            j += y <= x
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
        set_kernel_threads(threads, len(left), 2_000)
        _intersections(
            np.ascontiguousarray(indptr_a, dtype=np.int64),
            np.ascontiguousarray(values_a, dtype=np.uint32),
            np.ascontiguousarray(indptr_b, dtype=np.int64),
            np.ascontiguousarray(values_b, dtype=np.uint32),
            np.ascontiguousarray(left, dtype=np.int64),
            np.ascontiguousarray(right, dtype=np.int64),
            out,
        )
    return out


@njit(cache=True, nogil=True, parallel=True)
def _equal_columns(rows: np.ndarray, left: np.ndarray, right: np.ndarray, out: np.ndarray) -> None:
    for p in prange(left.shape[0]):
        a, b = rows[left[p]], rows[right[p]]
        count = 0
        for k in range(rows.shape[1]):
            count += a[k] == b[k]
        out[p] = count


def equal_counts(rows: np.ndarray, left: np.ndarray, right: np.ndarray, threads: int = 2) -> np.ndarray:
    """Per pair p, how many columns rows[left[p]] and rows[right[p]] agree on (e.g. MinHash
    signatures): one pass, without gathering both sides' rows (1 KB a pair of 128 values)."""
    out = np.zeros(len(left), dtype=np.int64)
    if len(left):
        set_kernel_threads(threads, len(left), 2_000)
        _equal_columns(
            np.ascontiguousarray(rows),
            np.ascontiguousarray(left, dtype=np.int64),
            np.ascontiguousarray(right, dtype=np.int64),
            out,
        )
    return out


@njit(cache=True, nogil=True, inline="always")
def _in_row(indptr: np.ndarray, values: np.ndarray, row: int, x: np.uint32) -> bool:
    """Whether the sorted row `row` of (indptr, values) holds x (binary search)."""
    low, high = indptr[row], indptr[row + 1]
    stop = high
    while low < high:
        middle = (low + high) // 2
        if values[middle] < x:
            low = middle + 1
        else:
            high = middle
    return low < stop and values[low] == x


@njit(cache=True, nogil=True)
def _own_words_unnamed(sets: tuple, a: int, b: int) -> tuple[int, int]:
    """(how many own words ad a has, how many of them ad b names neither among its own words nor
    in its mentions); `sets` = (words, places, areas, mentions) indptr and values, one after the
    other; own words = words without the ad's place and area words."""
    w_ptr, w_val, p_ptr, p_val, a_ptr, a_val, m_ptr, m_val = sets
    own, unnamed = 0, 0
    for i in range(w_ptr[a], w_ptr[a + 1]):
        x = w_val[i]
        if _in_row(p_ptr, p_val, a, x) or _in_row(a_ptr, a_val, a, x):
            continue
        own += 1
        own_in_b = _in_row(w_ptr, w_val, b, x) and not (
            _in_row(p_ptr, p_val, b, x) or _in_row(a_ptr, a_val, b, x)
        )
        if not (own_in_b or _in_row(m_ptr, m_val, b, x)):
            unnamed += 1
    return own, unnamed


@njit(cache=True, nogil=True, parallel=True)
def _unnamed_pairs(sets: tuple, left: np.ndarray, right: np.ndarray, out: np.ndarray) -> None:
    for p in prange(left.shape[0]):
        own_l, unnamed_l = _own_words_unnamed(sets, left[p], right[p])
        own_r, unnamed_r = _own_words_unnamed(sets, right[p], left[p])
        out[p] = np.nan if own_l == 0 or own_r == 0 else float(max(unnamed_l, unnamed_r))


def own_words_unnamed(
    words: tuple[np.ndarray, np.ndarray],
    places: tuple[np.ndarray, np.ndarray],
    areas: tuple[np.ndarray, np.ndarray],
    mentions: tuple[np.ndarray, np.ndarray],
    left: np.ndarray,
    right: np.ndarray,
    threads: int = 2,
) -> np.ndarray:
    """Per pair, the most of one ad's own words (its `words` row without its `places` and `areas`
    rows) that the other ad holds neither among its own words nor in its `mentions` row; NaN where
    either ad has no own word. Each argument set is (indptr, values) of sorted unique rows."""
    out = np.zeros(len(left))
    if len(left):
        set_kernel_threads(threads, len(left), 2_000)
        sets = tuple(
            np.ascontiguousarray(array, dtype=np.int64 if k == 0 else np.uint32)
            for pair in (words, places, areas, mentions)
            for k, array in enumerate(pair)
        )
        left = np.ascontiguousarray(left, dtype=np.int64)
        _unnamed_pairs(sets, left, np.ascontiguousarray(right, dtype=np.int64), out)
    return out


@njit(cache=True, nogil=True, parallel=True)
def _minhash_rows(
    indptr: np.ndarray, values: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray
) -> None:
    num_perm = a.shape[0]
    for row in prange(indptr.shape[0] - 1):
        start, stop = indptr[row], indptr[row + 1]
        if stop == start:
            continue
        best = np.full(num_perm, np.uint32(0xFFFFFFFF), dtype=np.uint32)
        for i in range(start, stop):
            # numba widens integer products to 64 bits: each is cut back to 32 (uint32 lanes vectorise 8-wide).
            h = values[i]
            h ^= h >> np.uint32(16)
            h = np.uint32(h * np.uint32(0x85EBCA6B))
            h ^= h >> np.uint32(13)
            h = np.uint32(h * np.uint32(0xC2B2AE35))
            h ^= h >> np.uint32(16)
            for k in range(num_perm):
                v = np.uint32(a[k] * h + b[k])
                best[k] = min(best[k], v)
        out[row, :] = best


def minhash_rows(
    indptr: np.ndarray, values: np.ndarray, a: np.ndarray, b: np.ndarray, threads: int = 2
) -> np.ndarray:
    """datasketch affine32 MinHash of each row: min over its uint32 values of a·fmix32(v) + b (mod 2³²).

    Rows without values keep the all-max signature.
    """
    out = np.full((len(indptr) - 1, len(a)), np.uint32(0xFFFFFFFF), dtype=np.uint32)
    set_kernel_threads(threads, len(values), 10_000)
    _minhash_rows(
        np.ascontiguousarray(indptr, dtype=np.int64),
        np.ascontiguousarray(values, dtype=np.uint32),
        np.ascontiguousarray(a, dtype=np.uint32),
        np.ascontiguousarray(b, dtype=np.uint32),
        out,
    )
    return out


@njit(cache=True, nogil=True)
def _doc_words(word_hash, start, stop, keep, use_keep, fallback):
    """The words of one document that `keep` marks (all of them if none is kept and `fallback`)."""
    if not use_keep:
        return word_hash[start:stop]
    kept = 0
    for i in range(start, stop):
        if keep[i]:
            kept += 1
    if kept == 0 and fallback:
        return word_hash[start:stop]
    words = np.empty(kept, dtype=np.uint64)
    w = 0
    for i in range(start, stop):
        if keep[i]:
            words[w] = word_hash[i]
            w += 1
    return words


@njit(cache=True, nogil=True)
def _sort_uint32(values: np.ndarray) -> None:
    """Sort uint32 values in place: LSD radix sort (4 passes of 8 bits; ~6× numba's quicksort on
    a document's few hundred shingles), np.sort for short arrays."""
    n = values.shape[0]
    if n < 64:
        values.sort()
        return
    source, target = values, np.empty(n, dtype=np.uint32)
    counts = np.empty(256, dtype=np.int64)
    for shift in range(0, 32, 8):
        counts[:] = 0
        for i in range(n):
            counts[(source[i] >> shift) & 0xFF] += 1
        total = 0
        for j in range(256):
            total, counts[j] = total + counts[j], total
        for i in range(n):
            key = (source[i] >> shift) & 0xFF
            target[counts[key]] = source[i]
            counts[key] += 1
        source, target = target, source  # after an even number of passes the result is in `values`


@njit(cache=True, nogil=True, parallel=True)
def _window_shingles(word_hash, doc_ptr, keep, use_keep, fallback, k, multipliers, region_ptr, values, sizes):
    mask = np.uint64(0xFFFFFFFF)
    for d in prange(doc_ptr.shape[0] - 1):
        words = _doc_words(word_hash, doc_ptr[d], doc_ptr[d + 1], keep, use_keep, fallback)
        n = words.shape[0]
        if n == 0:
            sizes[d] = 0
            continue
        windows = max(n - k + 1, 1)
        width = min(k, n)
        region = values[region_ptr[d] : region_ptr[d] + windows]
        for s in range(windows):
            h = np.uint64(0)
            for o in range(width):
                h += words[s + o] * multipliers[o]
            region[s] = np.uint32(h & mask)
        _sort_uint32(region)
        unique = 1
        for i in range(1, windows):
            if region[i] != region[unique - 1]:
                region[unique] = region[i]
                unique += 1
        sizes[d] = unique


@njit(cache=True, nogil=True)
def _window_counts(doc_ptr, keep, use_keep, fallback, k, counts):
    for d in range(doc_ptr.shape[0] - 1):
        n = doc_ptr[d + 1] - doc_ptr[d]
        if use_keep:
            kept = 0
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                if keep[i]:
                    kept += 1
            if kept > 0 or not fallback:
                n = kept
        counts[d] = max(n - k + 1, 1) if n > 0 else 0


@njit(cache=True, nogil=True)
def _kept_counts(keep, doc_ptr, counts):
    for d in range(doc_ptr.shape[0] - 1):
        kept = 0
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            kept += keep[i]
        counts[d] = kept


def kept_per_doc(keep: np.ndarray, doc_ptr: np.ndarray) -> np.ndarray:
    """Number of True `keep` entries of each document (words doc_ptr[d]:doc_ptr[d + 1]), int64;
    no per-word temporary (a cumulative sum over a slice's ~20 million words costs its page faults)."""
    counts = np.zeros(len(doc_ptr) - 1, dtype=np.int64)
    _kept_counts(
        np.ascontiguousarray(keep, dtype=np.bool_), np.ascontiguousarray(doc_ptr, dtype=np.int64), counts
    )
    return counts


@njit(cache=True, nogil=True, parallel=True)
def _compact_rows(region_ptr, values, sizes, out_ptr, out):
    for d in prange(sizes.shape[0]):
        out[out_ptr[d] : out_ptr[d] + sizes[d]] = values[region_ptr[d] : region_ptr[d] + sizes[d]]


def window_shingles(
    word_hash: np.ndarray,
    doc_ptr: np.ndarray,
    k: int,
    multipliers: np.ndarray,
    keep: np.ndarray | None = None,
    fallback: bool = False,
    threads: int = 2,
) -> tuple[np.ndarray, np.ndarray]:
    """Per document, the sorted unique uint32 hashes of its k-word windows: low 32 bits of
    Σ word_hash[i + o]·multipliers[o]; a document of 1..k-1 words has one window of them all.

    With `keep`, only the kept words count (windows join the words around dropped ones); with
    `fallback`, a document with no kept word uses all its words. Returns (indptr, values).
    """
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    use_keep = keep is not None
    keep_array = np.ascontiguousarray(keep if use_keep else np.zeros(0), dtype=np.bool_)
    counts = np.zeros(len(doc_ptr) - 1, dtype=np.int64)
    _window_counts(doc_ptr, keep_array, use_keep, fallback, k, counts)
    region_ptr = np.zeros(len(doc_ptr), dtype=np.int64)
    np.cumsum(counts, out=region_ptr[1:])
    values = np.empty(int(region_ptr[-1]), dtype=np.uint32)
    sizes = np.zeros(len(counts), dtype=np.int64)
    set_kernel_threads(threads, len(values), 100_000)
    _window_shingles(
        np.ascontiguousarray(word_hash, dtype=np.uint64),
        doc_ptr,
        keep_array,
        use_keep,
        fallback,
        k,
        np.ascontiguousarray(multipliers, dtype=np.uint64),
        region_ptr,
        values,
        sizes,
    )
    indptr = np.zeros(len(doc_ptr), dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    out = np.empty(int(indptr[-1]), dtype=np.uint32)
    _compact_rows(region_ptr, values, sizes, indptr, out)
    return indptr, out
