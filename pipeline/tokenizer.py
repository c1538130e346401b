"""Compiled tokenising of a whole batch: UTF-8 bytes → case-folded word hashes and their blocks.

`tokenize_utf8` reproduces, in one compiled pass per document (documents in parallel), the words
of the regex `\\w+|[.!?;:](?=\\s)|\\n` in `text.casefold()` with invisible marks removed and
an ASCII lower-case letter followed by an upper-case one read as two words ("officeSalary",
where a scraper dropped a line break: "office", "salary"), and
groups them into blocks (lines; sentences of long lines) as it goes: the Unicode classes (`\\w`,
`\\d`, `\\s`) and the case folding come from tables built once per process from Python's own
`str` methods, so the compiled loop agrees with Python's regex module on every code point.
Markup stripping and NFKC stay in Python (`pipeline.sketch.kernel_input`), applied only to the
texts that need them.

Output arrays are sized before reading by a cheap pass over the bytes that bounds each
document's words and blocks (`_bounds`), so each document is read once (no counting pass) and
the regions are then moved together in place.

A word's hash is FNV-1a over its folded code points followed by the murmur3 64-bit finaliser:
stable across runs, machines and processes (no Python `hash`), documented in README.

Example:
    >>> data, offsets = utf8_buffer(["Hello, World.\\nbye"])
    >>> words = tokenize_utf8(data, offsets, long_line_words=50, multipliers=np.ones(1, np.uint64))
    >>> words.doc_ptr.tolist(), words.word_block.tolist()  # 3 words; blocks: 2 lines
    ([0, 3], [0, 0, 1])
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np
from numba import njit, prange

from jobdedup.features.kernels import set_kernel_threads
from jobdedup.pipeline.code_points import CODE_POINTS, changed_positions, every_code_point

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
    """Tables for every code point, from Python's `re` classes and `str.casefold` (~0.1 s, once)."""
    n = CODE_POINTS
    everything = every_code_point()
    flags = np.zeros(n, dtype=np.uint8)
    for pattern, bit in ((r"\w", IS_WORD), (r"\d", IS_DIGIT), (r"\s", IS_SPACE)):
        positions = [m.start() for m in re.finditer(pattern, everything)]
        flags[positions] |= bit
    flags[[ord(c) for c in _INVISIBLE]] |= IS_INVISIBLE
    flags[[ord(c) for c in _SENTENCE_END_CHARS]] |= IS_SENTENCE_END
    fold = np.arange(n, dtype=np.int32)
    multi: list[list[int]] = []
    for code in changed_positions(everything, str.casefold):
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
class Tokens:
    """Words of a batch, flat: word `w` belongs to block `word_block[w]` of doc `block_doc[...]`."""

    word_hash: np.ndarray  # uint64 per word occurrence
    word_is_number: np.ndarray  # bool per word occurrence: the word holds a digit
    doc_ptr: np.ndarray  # int64, words of doc d are word_hash[doc_ptr[d]:doc_ptr[d+1]]
    word_block: np.ndarray  # int32 block index per word occurrence
    block_hash: np.ndarray  # uint64 hash of each block's word sequence
    block_doc: np.ndarray  # int32 doc index per block

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return len(self.doc_ptr) - 1

    @property
    def words_per_doc(self) -> np.ndarray:
        """Word count of every document."""
        return np.diff(self.doc_ptr)


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
def _end_word(word_hash, word_number, word_block, w, h, has_digit, sentence):
    """Write the word that just ended at index w (its block: the sentence number within the line,
    until `_close_line`); returns the next word index."""
    word_hash[w] = _finish(h)
    word_number[w] = has_digit
    word_block[w] = sentence
    return w + 1


@njit(cache=True, nogil=True)
def _close_line(
    word_hash, word_block, block_hash, block_doc, multipliers, line_start, w, b, doc, long_line_words
):
    """Turn the words line_start:w of one line into blocks from block index b; returns the next block index.

    On entry word_block holds each word's sentence number within the line; a line of more than
    `long_line_words` words becomes one block per sentence, a shorter line one block. On exit
    word_block holds the block index and block_hash Σ word_hash·multipliers[position mod m] + position.
    """
    cut = w - line_start > long_line_words
    n_mult = multipliers.shape[0]
    current = -1
    position = 0
    for x in range(line_start, w):
        sentence = word_block[x] if cut else 0
        if sentence != current:
            current = sentence
            block_hash[b] = 0
            block_doc[b] = doc
            b += 1
            position = 0
        word_block[x] = b - 1
        block_hash[b - 1] += word_hash[x] * multipliers[position % n_mult] + np.uint64(position)
        position += 1
    return b


_SMALLEST_CODE_POINT = np.array([0, 0, 0x80, 0x800, 0x10000], dtype=np.int64)
"""Per UTF-8 sequence length, its smallest code point: a smaller one written longer (an overlong
form, which could hide a line break from `_bounds`) starts no valid sequence."""


@njit(cache=True, nogil=True)
def _scan_doc(
    data, start, stop, doc, flags, fold, multi, long_line_words, multipliers,
    word_hash, word_number, word_block, block_hash, block_doc, w, b,
):  # fmt: skip
    """Words and blocks of data[start:stop], written from word index w and block index b.

    Returns the next free word and block indexes.
    """
    in_word = False
    h = _FNV_OFFSET
    has_digit = False
    pending_end = False  # a sentence-end character waits for its following code point
    line_start = w
    sentence = 0  # sentence ends seen in the current line
    i = start
    while i < stop:
        b0 = np.int32(data[i])
        if b0 < 0x80 and flags[b0] & IS_WORD:  # a run of ASCII word characters: the common case
            pending_end = False
            if not in_word:
                in_word = True
                h = _FNV_OFFSET
                has_digit = False
            while True:
                h = (h ^ np.uint64(b0 + 32 if 65 <= b0 <= 90 else b0)) * _FNV_PRIME
                has_digit |= (flags[b0] & IS_DIGIT) != 0
                i += 1
                if i == stop:
                    break
                following = np.int32(data[i])
                if following >= 0x80 or not flags[following] & IS_WORD:
                    break
                if 65 <= following <= 90 and 97 <= b0 <= 122:
                    # a lower-case letter glued to an upper-case one ("officeSalary": a scraper
                    # dropped the line break) ends a word
                    w = _end_word(word_hash, word_number, word_block, w, h, has_digit, sentence)
                    h = _FNV_OFFSET
                    has_digit = False
                b0 = following
            continue
        row = -1
        n_folded = 1
        if b0 < 0x80:  # an ASCII non-word byte (word bytes, A-Z among them, took the run above)
            c = b0
            i += 1
        else:  # decode one UTF-8 code point; a byte that starts no valid sequence counts as U+FFFD
            b1 = np.int32(data[i + 1]) if i + 1 < stop else 0
            b2 = np.int32(data[i + 2]) if i + 2 < stop else 0
            b3 = np.int32(data[i + 3]) if i + 3 < stop else 0
            if (
                b0 <= 0xF4
                and b0 >= 0xF0
                and (b1 & 0xC0) == 0x80
                and (b2 & 0xC0) == 0x80
                and (b3 & 0xC0) == 0x80
            ):
                cp = ((b0 & 0x07) << 18) | ((b1 & 0x3F) << 12) | ((b2 & 0x3F) << 6) | (b3 & 0x3F)
                size = 4
            elif b0 >= 0xE0 and b0 < 0xF0 and (b1 & 0xC0) == 0x80 and (b2 & 0xC0) == 0x80:
                cp = ((b0 & 0x0F) << 12) | ((b1 & 0x3F) << 6) | (b2 & 0x3F)
                size = 3
            elif b0 >= 0xC0 and b0 < 0xE0 and (b1 & 0xC0) == 0x80:
                cp = ((b0 & 0x1F) << 6) | (b1 & 0x3F)
                size = 2
            else:
                cp, size = 0xFFFD, 1
            if cp < _SMALLEST_CODE_POINT[size]:  # an overlong form ("\xc0\x8a" for "\n") is invalid
                cp, size = 0xFFFD, 1
            if cp >= 0x110000:
                cp = 0xFFFD
            i += size
            if flags[cp] & IS_INVISIBLE:
                continue
            c = fold[cp]
            if c < 0:
                row = -c - 1
                c = multi[row, 0]
                while n_folded < MAX_FOLD and multi[row, n_folded] != 0:
                    n_folded += 1
        k = 0
        while True:
            flag = flags[c]
            if pending_end:
                pending_end = False
                if flag & IS_SPACE:
                    sentence += 1
            if flag & IS_WORD:
                if not in_word:
                    in_word = True
                    h = _FNV_OFFSET
                    has_digit = False
                h = (h ^ np.uint64(c)) * _FNV_PRIME
                if flag & IS_DIGIT:
                    has_digit = True
            else:
                if in_word:
                    in_word = False
                    w = _end_word(word_hash, word_number, word_block, w, h, has_digit, sentence)
                if c == 10:
                    b = _close_line(
                        word_hash, word_block, block_hash, block_doc, multipliers, line_start, w, b, doc,
                        long_line_words,
                    )  # fmt: skip
                    line_start = w
                    sentence = 0
                elif flag & IS_SENTENCE_END:
                    pending_end = True
            k += 1
            if k >= n_folded:
                break
            c = multi[row, k]
    if in_word:
        w = _end_word(word_hash, word_number, word_block, w, h, has_digit, sentence)
    b = _close_line(
        word_hash, word_block, block_hash, block_doc, multipliers, line_start, w, b, doc, long_line_words
    )
    return w, b


# Byte classes for bounding words and blocks before reading: an ASCII word byte, an ASCII
# whitespace byte, a sentence-end character, a line break, or any byte ≥ 0x80 (part of a non-ASCII
# code point, whose folding has at most three characters and none of them a sentence end or line
# break: checked by `_byte_classes`).
BYTE_WORD, BYTE_SPACE, BYTE_SENTENCE_END, BYTE_NEWLINE, BYTE_OTHER, BYTE_LOWER, BYTE_UPPER, BYTE_NON_ASCII = (
    range(8)
)


@cache
def _byte_classes() -> np.ndarray:
    """Class (BYTE_*) of every byte value."""
    tables = code_point_tables()
    structural = [ord(c) for c in "\n" + _SENTENCE_END_CHARS]
    folds = tables.multi[-tables.fold[0x80:][tables.fold[0x80:] < 0] - 1].ravel().tolist()
    if np.isin(tables.fold[0x80:], structural).any() or set(folds) & set(structural):
        raise AssertionError("a non-ASCII code point folds to a line break or sentence end")
    classes = np.full(256, BYTE_NON_ASCII, dtype=np.uint8)
    for byte in range(128):
        flag = tables.flags[byte]
        classes[byte] = (
            BYTE_LOWER if 97 <= byte <= 122
            else BYTE_UPPER if 65 <= byte <= 90
            else BYTE_WORD if flag & IS_WORD
            else BYTE_NEWLINE if byte == 10
            else BYTE_SPACE if flag & IS_SPACE
            else BYTE_SENTENCE_END if flag & IS_SENTENCE_END
            else BYTE_OTHER
        )  # fmt: skip
    return classes


@cache
def _bound_steps() -> tuple[np.ndarray, np.ndarray]:
    """Word and block ends counted per pair of byte classes (previous, current), flat (8 × 8).

    A word ends at an ASCII non-word byte after a word or non-ASCII byte, at an ASCII upper-case
    letter after a lower-case one, inside a non-ASCII code point (at most two per code point of two
    bytes or more: one per non-ASCII byte), or at the end; a block at a line break, at a sentence
    end followed by whitespace (ASCII or non-ASCII bytes), or at the end.
    """
    n = BYTE_NON_ASCII + 1
    word_steps = np.zeros((n, n), dtype=np.int64)
    block_steps = np.zeros((n, n), dtype=np.int64)
    word_steps[:, BYTE_NON_ASCII] = 1
    for current in (BYTE_SPACE, BYTE_SENTENCE_END, BYTE_NEWLINE, BYTE_OTHER):
        word_steps[[BYTE_WORD, BYTE_LOWER, BYTE_UPPER, BYTE_NON_ASCII], current] = 1
    word_steps[BYTE_LOWER, BYTE_UPPER] = 1
    block_steps[:, BYTE_NEWLINE] = 1
    block_steps[BYTE_SENTENCE_END, [BYTE_SPACE, BYTE_NON_ASCII]] = 1
    return word_steps.ravel(), block_steps.ravel()


@njit(cache=True, nogil=True, parallel=True)
def _bounds(data, offsets, classes, word_steps, block_steps, word_bound, block_bound):
    """Per document, at least as many words and blocks as it can have (see `_bound_steps`)."""
    n = BYTE_NON_ASCII + 1
    for d in prange(offsets.shape[0] - 1):
        words = blocks = 1
        if offsets[d + 1] > offsets[d]:
            step = BYTE_OTHER * n + classes[data[offsets[d]]]
            words += word_steps[step]
            blocks += block_steps[step]
        for i in range(offsets[d] + 1, offsets[d + 1]):
            step = classes[data[i - 1]] * n + classes[data[i]]
            words += word_steps[step]
            blocks += block_steps[step]
        word_bound[d] = words
        block_bound[d] = min(words, blocks)


@njit(cache=True, nogil=True, parallel=True)
def _scan_all(
    data, offsets, flags, fold, multi, long_line_words, multipliers, word_start, block_start,
    word_hash, word_number, word_block, block_hash, block_doc, doc_words, doc_blocks,
):  # fmt: skip
    """Every document, in parallel, into its own region (from word_start[d] and block_start[d])."""
    for d in prange(offsets.shape[0] - 1):
        w, b = _scan_doc(
            data, offsets[d], offsets[d + 1], d, flags, fold, multi, long_line_words, multipliers,
            word_hash, word_number, word_block, block_hash, block_doc, word_start[d], block_start[d],
        )  # fmt: skip
        doc_words[d] = w - word_start[d]
        doc_blocks[d] = b - block_start[d]


@njit(cache=True, nogil=True)
def _compact(
    word_start, block_start, word_ptr, block_ptr, word_hash, word_number, word_block, block_hash, block_doc
):
    """Move every document's words and blocks left, from its region to its dense place (in place:
    a dense place never lies right of its region), and make block indexes dense."""
    for d in range(word_ptr.shape[0] - 1):
        source, target = word_start[d], word_ptr[d]
        shift = block_ptr[d] - block_start[d]
        for x in range(word_ptr[d + 1] - target):
            word_hash[target + x] = word_hash[source + x]
            word_number[target + x] = word_number[source + x]
            word_block[target + x] = word_block[source + x] + shift
        source, target = block_start[d], block_ptr[d]
        for x in range(block_ptr[d + 1] - target):
            block_hash[target + x] = block_hash[source + x]
            block_doc[target + x] = block_doc[source + x]


def tokenize_utf8(
    data: np.ndarray, offsets: np.ndarray, long_line_words: int, multipliers: np.ndarray, threads: int = 2
) -> Tokens:
    """Words of the documents data[offsets[d]:offsets[d+1]] (UTF-8) with their blocks, in one pass.

    A block is a line; a line of more than `long_line_words` words is cut after each sentence end.
    Per block the hash Σ word_hash·multipliers[position mod m] + position (position inside the
    block). Documents are read in parallel on `threads` threads. A cheap first pass over the bytes
    bounds each document's words and blocks; each document is then read once into its own region
    of outputs sized by those bounds, and the regions are moved together in place.
    """
    tables = code_point_tables()
    data = np.ascontiguousarray(data, dtype=np.uint8)
    offsets = np.ascontiguousarray(offsets, dtype=np.int64)
    multipliers = np.ascontiguousarray(multipliers, dtype=np.uint64)
    set_kernel_threads(threads, len(data), 200_000)
    n_docs = len(offsets) - 1
    word_start = np.zeros(n_docs + 1, dtype=np.int64)
    block_start = np.zeros(n_docs + 1, dtype=np.int64)
    _bounds(data, offsets, _byte_classes(), *_bound_steps(), word_start[1:], block_start[1:])
    np.cumsum(word_start, out=word_start)
    np.cumsum(block_start, out=block_start)
    out = Tokens(
        word_hash=np.empty(word_start[-1], dtype=np.uint64),
        word_is_number=np.empty(word_start[-1], dtype=np.bool_),
        doc_ptr=np.zeros(n_docs + 1, dtype=np.int64),
        word_block=np.empty(word_start[-1], dtype=np.int32),
        block_hash=np.empty(block_start[-1], dtype=np.uint64),
        block_doc=np.empty(block_start[-1], dtype=np.int32),
    )
    doc_words = np.zeros(n_docs, dtype=np.int64)
    doc_blocks = np.zeros(n_docs, dtype=np.int64)
    _scan_all(
        data, offsets, tables.flags, tables.fold, tables.multi, long_line_words, multipliers, word_start,
        block_start, out.word_hash, out.word_is_number, out.word_block, out.block_hash, out.block_doc,
        doc_words, doc_blocks,
    )  # fmt: skip
    np.cumsum(doc_words, out=out.doc_ptr[1:])
    block_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(doc_blocks, out=block_ptr[1:])
    _compact(
        word_start,
        block_start,
        out.doc_ptr,
        block_ptr,
        out.word_hash,
        out.word_is_number,
        out.word_block,
        out.block_hash,
        out.block_doc,
    )
    for words in (out.word_hash, out.word_is_number, out.word_block):
        words.resize(out.doc_ptr[-1], refcheck=False)  # realloc: shrinks in place
    for blocks in (out.block_hash, out.block_doc):
        blocks.resize(block_ptr[-1], refcheck=False)
    return out
