"""The compiled tokeniser agrees with Python's regex module and str.casefold on any text."""

from __future__ import annotations

import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pipeline.sketch import block_key, tokenize
from pipeline.tokenizer import _INVISIBLE, tokenize_utf8, utf8_buffer

TOKEN = re.compile(r"\w+|[.!?;:](?=\s)|\n")
INVISIBLE = re.compile("[" + re.escape(_INVISIBLE) + "]")
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


def _reference(text: str) -> list[tuple[int, int, bool]]:
    tokens = []
    for token in TOKEN.findall(INVISIBLE.sub("", text).casefold()):
        if token == "\n":
            tokens.append((0, 2, False))
        elif len(token) == 1 and token in ".!?;:":
            tokens.append((0, 1, False))
        else:
            tokens.append((_word_hash(token), 0, re.search(r"\d", token) is not None))
    return tokens


def _kernel(texts: list[str]) -> list[list[tuple[int, int, bool]]]:
    data, offsets = utf8_buffer(texts)
    stream = tokenize_utf8(data, offsets, threads=2)
    rows = zip(stream.hash.tolist(), stream.kind.tolist(), stream.is_number.tolist(), strict=True)
    flat = list(rows)
    return [flat[stream.ptr[d] : stream.ptr[d + 1]] for d in range(len(texts))]


TRICKY = [
    "Straße İstanbul ΐ ﬁne",  # multi-code-point case foldings
    "zero\u200bwidth soft\u00adhyphen",  # invisible marks join the word parts
    "end. next! ask? list; time: x.",  # sentence ends need following whitespace
    "a.\u200b\nb",  # ... looked up after invisible marks
    "٣ ٤ digits, ① circled, 3rd, v2.0",  # Unicode digits
    "日本語の求人。エンジニア募集",  # CJK: \w runs
    "tab\tsep\r\nwindows\u2028line\u00a0nbsp",
    "emoji 🙂 and 𝐁𝐨𝐥𝐝 math letters",
    "",
]


def test_tricky_texts_tokenise_like_the_regex():
    assert _kernel(TRICKY) == [_reference(t) for t in TRICKY]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=80), min_size=1, max_size=4))
def test_any_text_tokenises_like_the_regex(texts):
    assert _kernel(texts) == [_reference(t) for t in texts]


def test_block_key_matches_the_block_hash_of_a_one_line_text():
    tokens = tokenize(["<p>Equal Opportunity Employer.</p>", "equal opportunity employer"])
    assert tokens.block_hash[0] == tokens.block_hash[1] == np.uint64(block_key("EQUAL opportunity EMPLOYER"))


def test_markup_and_nfkc_are_applied_before_tokenising():
    tokens = tokenize(["<b>ＡＢＣ</b> &amp; x", "abc x"])
    first = tokens.word_hash[tokens.doc_ptr[0] : tokens.doc_ptr[1]]
    second = tokens.word_hash[tokens.doc_ptr[1] : tokens.doc_ptr[2]]
    assert first.tolist() == second.tolist()
