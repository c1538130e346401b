"""Compiled passes over a batch's words for `pipeline.evidence`: one loop over the word hashes
instead of several numpy passes (a 32-bit copy, table look-ups, binary searches, a global sort)
over all of them.

Both test a word by the low 32 bits of its hash (`word_hash.astype(np.uint32)`) against a set of
such words held in an open-addressing hash table (`word_table`; a look-up is one or two probes
of a table that fits the cache, where a binary search takes ~13 dependent steps).

Example:
    >>> hashes = np.array([7, 3, 9, 7, 7], dtype=np.uint64)
    >>> indptr, words = name_sets(hashes, np.array([0, 2, 5]), np.array([7, 9], np.uint32))
    >>> indptr.tolist(), words.tolist()
    ([0, 1, 3], [7, 7, 9])
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
from numba import njit

_EMPTY = -1
_LOW_32 = np.uint64(0xFFFFFFFF)


@njit(cache=True, nogil=True)
def _fill_table(words, table):
    mask = table.shape[0] - 1
    for word in words:
        slot = np.int64(word) & mask
        while table[slot] != _EMPTY and table[slot] != word:
            slot = (slot + 1) & mask
        table[slot] = word


def word_table(words: np.ndarray) -> np.ndarray:
    """Open-addressing table (int64, empty slots -1, at most half full) of uint32 words, placed by
    their low bits (the tokeniser's hashes are mixed). Half full, not a quarter: an index's name
    table is 8 MB at 1,000,000 ads instead of 16 in each service process, and a look-up that
    misses probes ~2.5 slots instead of ~1.4, of one cache line most often."""
    size = 1 << max(4, int(2 * len(words)).bit_length())
    table = np.full(size, _EMPTY, dtype=np.int64)
    _fill_table(np.ascontiguousarray(words, dtype=np.uint32), table)
    return table


class WordTable:
    """A set of uint32 words with its `word_table`, built on first use and then kept: an index's
    name vocabulary (~500,000 words at 1,000,000 ads, an 8 MB table) is searched by every check."""

    def __init__(self, words: np.ndarray) -> None:
        self.words = np.ascontiguousarray(words, dtype=np.uint32)

    @cached_property
    def table(self) -> np.ndarray:
        return word_table(self.words)

    def __getstate__(self) -> dict[str, Any]:
        return {"words": self.words}  # (the table is rebuilt where it is used, not pickled)


Names = np.ndarray | WordTable | Sequence[np.ndarray | WordTable]
"""A name vocabulary: uint32 words, or several parts whose union is the vocabulary."""


def name_tables(names: Names) -> tuple[np.ndarray, np.ndarray]:
    """Two `word_table`s whose union holds `names`: the first part's (kept if it is a `WordTable`)
    and one of the other parts together."""
    parts = [names] if isinstance(names, np.ndarray | WordTable) else list(names)
    first = parts[0] if parts else np.zeros(0, np.uint32)
    rest = [p.words if isinstance(p, WordTable) else np.asarray(p, dtype=np.uint32) for p in parts[1:]]
    return (
        first.table if isinstance(first, WordTable) else word_table(first),
        word_table(np.concatenate(rest) if rest else np.zeros(0, np.uint32)),
    )


@njit(cache=True, nogil=True, inline="always")
def _holds(table, word):
    mask = table.shape[0] - 1
    slot = np.int64(word) & mask
    while table[slot] != _EMPTY:
        if table[slot] == word:
            return True
        slot = (slot + 1) & mask
    return False


@njit(cache=True, nogil=True)
def _name_hits(word_hash, doc_ptr, keep, use_keep, table, extra, hit):
    """Mark each word of the documents (with `use_keep`, each kept word) that either table holds;
    return how many are marked."""
    n = 0
    for i in range(doc_ptr[0], doc_ptr[doc_ptr.shape[0] - 1]):
        word = np.int64(word_hash[i] & _LOW_32)
        if (not use_keep or keep[i]) and (_holds(table, word) or _holds(extra, word)):
            hit[i] = True
            n += 1
    return n


@njit(cache=True, nogil=True)
def _hit_sets(word_hash, doc_ptr, hit, indptr, out):
    """Write each document's sorted distinct marked words (32-bit) from its indptr on."""
    n = 0
    for d in range(doc_ptr.shape[0] - 1):
        start = n
        for i in range(doc_ptr[d], doc_ptr[d + 1]):
            if hit[i]:
                out[n] = np.int64(word_hash[i] & _LOW_32)
                n += 1
        out[start:n] = np.sort(out[start:n])
        unique = min(n - start, 1)
        for x in range(start + 1, n):
            if out[x] != out[start + unique - 1]:
                out[start + unique] = out[x]
                unique += 1
        n = start + unique
        indptr[d + 1] = n
    return n


def name_sets(
    word_hash: np.ndarray, doc_ptr: np.ndarray, names: Names, keep: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Per document, the sorted distinct 32-bit hashes of its words (with `keep`, its kept words)
    that are in the vocabulary `names`, as (indptr, values)."""
    word_hash = np.ascontiguousarray(word_hash, dtype=np.uint64)
    doc_ptr = np.ascontiguousarray(doc_ptr, dtype=np.int64)
    keep_array = np.ascontiguousarray(keep if keep is not None else np.zeros(0), dtype=np.bool_)
    indptr = np.zeros(len(doc_ptr), dtype=np.int64)
    # The tables are probed once per word (their random reads are the cost); hits are a few per
    # document, gathered and deduplicated in a second pass over the marks.
    hit = np.zeros(len(word_hash), dtype=np.bool_)
    hits = _name_hits(word_hash, doc_ptr, keep_array, keep is not None, *name_tables(names), hit)
    out = np.empty(hits, dtype=np.uint32)
    if len(out):
        out = out[: _hit_sets(word_hash, doc_ptr, hit, indptr, out)].copy()
    return indptr, out


@njit(cache=True, nogil=True)
def _label_then_number(word_hash, word_is_number, doc_ptr, table, lookahead, flagged):
    for d in range(doc_ptr.shape[0] - 1):
        end = doc_ptr[d + 1]
        i = doc_ptr[d]
        while i < end and not flagged[d]:
            if _holds(table, np.int64(word_hash[i] & _LOW_32)):
                for ahead in range(i + 1, min(i + lookahead + 1, end)):
                    if word_is_number[ahead]:
                        flagged[d] = True
            i += 1


def label_then_number(
    word_hash: np.ndarray, word_is_number: np.ndarray, doc_ptr: np.ndarray, labels: np.ndarray, lookahead: int
) -> np.ndarray:
    """Per document: a word whose 32-bit hash is in the uint32 `labels` is followed, within
    `lookahead` words of the same document, by a word holding a digit."""
    flagged = np.zeros(len(doc_ptr) - 1, dtype=np.bool_)
    _label_then_number(
        np.ascontiguousarray(word_hash, dtype=np.uint64),
        np.ascontiguousarray(word_is_number, dtype=np.bool_),
        np.ascontiguousarray(doc_ptr, dtype=np.int64),
        word_table(labels),
        lookahead,
        flagged,
    )
    return flagged
