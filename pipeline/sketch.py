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
from datasketch import MinHash
from xxhash import xxh3_64_intdigest

from features.kernels import minhash_rows
from features.shingle_sets import ShingleSets
from pipeline.clean import text_for_tokens

WORD = re.compile(r"\w+")
TOKEN = re.compile(r"\w+|[.!?;:](?=\s)|\n")
SENTENCE_ENDS = frozenset(".!?;:")
LONG_LINE_WORDS = 50
_DIGIT = re.compile(r"\d")
EMPTY_SIGNATURE_VALUE = np.iinfo(np.uint32).max
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


def tokenize(texts: Sequence[str]) -> Tokens:
    """Words and blocks of raw descriptions (markup stripped, case-folded); one regex pass per text.

    A block is a line; a line of more than 50 words (flat text) is split into sentences (ending in
    . ! ? ; : before whitespace). Each distinct word is hashed once; word, block and document
    bookkeeping is numpy.
    """
    tokens: list[str] = []
    counts = np.zeros(len(texts), dtype=np.int64)
    find = TOKEN.findall
    for doc, text in enumerate(texts):
        found = find(text_for_tokens(text)) if text else []
        tokens.extend(found)
        counts[doc] = len(found)
    codes, uniques = pd.factorize(np.array(tokens, dtype=object)) if tokens else (np.zeros(0, np.int64), [])
    unique_hash = np.fromiter((xxh3_64_intdigest(u.encode()) for u in uniques), np.uint64, len(uniques))
    unique_newline = np.fromiter((u == "\n" for u in uniques), bool, len(uniques))
    unique_sentence_end = np.fromiter((u in SENTENCE_ENDS for u in uniques), bool, len(uniques))
    unique_number = np.fromiter((_DIGIT.search(u) is not None for u in uniques), bool, len(uniques))
    token_doc = np.repeat(np.arange(len(texts), dtype=np.int64), counts)
    newline, sentence_end = unique_newline[codes], unique_sentence_end[codes]
    marker = newline | sentence_end
    doc_start = np.zeros(len(tokens), dtype=bool)
    doc_start[(np.cumsum(counts) - counts)[counts > 0]] = True
    # Blocks are lines; a line of more than LONG_LINE_WORDS words is split into its sentences.
    line_of_token = np.cumsum(newline | doc_start) - 1
    words_per_line = np.bincount(
        line_of_token[~marker], minlength=int(line_of_token[-1]) + 1 if len(tokens) else 0
    )
    long_line = words_per_line > LONG_LINE_WORDS
    block_end = newline | (sentence_end & long_line[line_of_token])
    block_of_token = np.cumsum(block_end | doc_start) - 1
    is_word = ~marker
    word_codes = codes[is_word]
    word_doc = token_doc[is_word]
    # Renumber blocks that hold words 0..n-1 (empty blocks between markers vanish).
    word_block_raw = block_of_token[is_word]
    new_block = np.diff(word_block_raw, prepend=-1) != 0
    word_block = np.cumsum(new_block) - 1
    block_starts = np.flatnonzero(new_block)
    word_hash = unique_hash[word_codes]
    position = np.arange(len(word_block)) - block_starts[word_block]
    mixed = word_hash * _POSITION_MULTIPLIERS[position % MAX_SHINGLE_SIZE] + position.astype(np.uint64)
    block_hash = np.add.reduceat(mixed, block_starts) if len(block_starts) else np.zeros(0, np.uint64)
    words_per_doc = np.bincount(word_doc, minlength=len(texts))
    doc_ptr = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(words_per_doc, out=doc_ptr[1:])
    return Tokens(
        word_hash=word_hash,
        word_is_number=unique_number[word_codes],
        doc_ptr=doc_ptr,
        word_block=word_block.astype(np.int64),
        block_hash=block_hash.astype(np.uint64),
        block_doc=word_doc[block_starts] if len(block_starts) else np.zeros(0, np.int64),
    )


def block_key(block: str) -> int:
    """The hash `tokenize` gives a block with this text (to look a block up in a boilerplate set)."""
    words = WORD.findall(text_for_tokens(block))
    if not words:
        return 0
    word_hash = np.fromiter((xxh3_64_intdigest(w.encode()) for w in words), np.uint64, len(words))
    position = np.arange(len(words))
    mixed = word_hash * _POSITION_MULTIPLIERS[position % MAX_SHINGLE_SIZE] + position.astype(np.uint64)
    return int(mixed.sum(dtype=np.uint64))


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


def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutation parameters (a, b) for `num_perm` and `seed`."""
    a, b = MinHash(num_perm=num_perm, seed=seed, scheme="affine32").permutations
    return np.asarray(a, dtype=np.uint32), np.asarray(b, dtype=np.uint32)


def minhash_signatures(sets: ShingleSets, num_perm: int, seed: int, threads: int = 1) -> np.ndarray:
    """(n_docs, num_perm) uint32 MinHash signatures; docs without shingles get all-max rows.

    The input of the permutations is the low 32 bits of each 64-bit shingle hash (datasketch's
    affine32 scheme takes 32-bit hashes, like its default sha1_hash32). Computed by a compiled
    loop (`features.kernels.minhash_rows`), equal to the numpy form `min(a·fmix32(h) + b)`.
    """
    a, b = permutations(num_perm, seed)
    return minhash_rows(sets.indptr, sets.values, a, b, threads)


def _sketch_chunk(texts: list[str], shingle_size: int, num_perm: int, seed: int) -> np.ndarray:
    tokens = tokenize(texts)
    sets = shingle_sets(tokens.word_hash, tokens.doc_ptr, shingle_size)
    return minhash_signatures(sets, num_perm, seed)


def sketch_texts(
    texts: Sequence[str], shingle_size: int, num_perm: int, seed: int, jobs: int = 1, chunk_size: int = 50_000
) -> np.ndarray:
    """MinHash signatures of whole texts (no boilerplate removal), slices in `jobs` processes.

    The plain text → signature path, for the baseline and for like-for-like speed comparisons.
    """
    texts = list(texts)
    slices = [texts[start : start + chunk_size] for start in range(0, len(texts), chunk_size)] or [[]]
    if len(slices) > 1 and jobs > 1:
        from joblib import Parallel, delayed

        parts = Parallel(n_jobs=jobs, backend="loky")(
            delayed(_sketch_chunk)(part, shingle_size, num_perm, seed) for part in slices
        )
    else:
        parts = [_sketch_chunk(part, shingle_size, num_perm, seed) for part in slices]
    return np.concatenate(parts)
