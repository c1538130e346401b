"""Pair features: symmetric, NaN for unknown fields, overlap measures right."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.features.pairs import FEATURES, build_pair_features
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.prepare import prepare_batch

WORDS = [f"word{i}" for i in range(120)]


def _ads(rows):
    base = {
        "title": pd.NA,
        "company": pd.NA,
        "location": pd.NA,
        "occupation": pd.NA,
        "contact": pd.NA,
        "url": pd.NA,
        "posted_at": pd.NA,
        "source": pd.NA,
        "language": pd.NA,
    }
    return pd.DataFrame([{**base, **row} for row in rows])


def _features(rows, pairs):
    batch = prepare_batch(_ads(rows), Config(), np.zeros(0, dtype=np.uint64))
    left = np.array([p[0] for p in pairs])
    right = np.array([p[1] for p in pairs])
    return build_pair_features(batch.inputs, left, right)


def test_features_are_symmetric_in_the_pair():
    rows = [
        {
            "ad_id": "a",
            "description": " ".join(WORDS),
            "title": "Data Engineer",
            "location": "Leeds",
            "posted_at": "2024-01-01",
            "source": "indeed",
            "contact": "jobs@acme.co.uk",
        },
        {
            "ad_id": "b",
            "description": " ".join(WORDS[:60]),
            "title": "Senior Data Engineer",
            "location": "York",
            "posted_at": "2024-01-11",
            "source": "linkedin",
            "contact": "hr@acme.co.uk",
        },
    ]
    forward = _features(rows, [(0, 1)])
    backward = _features(rows, [(1, 0)])
    pd.testing.assert_frame_equal(forward, backward)
    assert list(forward.columns) == FEATURES


def test_snippet_is_contained_in_full_text():
    rows = [
        {"ad_id": "full", "description": " ".join(WORDS)},
        {"ad_id": "snip", "description": " ".join(WORDS[:40])},
    ]
    f = _features(rows, [(0, 1)]).iloc[0]
    assert f["containment_full_max"] == 1.0
    assert 0.3 < f["jaccard_full"] < 0.35  # 36 of 116 shingles


def test_missing_fields_are_nan_not_zero():
    rows = [{"ad_id": "a", "description": "x y z"}, {"ad_id": "b", "description": ""}]
    f = _features(rows, [(0, 1)]).iloc[0]
    for name in (
        "title_ratio",
        "company_equal",
        "location_conflict",
        "email_match",
        "date_gap_days",
        "same_source",
        "jaccard_full",
        "minhash_core",
    ):
        assert np.isnan(f[name]), name


def test_field_matches_and_date_gap():
    rows = [
        {
            "ad_id": "a",
            "description": "x",
            "company": "ACME Ltd",
            "contact": "Call +44 20 7946 0958",
            "location": "Filton, Bristol",
            "posted_at": "2024-03-01",
            "title": "Chef",
        },
        {
            "ad_id": "b",
            "description": "y",
            "company": "Acme Limited",
            "contact": "020 7946 0958",
            "location": "Bristol, South West England",
            "posted_at": "2024-03-04T10:00:00",
            "title": "Chef (m/w/d)",
        },
    ]
    f = _features(rows, [(0, 1)]).iloc[0]
    assert f["company_equal"] == 1.0 and f["phone_match"] == 1.0 and f["title_equal"] == 1.0
    assert f["location_conflict"] == 0.0
    assert 3.0 <= f["date_gap_days"] <= 3.5


def test_a_region_named_alone_conflicts_with_a_place_in_another_region(monkeypatch):
    """BeaconFire's template filed under "Florida" and under "Dallas County, TX", KNOWFINITY's under
    "Texas" and "New York": two states are two places, as two cities are; a city in the same state,
    a remote region or a country alone is no conflict. The column path (many ads) agrees."""
    import jobdedup.features.pairs as pairs_module

    locations = ["Florida, United States", "Dallas County, TX", "Texas, United States",
                 "New York, United States", "Remote, FL", "United States", "Munich, Bavaria, Germany",
                 "North Rhine-Westphalia, Germany"]  # fmt: skip
    rows = [{"ad_id": str(i), "description": "x", "title": "Data Engineer", "location": place}
            for i, place in enumerate(locations)]  # fmt: skip
    pairs = [(0, 1), (0, 2), (1, 2), (2, 3), (0, 3), (0, 4), (1, 4), (0, 5), (6, 7)]
    expected = [1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 1.0]
    assert _features(rows, pairs)["location_conflict"].tolist() == expected
    monkeypatch.setattr(pairs_module, "FEW_VALUES", 0)
    assert _features(rows, pairs)["location_conflict"].tolist() == expected


def test_two_districts_of_one_city_conflict_when_their_words_only_meet_out_of_order(monkeypatch):
    """Bee Recruitment's restaurant template filed under "North London, London South East" and
    under "East London, London, UK": "east" and "london" both stand in the first location, but not
    as "East London", so the two districts are two places, also when both texts name London (each
    names its own town). A district against its city, a location written again with more parts, or
    another town that a text names ("based in Bristol or London") is still no conflict. The column
    path agrees."""
    import jobdedup.features.pairs as pairs_module

    text = "A General Manager for our restaurant in London. Based in Bristol or London."
    locations = ["North London London South East", "East London, London, UK, Greater London, East London",
                 "East London London South East", "London, England, UK", "New York City, NY",
                 "New York, NY, United States", "Bristol"]  # fmt: skip
    rows = [{"ad_id": str(i), "description": text, "title": "General Manager", "location": place}
            for i, place in enumerate(locations)]  # fmt: skip
    pairs = [(0, 1), (0, 2), (1, 2), (1, 3), (4, 5), (6, 3), (6, 0)]
    expected = [1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert _features(rows, pairs)["location_conflict"].tolist() == expected
    monkeypatch.setattr(pairs_module, "FEW_VALUES", 0)
    assert _features(rows, pairs)["location_conflict"].tolist() == expected


def test_other_city_and_other_level_are_flagged():
    rows = [
        {"ad_id": "a", "description": "x", "title": "Senior Data Engineer", "location": "Manchester"},
        {"ad_id": "b", "description": "x", "title": "Data Engineer", "location": "Leeds, England, UK"},
    ]
    f = _features(rows, [(0, 1)]).iloc[0]
    assert f["location_conflict"] == 1.0 and f["title_level_differs"] == 1.0


def test_shared_items_of_many_ads_match_pair_by_pair():
    """The contact-match features of a batch (a vectorised look-up over every ad's items) are what
    comparing the two ads' items gives, with missing items and ads without any left out."""
    from jobdedup.features.pairs import _shared_item

    rng = np.random.default_rng(7)
    vocab = ["a@x.com", "b@y.com", "+441234567890", "acme.co.uk", "z"]
    cells = [None, (), ("a@x.com",), ("a@x.com", None), ("b@y.com", "z"), ("z", "acme.co.uk", "z")]
    values = pd.Series([cells[i] for i in rng.integers(0, len(cells), 60)], dtype=object)
    values[58] = tuple(vocab)
    left, right = rng.integers(0, 60, 400), rng.integers(0, 60, 400)
    items = [{x for x in cell if x is not None} if cell else set() for cell in values]
    expected = [
        (1.0 if items[a] & items[b] else 0.0) if items[a] and items[b] else np.nan
        for a, b in zip(left, right)
    ]
    np.testing.assert_array_equal(_shared_item(values, left, right), np.array(expected))
    assert {0.0, 1.0} <= set(np.unique(_shared_item(values, left, right)[~np.isnan(expected)]))
