"""The sealed test (issue 50): its pairs come from the sealed corpora only, nothing bundled for
training holds an ad of them, `jobdedup train` refuses such ads, and the stratified estimate
weighs each stratum by its pool size."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobdedup.data import BUNDLED_DATA, sealed_ads, sealed_corpora
from jobdedup.models.metrics import stratified_estimate
from jobdedup.pipeline.cli import main
from tests.conftest import DATA

SEALED = BUNDLED_DATA / "judgements" / "sealed"


def test_sealed_pairs_name_only_ads_of_the_sealed_corpora() -> None:
    pairs = pd.read_csv(SEALED / "round50_pairs.csv", dtype=str)
    ads = pd.DataFrame({"ad_id": pd.concat([pairs["ad_id_a"], pairs["ad_id_b"]], ignore_index=True)})
    assert len(ads) and sealed_ads(ads).all()
    strata = pd.read_csv(SEALED / "strata.csv")
    drawn = pairs["stratum"].value_counts()
    assert (strata.set_index("stratum")["drawn"] == drawn.reindex(strata["stratum"]).to_numpy()).all()


def test_no_bundled_training_file_holds_a_sealed_ad() -> None:
    for path in [*BUNDLED_DATA.glob("*.parquet"), *BUNDLED_DATA.glob("*.csv")]:
        table = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, dtype=str)
        for column in ("ad_id", "ad_id_a", "ad_id_b"):
            if column in table.columns:
                assert not sealed_ads(table[[column]].rename(columns={column: "ad_id"})).any(), (path, column)


def test_train_refuses_ads_of_a_sealed_corpus(tmp_path, capsys) -> None:
    ads = pd.read_parquet(DATA / "test_ads.parquet")
    corpus = min(sealed_corpora())
    ads.loc[0, "ad_id"] = f"{corpus}:file.csv:0"
    ads = ads.drop(columns=["corpus"], errors="ignore")
    labels = pd.read_parquet(DATA / "test_labels.parquet")
    labels.loc[labels["ad_id"] == pd.read_parquet(DATA / "test_ads.parquet")["ad_id"][0], "ad_id"] = ads[
        "ad_id"
    ][0]
    ads.to_parquet(tmp_path / "ads.parquet")
    labels.to_parquet(tmp_path / "labels.parquet")
    model = tmp_path / "model.json"
    code = main(["train", "--ads", str(tmp_path / "ads.parquet"), "--labels", str(tmp_path / "labels.parquet"),
                 "--model", str(model), "--quiet"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "sealed" in err and len(err.strip().splitlines()) == 1
    assert not model.exists()


def test_a_fully_drawn_pool_gives_the_plain_figures() -> None:
    rng = np.random.default_rng(3)
    labelled = pd.DataFrame({"stratum": rng.choice(["a", "b"], 200), "label": rng.integers(0, 2, 200),
                             "grouped": rng.random(200) < 0.5})  # fmt: skip
    sizes = labelled["stratum"].value_counts()
    estimate = stratified_estimate(labelled, sizes, resamples=50)
    grouped = labelled[labelled["grouped"]]
    assert estimate["precision"] == pytest.approx(grouped["label"].mean())
    assert estimate["recall"] == pytest.approx(grouped["label"].sum() / labelled["label"].sum())
    assert estimate["precision_low"] <= estimate["precision"] <= estimate["precision_high"]


def test_a_stratum_counts_by_its_pool_size_not_by_its_sample() -> None:
    # Two strata of 10 labelled pairs: 8 grouped duplicates in one; 2 missed duplicates in the other,
    # which stands for a pool ten times as large: recall is 8 / (8 + 20), not 8 / 10.
    labelled = pd.DataFrame({"stratum": ["g"] * 10 + ["a"] * 10,
                             "label": [1] * 8 + [0] * 2 + [1] * 2 + [0] * 8,
                             "grouped": [True] * 10 + [False] * 10})  # fmt: skip
    estimate = stratified_estimate(labelled, pd.Series({"g": 10, "a": 100}), resamples=20)
    assert estimate["recall"] == pytest.approx(8 / 28)
    assert estimate["precision"] == pytest.approx(0.8)
