"""The fast paths of `prepare` give exactly what the plain numpy / per-text forms they replaced gave
(kept here as references), on every bundled ad (issue #13's speed-up of the evidence steps)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobdedup.features import fields as fields_module
from jobdedup.features.fields import normalize_fields
from jobdedup.features.kernels import kept_per_doc
from jobdedup.features.normalize import FEW_VALUES, distinct, district_town, short_town_name
from jobdedup.features.pairs import build_pair_features
from jobdedup.features.requisitions import requisition_numbers
from jobdedup.features.salaries import salary_bands
from jobdedup.features.shingle_sets import ShingleSets, sorted_member, sorted_unique
from jobdedup.pipeline.boilerplate import merge_block_sets
from jobdedup.pipeline.clean import (
    _WIDGET_HEADING,
    _WIDGET_HEADINGS,
    _WIDGET_HINT_WORDS,
    kernel_texts_utf8,
    may_hold_widget_heading,
    text_for_kernel,
)
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.evidence import (
    REQUISITION_LOOKAHEAD,
    _generic_hashes,
    _label_hashes,
    _name_words,
    area_words,
    may_name_requisition,
    mention_sets,
    place_words,
)
from jobdedup.pipeline.evidence_kernels import WordTable
from jobdedup.pipeline.io import read_ads
from jobdedup.pipeline.io.contract import STRING
from jobdedup.pipeline.prepare import (
    _searched_texts,
    _status,
    _texts_of,
    name_vocabulary,
    name_words,
    prepare_again,
    prepare_batch,
)
from jobdedup.pipeline.sketch import tokenize
from jobdedup.pipeline.tokenizer import Tokens
from tests.conftest import DATA

SET_FIELDS = (
    "full",
    "core",
    "numbers",
    "employer_words",
    "place_words",
    "area_words",
    "title_words",
    "mentions",
)
"""The shingle and word sets of `PairInputs` that two ways of preparing must make alike."""


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


@pytest.mark.slow
@pytest.mark.parametrize("kept", ["all", "some"])
def test_mentions_are_those_of_the_numpy_form(bundled_ads: pd.DataFrame, bundled_tokens: Tokens, kept: str):
    names = name_vocabulary(bundled_ads)
    keep = None if kept == "all" else np.random.default_rng(0).random(len(bundled_tokens.word_hash)) < 0.7
    fast, reference = (
        mention_sets(bundled_tokens, names, keep),
        _reference_mention_sets(bundled_tokens, names, keep),
    )
    assert len(fast.values) > 1000
    assert np.array_equal(fast.indptr, reference.indptr) and np.array_equal(fast.values, reference.values)
    empty = mention_sets(bundled_tokens, np.zeros(0, np.uint32), keep)
    assert len(empty) == bundled_tokens.n_docs and not len(empty.values)
    # A vocabulary in parts (an index's names with their kept table, and a batch's own) is their union.
    shared, own = names[::3], np.setdiff1d(names, names[::3])[::2]
    split = mention_sets(bundled_tokens, (WordTable(shared), own), keep)
    whole = _reference_mention_sets(bundled_tokens, sorted_unique(np.concatenate([shared, own])), keep)
    assert np.array_equal(split.indptr, whole.indptr) and np.array_equal(split.values, whole.values)


_ODD_ADS = pd.DataFrame(
    {
        "ad_id": ["empty", "html", "hebrew", "chinese", "none", "fields"],
        "description": ["", "<p>Senior <b>Python</b> developer</p><ul><li>Berlin &amp; remote</li></ul>",
                        "מפתח תוכנה בכיר בתל אביב, משרה מלאה", "高级软件工程师 北京 全职", None, "   "],
        "title": [None, "Python Developer", "מפתח תוכנה", "软件工程师", "Nurse", "Welder"],
        "company": [None, "ACME GmbH", "נתיבי ישראל", "北京科技", "NHS", None],
        "location": [None, "Berlin", "Tel Aviv", None, "Filton, Bristol", "Leeds"],
    }
)  # fmt: skip


def test_prepared_batches_with_known_sets_in_parts_are_those_with_their_unions(bundled_ads: pd.DataFrame):
    """An index check passes the known boilerplate and the name vocabulary in parts (the index's,
    kept between checks, and the batch's own): the prepared inputs are those of the unions."""
    ads = pd.concat([bundled_ads.iloc[:400], _ODD_ADS], ignore_index=True)
    config = Config(jobs=1, show_progress=False)
    tokens = tokenize(ads["description"].fillna("").tolist())
    blocks = sorted_unique(tokens.block_hash)
    known, learnt = blocks[::5], blocks[1::7]
    names = name_vocabulary(ads)
    shared, own = names[::2], names[1::2]
    whole = prepare_batch(ads, config, merge_block_sets(known, learnt), names=names, keep_blocks=True)
    parts = prepare_batch(ads, config, (known, learnt), names=(WordTable(shared), own), keep_blocks=True)
    for name in SET_FIELDS:
        a, b = getattr(whole.inputs, name), getattr(parts.inputs, name)
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.values, b.values), name
    assert np.array_equal(whole.inputs.signatures, parts.inputs.signatures)
    assert np.array_equal(whole.inputs.core_words, parts.inputs.core_words)
    pd.testing.assert_frame_equal(whole.inputs.fields, parts.inputs.fields)
    pd.testing.assert_frame_equal(whole.core_blocks, parts.core_blocks)
    assert np.array_equal(whole.batch_boilerplate, parts.batch_boilerplate)
    assert len(whole.inputs.mentions.values) > 100
    assert not np.array_equal(whole.inputs.core_words, tokens.words_per_doc)  # some known blocks cut


@pytest.mark.parametrize("chunk_size", [1_000, 150])
def test_prepared_again_is_prepared_anew(bundled_ads: pd.DataFrame, chunk_size: int):
    """Ads prepared again with more boilerplate (an index batch's blocks learnt from the stored
    sightings) are those `prepare_batch` gives them, slice by slice, from their first inputs."""
    ads = pd.concat([bundled_ads.iloc[:400], _ODD_ADS], ignore_index=True)
    config = Config(jobs=1, show_progress=False, chunk_size=chunk_size)
    names = name_vocabulary(ads)
    first = prepare_batch(ads, config, np.zeros(0, np.uint64), names=names, keep_blocks=True)
    blocks = sorted_unique(first.core_blocks["block"].to_numpy())
    known = (first.batch_boilerplate, blocks[::3])
    again = prepare_again(ads["description"], first.inputs, config, known, names)
    anew = prepare_batch(ads, config, known, names=names).inputs
    for name in SET_FIELDS:
        a, b = getattr(again, name), getattr(anew, name)
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.values, b.values), name
    assert np.array_equal(again.signatures, anew.signatures)
    assert np.array_equal(again.core_words, anew.core_words)
    assert np.array_equal(again.words, anew.words)
    pd.testing.assert_frame_equal(again.fields, anew.fields)
    assert not np.array_equal(again.core_words, first.inputs.core_words)  # the new blocks cut some


def _reference_kernel_texts(texts: list[str]) -> list[bytes]:
    return [text_for_kernel(text).encode("utf-8", "surrogatepass") for text in texts]


def test_kernel_texts_are_those_of_text_for_kernel(bundled_ads: pd.DataFrame):
    texts = bundled_ads["description"].fillna("").tolist()
    assert kernel_texts_utf8(texts) == _reference_kernel_texts(texts)
    flagged = may_hold_widget_heading([t.encode("utf-8", "surrogatepass") for t in texts])
    assert 0 < flagged.sum() < len(texts) / 5  # (15 % of the bundled ads hold a hint word)


def test_every_heading_holds_a_hint_word():
    for heading in _WIDGET_HEADINGS:
        assert any(word in heading for word in _WIDGET_HINT_WORDS), heading


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
    assert np.array_equal(
        kept_per_doc(keep, bundled_tokens.doc_ptr), np.diff(kept_before[bundled_tokens.doc_ptr])
    )


def _chunks(frame: pd.DataFrame) -> list[pd.DataFrame]:
    """Consecutive slices of `frame` of 1, 2, ..., `FEW_VALUES`, 1, 2, ... rows (a service's checks)."""
    chunks, start, size = [], 0, 1
    while start < len(frame):
        chunks.append(frame.iloc[start : start + size])
        start, size = start + size, size % FEW_VALUES + 1
    return chunks


# Every source column of the fields: missing, empty and blank values, markup, other scripts,
# obfuscated and repeated contacts, odd URLs and dates; some values repeat within a check.
_FIELD_EDGE_ADS = pd.DataFrame(
    {
        "title": [None, "", "  ", "<b>Sr. Data Engineer</b> (m/w/d)", "מפתח/ת תוכנה", "高级软件工程师",
                  "Nurse - Remote", "Nurse - Remote", "Pflegefachkraft (m/w/d) 12345", "DEV &amp; OPS"],
        "company": [None, "", "ACME GmbH", "ACME Ltd", 'קומבלק בע"מ', "北京科技", "Indeed", "NHS", "NHS", "&lt;x&gt;"],
        "location": [None, "", "Filton, Bristol", "Amsterdam, NH, NL", "תל אביב", "北京", "Remote", "Leeds",
                     "Leeds", "Maidstone, Kent"],
        "occupation": [None, "", "IT & Telecoms Jobs", None, "הנדסה", "工程", "Healthcare", None, None, " "],
        "contact": [None, "", "jobs@acme.de, +49 30 1234567", "hr(at)acme(dot)co.uk", "03-1234567", None,
                    "www.acme.com", "", "0113 496 0000", "\\+31 348 123 456"],
        "url": [None, "", "https://www.adzuna.co.uk/jobs/details/57?utm_source=6", "http://[::1",
                "https://il.indeed.com/viewjob?jk=1", "not a url", "https://careers.acme.co.uk/job/1",
                "https://careers.acme.co.uk/job/1", "karriere.at/job/9", None],
        "description": [None, "", "<p>Call <b>0044 20 7946 0958</b> or mail a@b.nl</p>", "Apply: jobs@acme.de",
                        "צור קשר: 052-1234567", "联系 13800138000", "\u200b", "Email nurse@nhs.net",
                        "Email nurse@nhs.net", "Tel. 0113 496 0000 &amp; www.leeds.gov.uk"],
        "posted_at": [None, "", "2024-01-02", "2024-01-02T10:30:00Z", "not a date", "02/01/2024", None,
                      "2024-13-45", "2024-01-02 10:30", ""],
        "source": [None, "", "indeed", "adzuna", "alljobs.co.il", "karriere.at", "INDEED", "nhs jobs", None, " "],
    }
)  # fmt: skip


def _assert_same_fields(fast: pd.DataFrame, columns: pd.DataFrame) -> None:
    """Equal frames, the same missing value (`pd.NA` or None) in every object column and the same
    Arrow type under every text column: the frame comparison takes one for the other."""
    pd.testing.assert_frame_equal(fast, columns)
    for name in columns.columns[columns.dtypes == object]:
        assert list(map(type, fast[name])) == list(map(type, columns[name])), name
    for name in columns.columns[columns.dtypes == STRING]:
        assert pa.array(fast[name].array).type == pa.array(columns[name].array).type, name


@pytest.mark.slow
@pytest.mark.parametrize("read_back", [False, True])
def test_fields_of_1_to_16_ads_are_those_of_the_column_path(
    bundled_ads: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, read_back: bool
):
    """`normalize_fields` of up to `FEW_VALUES` ads in plain Python gives what its column path
    gives the same ads: as validated (string columns) and as read back from an index (object
    columns holding None)."""
    ads = pd.concat([_FIELD_EDGE_ADS, bundled_ads.iloc[: 1500 if read_back else None]], ignore_index=True)
    if read_back:
        ads = ads.astype(object).where(ads.notna(), None)
    chunks = _chunks(ads)
    fast = [normalize_fields(chunk) for chunk in chunks]
    monkeypatch.setattr(fields_module, "FEW_VALUES", 0)
    for few, chunk in zip(fast, chunks):
        _assert_same_fields(few, normalize_fields(chunk))
    assert pd.concat(fast)["phones"].notna().sum() > 50 and pd.concat(fast)["town"].notna().sum() > 20


@pytest.mark.slow
def test_fields_of_a_few_ads_are_those_of_the_whole_batch(bundled_ads: pd.DataFrame):
    """The normalisers' few-value paths (Python's `re` for the contact pre-checks, ...) give each
    ad the fields the whole-column paths give it in a large batch."""
    ads = pd.concat([bundled_ads, _ODD_ADS, _FIELD_EDGE_ADS], ignore_index=True)
    whole = normalize_fields(ads)
    _assert_same_fields(pd.concat([normalize_fields(chunk) for chunk in _chunks(ads)]), whole)
    assert whole["emails"].notna().sum() > 50 and whole["phones"].notna().sum() > 50


@pytest.mark.slow
def test_requisitions_and_salaries_of_a_few_ads_are_those_of_the_whole_batch(bundled_ads: pd.DataFrame):
    """A few titles, texts and URLs are searched with Python's `re`, many with pandas' `str.contains`."""
    columns = ("title", "description", "url")
    ads = pd.concat([bundled_ads, _ODD_ADS, _FIELD_EDGE_ADS], ignore_index=True)
    ads = ads.astype({c: STRING for c in columns})  # as validated
    whole = requisition_numbers(ads["title"], ads["description"], ads["url"])
    parts = [requisition_numbers(*(chunk[c] for c in columns)) for chunk in _chunks(ads)]
    pd.testing.assert_series_equal(pd.concat(parts), whole)
    assert whole.notna().sum() > 20
    bands = salary_bands(ads["description"])
    parts = [salary_bands(chunk["description"]) for chunk in _chunks(ads)]
    pd.testing.assert_series_equal(pd.concat(parts), bands)
    assert bands.notna().sum() > 20


@pytest.mark.slow
def test_requisitions_of_the_searched_texts_are_those_of_the_texts_where_searched(bundled_ads: pd.DataFrame):
    """A few ads' texts all searched (or none: no texts given) find the requisition numbers the
    texts masked by `where` gave; chunks of 1..16 ads, as validated, with their own masks and with
    all, none and every other text searched."""
    ads = pd.concat([bundled_ads.iloc[:1200], _ODD_ADS, _FIELD_EDGE_ADS], ignore_index=True)
    ads = ads.astype({c: STRING for c in ("title", "description", "url")})
    masks_seen = set()
    for chunk in _chunks(ads):
        tokens = tokenize(chunk["description"].fillna("").tolist())
        texts = chunk["description"]
        for searched in (may_name_requisition(tokens), np.ones(len(chunk), bool), np.zeros(len(chunk), bool),
                         np.arange(len(chunk)) % 2 == 0):  # fmt: skip
            found = requisition_numbers(chunk["title"], _searched_texts(texts, searched), chunk["url"])
            reference = requisition_numbers(chunk["title"], texts.where(searched), chunk["url"])
            pd.testing.assert_series_equal(found, reference)
            masks_seen.add((searched.all(), searched.any()))
    assert masks_seen == {(True, True), (False, True), (False, False)}
    assert requisition_numbers(ads["title"], ads["description"], ads["url"]).notna().sum() > 20


@pytest.mark.parametrize("column", ["company", "title", "location"])
def test_name_words_of_1_to_16_ads_are_those_of_the_numpy_path(
    bundled_ads: pd.DataFrame, monkeypatch: pytest.MonkeyPatch, column: str
):
    """A few ads' name words, sorted out in plain Python, equal those of the numpy path: the
    bundled ads' and odd names (missing, blank, markup, other scripts, stop words only) in chunks
    of 1..16 ads, as a Series and as an array holding None."""
    from jobdedup.pipeline import evidence

    odd = pd.Series(["GmbH", "the and", None, None, "Data Data"])
    names = pd.concat([_FIELD_EDGE_ADS[column], _ODD_ADS[column], bundled_ads[column].iloc[:1500], odd])
    names = names.reset_index(drop=True)
    chunks = [*_chunks(names), names.iloc[-3:-1]]  # (-3:-1: only missing names)
    values = [part for chunk in chunks for part in (chunk, chunk.to_numpy(dtype=object, na_value=None))]
    stops = (evidence._generic_hashes(), evidence._not_employer_hashes(), evidence._title_filler_hashes())
    fast = [_name_words(part, stop) for part in values for stop in stops]
    monkeypatch.setattr(evidence, "FEW_VALUES", 0)
    reference = [_name_words(part, stop) for part in values for stop in stops]
    for few, many in zip(fast, reference):
        assert np.array_equal(few.indptr, many.indptr) and few.indptr.dtype == many.indptr.dtype
        assert np.array_equal(few.values, many.values) and few.values.dtype == many.values.dtype
    assert sum(len(few.values) for few in fast) > 1000 and any(not len(few.values) for few in fast)


def _reference_place_words(locations: pd.Series, cities: pd.Series) -> ShingleSets:
    codes, once = distinct(locations)
    first = np.array(
        [None, *(short_town_name(text.split(",")[0]) if isinstance(text, str) else None for text in once)]
    )
    named = np.where(cities.notna().to_numpy(), first[codes + 1], None)
    return _name_words(pd.Series(named, index=locations.index, dtype=object), _generic_hashes())


def _reference_area_words(locations: pd.Series) -> ShingleSets:
    towns = district_town(locations).map(short_town_name, na_action="ignore")
    return _name_words(towns, _generic_hashes())


@pytest.mark.parametrize("read_back", [False, True])
def test_place_and_area_words_are_those_of_series(bundled_ads: pd.DataFrame, read_back: bool):
    """The place and area words made from arrays equal those made from Series (`notna`,
    `district_town`, `short_town_name`), in chunks of 1..16 ads and all at once; raw locations as
    validated and as read back (object, None where missing), with the normalised cities."""
    ads = pd.concat([_FIELD_EDGE_ADS, _ODD_ADS, bundled_ads.iloc[:1500]], ignore_index=True)
    locations = ads["location"].astype(STRING)
    if read_back:
        locations = locations.astype(object).where(locations.notna(), None)
    cities = normalize_fields(ads)["city"]
    for rows in [slice(None), *(chunk.index for chunk in _chunks(ads))]:
        part, city = locations[rows].reset_index(drop=True), cities[rows].reset_index(drop=True)
        for fast, reference in ((place_words(part, city), _reference_place_words(part, city)),
                                (area_words(part), _reference_area_words(part))):  # fmt: skip
            assert np.array_equal(fast.indptr, reference.indptr)
            assert np.array_equal(fast.values, reference.values) and fast.values.dtype == np.uint32
    assert (area_words(locations).sizes > 0).sum() > 20
    assert (place_words(locations, cities).sizes > 0).sum() > 500


def _reference_texts_of(column: pd.Series) -> list[str | None]:
    return list(column.astype(object).where(lambda t: t.notna(), None))


@pytest.mark.parametrize("dtype", [STRING, "str", object])
def test_texts_for_the_tokeniser_are_those_of_astype_and_where(bundled_ads: pd.DataFrame, dtype: object):
    texts = pd.concat(
        [pd.Series([None, float("nan"), pd.NA, "", "<p>x</p>"], dtype=object), bundled_ads["description"]],
        ignore_index=True,
    ).astype(dtype)
    found = list(_texts_of(texts, block=1000))
    assert found == _reference_texts_of(texts) and found[:3] == [None, None, None]


def _reference_status(words: np.ndarray, fields: pd.DataFrame) -> pd.Series:
    columns = ("title", "company", "emails", "phones")
    has_fields = np.logical_or.reduce([fields[c].notna().to_numpy() for c in columns])
    fields_only = np.where(has_fields, "no_text:fields_only", "no_text_no_fields:not_compared")
    return pd.Series(np.where(words > 0, "ok", fields_only), index=fields.index, dtype=object)


def test_status_is_that_of_the_columns_notna(bundled_ads: pd.DataFrame):
    ads = pd.concat([bundled_ads.iloc[:300], _ODD_ADS, _FIELD_EDGE_ADS], ignore_index=True)
    fields = normalize_fields(ads)
    words = np.random.default_rng(2).integers(0, 2, len(fields))
    for part in [fields, *_chunks(fields)]:
        status = _status(words[part.index], part)
        pd.testing.assert_series_equal(status, _reference_status(words[part.index], part))
    assert set(_status(words, fields)) == {"ok", "no_text:fields_only", "no_text_no_fields:not_compared"}


def test_prepared_with_the_vocabularys_own_words_is_prepared_without(bundled_ads: pd.DataFrame):
    """The employer and area words `name_words` made for the vocabulary, handed to `prepare_batch`
    (slice by slice), are those preparing the ads computes itself."""
    ads = pd.concat([bundled_ads.iloc[:400], _ODD_ADS], ignore_index=True)
    config = Config(jobs=1, show_progress=False, chunk_size=150)
    names, own = name_words(ads)
    assert np.array_equal(names, name_vocabulary(ads))
    given = prepare_batch(ads, config, np.zeros(0, np.uint64), names=names, own_words=own).inputs
    computed = prepare_batch(ads, config, np.zeros(0, np.uint64), names=names).inputs
    for name in ("employer_words", "area_words", "mentions", "core"):
        a, b = getattr(given, name), getattr(computed, name)
        assert np.array_equal(a.indptr, b.indptr) and np.array_equal(a.values, b.values), name
    assert len(given.employer_words.values) > 100 and len(given.area_words.values) > 0


def test_core_blocks_are_those_drop_duplicates_keeps(bundled_tokens: Tokens):
    from jobdedup.pipeline.boilerplate import in_block_sets
    from jobdedup.pipeline.prepare import _core_blocks

    known = (sorted_unique(bundled_tokens.block_hash)[::5],)
    core = ~in_block_sets(bundled_tokens.block_hash, *known)
    reference = pd.DataFrame(
        {"doc": bundled_tokens.block_doc[core].astype(np.int64), "block": bundled_tokens.block_hash[core]}
    ).drop_duplicates(ignore_index=True)
    pd.testing.assert_frame_equal(_core_blocks(bundled_tokens, known), reference)
    assert len(reference) < core.sum()  # some blocks repeat within a text


@pytest.mark.slow
def test_features_of_a_few_pairs_are_those_of_many(bundled_ads: pd.DataFrame):
    """A service's check scores a few pairs among a few ads: the field features' plain-Python paths
    for up to `FEW_VALUES` ads give each labelled natural pair the features the column paths give
    it among all the natural ads."""
    ads = read_ads(DATA / "natural_train_ads.parquet")
    pairs = pd.read_csv(DATA / "natural_train_pairs.csv", dtype=str)
    inputs = prepare_batch(ads, Config(jobs=1, show_progress=False), np.zeros(0, np.uint64)).inputs
    position = pd.Series(np.arange(len(ads)), index=ads["ad_id"])
    left = position[pairs["ad_id_a"]].to_numpy()
    right = position[pairs["ad_id_b"]].to_numpy()
    whole = build_pair_features(inputs, left, right)
    step = 5  # pairs at a time: at most 10 ads, below the few-value limit
    parts = pd.concat(
        [
            build_pair_features(inputs, left[i : i + step], right[i : i + step])
            for i in range(0, len(left), step)
        ],
        ignore_index=True,
    )
    pd.testing.assert_frame_equal(parts, whole)
    for name in ("email_match", "domain_match", "requisition_match", "employer_conflict", "title_level_differs",
                 "location_conflict", "title_equal"):  # fmt: skip
        assert set(whole[name].dropna()) == {0.0, 1.0}, name
