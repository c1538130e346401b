"""The fast paths of `prepare` give exactly what the plain numpy / per-text forms they replaced gave
(kept here as references), on every bundled ad (issue #13's speed-up of the evidence steps)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobdedup.features.kernels import kept_per_doc
from jobdedup.features.shingle_sets import ShingleSets, sorted_member, sorted_unique
from jobdedup.pipeline.evidence import (
    REQUISITION_LOOKAHEAD,
    _label_hashes,
    may_name_requisition,
    mention_sets,
)
from jobdedup.pipeline.prepare import name_vocabulary
from jobdedup.pipeline.sketch import tokenize
from jobdedup.pipeline.tokenizer import Tokens
from tests.conftest import DATA


def _reference_mention_sets(tokens: Tokens, names: np.ndarray, keep: np.ndarray | None) -> ShingleSets:
    hashes = tokens.word_hash.astype(np.uint32)
    chosen = sorted_member(hashes, names) & (True if keep is None else keep)
    hit = np.flatnonzero(chosen)
    doc = np.searchsorted(tokens.doc_ptr, hit, side="right") - 1
    rows = [sorted_unique(hashes[hit[doc == d]]).tolist() for d in range(tokens.n_docs)]
    return ShingleSets.from_lists(rows)


def _reference_may_name_requisition(tokens: Tokens) -> np.ndarray:
    hashes = tokens.word_hash.astype(np.uint32)
    label = np.flatnonzero(sorted_member(hashes, _label_hashes()))
    doc_of_word = np.searchsorted(tokens.doc_ptr, label, side="right") - 1
    flagged = np.zeros(tokens.n_docs, dtype=bool)
    for step in range(1, REQUISITION_LOOKAHEAD + 1):
        ahead = label + step
        inside = ahead < tokens.doc_ptr[doc_of_word + 1]
        number = np.zeros(len(label), dtype=bool)
        number[inside] = tokens.word_is_number[ahead[inside]]
        flagged[doc_of_word[number]] = True
    return flagged


@pytest.fixture(scope="module")
def bundled_ads() -> pd.DataFrame:
    files = ["train_ads", "test_ads", "natural_train_ads", "natural_test_ads"]
    return pd.concat([pd.read_parquet(DATA / f"{name}.parquet") for name in files], ignore_index=True)


@pytest.fixture(scope="module")
def bundled_tokens(bundled_ads: pd.DataFrame) -> Tokens:
    return tokenize(bundled_ads["description"].fillna("").tolist(), threads=2)


def test_requisition_candidates_are_those_of_the_numpy_form(bundled_tokens: Tokens):
    flagged = may_name_requisition(bundled_tokens)
    assert flagged.any() and not flagged.all()
    assert np.array_equal(flagged, _reference_may_name_requisition(bundled_tokens))


@pytest.mark.parametrize("kept", ["all", "some"])
def test_mentions_are_those_of_the_numpy_form(bundled_ads: pd.DataFrame, bundled_tokens: Tokens, kept: str):
    names = name_vocabulary(bundled_ads)
    keep = None if kept == "all" else np.random.default_rng(0).random(len(bundled_tokens.word_hash)) < 0.7
    fast, reference = mention_sets(bundled_tokens, names, keep), _reference_mention_sets(bundled_tokens, names, keep)
    assert len(fast.values) > 1000
    assert np.array_equal(fast.indptr, reference.indptr) and np.array_equal(fast.values, reference.values)
    empty = mention_sets(bundled_tokens, np.zeros(0, np.uint32), keep)
    assert len(empty) == bundled_tokens.n_docs and not len(empty.values)


def test_kept_words_per_document_are_those_of_the_cumulative_sum(bundled_tokens: Tokens):
    keep = np.random.default_rng(1).random(len(bundled_tokens.word_hash)) < 0.6
    kept_before = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    assert np.array_equal(kept_per_doc(keep, bundled_tokens.doc_ptr), np.diff(kept_before[bundled_tokens.doc_ptr]))
