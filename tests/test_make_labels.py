"""Tests of the labelled-data generator (labelling.make_labels) on the bundled sample."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from labelling import textops as tx
from labelling.make_labels import generate, norm_name, pair_jaccards

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def real_like() -> pd.DataFrame:
    """Real ads of the bundled training sample (origin == real), as a stand-in for the real corpus."""
    ads = pd.read_parquet(DATA / "train_ads.parquet")
    real = ads[ads["origin"] == "real"].sort_values("ad_id").head(120)
    return real.drop(columns=["origin"]).reset_index(drop=True)


@pytest.fixture(scope="module")
def small(real_like: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return generate(real_like, n_base=60, seed=3)


def test_same_seed_same_frames(real_like: pd.DataFrame, small) -> None:
    ads, labels = generate(real_like, n_base=60, seed=3)
    pd.testing.assert_frame_equal(ads, small[0])
    pd.testing.assert_frame_equal(labels, small[1])


def test_every_ad_labelled_once(small) -> None:
    ads, labels = small
    assert ads["ad_id"].is_unique
    assert sorted(labels["ad_id"]) == sorted(ads["ad_id"])
    assert set(labels.columns) == {"ad_id", "group_id"}


def test_reposts_differ_but_keep_vacancy(small) -> None:
    ads, labels = small
    group = dict(zip(labels["ad_id"], labels["group_id"]))
    by_id = ads.set_index("ad_id")
    reposts = ads[ads["origin"].str.startswith("repost")]
    assert len(reposts) > 10
    for rid in reposts["ad_id"]:
        base = rid.rsplit("#r", 1)[0]
        assert group[rid] == group[base]
        fields = ["description", "title", "company", "location", "source", "url"]
        assert any(by_id.at[rid, f] != by_id.at[base, f] for f in fields)
    negatives = ads[ads["origin"].str.startswith("negative")]
    for nid in negatives["ad_id"]:
        assert group[nid] != group[nid.rsplit("#n", 1)[0]]


def test_jaccard_range(small) -> None:
    pos, neg = pair_jaccards(*small)
    assert min(pos) < 0.5
    assert max(neg) > 0.6


def test_bundled_splits_disjoint() -> None:
    train = pd.read_parquet(DATA / "train_ads.parquet")
    test = pd.read_parquet(DATA / "test_ads.parquet")
    train_l = pd.read_parquet(DATA / "train_labels.parquet")
    test_l = pd.read_parquet(DATA / "test_labels.parquet")
    assert not set(train["ad_id"]) & set(test["ad_id"])
    assert not set(train_l["group_id"]) & set(test_l["group_id"])
    assert not set(train["corpus"]) & set(test["corpus"])
    real_test = test[test["origin"] == "real"]
    train_companies = {norm_name(c) for c in train.loc[train["origin"] == "real", "company"] if norm_name(c)}
    assert not {norm_name(c) for c in real_test["company"] if norm_name(c)} & train_companies
    for df in (train, test, train_l, test_l):
        assert all(str(t) in {"string", "object", "str"} for t in df.dtypes)


def test_text_round_trip_keeps_words() -> None:
    text = (
        "<p>We are hiring a <strong>Data Engineer</strong>.</p><ul><li>Python</li><li>SQL &amp; dbt</li></ul>"
    )
    blocks = tx.parse_blocks(text)
    assert ("li", "Python") in blocks
    import numpy as np

    for style in ("plain", "markdown", "linkedin", "indeed", "html", "html_escaped", "flat"):
        out = tx.render(blocks, style, np.random.default_rng(0))
        assert tx.jaccard(text, out) == pytest.approx(1.0), style
