"""The compiled tokeniser agrees with Python's regex module and str.casefold on any text."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from jobdedup.pipeline.sketch import _POSITION_MULTIPLIERS, block_key, tokenize
from jobdedup.pipeline.tokenizer import (
    _INVISIBLE,
    _bound_steps,
    _bounds,
    _byte_classes,
    tokenize_utf8,
    utf8_buffer,
)

TOKEN = re.compile(r"\w+|[.!?;:](?=\s)|\n")
INVISIBLE = re.compile("[" + re.escape(_INVISIBLE) + "]")
GLUED = re.compile("(?<=[a-z])(?=[A-Z])")  # "officeSalary": two words a scraper glued together
MASK = (1 << 64) - 1


def _word_hash(word: str) -> int:
    """FNV-1a over code points + murmur3 finaliser: the documented word hash, in plain Python."""
    h = 0xCBF29CE484222325
    for char in word:
        h = ((h ^ ord(char)) * 0x100000001B3) & MASK
    for multiplier in (0xFF51AFD7ED558CCD, 0xC4CEB9FE1A85EC53):
        h ^= h >> 33
        h = (h * multiplier) & MASK
    return h ^ (h >> 33)


def _reference(text: str, long_line_words: int) -> tuple[list[tuple[int, bool]], list[list[int]]]:
    """Words (hash, holds a digit) and blocks (their words' positions) of one text in plain Python:
    a block is a line, or each sentence of a line of more than `long_line_words` words."""
    words: list[tuple[int, bool]] = []
    blocks: list[list[int]] = []
    for line in INVISIBLE.sub("", GLUED.sub(" ", text)).casefold().split("\n"):
        tokens = TOKEN.findall(line + "\n")[:-1]  # the line break lets a final sentence end count
        cut = sum(t not in ".!?;:" for t in tokens) > long_line_words
        block: list[int] = []
        for token in tokens:
            if token not in ".!?;:":
                block.append(len(words))
                words.append((_word_hash(token), re.search(r"\d", token) is not None))
            elif cut and block:
                blocks.append(block)
                block = []
        if block:
            blocks.append(block)
    return words, blocks


def _block_hash(word_hashes: list[int]) -> int:
    multipliers = [int(m) for m in _POSITION_MULTIPLIERS]
    return sum(h * multipliers[p % len(multipliers)] + p for p, h in enumerate(word_hashes)) & MASK


def _check(texts: list[str], long_line_words: int) -> None:
    """The kernel's words, blocks and block hashes equal the reference's, document by document."""
    data, offsets = utf8_buffer(texts)
    got = tokenize_utf8(data, offsets, long_line_words, _POSITION_MULTIPLIERS, threads=2)
    n_blocks = 0
    for d, text in enumerate(texts):
        words, blocks = _reference(text, long_line_words)
        start, stop = got.doc_ptr[d], got.doc_ptr[d + 1]
        assert list(zip(got.word_hash[start:stop].tolist(), got.word_is_number[start:stop].tolist())) == words
        expected_block = np.zeros(len(words), dtype=np.int64)
        for b, members in enumerate(blocks):
            expected_block[members] = n_blocks + b
        assert got.word_block[start:stop].tolist() == expected_block.tolist()
        doc_blocks = slice(n_blocks, n_blocks + len(blocks))
        assert got.block_doc[doc_blocks].tolist() == [d] * len(blocks)
        assert got.block_hash[doc_blocks].tolist() == [_block_hash([words[w][0] for w in m]) for m in blocks]
        n_blocks += len(blocks)
    assert len(got.block_hash) == len(got.block_doc) == n_blocks


TRICKY = [
    "Straße İstanbul ΐ ﬁne",  # multi-code-point case foldings
    "İİİİ ΐΐ",  # one code point holding a word's end
    "zero\u200bwidth soft\u00adhyphen",  # invisible marks join the word parts
    "end. next! ask? list; time: x.",  # sentence ends need following whitespace
    "a.\u200b\nb",  # ... looked up after invisible marks
    "one two. three four.\u00a0five six\nseven eight. nine",  # ... and non-ASCII whitespace
    "٣ ٤ digits, ① circled, 3rd, v2.0",  # Unicode digits
    "日本語の求人。エンジニア募集",  # CJK: \w runs
    "tab\tsep\r\nwindows\u2028line\u00a0nbsp",
    "emoji 🙂 and 𝐁𝐨𝐥𝐝 math letters",
    "\n\n. .\n",
    "",
]


def test_tricky_texts_tokenise_like_the_regex():
    _check(TRICKY, long_line_words=50)
    _check(TRICKY, long_line_words=1)


def test_invalid_utf8_bytes_read_as_separators():
    data = np.frombuffer(b"ab\xffcd \xe2\x82 ef\xf0", dtype=np.uint8)
    got = tokenize_utf8(data, np.array([0, len(data)]), 50, _POSITION_MULTIPLIERS)
    assert got.word_hash.tolist() == [_word_hash(w) for w in ("ab", "cd", "ef")]


def test_overlong_forms_read_as_separators_not_as_what_they_encode():
    """An overlong form of a line break or a letter ("\\xc0\\x8a", "\\xe0\\x80\\x8a", "\\xf0\\x80\\x81\\xa1") is
    invalid UTF-8, as Python's decoder has it: a separator. Read as a line break it made one more
    block than `_bounds` leaves room for (found by the property test below: b"0\\xc0\\x8a0")."""
    for overlong in (b"\xc0\x8a", b"\xe0\x80\x8a", b"\xf0\x80\x80\x8a", b"\xc1\xa1", b"\xf0\x80\x81\xa1"):
        text = b"0" + overlong + b"0 ab"
        data = np.frombuffer(text, dtype=np.uint8)
        offsets = np.array([0, len(data)], dtype=np.int64)
        got = tokenize_utf8(data, offsets, 1, _POSITION_MULTIPLIERS)
        assert got.word_hash.tolist() == [_word_hash(w) for w in ("0", "0", "ab")], overlong
        assert len(got.block_hash) == 1, overlong
        word_bound, block_bound = np.zeros(1, np.int64), np.zeros(1, np.int64)
        _bounds(data, offsets, _byte_classes(), *_bound_steps(), word_bound, block_bound)
        assert len(got.block_hash) <= block_bound[0] and len(got.word_hash) <= word_bound[0]
        assert "\n" not in text.decode("utf-8", "replace") and "a0" not in text.decode("utf-8", "replace")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.binary(max_size=60), min_size=1, max_size=4))
def test_word_and_block_bounds_hold_for_any_bytes(chunks):
    """Each document is read into a region sized by `_bounds`: any bytes must stay within it."""
    data = np.frombuffer(b"".join(chunks), dtype=np.uint8)
    offsets = np.cumsum([0, *map(len, chunks)]).astype(np.int64)
    word_bound = np.zeros(len(chunks), dtype=np.int64)
    block_bound = np.zeros(len(chunks), dtype=np.int64)
    _bounds(data, offsets, _byte_classes(), *_bound_steps(), word_bound, block_bound)
    got = tokenize_utf8(data, offsets, 1, _POSITION_MULTIPLIERS)
    assert (np.diff(got.doc_ptr) <= word_bound).all()
    assert (np.bincount(got.block_doc, minlength=len(chunks)) <= block_bound).all()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=80), min_size=1, max_size=4), st.integers(0, 6))
def test_any_text_tokenises_like_the_regex(texts, long_line_words):
    _check(texts, long_line_words)


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.text(alphabet="ab .;\n\u00a0\u200bİ", max_size=60), min_size=1, max_size=4), st.integers(0, 4)
)
def test_lines_and_sentences_become_blocks_like_the_reference(texts, long_line_words):
    _check(texts, long_line_words)


def test_block_key_matches_the_block_hash_of_a_one_line_text():
    tokens = tokenize(["<p>Equal Opportunity Employer.</p>", "equal opportunity employer"])
    assert tokens.block_hash[0] == tokens.block_hash[1] == np.uint64(block_key("EQUAL opportunity EMPLOYER"))


def test_markup_and_nfkc_are_applied_before_tokenising():
    tokens = tokenize(["<b>ＡＢＣ</b> &amp; x", "abc x"])
    first = tokens.word_hash[tokens.doc_ptr[0] : tokens.doc_ptr[1]]
    second = tokens.word_hash[tokens.doc_ptr[1] : tokens.doc_ptr[2]]
    assert first.tolist() == second.tolist()


def test_words_a_scraper_glued_together_are_read_apart():
    # Adzuna page copies lose line breaks: "Hybrid, 3 days in the officeSalary: £80,000".
    glued = tokenize(["in the officeSalary: JavaScript", "in the office Salary: Java Script"])
    first, second = np.split(glued.word_hash, glued.doc_ptr[1:-1])
    assert first.tolist() == second.tolist()
    assert len(tokenize(["ÖSTERREICH aB"]).word_hash) == 3  # ASCII lower -> upper only
