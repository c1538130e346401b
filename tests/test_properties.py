"""Property-based tests (hypothesis) for cleaning, field normalisers, shingling and sketching.

Arbitrary Unicode never raises; the same text always gives the same result; an ad is always its own
duplicate (MinHash estimate 1 with itself, exact Jaccard 1 with a copy). ``max_examples`` is kept
modest so the file runs in a few seconds.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jobdedup.features.fields import FIELD_COLUMNS, normalize_fields
from jobdedup.features.normalize import (
    extract_domains,
    extract_emails,
    extract_phones,
    location_city,
    normalize_company,
    normalize_location,
    normalize_occupation,
    normalize_text_key,
    normalize_title,
)
from jobdedup.features.pairs import FEATURES, build_pair_features
from jobdedup.pipeline.clean import (
    clean_description,
    clean_descriptions,
    html_to_text,
    normalize_unicode,
    split_blocks,
)
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.io import validate_ads
from jobdedup.pipeline.prepare import prepare_batch
from jobdedup.pipeline.sketch import EMPTY_SIGNATURE_VALUE, WORD, minhash_signatures, shingle_sets, tokenize

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONFIG = Config(show_progress=False)
NO_BOILERPLATE = np.zeros(0, dtype=np.uint64)

# Any Unicode (surrogates cannot be in a Python str read from a file, so they are left out).
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
MARKS = (
    "\u200b\u200c\u200d\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u061c\ufeff\u00ad"
)
# Text made of pieces a job ad really has: words in several scripts, marks, emoji, markup, entities.
PIECES = st.sampled_from(
    [
        "nurse",
        "Engineer",
        "Straße",
        "İstanbul",
        "разработчик",
        "Λογιστής",
        "软件工程师",
        "محاسب",
        "מפתח",
        "ﬁnance",
        "１２３",
        "€45,000",
        "😀",
        "👍🏽",
        "🚀",
        "<p>",
        "</p>",
        "<br/>",
        "<li>",
        "&amp;",
        "&nbsp;",
        "<script>x()</script>",
        "<style>p{}</style>",
        "**bold**",
        "\\-",
        "\n",
        "\t",
        " ",
        ".",
        ",",
        "-",
        "•",
        *MARKS,
    ]
)
AD_TEXT = st.one_of(ANY_TEXT, st.lists(PIECES, max_size=60).map("".join))
FIELD = st.one_of(st.none(), AD_TEXT)

NORMALISERS = [
    normalize_text_key,
    normalize_title,
    normalize_company,
    normalize_occupation,
    normalize_location,
    location_city,
    extract_emails,
    extract_phones,
    extract_domains,
]


# --------------------------------------------------------------------------------------------------
# cleaning


@SETTINGS
@given(AD_TEXT)
def test_cleaning_any_text_gives_text_and_is_repeatable(text):
    cleaned = clean_description(text)
    assert isinstance(cleaned, str)
    assert cleaned == clean_description(text)
    assert isinstance(html_to_text(text), str)
    assert all(block and "\n" not in block for block in split_blocks(cleaned))


@SETTINGS
@given(AD_TEXT)
def test_cleaned_text_has_no_invisible_marks_and_no_upper_case(text):
    cleaned = clean_description(text)
    assert not set(cleaned) & set(MARKS)
    assert normalize_unicode(cleaned) == cleaned.casefold() or not cleaned


@SETTINGS
@given(
    st.lists(st.text(alphabet=st.sampled_from("abc xyz"), min_size=1, max_size=12), min_size=1, max_size=8),
    st.lists(st.sampled_from(MARKS), min_size=1, max_size=5),
)
def test_invisible_marks_do_not_change_the_words(words, marks):
    text = " ".join(words)
    marked = "".join(ch + (marks[i % len(marks)] if i % 3 == 0 else "") for i, ch in enumerate(text))
    assert _words(clean_description(marked)) == _words(clean_description(text))


def _words(cleaned: str) -> list[list[str]]:
    """What sketching sees of a cleaned text: the words of each block."""
    return [WORD.findall(block) for block in split_blocks(cleaned)]


@SETTINGS
@given(st.lists(st.one_of(st.none(), AD_TEXT), max_size=8))
def test_clean_descriptions_keeps_every_row(values):
    series = pd.Series(values, dtype=object, index=pd.RangeIndex(10, 10 + len(values)))
    cleaned = clean_descriptions(series)
    assert cleaned.index.equals(series.index)
    assert all(isinstance(v, str) for v in cleaned)


# --------------------------------------------------------------------------------------------------
# field normalisers


@SETTINGS
@given(st.lists(FIELD, min_size=1, max_size=8))
def test_normalisers_accept_any_text_keep_the_index_and_missing_stays_missing(values):
    series = pd.Series(values, dtype=object, index=pd.RangeIndex(5, 5 + len(values)))
    for normalise in NORMALISERS:
        out = normalise(series)
        assert out.index.equals(series.index), normalise.__name__
        assert out[series.isna()].isna().all(), normalise.__name__
        again = normalise(series)
        assert out.fillna("\x00NA").astype(object).tolist() == again.fillna("\x00NA").astype(object).tolist()


@SETTINGS
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                c: FIELD
                for c in (
                    "title",
                    "company",
                    "location",
                    "contact",
                    "url",
                    "occupation",
                    "posted_at",
                    "source",
                )
            }
        ),
        min_size=1,
        max_size=5,
    )
)
def test_normalize_fields_accepts_any_ads(rows):
    ads = pd.DataFrame(rows)
    ads["description"] = ads["title"]
    fields = normalize_fields(ads)
    assert list(fields.columns) == FIELD_COLUMNS and fields.index.equals(ads.index)


# --------------------------------------------------------------------------------------------------
# shingling and sketching


@SETTINGS
@given(st.lists(AD_TEXT, min_size=1, max_size=6), st.integers(1, 10), st.integers(0, 2**31))
def test_same_text_gives_the_same_signature(texts, k, seed):
    cleaned = [clean_description(t) for t in texts]
    doubled = cleaned + cleaned  # every text twice, in one batch
    tokens = tokenize(doubled)
    sets = shingle_sets(tokens.word_hash, tokens.doc_ptr, k)
    signatures = minhash_signatures(sets, 12, seed)
    n = len(cleaned)
    assert np.array_equal(signatures[:n], signatures[n:])
    again = minhash_signatures(
        shingle_sets(tokenize(cleaned).word_hash, tokenize(cleaned).doc_ptr, k), 12, seed
    )
    assert np.array_equal(again, signatures[:n])
    has_words = tokens.words_per_doc[:n] > 0
    assert np.array_equal(sets.sizes[:n] > 0, has_words)  # any word gives at least one shingle
    assert (signatures[:n][~has_words] == EMPTY_SIGNATURE_VALUE).all()


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(AD_TEXT, FIELD)
def test_an_ad_is_its_own_duplicate(text, title):
    ads = validate_ads(
        pd.DataFrame({"ad_id": ["a", "copy"], "description": [text, text], "title": [title, title]})
    )
    batch = prepare_batch(ads, CONFIG, NO_BOILERPLATE)
    features = build_pair_features(batch.inputs, np.array([0, 0]), np.array([0, 1]))
    assert list(features.columns) == FEATURES and len(features) == 2
    if batch.inputs.words[0] > 0:
        assert (features["minhash_core"] == 1.0).all()
        assert (features["jaccard_full"] == 1.0).all() and (features["jaccard_core"] == 1.0).all()
        assert (features["containment_full_min"] == 1.0).all()
    else:  # no text: the text features cannot be computed, they are NaN, never a fake 0 or 1
        assert features[["minhash_core", "jaccard_full", "jaccard_core"]].isna().all().all()
    assert np.array_equal(batch.inputs.signatures[0], batch.inputs.signatures[1])
    assert batch.status.iloc[0] == batch.status.iloc[1]
