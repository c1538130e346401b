"""Compiled tokenising of a whole batch: UTF-8 bytes → case-folded word hashes, line breaks, sentence ends.

`tokenize_utf8` reproduces, in one compiled pass per document (documents in parallel), what the
regex `\\w+|[.!?;:](?=\\s)|\\n` finds in `text.casefold()` with invisible marks removed: the
Unicode classes (`\\w`, `\\d`, `\\s`) and the case folding come from tables built once per process
from Python's own `str` methods, so the compiled loop agrees with Python's regex module on every
code point. Markup stripping and NFKC stay in Python (`pipeline.sketch.text_bytes`), applied only
to the texts that need them.

A word's hash is FNV-1a over its folded code points followed by the murmur3 64-bit finaliser:
stable across runs, machines and processes (no Python `hash`), documented in README.

Example:
    >>> data, offsets = utf8_buffer(["Hello, World.\\nbye"])
    >>> t = tokenize_utf8(data, offsets)
    >>> t.kind.tolist()  # 0 word, 1 sentence end, 2 line break
    [0, 0, 1, 2, 0]
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numba
import numpy as np
from numba import njit, prange

WORD_KIND, SENTENCE_END_KIND, NEWLINE_KIND = 0, 1, 2
_INVISIBLE = (
    "\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
    + "".join(chr(c) for c in range(0x2060, 0x206A))
    + "\ufeff\ufe0e\ufe0f"
)
_SENTENCE_END_CHARS = ".!?;:"
# Code point classes (bit flags).
IS_WORD, IS_DIGIT, IS_SPACE, IS_INVISIBLE, IS_SENTENCE_END = 1, 2, 4, 8, 16
MAX_FOLD = 3  # the longest str.casefold() of one code point


@dataclass(frozen=True)
class CodePointTables:
    """Per code point: class bits, and its case folding (one code point, or a row of `multi`)."""

    flags: np.ndarray  # uint8[0x110000]
    fold: np.ndarray  # int32[0x110000]: folded code point, or -(row + 1) into `multi`
    multi: np.ndarray  # int32[m, MAX_FOLD]: multi-code-point foldings, 0-padded


@cache
def code_point_tables() -> CodePointTables:
    """Tables for every code point, from Python's `re` classes and `str.casefold` (~0.3 s, once)."""
    n = 0x110000
    everything = "".join(map(chr, range(n)))
    flags = np.zeros(n, dtype=np.uint8)
    for pattern, bit in ((r"\w", IS_WORD), (r"\d", IS_DIGIT), (r"\s", IS_SPACE)):
        positions = [m.start() for m in re.finditer(pattern, everything)]
        flags[positions] |= bit
    flags[[ord(c) for c in _INVISIBLE]] |= IS_INVISIBLE
    flags[[ord(c) for c in _SENTENCE_END_CHARS]] |= IS_SENTENCE_END
    fold = np.arange(n, dtype=np.int32)
    multi: list[list[int]] = []
    changed = [i for i, c in enumerate(everything) if c.casefold() != c]
    for code in changed:
        folded = chr(code).casefold()
        if len(folded) == 1:
            fold[code] = ord(folded)
        else:
            multi.append([ord(c) for c in folded] + [0] * (MAX_FOLD - len(folded)))
            fold[code] = -len(multi)
    return CodePointTables(
        flags=flags, fold=fold, multi=np.array(multi, dtype=np.int32).reshape(-1, MAX_FOLD)
    )


@dataclass(frozen=True)
class TokenStream:
    """Tokens of many documents, flat: document d owns tokens ptr[d]:ptr[d+1]."""

    hash: np.ndarray  # uint64 word hash (0 for markers)
    kind: np.ndarray  # uint8: WORD_KIND, SENTENCE_END_KIND or NEWLINE_KIND
    is_number: np.ndarray  # bool: the word holds a decimal digit
    ptr: np.ndarray  # int64 document pointers


def utf8_buffer(texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """All texts UTF-8 encoded into one uint8 buffer, with int64 offsets (len(texts) + 1)."""
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, encoded), np.int64, len(encoded)), out=offsets[1:])
    return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets


_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True, inline="always")
def _finish(h: np.uint64) -> np.uint64:
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@njit(cache=True, nogil=True, inline="always")
def _emit(out_hash, out_kind, out_number, at, word_hash, kind, is_number):
    """Write one token (nothing in counting mode, when the outputs are empty)."""
    if out_kind.shape[0]:
        out_hash[at] = word_hash
        out_kind[at] = kind
        out_number[at] = is_number


@njit(cache=True, nogil=True)
def _scan(data, start, stop, flags, fold, multi, out_hash, out_kind, out_number, write):
    """Tokenise data[start:stop]; write tokens from index `write` (or only count when out_kind is empty).

    Returns the number of tokens.
    """
    n = 0
    in_word = False
    word_hash = _FNV_OFFSET
    has_digit = False
    pending_end = False  # a sentence-end character waits for its following code point
    folded = np.zeros(MAX_FOLD, dtype=np.int32)
    i = start
    while i < stop:
        # decode one UTF-8 code point (invalid bytes count as U+FFFD)
        b0 = np.int32(data[i])
        if b0 < 0x80:
            cp, size = b0, 1
        elif b0 >= 0xF0 and i + 3 < stop:
            cp = ((b0 & 0x07) << 18) | ((np.int32(data[i + 1]) & 0x3F) << 12)
            cp |= ((np.int32(data[i + 2]) & 0x3F) << 6) | (np.int32(data[i + 3]) & 0x3F)
            size = 4
        elif b0 >= 0xE0 and i + 2 < stop:
            cp = ((b0 & 0x0F) << 12) | ((np.int32(data[i + 1]) & 0x3F) << 6) | (np.int32(data[i + 2]) & 0x3F)
            size = 3
        elif b0 >= 0xC0 and i + 1 < stop:
            cp = ((b0 & 0x1F) << 6) | (np.int32(data[i + 1]) & 0x3F)
            size = 2
        else:
            cp, size = 0xFFFD, 1
        if cp >= 0x110000:
            cp = 0xFFFD
        i += size
        if cp < 0x80:
            folded[0] = cp + 32 if 65 <= cp <= 90 else cp
            n_folded = 1
        elif flags[cp] & IS_INVISIBLE:
            continue
        elif fold[cp] >= 0:
            folded[0] = fold[cp]
            n_folded = 1
        else:
            n_folded = 0
            row = -fold[cp] - 1
            for k in range(MAX_FOLD):
                if multi[row, k] != 0:
                    folded[n_folded] = multi[row, k]
                    n_folded += 1
        for k in range(n_folded):
            c = folded[k]
            flag = flags[c]
            if pending_end:
                pending_end = False
                if flag & IS_SPACE:
                    _emit(out_hash, out_kind, out_number, write + n, np.uint64(0), SENTENCE_END_KIND, False)
                    n += 1
            if flag & IS_WORD:
                if not in_word:
                    in_word = True
                    word_hash = _FNV_OFFSET
                    has_digit = False
                word_hash = (word_hash ^ np.uint64(c)) * _FNV_PRIME
                if flag & IS_DIGIT:
                    has_digit = True
                continue
            if in_word:
                in_word = False
                _emit(out_hash, out_kind, out_number, write + n, _finish(word_hash), WORD_KIND, has_digit)
                n += 1
            if c == 10:
                _emit(out_hash, out_kind, out_number, write + n, np.uint64(0), NEWLINE_KIND, False)
                n += 1
            elif flag & IS_SENTENCE_END:
                pending_end = True
    if in_word:
        _emit(out_hash, out_kind, out_number, write + n, _finish(word_hash), WORD_KIND, has_digit)
        n += 1
    return n


@njit(cache=True, nogil=True, parallel=True)
def _count_tokens(data, offsets, flags, fold, multi, counts):
    no_hash = np.zeros(0, dtype=np.uint64)
    no_kind = np.zeros(0, dtype=np.uint8)
    no_number = np.zeros(0, dtype=np.bool_)
    for d in prange(offsets.shape[0] - 1):
        counts[d] = _scan(
            data, offsets[d], offsets[d + 1], flags, fold, multi, no_hash, no_kind, no_number, 0
        )


@njit(cache=True, nogil=True, parallel=True)
def _fill_tokens(data, offsets, flags, fold, multi, ptr, out_hash, out_kind, out_number):
    for d in prange(offsets.shape[0] - 1):
        _scan(data, offsets[d], offsets[d + 1], flags, fold, multi, out_hash, out_kind, out_number, ptr[d])


def tokenize_utf8(data: np.ndarray, offsets: np.ndarray, threads: int = 2) -> TokenStream:
    """Tokens of the documents data[offsets[d]:offsets[d+1]] (UTF-8), documents in parallel."""
    tables = code_point_tables()
    data = np.ascontiguousarray(data, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    counts = np.zeros(len(offsets) - 1, dtype=np.int64)
    _count_tokens(data, offsets, tables.flags, tables.fold, tables.multi, counts)
    ptr = np.zeros(len(offsets), dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    total = int(ptr[-1])
    out_hash = np.empty(total, dtype=np.uint64)
    out_kind = np.empty(total, dtype=np.uint8)
    out_number = np.empty(total, dtype=np.bool_)
    _fill_tokens(data, offsets, tables.flags, tables.fold, tables.multi, ptr, out_hash, out_kind, out_number)
    return TokenStream(hash=out_hash, kind=out_kind, is_number=out_number, ptr=ptr)


@njit(cache=True, nogil=True)
def _doc_blocks(kind, start, stop, long_line_words, block_of_token):
    """Block number (from 0) of each word token in kind[start:stop] (-1 for markers); returns the block count.

    A block is a line; a line of more than `long_line_words` words is cut after each sentence end.
    """
    blocks = 0
    line_start = start
    while line_start < stop:
        line_stop = line_start
        words = 0
        while line_stop < stop and kind[line_stop] != NEWLINE_KIND:
            if kind[line_stop] == WORD_KIND:
                words += 1
            line_stop += 1
        cut_sentences = words > long_line_words
        open_block = False
        for t in range(line_start, line_stop):
            if kind[t] == WORD_KIND:
                if not open_block:
                    open_block = True
                    blocks += 1
                block_of_token[t] = blocks - 1
            else:
                block_of_token[t] = -1
                if cut_sentences:
                    open_block = False
        if line_stop < stop:
            block_of_token[line_stop] = -1
        line_start = line_stop + 1
    return blocks


@njit(cache=True, nogil=True, parallel=True)
def _count_blocks(kind, ptr, long_line_words, block_of_token, words, blocks):
    for d in prange(ptr.shape[0] - 1):
        blocks[d] = _doc_blocks(kind, ptr[d], ptr[d + 1], long_line_words, block_of_token)
        n = 0
        for t in range(ptr[d], ptr[d + 1]):
            if kind[t] == WORD_KIND:
                n += 1
        words[d] = n


@njit(cache=True, nogil=True, parallel=True)
def _fill_words(
    token_hash,
    kind,
    is_number,
    ptr,
    block_of_token,
    word_ptr,
    block_ptr,
    multipliers,
    word_hash,
    word_number,
    word_block,
    block_hash,
    block_doc,
):
    n_mult = multipliers.shape[0]
    for d in prange(ptr.shape[0] - 1):
        w = word_ptr[d]
        for b in range(block_ptr[d], block_ptr[d + 1]):
            block_hash[b] = 0
            block_doc[b] = d
        position = 0
        previous_block = -1
        for t in range(ptr[d], ptr[d + 1]):
            if kind[t] != WORD_KIND:
                continue
            block = block_ptr[d] + block_of_token[t]
            if block != previous_block:
                position = 0
                previous_block = block
            h = token_hash[t]
            word_hash[w] = h
            word_number[w] = is_number[t]
            word_block[w] = block
            block_hash[block] += h * multipliers[position % n_mult] + np.uint64(position)
            position += 1
            w += 1


@dataclass(frozen=True)
class WordBlocks:
    """Words of many documents with their blocks (see `pipeline.sketch.Tokens`)."""

    word_hash: np.ndarray
    word_is_number: np.ndarray
    doc_ptr: np.ndarray
    word_block: np.ndarray
    block_hash: np.ndarray
    block_doc: np.ndarray


def words_and_blocks(
    stream: TokenStream, long_line_words: int, multipliers: np.ndarray, threads: int = 2
) -> WordBlocks:
    """Drop the markers of a token stream, keeping per word its block (global number) and per block
    the hash Σ word_hash·multipliers[position mod m] + position (position inside the block)."""
    n_docs = len(stream.ptr) - 1
    numba.set_num_threads(max(1, min(threads, numba.config.NUMBA_NUM_THREADS)))
    block_of_token = np.empty(len(stream.kind), dtype=np.int64)
    words = np.zeros(n_docs, dtype=np.int64)
    blocks = np.zeros(n_docs, dtype=np.int64)
    _count_blocks(stream.kind, stream.ptr, long_line_words, block_of_token, words, blocks)
    word_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(words, out=word_ptr[1:])
    block_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(blocks, out=block_ptr[1:])
    n_words, n_blocks = int(word_ptr[-1]), int(block_ptr[-1])
    out = WordBlocks(
        word_hash=np.empty(n_words, dtype=np.uint64),
        word_is_number=np.empty(n_words, dtype=np.bool_),
        doc_ptr=word_ptr,
        word_block=np.empty(n_words, dtype=np.int64),
        block_hash=np.empty(n_blocks, dtype=np.uint64),
        block_doc=np.empty(n_blocks, dtype=np.int64),
    )
    _fill_words(
        stream.hash,
        stream.kind,
        stream.is_number,
        stream.ptr,
        block_of_token,
        word_ptr,
        block_ptr,
        np.ascontiguousarray(multipliers, dtype=np.uint64),
        out.word_hash,
        out.word_is_number,
        out.word_block,
        out.block_hash,
        out.block_doc,
    )
    return out
