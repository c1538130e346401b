"""The fast paths of `prepare` give exactly what the plain numpy / per-text forms they replaced gave
(kept here as references), on every bundled ad (issue #13's speed-up of the evidence steps)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobdedup.features.kernels import kept_per_doc
from jobdedup.features.shingle_sets import ShingleSets, sorted_member, sorted_unique
from jobdedup.pipeline.clean import (
    _WIDGET_HEADING,
    _WIDGET_HEADING_WORDS,
    _WIDGET_HINT_WORDS,
    kernel_texts_utf8,
    may_hold_widget_heading,
    text_for_kernel,
)
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


def _reference_kernel_texts(texts: list[str]) -> list[bytes]:
    return [text_for_kernel(text).encode("utf-8", "surrogatepass") for text in texts]


def test_kernel_texts_are_those_of_text_for_kernel(bundled_ads: pd.DataFrame):
    texts = bundled_ads["description"].fillna("").tolist()
    assert kernel_texts_utf8(texts) == _reference_kernel_texts(texts)
    flagged = may_hold_widget_heading([t.encode("utf-8", "surrogatepass") for t in texts])
    assert 0 < flagged.sum() < len(texts) / 10


def test_every_heading_word_sequence_holds_a_hint_word():
    for sequence in _WIDGET_HEADING_WORDS:
        assert set(sequence.split()) & set(_WIDGET_HINT_WORDS), sequence


@pytest.mark.parametrize(
    "heading",
    ["Weitere IT Jobs in Graz", "ALLE 1.234 JOBS ANZEIGEN", "Ähnliche Stellenangebote", "Similar jobſ:",
     "People also viewed", "Jobs you may be İnterested in", "jobs you may LIKE", "Vergelij\u212abare vacatures",
     "Offres d'emploi similaires"],
)  # fmt: skip
def test_headings_in_any_case_are_found_and_cut(heading: str):
    text = "We are hiring an engineer in Graz.\n" * 3 + heading + "\nOther job at Other employer"
    assert _WIDGET_HEADING.search(text) is not None
    assert may_hold_widget_heading([text.encode()]).tolist() == [True]
    assert kernel_texts_utf8([text]) == _reference_kernel_texts([text]) != [text.encode()]


# Texts made of heading words in any case, the code points Python's re.I matches to their letters
# ("ſ", the Kelvin sign, "İ", "ı"), separators, markup, entities and a lone surrogate.
_PIECES = st.sampled_from(
    ["weitere", "Jobs", "JOBS", "jobſ", "in", "Alle", "12", "anzeigen", "Ähnliche", "ähnliche", "Stellenangebote",
     "see this and", "Similar", "people", "also", "viewed", "you", "may", "be", "İnterested", "ınterested", "like",
     "vergelij\u212abare", "vacatures", "offres", "d'emploi", "similaires", "word", "x" * 40, " ", "  ", "\n", ".",
     ":", "\u00a0", "<b>", "</p>", "&amp;", "&auml;", "\ud800"]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(_PIECES, max_size=30).map(" ".join), min_size=1, max_size=5))
def test_widget_prefilter_misses_no_heading(texts: list[str]):
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    may = may_hold_widget_heading(encoded)
    for text, flagged in zip(texts, may):
        assert flagged or _WIDGET_HEADING.search(text) is None
    assert kernel_texts_utf8(texts) == _reference_kernel_texts(texts)


def test_kept_words_per_document_are_those_of_the_cumulative_sum(bundled_tokens: Tokens):
    keep = np.random.default_rng(1).random(len(bundled_tokens.word_hash)) < 0.6
    kept_before = np.zeros(len(keep) + 1, dtype=np.int64)
    np.cumsum(keep, out=kept_before[1:])
    assert np.array_equal(kept_per_doc(keep, bundled_tokens.doc_ptr), np.diff(kept_before[bundled_tokens.doc_ptr]))
