"""Sketching: shingles, datasketch-compatible MinHash, boilerplate."""

from __future__ import annotations

import numpy as np
from datasketch import MinHash
from hypothesis import given, settings
from hypothesis import strategies as st

from jobdedup.features.shingle_sets import ShingleSets
from jobdedup.pipeline.boilerplate import core_word_mask, find_boilerplate_blocks
from jobdedup.pipeline.sketch import _POSITION_MULTIPLIERS, minhash_signatures, shingle_sets, tokenize


def _sets(texts, k=5):
    tokens = tokenize(texts)
    return shingle_sets(tokens.word_hash, tokens.doc_ptr, k)


def test_shingle_counts_follow_word_counts():
    sets = _sets(["one two three four five six", "one two", "", "a a a a a a a a"])
    # 6 words -> 2 windows; 2 words -> one short shingle; empty -> none; repeated window -> one.
    assert sets.sizes.tolist() == [2, 1, 0, 1]


def test_shingles_do_not_cross_documents():
    joined = _sets(["a b c d e f g h i j"])
    split = _sets(["a b c d e", "f g h i j"])
    assert len(joined.row(0)) == 6
    assert split.sizes.tolist() == [1, 1]
    # The windows inside each document also occur in the joined text; none spans the boundary.
    assert set(split.row(0).tolist()) | set(split.row(1).tolist()) < set(joined.row(0).tolist())


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(["ab", "cd", "ef", "gh", "ij", "kl"]), max_size=400), min_size=1, max_size=3
    )
)
def test_shingle_sets_are_the_sorted_unique_windows(docs):
    """Long documents (radix-sorted) and short ones (np.sort) alike: sorted unique window hashes."""
    tokens = tokenize([" ".join(words) for words in docs])
    sets = shingle_sets(tokens.word_hash, tokens.doc_ptr, 5)
    multipliers = [int(m) for m in _POSITION_MULTIPLIERS[:5]]
    for d in range(len(docs)):
        words = [int(h) for h in tokens.word_hash[tokens.doc_ptr[d] : tokens.doc_ptr[d + 1]]]
        width = min(5, len(words))
        windows = {
            sum(h * m for h, m in zip(words[s : s + width], multipliers)) & 0xFFFFFFFF
            for s in range(max(len(words) - 5 + 1, 1) if words else 0)
        }
        assert sets.row(d).tolist() == sorted(windows)


def test_signatures_match_datasketch_affine32():
    sets = _sets(["the quick brown fox jumps over the lazy dog again and again", "x y"])
    signatures = minhash_signatures(sets, 64, seed=7)
    for doc in range(len(sets)):
        reference = MinHash(num_perm=64, seed=7, hashfunc=lambda v: v & 0xFFFFFFFF)
        for value in sets.row(doc):
            reference.update(int(value))
        assert np.array_equal(reference.hashvalues, signatures[doc])


def test_minhash_estimate_tracks_exact_jaccard():
    base = [f"w{i}" for i in range(400)]
    other = base[:300] + [f"v{i}" for i in range(100)]
    sets = _sets([" ".join(base), " ".join(other)])
    a, b = set(sets.row(0)), set(sets.row(1))
    exact = len(a & b) / len(a | b)
    signatures = minhash_signatures(sets, 256, seed=1)
    estimate = (signatures[0] == signatures[1]).mean()
    assert abs(estimate - exact) < 0.1


@settings(max_examples=50, deadline=None)
@given(st.text(min_size=0, max_size=300))
def test_same_text_same_signature_and_self_similarity_one(text):
    sets = _sets([text, text])
    signatures = minhash_signatures(sets, 32, seed=1)
    assert np.array_equal(signatures[0], signatures[1])


def test_block_shared_by_many_titles_is_boilerplate_but_not_a_reposted_vacancy():
    blurb = "acme is an equal opportunity employer and values diversity"
    texts = [f"role {i} text here\n{blurb}" for i in range(3)] + ["repost body kept\nrepost body kept"]
    tokens = tokenize(texts)
    titles = np.array([0, 1, 2, 3])
    one_employer = np.zeros(4, dtype=np.int64)
    boilerplate = find_boilerplate_blocks(tokens.block_hash, tokens.block_doc, titles, 3, one_employer, 3)
    assert len(boilerplate) == 1
    keep = core_word_mask(tokens, boilerplate)
    assert keep.sum() == tokens.word_hash.size - 3 * len(blurb.split())


def test_ads_whose_text_is_all_boilerplate_are_sketched_on_their_full_text():
    tokens = tokenize(["blurb blurb words here\nown text of this ad", "blurb blurb words here"])
    keep = core_word_mask(tokens, np.unique(tokens.block_hash[[0]]))
    full = shingle_sets(tokens.word_hash, tokens.doc_ptr, 2)
    core = shingle_sets(tokens.word_hash, tokens.doc_ptr, 2, keep=keep, fallback=True)
    without_fallback = shingle_sets(tokens.word_hash, tokens.doc_ptr, 2, keep=keep)
    # Ad 0 keeps its own line (5 words, 4 windows); ad 1 is all boilerplate and falls back to full.
    assert core.sizes.tolist() == [4, full.sizes[1]]
    assert core.row(1).tolist() == full.row(1).tolist()
    assert without_fallback.sizes.tolist() == [4, 0]


def test_windows_join_the_words_around_a_dropped_block():
    tokens = tokenize(["a b\nx y z\nc d", "a b c d"])
    keep = np.ones(len(tokens.word_hash), dtype=bool)
    keep[2:5] = False  # the line "x y z" of the first ad
    core = shingle_sets(tokens.word_hash, tokens.doc_ptr, 4, keep=keep)
    assert core.row(0).tolist() == core.row(1).tolist()
    assert core.sizes.tolist() == [1, 1]


@given(st.lists(st.lists(st.lists(st.integers(0, 2**32 - 1), max_size=6), max_size=4), max_size=5))
@settings(max_examples=60, deadline=None)
def test_concatenating_sets_keeps_every_row_in_order(parts_rows):
    parts = [ShingleSets.from_lists(rows) for rows in parts_rows]
    expected = [row for part in parts for row in _rows(part)]
    consumed = list(parts)
    joined = ShingleSets.concatenate(consumed, consume=True)
    assert consumed == []  # emptied as it was copied
    assert _rows(joined) == expected == _rows(ShingleSets.concatenate(parts))
    assert joined.values.dtype == np.uint32 and joined.indptr.dtype == np.int64


def _rows(sets: ShingleSets) -> list[list[int]]:
    return [sets.values[sets.indptr[k] : sets.indptr[k + 1]].tolist() for k in range(len(sets))]
