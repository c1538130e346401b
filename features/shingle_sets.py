"""Per-ad sets of 64-bit shingle hashes in one CSR layout, and vectorised pair overlaps.

`ShingleSets.values[indptr[i]:indptr[i + 1]]` is the sorted, unique shingle hashes of ad `i`.

Example:
    >>> sets = ShingleSets.from_lists([[1, 2, 3], [2, 3, 4, 5]])
    >>> intersection_sizes(sets, np.array([0]), np.array([1])).tolist()
    [2]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.sparse import csr_matrix

PAIR_CHUNK_ELEMENTS = 20_000_000


@dataclass(frozen=True)
class ShingleSets:
    """Sorted unique uint64 shingle hashes of many ads, concatenated (CSR style)."""

    indptr: np.ndarray
    values: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        """Number of distinct shingles per ad."""
        return np.diff(self.indptr)

    def __len__(self) -> int:
        return len(self.indptr) - 1

    @cached_property
    def binary_matrix(self) -> csr_matrix:
        """0/1 CSR matrix ads × dense shingle ids (computed once per collection)."""
        ids = np.unique(self.values, return_inverse=True)[1]
        return _csr(self.indptr, ids, int(ids.max()) + 1 if len(ids) else 1)

    def row(self, i: int) -> np.ndarray:
        """Shingle hashes of ad `i`."""
        return self.values[self.indptr[i] : self.indptr[i + 1]]

    @classmethod
    def from_lists(cls, rows: list[list[int]]) -> ShingleSets:
        """Build from Python lists (for tests and small examples)."""
        uniq = [np.unique(np.asarray(r, dtype=np.uint64)) for r in rows]
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(u) for u in uniq])
        values = np.concatenate(uniq) if uniq else np.zeros(0, dtype=np.uint64)
        return cls(indptr=indptr, values=values.astype(np.uint64))

    @classmethod
    def from_doc_hashes(cls, doc: np.ndarray, hashes: np.ndarray, n_docs: int) -> ShingleSets:
        """Build from parallel arrays (doc index, hash), with repeats allowed."""
        order = np.lexsort((hashes, doc))
        doc_sorted = doc[order]
        hash_sorted = hashes[order]
        keep = np.ones(len(order), dtype=bool)
        keep[1:] = (doc_sorted[1:] != doc_sorted[:-1]) | (hash_sorted[1:] != hash_sorted[:-1])
        counts = np.bincount(doc_sorted[keep], minlength=n_docs)
        indptr = np.zeros(n_docs + 1, dtype=np.int64)
        np.cumsum(counts, out=indptr[1:])
        return cls(indptr=indptr, values=hash_sorted[keep].astype(np.uint64, copy=False))

    def subset(self, rows: np.ndarray) -> ShingleSets:
        """The sets of the given ads, in that order."""
        sizes = self.sizes[rows]
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        gather = _ranges(self.indptr[rows], sizes)
        return ShingleSets(indptr=indptr, values=self.values[gather])


def _ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of `arange(s, s + n)` for each (s, n), without a Python loop."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + (np.arange(total, dtype=np.int64) - offsets)


def intersection_sizes(
    sets: ShingleSets, left: np.ndarray, right: np.ndarray, other: ShingleSets | None = None
) -> np.ndarray:
    """|S(left[p]) ∩ S(right[p])| for every pair p, vectorised and chunked.

    Shingle hashes are ranked into dense column ids and each side becomes a sparse 0/1 row
    matrix; the row-wise product of the two gathered matrices counts the shared shingles
    (scipy merges the sorted rows in C: linear in the set sizes, no sort per pair). `other`
    gives the right side's sets when they come from another collection (e.g. an index).
    """
    right_sets = sets if other is None else other
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    if len(left) == 0:
        return np.zeros(0, dtype=np.int64)
    left_matrix, right_matrix = _binary_matrices(sets, right_sets)
    result = np.zeros(len(left), dtype=np.int64)
    work = np.cumsum(sets.sizes[left] + right_sets.sizes[right])
    start = 0
    while start < len(left):
        offset = work[start - 1] if start else 0
        stop = start + max(1, int(np.searchsorted(work[start:] - offset, PAIR_CHUNK_ELEMENTS)))
        product = left_matrix[left[start:stop]].multiply(right_matrix[right[start:stop]])
        result[start:stop] = np.asarray(product.sum(axis=1)).ravel()
        start = stop
    return result


def _binary_matrices(left_sets: ShingleSets, right_sets: ShingleSets) -> tuple[csr_matrix, csr_matrix]:
    """CSR 0/1 matrices (ads × shingle ids) of both collections over one shared id space."""
    if left_sets is right_sets:
        return left_sets.binary_matrix, left_sets.binary_matrix
    joint = np.concatenate([left_sets.values, right_sets.values])
    ids = np.unique(joint, return_inverse=True)[1]
    n_ids = int(ids.max()) + 1 if len(ids) else 1
    split = len(left_sets.values)
    return _csr(left_sets.indptr, ids[:split], n_ids), _csr(right_sets.indptr, ids[split:], n_ids)


def _csr(indptr: np.ndarray, ids: np.ndarray, n_ids: int) -> csr_matrix:
    data = np.ones(len(ids), dtype=np.int32)
    return csr_matrix((data, ids.astype(np.int64), indptr), shape=(len(indptr) - 1, n_ids))
