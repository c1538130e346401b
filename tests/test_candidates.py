"""Candidate generation: key grouping, caps, LSH S-curve, field blocking."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobdedup.pipeline.candidates import generate_candidates, lsh_candidates, lsh_probability, pairs_from_keys
from jobdedup.pipeline.sketch import EMPTY_SIGNATURE_VALUE, minhash_signatures, shingle_sets, tokenize


def test_pairs_from_equal_keys_only():
    pairs, report = pairs_from_keys(np.array([0, 1, 2, 3, 4]), np.array([9, 9, 7, 9, 7]), 10)
    assert sorted(map(tuple, pairs.tolist())) == [(0, 1), (0, 3), (1, 3), (2, 4)]
    assert report["capped_buckets"] == 0


def test_oversized_bucket_becomes_star_and_is_reported():
    docs = np.arange(50)
    pairs, report = pairs_from_keys(docs, np.zeros(50, dtype=np.int64), max_bucket_size=10)
    assert len(pairs) == 49 and set(pairs[:, 0].tolist()) == {0}
    assert report["capped_buckets"] == 1 and report["ads_in_capped_buckets"] == 50


def test_s_curve_proposes_low_overlap_pairs_often():
    # 42 bands x 3 rows: a pair at Jaccard 0.4 is proposed ~93 % of the time, at 0.1 ~4 %.
    assert lsh_probability(0.4, 42, 3) > 0.9
    assert lsh_probability(0.1, 42, 3) < 0.05


@pytest.mark.slow
def test_lsh_finds_similar_texts_and_skips_empty_ones():
    words = [f"w{i}" for i in range(200)]
    texts = [" ".join(words), " ".join(words[:180] + ["x"] * 20), " ".join(f"z{i}" for i in range(200)), ""]
    tokens = tokenize(texts)
    sets = shingle_sets(tokens.word_hash, tokens.doc_ptr, 5)
    pairs, _ = lsh_candidates(minhash_signatures(sets, 126, 1), 42, 3, 100)
    assert {tuple(p) for p in pairs.tolist()} == {(0, 1)}


def test_field_blocking_pairs_same_contact_even_without_text_overlap():
    fields = pd.DataFrame(
        {
            "company": [pd.NA, pd.NA, pd.NA],
            "title_tokens": ["a", "b", "c"],
            "city": [pd.NA, pd.NA, pd.NA],
            "town": [pd.NA, pd.NA, pd.NA],
            "emails": [("jobs@acme.com",), ("jobs@acme.com",), pd.NA],
            "phones": [pd.NA, pd.NA, pd.NA],
        }
    )
    signatures = np.full((3, 6), EMPTY_SIGNATURE_VALUE, dtype=np.uint32)
    pairs, _ = generate_candidates(signatures, fields, 2, 3, 100)
    assert pairs[["i", "j"]].values.tolist() == [[0, 1]]
    assert bool(pairs["via_fields"].iloc[0]) and not bool(pairs["via_lsh"].iloc[0])


def _field_pairs(ads: pd.DataFrame) -> tuple[list[list[int]], dict, list[list[int]]]:
    """Batch candidate pairs of ads without text, their report's counts, and the ads sharing each
    index field key that more than one ad holds."""
    from jobdedup.features.fields import normalize_fields
    from jobdedup.pipeline.index.rows import field_keys

    base = {"occupation": None, "contact": None, "url": None, "description": "", "posted_at": "2026-06-01"}
    fields = normalize_fields(ads.assign(**{k: v for k, v in base.items() if k not in ads}))
    signatures = np.full((len(ads), 6), EMPTY_SIGNATURE_VALUE, dtype=np.uint32)
    pairs, report = generate_candidates(signatures, fields, 2, 3, 100)
    docs, keys = field_keys(fields)
    holders = [sorted(set(docs[keys == key].tolist())) for key in np.unique(keys)]
    return pairs[["i", "j"]].values.tolist(), report.by_key, [h for h in holders if len(h) > 1]


@pytest.mark.parametrize(
    ("title", "companies", "locations", "kind"),
    [
        # An Adzuna page of Hays' ad under Hays Specialist Recruitment, filed under Edinburgh, and
        # the full ad under Hays Technology in Glasgow: neither the whole employer name nor the
        # town is shared; the employer's first word and the title are.
        (
            "Senior Oracle Developer",
            ["Hays Specialist Recruitment", "Hays Technology", "Harvey Nash"],
            ["Edinburgh, Scotland", "Glasgow, Scotland", "Leeds, West Yorkshire"],
            "employer+title",
        ),
        # NICE's ad under a district ("Rusholme, Manchester", as Adzuna files ads) and under its
        # full name in "Manchester, Greater Manchester": the district's town meets the other's city.
        (
            "Data Scientist (ML Engineer)",
            ["NICE", "The National Institute for Health and Care Excellence", "Acme Analytics"],
            ["Rusholme, Manchester", "Manchester, Greater Manchester", "Hyde Park, Leeds"],
            "title+city",
        ),
    ],
)
def test_field_blocking_pairs_one_vacancy_written_two_ways(title, companies, locations, kind):
    """Two ads of one vacancy with little text in common meet under one field key, in a batch and
    in the index; a third ad of that title (another employer, another town) meets neither."""
    ads = pd.DataFrame(
        {"title": [title] * 3, "company": companies, "location": locations, "source": "adzuna"}
    )
    pairs, by_key, shared = _field_pairs(ads)
    assert pairs == [[0, 1]] and shared == [[0, 1]]
    assert {name for name, count in by_key.items() if count} == {kind}
