"""Integrity of the hand-judged natural pairs in data/natural_pairs.csv (no access to ../shared needed)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

CSV = Path(__file__).resolve().parents[1] / "data" / "natural_pairs.csv"
REQUIRED = ["ad_id_a", "ad_id_b", "label", "stratum", "corpus", "jaccard5", "reason"]


@pytest.fixture(scope="module")
def pairs() -> pd.DataFrame:
    assert CSV.exists(), f"missing {CSV}"
    return pd.read_csv(
        CSV, dtype={"ad_id_a": str, "ad_id_b": str, "reason": str, "stratum": str, "corpus": str}
    )


def test_columns(pairs):
    missing = [c for c in REQUIRED if c not in pairs.columns]
    assert not missing, f"missing columns {missing}"


def test_labels_binary_and_both_classes(pairs):
    assert set(pairs["label"].unique()) <= {0, 1}
    counts = pairs["label"].value_counts()
    assert counts.get(0, 0) >= 50 and counts.get(1, 0) >= 50, counts.to_dict()


def test_ids_ordered_and_distinct(pairs):
    assert pairs["ad_id_a"].notna().all() and pairs["ad_id_b"].notna().all()
    assert (pairs["ad_id_a"] < pairs["ad_id_b"]).all(), "ad_id_a must be < ad_id_b"


def test_no_pair_twice_no_conflicts(pairs):
    key = pairs[["ad_id_a", "ad_id_b"]].apply(lambda r: tuple(sorted(r)), axis=1)
    assert not key.duplicated().any(), "a pair is listed twice"
    assert (pairs.assign(k=key).groupby("k")["label"].nunique() == 1).all(), "conflicting labels"


def test_every_row_has_reason_and_stratum(pairs):
    assert pairs["reason"].fillna("").str.strip().str.len().gt(0).all()
    assert pairs["stratum"].isin(list("abcdefg")).all()
    assert pairs["corpus"].fillna("").str.len().gt(0).all()


def test_jaccard_in_range(pairs):
    j = pairs["jaccard5"].dropna()
    assert ((j >= 0) & (j <= 1)).all()


def test_unsure_pairs_not_labelled():
    unsure = CSV.with_name("natural_pairs_unsure.csv")
    if not unsure.exists():
        pytest.skip("no unsure file")
    u = pd.read_csv(unsure, dtype=str)
    p = pd.read_csv(CSV, dtype=str)
    both = set(zip(u.ad_id_a, u.ad_id_b)) & set(zip(p.ad_id_a, p.ad_id_b))
    assert not both, f"unsure pairs also labelled: {sorted(both)[:3]}"
