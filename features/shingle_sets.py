"""Per-ad sets of 32-bit shingle hashes in one CSR layout, and vectorised pair overlaps.

`ShingleSets.values[indptr[i]:indptr[i + 1]]` is the sorted, unique shingle hashes of ad `i`.

Example:
    >>> sets = ShingleSets.from_lists([[1, 2, 3], [2, 3, 4, 5]])
    >>> intersection_sizes(sets, np.array([0]), np.array([1])).tolist()
    [2]
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import chain, pairwise

import numpy as np
import pandas as pd
from xxhash import xxh3_64_intdigest

from jobdedup.features.kernels import intersection_counts
from jobdedup.features.normalize import FEW_VALUES, distinct


@dataclass(frozen=True)
class ShingleSets:
    """Sorted unique uint32 shingle hashes of many ads, concatenated (CSR style).

    32 bits keep a million ads' sets in half the memory; two different shingles of a pair collide
    with probability ~ |A|·|B| / 2³² (≈ 4·10⁻⁵ for 400-shingle ads), far below what moves a Jaccard.
    """

    indptr: np.ndarray
    values: np.ndarray

    @property
    def sizes(self) -> np.ndarray:
        """Number of distinct shingles per ad."""
        return np.diff(self.indptr)

    def __len__(self) -> int:
        return len(self.indptr) - 1

    def row(self, i: int) -> np.ndarray:
        """Shingle hashes of ad `i`."""
        return self.values[self.indptr[i] : self.indptr[i + 1]]

    @classmethod
    def from_lists(cls, rows: list[list[int]]) -> ShingleSets:
        """Build from Python lists of integer hashes (their low 32 bits are kept)."""
        uniq = [np.unique(np.asarray(r, dtype=np.uint64).astype(np.uint32)) for r in rows]
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(u) for u in uniq])
        values = np.concatenate(uniq) if uniq else np.zeros(0, dtype=np.uint32)
        return cls(indptr=indptr, values=values.astype(np.uint32))

    @classmethod
    def from_sets(cls, rows: Sequence[Collection[int]]) -> ShingleSets:
        """Build from sets of 32-bit hashes (a few ads' rows: `from_lists` sorts each with numpy)."""
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        indptr[1:] = np.cumsum([len(row) for row in rows])
        return cls(
            indptr=indptr, values=np.fromiter(chain.from_iterable(map(sorted, rows)), np.uint32, indptr[-1])
        )

    @classmethod
    def concatenate(cls, parts: list[ShingleSets], consume: bool = False) -> ShingleSets:
        """The rows of several collections, one after the other.

        With `consume`, `parts` is emptied as each part is copied, so memory holds the result and
        one part at a time rather than every part and the result (a million ads' sets are GBs).
        """
        values = np.empty(sum(len(p.values) for p in parts), dtype=np.uint32)
        indptr = np.zeros(sum(len(p) for p in parts) + 1, dtype=np.int64)
        at, row = 0, 0
        for part in (parts.pop(0) for _ in range(len(parts))) if consume else parts:
            values[at : at + len(part.values)] = part.values
            indptr[row + 1 : row + 1 + len(part)] = part.indptr[1:] + at
            at, row = at + len(part.values), row + len(part)
        return cls(indptr=indptr, values=values)

    def subset(self, rows: np.ndarray) -> ShingleSets:
        """The sets of the given ads, in that order."""
        sizes = self.sizes[rows]
        indptr = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        gather = index_ranges(self.indptr[rows], sizes)
        return ShingleSets(indptr=indptr, values=self.values[gather])

    def replace_rows(self, rows: np.ndarray, replacement: ShingleSets) -> ShingleSets:
        """These sets with the ads `rows` holding `replacement`'s sets instead, in order.

        Example:
            >>> sets = ShingleSets.from_lists([[1], [2], [3]])
            >>> replaced = sets.replace_rows(np.array([1]), ShingleSets.from_lists([[7, 8]]))
            >>> [replaced.row(i).tolist() for i in range(3)]
            [[1], [7, 8], [3]]
        """
        order = np.arange(len(self))
        order[rows] = len(self) + np.arange(len(rows))
        return ShingleSets.concatenate([self, replacement]).subset(order)


def first_occurrences(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Positions of the first row of each distinct (a, b), in order (what `drop_duplicates` keeps)."""
    order = np.lexsort((np.arange(len(a)), b, a))
    x, y = a[order], b[order]
    first = np.ones(len(order), dtype=bool)
    first[1:] = (x[1:] != x[:-1]) | (y[1:] != y[:-1])
    return np.sort(order[first])


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """np.unique by one sort (numpy 2's hash-based unique is several times slower on int codes:
    ~1.4 s against 20 ms for 440,000 int64 keys on the 2-core machine)."""
    values = np.sort(np.asarray(values).ravel())
    keep = np.ones(len(values), dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


def sorted_union(first: np.ndarray, *others: np.ndarray) -> np.ndarray:
    """`sorted_unique` of the arrays together. When the largest is already sorted and unique and the
    others are small (an index's vocabulary and one ad's words) they are inserted into it: a copy,
    not a sort of a million values."""
    arrays = [np.asarray(a).ravel() for a in (first, *others)]
    dtype = np.result_type(*arrays)
    largest = max(range(len(arrays)), key=lambda k: len(arrays[k]))
    big = arrays[largest].astype(dtype, copy=False)
    rest = [a for k, a in enumerate(arrays) if k != largest]
    small = sum(len(a) for a in rest)
    if len(big) <= 4 * small or (len(big) > 1 and not (big[1:] > big[:-1]).all()):
        return sorted_unique(np.concatenate(arrays).astype(dtype, copy=False))
    extra = sorted_unique(np.concatenate(rest).astype(dtype, copy=False)) if rest else big[:0]
    extra = extra[~sorted_member(extra, big)]
    return np.insert(big, np.searchsorted(big, extra), extra)


def ads_of_pairs(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The sorted distinct ads these pairs name, and the pairs numbered in them (so that per-ad work
    costs what the pairs need: the grouping step scores a few pairs of a million ads)."""
    ads = sorted_unique(np.concatenate([left, right]))
    return ads, np.searchsorted(ads, left), np.searchsorted(ads, right)


def sorted_member(values: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """`np.isin(values, allowed)` by binary search; `allowed` must be sorted (e.g. `sorted_unique`)."""
    values = np.asarray(values)
    if not len(allowed):
        return np.zeros(values.shape, dtype=bool)
    at = np.minimum(np.searchsorted(allowed, values), len(allowed) - 1)
    return allowed[at] == values


def index_ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of `arange(s, s + n)` for each (s, n), without a Python loop."""
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.repeat(starts, lengths) + (np.arange(total, dtype=np.int64) - offsets)


def intersection_sizes(
    sets: ShingleSets, left: np.ndarray, right: np.ndarray, other: ShingleSets | None = None, threads: int = 2
) -> np.ndarray:
    """|S(left[p]) ∩ S(right[p])| for every pair p: a compiled merge of the two sorted rows.

    `other` gives the right side's sets when they come from another collection (e.g. an index).
    """
    right_sets = sets if other is None else other
    return intersection_counts(
        sets.indptr, sets.values, right_sets.indptr, right_sets.values, left, right, threads
    )


def word_sets(values: pd.Series) -> ShingleSets:
    """Per row, the set of its whitespace-separated words as 32-bit hashes (empty where missing);
    vectorised over the distinct strings, each distinct word hashed once (of up to `FEW_VALUES`
    distinct strings every word is hashed: cheaper than finding the distinct ones).

    Example:
        >>> word_sets(pd.Series(["data engineer", None, "engineer data data"])).sizes.tolist()
        [2, 0, 2]
    """
    codes, texts = texts_and_codes(values)
    rows, words = split_words(texts)
    if len(texts) <= FEW_VALUES:
        hashes = word_hashes(words)
    else:
        word_codes, distinct_words = pd.factorize(words)
        hashes = word_hashes(distinct_words)[word_codes]
    return sets_of_rows(rows, hashes, len(texts)).subset(codes)


def phrase_sets(values: pd.Series) -> ShingleSets:
    """Per row, `word_sets` of its words and of its adjacent word pairs: one row's set inside
    another's says its words stand in the other in the same order (nearly: each pair of them does),
    not only somewhere ("east london" is not in "north london, south east").

    Example:
        >>> sets = phrase_sets(pd.Series(["east london", "north london south east", "east london uk"]))
        >>> intersection_sizes(sets, np.array([0, 0]), np.array([1, 2])).tolist(), sets.sizes.tolist()
        ([2, 3], [3, 7, 5])
    """
    codes, texts = texts_and_codes(values)
    return word_sets(pd.Series([with_word_pairs(text) for text in texts], dtype=object)).subset(codes)


def phrase_hash_set(text: object) -> frozenset[int]:
    """`phrase_sets` of one value (none if missing)."""
    return word_hash_set(with_word_pairs(text)) if isinstance(text, str) else frozenset()


def with_word_pairs(text: str) -> str:
    """`text` followed by each pair of adjacent words joined by "+" ("a b c" -> "a b c a+b b+c")."""
    words = text.split()
    return " ".join([*words, *(f"{first}+{second}" for first, second in pairwise(words))])


def texts_and_codes(values: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The distinct strings of `values` followed by the empty string, and each row's number in them
    (a missing value: the last, empty one).

    Example:
        >>> codes, texts = texts_and_codes(pd.Series(["b", None, "a", "b"]))
        >>> codes.tolist(), texts.tolist()
        ([0, 2, 1, 0], ['b', 'a', ''])
    """
    codes, uniques = distinct(values)
    return np.where(codes < 0, len(uniques), codes), np.append(uniques, "").astype(object)


def split_words(texts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every whitespace-separated word of `texts` (strings) in order, with the number of its text:
    (rows, words). Up to `FEW_VALUES` texts (a service's check) are split in plain Python, which
    costs less than pandas' string methods for so few.

    Example:
        >>> rows, words = split_words(np.array(["data engineer", "", "sql"], dtype=object))
        >>> rows.tolist(), words.tolist()
        ([0, 0, 2], ['data', 'engineer', 'sql'])
    """
    if len(texts) > FEW_VALUES:
        split = pd.Series(texts, dtype=object).str.split().explode().dropna()
        return split.index.to_numpy(np.int64), split.to_numpy(dtype=object)
    split_texts = [text.split() for text in texts]
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), [len(words) for words in split_texts])
    return rows, np.array([word for words in split_texts for word in words], dtype=object)


def word_hashes(words: np.ndarray) -> np.ndarray:
    """The 32-bit hash of each word (`word_hash`)."""
    return np.fromiter(map(word_hash, words), np.uint32, len(words))


def word_hash(word: str) -> int:
    """The 32-bit hash of a word: the low half of its xxh3_64 of UTF-8."""
    return xxh3_64_intdigest(word.encode()) & 0xFFFFFFFF


def word_hash_set(text: object) -> frozenset[int]:
    """`word_sets` of one value: the hashes of its whitespace-separated words (none if missing)."""
    return frozenset(map(word_hash, text.split())) if isinstance(text, str) else frozenset()


def sets_of_rows(rows: np.ndarray, hashes: np.ndarray, n_rows: int) -> ShingleSets:
    """The sets of `n_rows` rows from (row, hash) items, in any order and with repeats."""
    row_and_hash = sorted_unique((rows.astype(np.uint64) << np.uint64(32)) | hashes.astype(np.uint64))
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    rows_sorted = (row_and_hash >> np.uint64(32)).astype(np.int64)
    np.cumsum(np.bincount(rows_sorted, minlength=n_rows), out=indptr[1:])
    return ShingleSets(indptr=indptr, values=(row_and_hash & np.uint64(0xFFFFFFFF)).astype(np.uint32))
