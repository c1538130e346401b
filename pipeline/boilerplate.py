"""Corpus-level boilerplate: text blocks that recur across different vacancies.

A block (paragraph, list item, sentence of a long line) that appears in ads with at least
`min_titles` distinct job titles is a company blurb, an equal-opportunity statement, a footer or
site navigation, not the vacancy; so is a block seen in ads of at least `min_employers` distinct
employers, whatever their titles (page chrome: a job board's navigation, share buttons, cookie text
and "similar jobs" widgets listing other ads, which ads of one title at several employers share).
Such blocks are left out of the *core* text, so that a shared template does not make two vacancies
look alike, while a repost (same title, same employer) keeps its text.

Example:
    >>> block_hash = np.array([7, 7, 7, 9], dtype=np.uint64)
    >>> block_doc = np.array([0, 1, 2, 2])
    >>> find_boilerplate_blocks(block_hash, block_doc, np.array([0, 1, 2]), 3, np.zeros(3, int), 3).tolist()
    [7]
"""

from __future__ import annotations

import numpy as np

from jobdedup.features.shingle_sets import sorted_member, sorted_union
from jobdedup.pipeline.tokenizer import Tokens


def find_boilerplate_blocks(
    block_hash: np.ndarray,
    block_doc: np.ndarray,
    doc_title_code: np.ndarray,
    min_titles: int,
    doc_employer_code: np.ndarray,
    min_employers: int,
) -> np.ndarray:
    """Hashes of blocks seen in ads with at least `min_titles` distinct title codes or at least
    `min_employers` distinct employer codes (sorted)."""
    if len(block_hash) == 0:
        return np.zeros(0, dtype=np.uint64)
    found = []
    block_hash = np.asarray(block_hash, dtype=np.uint64)
    for codes, least in ((doc_title_code, min_titles), (doc_employer_code, min_employers)):
        # Distinct (block, code) by one sort, then codes per block (numpy: a single ad's check
        # would pay pandas' fixed cost per call).
        code = np.asarray(codes)[block_doc]
        order = np.lexsort((code, block_hash))
        block, code = block_hash[order], code[order]
        block = block[np.r_[True, (block[1:] != block[:-1]) | (code[1:] != code[:-1])]]
        starts = np.flatnonzero(np.r_[True, block[1:] != block[:-1]])
        found.append(block[starts][np.diff(np.r_[starts, len(block)]) >= least])
    return merge_block_sets(*found)


def core_word_mask(tokens: Tokens, *boilerplate: np.ndarray) -> np.ndarray:
    """True for every word that is not inside a block of the (sorted) boilerplate sets."""
    return ~in_block_sets(tokens.block_hash, *boilerplate)[tokens.word_block]


def in_block_sets(blocks: np.ndarray, *sets: np.ndarray) -> np.ndarray:
    """Per block hash, whether one of the sorted `sets` holds it (their union, without building it:
    an index's boilerplate is ~1.4 million blocks at 1,000,000 ads, a copy per union)."""
    found = np.zeros(len(blocks), dtype=bool)
    for known in sets:
        found |= sorted_member(blocks, known)
    return found


def merge_block_sets(*sets: np.ndarray) -> np.ndarray:
    """Sorted union of several block-hash arrays (`sorted_union`: an index's learnt boilerplate grows
    with it, ~1 block per ad, and numpy 2's hash-based `np.unique` takes ~0.6 s on a million)."""
    return sorted_union(*(np.asarray(s, dtype=np.uint64) for s in sets))
