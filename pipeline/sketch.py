"""Stage 2: words → 64-bit shingle hashes → MinHash signatures, for a whole batch at once.

Each distinct word is hashed once with xxh3-64; a k-word shingle hash is a polynomial
combination of its word hashes in uint64 arithmetic (numpy, no Python loop per shingle).
Signatures use datasketch's "affine64" scheme and its permutations for the same seed, so
`datasketch.MinHash(num_perm, seed=seed, hashfunc=int, scheme="affine64")` fed with the same
shingle hashes gives the same signature (tested).

Example:
    >>> tokens = tokenize(["a b c d e f", ""])
    >>> sets = shingle_sets(tokens.word_hash, tokens.doc_ptr, 5)
    >>> sets.sizes.tolist()
    [2, 0]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xxhash
from datasketch import MinHash

from features.shingle_sets import ShingleSets
from pipeline.clean import split_blocks

WORD = re.compile(r"\w+")
_DIGIT = re.compile(r"\d")
SIGNATURE_CHUNK_ROWS = 65_536
EMPTY_SIGNATURE_VALUE = np.iinfo(np.uint64).max
# Odd 64-bit multipliers for the positions of a shingle (from splitmix64 / murmur constants).
_POSITION_MULTIPLIERS = np.array(
    [
        0x9E3779B97F4A7C15,
        0xBF58476D1CE4E5B9,
        0x94D049BB133111EB,
        0xFF51AFD7ED558CCD,
        0xC4CEB9FE1A85EC53,
        0xD6E8FEB86659FD93,
        0xA0761D6478BD642F,
        0xE7037ED1A0B428DB,
        0x8EBC6AF09C88C6E3,
        0x589965CC75374CC3,
    ],
    dtype=np.uint64,
)
MAX_SHINGLE_SIZE = len(_POSITION_MULTIPLIERS)


@dataclass(frozen=True)
class Tokens:
    """Words of a batch, flat: word `w` belongs to block `word_block[w]` of doc `block_doc[...]`."""

    word_hash: np.ndarray  # uint64 per word occurrence
    word_is_number: np.ndarray  # bool per word occurrence: the word holds a digit
    doc_ptr: np.ndarray  # int64, words of doc d are word_hash[doc_ptr[d]:doc_ptr[d+1]]
    word_block: np.ndarray  # int64 block index per word occurrence
    block_hash: np.ndarray  # uint64 hash of each block's word sequence
    block_doc: np.ndarray  # int64 doc index per block

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return len(self.doc_ptr) - 1

    @property
    def words_per_doc(self) -> np.ndarray:
        """Word count of every document."""
        return np.diff(self.doc_ptr)


def tokenize(cleaned: Sequence[str]) -> Tokens:
    """Split cleaned texts into blocks and words; hash each distinct word and block once."""
    words: list[str] = []
    block_lengths: list[int] = []
    block_docs: list[int] = []
    block_hashes: list[int] = []
    hash_block = xxhash.xxh3_64_intdigest
    for doc, text in enumerate(cleaned):
        for block in split_blocks(text):
            block_words = WORD.findall(block)
            if block_words:
                words.extend(block_words)
                block_lengths.append(len(block_words))
                block_docs.append(doc)
                block_hashes.append(hash_block(" ".join(block_words).encode()))
    codes, uniques = pd.factorize(pd.Series(words, dtype=object), sort=False)
    unique_hashes = np.fromiter(
        (hash_block(w.encode()) for w in uniques), dtype=np.uint64, count=len(uniques)
    )
    unique_is_number = np.fromiter(
        (_DIGIT.search(w) is not None for w in uniques), dtype=bool, count=len(uniques)
    )
    word_hash = unique_hashes[codes] if len(words) else np.zeros(0, dtype=np.uint64)
    word_is_number = unique_is_number[codes] if len(words) else np.zeros(0, dtype=bool)
    lengths = np.asarray(block_lengths, dtype=np.int64)
    block_doc = np.asarray(block_docs, dtype=np.int64)
    word_block = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    words_per_doc = np.bincount(block_doc, weights=lengths, minlength=len(cleaned)).astype(np.int64)
    doc_ptr = np.zeros(len(cleaned) + 1, dtype=np.int64)
    np.cumsum(words_per_doc, out=doc_ptr[1:])
    return Tokens(
        word_hash=word_hash,
        word_is_number=word_is_number,
        doc_ptr=doc_ptr,
        word_block=word_block,
        block_hash=np.asarray(block_hashes, dtype=np.uint64),
        block_doc=block_doc,
    )


def keep_words(tokens: Tokens, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Word hashes and doc pointers after dropping words where `keep` is False."""
    doc_of_word = np.repeat(np.arange(tokens.n_docs), tokens.words_per_doc)
    counts = np.bincount(doc_of_word[keep], minlength=tokens.n_docs)
    doc_ptr = np.zeros(tokens.n_docs + 1, dtype=np.int64)
    np.cumsum(counts, out=doc_ptr[1:])
    return tokens.word_hash[keep], doc_ptr


def shingle_sets(word_hash: np.ndarray, doc_ptr: np.ndarray, k: int) -> ShingleSets:
    """k-word shingle hash sets per document; a doc with 1..k-1 words gets one shingle of them all."""
    if not 1 <= k <= MAX_SHINGLE_SIZE:
        raise ValueError(f"shingle_size must be between 1 and {MAX_SHINGLE_SIZE}, got {k}")
    n_docs = len(doc_ptr) - 1
    lengths = np.diff(doc_ptr)
    doc_of_word = np.repeat(np.arange(n_docs), lengths)
    position = np.arange(len(word_hash), dtype=np.int64) - doc_ptr[doc_of_word]
    words_left = lengths[doc_of_word] - position
    # A window starts at every position with k words left, and at the first word of short docs.
    starts = np.flatnonzero((words_left >= k) | ((position == 0) & (lengths[doc_of_word] < k)))
    window = np.minimum(words_left[starts], k)
    combined = np.zeros(len(starts), dtype=np.uint64)
    for offset in range(k):
        inside = offset < window
        idx = starts[inside] + offset
        combined[inside] += word_hash[idx] * _POSITION_MULTIPLIERS[offset]
    return ShingleSets.from_doc_hashes(doc_of_word[starts], combined, n_docs)


def _fmix64(values: np.ndarray) -> np.ndarray:
    """MurmurHash3's 64-bit finalizer, as datasketch applies before its affine permutations."""
    values = values ^ (values >> np.uint64(33))
    values = values * np.uint64(0xFF51AFD7ED558CCD)
    values = values ^ (values >> np.uint64(33))
    values = values * np.uint64(0xC4CEB9FE1A85EC53)
    return values ^ (values >> np.uint64(33))


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine64 permutation parameters (a, b) for `num_perm` and `seed`."""
    a, b = MinHash(num_perm=num_perm, seed=seed, scheme="affine64").permutations
    return np.asarray(a, dtype=np.uint64), np.asarray(b, dtype=np.uint64)


def minhash_signatures(sets: ShingleSets, num_perm: int, seed: int) -> np.ndarray:
    """(n_docs, num_perm) uint64 MinHash signatures; docs without shingles get all-max rows."""
    a, b = permutations(num_perm, seed)
    n_docs = len(sets)
    signatures = np.full((n_docs, num_perm), EMPTY_SIGNATURE_VALUE, dtype=np.uint64)
    nonempty = np.flatnonzero(sets.sizes > 0)
    first = 0
    while first < len(nonempty):
        budget = sets.indptr[nonempty[first:] + 1] - sets.indptr[nonempty[first]]
        last = first + max(1, int(np.searchsorted(budget, SIGNATURE_CHUNK_ROWS, side="right")))
        docs = nonempty[first:last]
        lo, hi = sets.indptr[docs[0]], sets.indptr[docs[-1] + 1]
        mixed = _fmix64(sets.values[lo:hi])
        permuted = mixed[:, None] * a[None, :] + b[None, :]
        signatures[docs] = np.minimum.reduceat(permuted, sets.indptr[docs] - lo, axis=0)
        first = last
    return signatures
