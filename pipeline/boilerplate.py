"""Corpus-level boilerplate: text blocks that recur across different vacancies.

A block (paragraph, list item, sentence of a long line) that appears in ads with at least
`min_titles` distinct job titles is a company blurb, an equal-opportunity statement, a footer or
site navigation, not the vacancy. Such blocks are left out of the *core* text, so that a shared
template does not make two vacancies look alike, while a repost (same title) keeps its text.

Example:
    >>> block_hash = np.array([7, 7, 7, 9], dtype=np.uint64)
    >>> block_doc = np.array([0, 1, 2, 2])
    >>> find_boilerplate_blocks(block_hash, block_doc, np.array([0, 1, 2]), min_titles=3).tolist()
    [7]
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from features.shingle_sets import sorted_member, sorted_unique
from pipeline.tokenizer import Tokens


def find_boilerplate_blocks(
    block_hash: np.ndarray, block_doc: np.ndarray, doc_title_code: np.ndarray, min_titles: int
) -> np.ndarray:
    """Hashes of blocks seen in ads with at least `min_titles` distinct title codes (sorted)."""
    if len(block_hash) == 0:
        return np.zeros(0, dtype=np.uint64)
    seen = pd.DataFrame({"block": block_hash, "title": doc_title_code[block_doc]}).drop_duplicates()
    titles_per_block = seen.groupby("block", sort=True).size()
    return np.sort(titles_per_block.index[titles_per_block.to_numpy() >= min_titles].to_numpy(np.uint64))


def core_word_mask(tokens: Tokens, boilerplate: np.ndarray) -> np.ndarray:
    """True for every word that is not inside a boilerplate block."""
    block_is_boilerplate = sorted_member(tokens.block_hash, np.sort(boilerplate))
    return ~block_is_boilerplate[tokens.word_block]


def merge_block_sets(*sets: np.ndarray) -> np.ndarray:
    """Sorted union of several block-hash arrays (by one sort: an index's learnt boilerplate grows
    with it, ~1 block per ad, and numpy 2's hash-based `np.unique` takes ~0.6 s on a million)."""
    return sorted_unique(np.concatenate([np.asarray(s, dtype=np.uint64) for s in sets]))
