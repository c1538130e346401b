"""Stage 2: words → 32-bit shingle hashes → MinHash signatures, for a whole batch at once.

Texts are tokenised by a compiled kernel (`pipeline.tokenizer`: each word hashed as it is read);
a k-word shingle hash is the low 32 bits of a polynomial combination of its 64-bit word hashes;
per-document windows, sorting and MinHash are compiled loops over documents in parallel
(`features.kernels`). Signatures use datasketch's "affine32" scheme and its permutations for the
same seed, so `datasketch.MinHash(num_perm, seed=seed, hashfunc=int)` fed with the same shingle
hashes gives the same signature (tested).

Example:
    >>> tokens = tokenize(["a b c d e f", ""])
    >>> sets = shingle_sets(tokens.word_hash, tokens.doc_ptr, 5)
    >>> sets.sizes.tolist()
    [2, 0]
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import cache
from itertools import islice
from typing import TypeVar

import numpy as np
from datasketch import MinHash

from jobdedup.features.kernels import minhash_rows, window_shingles
from jobdedup.features.shingle_sets import ShingleSets
from jobdedup.pipeline.clean import kernel_texts_utf8
from jobdedup.pipeline.tokenizer import Tokens, tokenize_utf8

WORD = re.compile(r"\w+")
LONG_LINE_WORDS = 50
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
T = TypeVar("T")
R = TypeVar("R")


def kernel_input(texts: Iterable[str | None], block: int = 1_000) -> tuple[np.ndarray, np.ndarray]:
    """The texts as the compiled tokeniser reads them (markup stripped, NFKC), UTF-8 in one buffer
    with int64 offsets; None counts as empty. Texts are taken `block` at a time
    (`clean.kernel_texts_utf8`), so with an iterator only one block of Python strings is held
    beside the buffer. Python-level work: run it beside the compiled kernels, which release the GIL."""
    buffer = bytearray()
    ends = array("q", [0])
    texts = iter(texts)
    while part := [text or "" for text in islice(texts, block)]:
        for utf8 in kernel_texts_utf8(part):
            buffer += utf8
            ends.append(len(buffer))
    return np.frombuffer(buffer, dtype=np.uint8), np.frombuffer(ends, dtype=np.int64)


def tokenize(texts: Sequence[str], threads: int = 1) -> Tokens:
    """Words and blocks of raw descriptions (markup stripped, NFKC, case-folded), compiled.

    Equal to finding `\\w+|[.!?;:](?=\\s)|\\n` in the case-folded text (see `pipeline.tokenizer`).
    A block is a line; a line of more than 50 words (flat text) is split into sentences (ending in
    . ! ? ; : before whitespace). Documents are tokenised in parallel on `threads` threads.
    """
    return tokenize_buffer(*kernel_input(texts), threads)


def tokenize_buffer(data: np.ndarray, offsets: np.ndarray, threads: int = 1) -> Tokens:
    """`tokenize` of texts already turned into `kernel_input`."""
    return tokenize_utf8(data, offsets, LONG_LINE_WORDS, _POSITION_MULTIPLIERS, threads)


def block_key(block: str) -> int:
    """The hash `tokenize` gives a block with this text (to look a block up in a boilerplate set)."""
    word_hash = tokenize([block]).word_hash
    if not len(word_hash):
        return 0
    position = np.arange(len(word_hash))
    mixed = word_hash * _POSITION_MULTIPLIERS[position % MAX_SHINGLE_SIZE] + position.astype(np.uint64)
    return int(mixed.sum(dtype=np.uint64))


def shingle_sets(
    word_hash: np.ndarray,
    doc_ptr: np.ndarray,
    k: int,
    keep: np.ndarray | None = None,
    fallback: bool = False,
    threads: int = 1,
) -> ShingleSets:
    """k-word shingle hash sets per document; a doc with 1..k-1 words gets one shingle of them all.

    A shingle's hash is the low 32 bits of Σ word_hash·multiplier[position]. With `keep`, only
    the kept words are shingled (a dropped block's neighbours become adjacent); with `fallback`,
    a document with no kept word is shingled on all its words.
    """
    if not 1 <= k <= MAX_SHINGLE_SIZE:
        raise ValueError(f"shingle_size must be between 1 and {MAX_SHINGLE_SIZE}, got {k}")
    indptr, values = window_shingles(word_hash, doc_ptr, k, _POSITION_MULTIPLIERS, keep, fallback, threads)
    return ShingleSets(indptr=indptr, values=values)


@cache
def permutations(num_perm: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """datasketch's affine32 permutation parameters (a, b) for `num_perm` and `seed`; made once
    for each (datasketch takes ~0.1 ms, a prepare step of a single-ad check two or three times),
    shared by every caller: not to be modified."""
    a, b = MinHash(num_perm=num_perm, seed=seed, scheme="affine32").permutations
    return np.asarray(a, dtype=np.uint32), np.asarray(b, dtype=np.uint32)


def minhash_signatures(sets: ShingleSets, num_perm: int, seed: int, threads: int = 1) -> np.ndarray:
    """(n_docs, num_perm) uint32 MinHash signatures; docs without shingles get all-max rows.

    The input of the permutations is each 32-bit shingle hash (datasketch's affine32 scheme takes
    32-bit hashes, like its default sha1_hash32). Computed by a compiled loop
    (`features.kernels.minhash_rows`), equal to the numpy form `min(a·fmix32(h) + b)`.
    """
    a, b = permutations(num_perm, seed)
    return minhash_rows(sets.indptr, sets.values, a, b, threads)


def _one_ahead(pool: ThreadPoolExecutor, work: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """work(item) for each item in order, the next one computed in `pool` while the caller uses
    the current one (one result ahead, so memory holds at most two)."""
    pending: Future[R] | None = None
    for item in items:
        following = pool.submit(work, item)
        if pending is not None:
            yield pending.result()
        pending = following
    if pending is not None:
        yield pending.result()


def sketch_texts(
    texts: Sequence[str], shingle_size: int, num_perm: int, seed: int, jobs: int = 1, chunk_size: int = 50_000
) -> np.ndarray:
    """MinHash signatures of whole texts (no boilerplate removal), slice by slice on `jobs` threads.

    The plain text → signature path, for the baseline and for like-for-like speed comparisons.
    The next slice's `kernel_input` (Python) is made in a second thread while the compiled kernels
    work on the current one.
    """
    texts = list(texts)
    slices = (texts[start : start + chunk_size] for start in range(0, len(texts), chunk_size))
    parts = [np.zeros((0, num_perm), dtype=np.uint32)]
    with ThreadPoolExecutor(max_workers=1) as reader:
        for data, offsets in _one_ahead(reader, kernel_input, slices):
            tokens = tokenize_buffer(data, offsets, jobs)
            del data, offsets
            sets = shingle_sets(tokens.word_hash, tokens.doc_ptr, shingle_size, threads=jobs)
            del tokens
            parts.append(minhash_signatures(sets, num_perm, seed, jobs))
    return np.concatenate(parts)
