"""Candidate generation: key grouping, caps, LSH S-curve, field blocking."""

from __future__ import annotations

import numpy as np
import pandas as pd

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
            "emails": [("jobs@acme.com",), ("jobs@acme.com",), pd.NA],
            "phones": [pd.NA, pd.NA, pd.NA],
        }
    )
    signatures = np.full((3, 6), EMPTY_SIGNATURE_VALUE, dtype=np.uint32)
    pairs, report = generate_candidates(signatures, fields, 2, 3, 100)
    assert pairs[["i", "j"]].values.tolist() == [[0, 1]]
    assert bool(pairs["via_fields"].iloc[0]) and not bool(pairs["via_lsh"].iloc[0])


def test_field_blocking_pairs_divisions_of_one_employer_under_one_title():
    """An Adzuna page of Hays' "Senior Oracle Developer" filed under Hays Specialist Recruitment and
    a district of Glasgow, against the full ad under Hays Technology in Glasgow: neither the whole
    employer name nor the town is shared, the employer's first word and the title are. Another
    employer's ad under the same title is not paired with them."""
    from jobdedup.features.fields import normalize_fields
    from jobdedup.pipeline.index.rows import field_keys

    ads = pd.DataFrame(
        {
            "title": ["Senior Oracle Developer", "Senior Oracle Developer", "Senior Oracle Developer"],
            "company": ["Hays Specialist Recruitment", "Hays Technology", "Harvey Nash"],
            "location": ["Hillhead, Glasgow City Centre", "Glasgow, Scotland", "Leeds, West Yorkshire"],
            "occupation": [None] * 3, "contact": [None] * 3, "url": [None] * 3,
            "description": ["Senior Oracle Developer ❮ back to last search", "Hays are now looking for", "x"],
            "posted_at": ["2026-06-01"] * 3, "source": ["adzuna", "adzuna", "linkedin"],
        }
    )  # fmt: skip
    fields = normalize_fields(ads)
    assert fields["company"].nunique() == 3 and fields["city"].nunique() == 3
    signatures = np.full((3, 6), EMPTY_SIGNATURE_VALUE, dtype=np.uint32)
    pairs, report = generate_candidates(signatures, fields, 2, 3, 100)
    assert pairs[["i", "j"]].values.tolist() == [[0, 1]]
    assert report.by_key["employer+title"] == 1
    # The index's keys for these ads pair the same two: one key shared by ads 0 and 1 only.
    docs, keys = field_keys(fields)
    shared = [key for key in np.unique(keys) if len(set(docs[keys == key].tolist())) > 1]
    assert [sorted(set(docs[keys == key].tolist())) for key in shared] == [[0, 1]]
