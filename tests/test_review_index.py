"""`jobdedup review --index`: the page over an incremental index built from the bundled ads (FastAPI's
TestClient): the groups are those `index groups` writes, a group and a pair open, an answer is
written, the index file is not touched; bad input stops with exit 2."""

from __future__ import annotations

import copy
import hashlib

import pandas as pd
import pytest
from fastapi.testclient import TestClient

from jobdedup.pipeline.cli import main
from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.index.core import Index
from jobdedup.pipeline.io import read_labels
from jobdedup.pipeline.review.app import create_review_app
from jobdedup.pipeline.review.data import ReviewData
from jobdedup.pipeline.review.labels import LabelStore
from tests.conftest import DATA
from tests.test_review import _one_line_error

ADS = DATA / "test_ads.parquet"


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def indexed(test_ads, default_model, tmp_path_factory):
    """The bundled ads added to an index; what `index groups` writes; the page over the index."""
    folder = tmp_path_factory.mktemp("review_index")
    path = folder / "ads.jdx"
    with Index.open(path) as index:
        index.add(test_ads, default_model)
    assert main(["index", "groups", "--index", str(path), "--out", str(folder / "groups.parquet")]) == 0
    before = _digest(path)
    data = ReviewData.load_index(ADS, path, default_model)
    assert _digest(path) == before  # (read-only: the file is not written)
    store = LabelStore(folder / "labels.csv")
    return path, pd.read_parquet(folder / "groups.parquet"), store, TestClient(create_review_app(data, store))


def test_groups_are_those_index_groups_writes(indexed):
    _, written, _, client = indexed
    listed = []
    for page in (1, 2, 3):
        listed += client.get("/api/groups", params={"per_page": 200, "page": page}).json()["groups"]
    expected = written.groupby("group_id").size()
    assert len(listed) == len(expected) == written["group_id"].nunique()
    assert {g["group_id"]: g["size"] for g in listed} == expected.to_dict()
    assert [g["size"] for g in listed] == sorted(expected, reverse=True)


def test_a_group_and_a_pair_open_and_an_answer_is_written(indexed, test_ads):
    _, written, store, client = indexed
    largest = client.get("/api/groups", params={"per_page": 1}).json()["groups"][0]
    group = client.get(f"/api/groups/{largest['group_id']}").json()
    members = written.loc[written["group_id"] == largest["group_id"], "ad_id"].astype(str)
    assert sorted(m["ad_id"] for m in group["members"]) == sorted(members)
    n = len(members)
    assert n > 2 and len(group["pairs"]) == n * (n - 1) // 2  # (every in-group pair, scored)
    assert all(0.0 <= p["probability"] <= 1.0 for p in group["pairs"])
    pair = group["pairs"][0]
    explained = client.get("/api/pair", params={"a": pair["ad_id_a"], "b": pair["ad_id_b"]}).json()
    assert explained["same_group"] and len(explained["texts"]) == 2
    sample = client.get("/api/queue/accepted", params={"size": 5}).json()["pairs"]
    assert len(sample) == 5 and all(p["probability"] is not None for p in sample)
    answer = {"ad_id_a": pair["ad_id_a"], "ad_id_b": pair["ad_id_b"], "label": 1, "reason": "same job"}
    assert client.post("/api/labels", json=answer).json()["written"]
    table = store.table()
    assert len(table) == 1 and table["label"].iloc[0] == "1" and table["reason"].iloc[0] == "same job"
    assert len(read_labels(store.path, ads=test_ads).pairs) == 1


def test_bad_input(indexed, capsys, tmp_path, test_ads):
    path = str(indexed[0])
    for args in (["--out", str(tmp_path), "--index", path], []):
        with pytest.raises(SystemExit) as stop:
            main(["review", "--ads", str(ADS), *args, "--quiet"])
        assert stop.value.code == 2
        assert "--index" in capsys.readouterr().err.strip().splitlines()[-1]
    test_ads.head(100).to_parquet(tmp_path / "few.parquet")
    error = _one_line_error(capsys, "--ads", str(tmp_path / "few.parquet"), "--index", path, "--quiet")
    assert "are not in" in error and "--ads" in error
    assert "not a jobdedup index" in _one_line_error(
        capsys, "--ads", str(ADS), "--index", str(ADS), "--quiet"
    )


def test_another_model_is_refused(indexed, default_model):
    other = copy.copy(default_model)
    other.training_ = {**default_model.training_, "fingerprint": "another"}
    with pytest.raises(JobdedupError, match="built with another model.*--model"):
        ReviewData.load_index(ADS, indexed[0], other)
