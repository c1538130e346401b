"""`jobdedup review` through its API (FastAPI's TestClient) on a small hand-made dedup output:
filters and pagination, labels appended by two writers at once, inert ad text, bad input."""

from __future__ import annotations

import socket
import threading

import numpy as np
import pandas as pd
import pytest
from fastapi.testclient import TestClient

from jobdedup.models.metrics import estimated_precision
from jobdedup.pipeline.cli import main
from jobdedup.pipeline.io import read_labels
from jobdedup.pipeline.review.app import create_review_app
from jobdedup.pipeline.review.data import GroupFilter, ReviewData
from jobdedup.pipeline.review.labels import LabelStore
from tests.conftest import DATA

SCRIPT = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'


def small_output(ads: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """24 ads in groups of 5, 4, 3, 2, 2 and singletons; the first ad's text holds a script."""
    ads = ads.head(24).reset_index(drop=True).copy()
    ads.loc[0, "description"] = SCRIPT + " " + str(ads.loc[0, "description"])
    ads.loc[0, "title"] = "Chef <b onmouseover=alert(1)>de partie</b>"
    sizes = [5, 4, 3, 2, 2] + [1] * 8
    group_ids = np.repeat([f"g{k:02d}" for k in range(len(sizes))], sizes)
    ids = ads["ad_id"].astype(str)
    groups = pd.DataFrame({"ad_id": ids, "group_id": group_ids})
    groups["group_size"] = groups.groupby("group_id")["ad_id"].transform("size")
    rows = [
        (ids[i], ids[j], 0.95, True)
        for start, size in zip(np.cumsum([0, *sizes[:-1]]), sizes)
        for i in range(start, start + size)
        for j in range(i + 1, start + size)
    ] + [(ids[0], ids[20], 0.6, False)]
    pairs = pd.DataFrame(rows, columns=["ad_id_a", "ad_id_b", "probability", "is_duplicate"])
    return ads, pairs, groups


@pytest.fixture(scope="module")
def review(test_ads, default_model, tmp_path_factory):
    ads, pairs, groups = small_output(test_ads)
    data = ReviewData(ads, pairs, groups, default_model)
    store = LabelStore(tmp_path_factory.mktemp("review") / "labels.csv")
    return data, store, TestClient(create_review_app(data, store))


def test_groups_largest_first_filtered_and_paginated(review):
    data, _, client = review
    first = client.get("/api/groups", params={"per_page": 3}).json()
    assert first["total"] == 13 and [g["size"] for g in first["groups"]] == [5, 4, 3]
    second = client.get("/api/groups", params={"per_page": 3, "page": 2}).json()
    assert [g["size"] for g in second["groups"]] == [2, 2, 1]
    assert client.get("/api/groups", params={"min_size": 2}).json()["total"] == 5
    assert client.get("/api/groups", params={"min_size": 3, "max_size": 4}).json()["total"] == 2
    title = data.summary["title"].iloc[1].split()[0]
    found = client.get("/api/groups", params={"title": title.upper()}).json()["groups"]
    assert found and all(title.casefold() in g["title"].casefold() for g in found)
    source = data.summary["sources"].iloc[0].split(" · ")[0]
    by_source = client.get("/api/groups", params={"source": source}).json()["groups"]
    assert by_source and all(source in g["sources"].split(" · ") for g in by_source)
    employer = data.summary["employer"].iloc[0]
    assert client.get("/api/groups", params={"employer": employer[:4].lower()}).json()["total"] >= 1
    assert data.group_list(GroupFilter(title="no-such-word-anywhere"))["total"] == 0


def test_group_and_pair_views(review):
    _, _, client = review
    group = client.get("/api/groups/g00").json()
    assert group["size"] == 5 and len(group["pairs"]) == 10 and len(group["members"]) == 5
    assert client.get("/api/groups/nope").status_code == 404
    pair = group["pairs"][0]
    explained = client.get("/api/pair", params={"a": pair["ad_id_a"], "b": pair["ad_id_b"]}).json()
    assert {"contributions", "fields", "texts", "dup_type", "rule"} <= set(explained)
    assert len(explained["texts"]) == 2 and explained["same_group"]
    assert client.get("/api/pair", params={"a": "x", "b": "y"}).status_code == 422


def test_ad_text_comes_back_as_text_under_a_strict_policy(review):
    data, _, client = review
    ids = data.ads["ad_id"].astype(str)
    group = client.get("/api/groups/g00")
    assert group.json()["members"][0]["title"] == "Chef <b onmouseover=alert(1)>de partie</b>"
    assert "script-src 'self'" in group.headers["content-security-policy"]
    page = client.get("/")
    assert (
        '<script src="/static/review.js"' in page.text
        and "innerHTML" not in client.get("/static/review.js").text
    )
    explained = client.get("/api/pair", params={"a": ids[0], "b": ids[1]}).json()
    assert explained["fields"]["title"][0].startswith("Chef <b")


def test_answers_append_in_label_format_and_replace(review, test_ads):
    data, store, client = review
    ids = data.ads["ad_id"].astype(str)
    answer = {
        "ad_id_a": ids[1],
        "ad_id_b": ids[0],
        "label": 1,
        "dup_type": "full",
        "reason": 'a "same", text',
    }
    assert client.post("/api/labels", json=answer).json()["written"]
    assert client.post("/api/labels", json={**answer, "label": 0, "dup_type": ""}).status_code == 200
    table = store.table()
    assert list(table.columns) == ["ad_id_a", "ad_id_b", "label", "sample", "dup_type", "reason"]
    assert len(table) == 1 and table["label"].iloc[0] == "0"  # replaced, not a conflicting second row
    assert client.post("/api/labels", json={**answer, "label": 0}).status_code == 422  # typed negative
    assert (
        client.post("/api/labels", content="label=1", headers={"content-type": "text/plain"}).status_code
        == 415
    )
    labels = read_labels(store.path, ads=test_ads)
    assert len(labels.pairs) == 1


def test_two_concurrent_writers_lose_no_answer(test_ads, tmp_path):
    path = tmp_path / "labels.csv"
    ids = test_ads["ad_id"].astype(str).tolist()
    stores = [LabelStore(path), LabelStore(path)]  # two tabs / two processes on one file
    start = threading.Barrier(2)

    def write(k: int) -> None:
        start.wait()
        for n in range(40):
            stores[k].answer(ids[2 * n + k], ids[100 + 2 * n + k], n % 2, reason=f"writer {k}, {n}")

    threads = [threading.Thread(target=write, args=(k,)) for k in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    lines = path.read_text().splitlines()
    assert lines[0] == "ad_id_a,ad_id_b,label,sample,dup_type,reason" and len(lines) == 81
    assert len(read_labels(path, ads=test_ads).pairs) == 80


def test_estimate_is_evaluates_estimate(review):
    client = review[2]
    sample = client.get("/api/queue/accepted", params={"size": 6}).json()["pairs"]
    assert len(sample) == 6
    assert sample == client.get("/api/queue/accepted", params={"size": 6}).json()["pairs"]  # same draw
    for k, pair in enumerate(sample):
        client.post("/api/labels", json={**pair, "label": int(k != 2), "sample": "accepted"})
    estimate = client.get("/api/estimate").json()
    expected = estimated_precision(np.array([1, 1, 0, 1, 1, 1]))
    assert estimate["estimated_precision"] == pytest.approx(expected["precision"])
    assert estimate["estimated_precision_low"] == pytest.approx(expected["low"])
    assert estimate["estimated_precision_high"] == pytest.approx(expected["high"])
    uncertain = client.get("/api/queue/uncertain").json()["pairs"]
    assert uncertain[0]["probability"] == pytest.approx(0.6)  # nearest the threshold first
    assert client.post("/api/retrain").status_code == 404  # off without --retrain


def test_overlap_counts_shared_groups(review):
    data, _, client = review
    overlap = client.get("/api/overlap").json()
    sources = overlap["sources"]
    matrix = np.array(overlap["matrix"])
    assert (matrix == matrix.T).all() and len(sources) == len(matrix)
    duplicated = data.groups[data.groups["group_size"] > 1]
    source_of = data.ads.set_index(data.ads["ad_id"].astype(str))["source"].fillna("(none)")
    per_group = duplicated.assign(source=source_of.reindex(duplicated["ad_id"]).to_numpy())
    for k, name in enumerate(sources):
        assert matrix[k, k] == per_group.loc[per_group["source"] == name, "group_id"].nunique()
    assert sum(r["ads"] for r in overlap["rates"]) == len(data.ads)


def test_a_token_is_needed_beyond_loopback(review):
    data, store, _ = review
    client = TestClient(create_review_app(data, store, token="s3cret-token"))
    assert client.get("/api/meta").status_code == 401
    assert client.get("/api/meta", headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
    assert client.get("/").status_code == 200  # the page itself holds no data
    loopback = TestClient(create_review_app(data, store), base_url="http://evil.example")
    assert loopback.get("/api/meta").status_code == 403  # DNS rebinding


def _one_line_error(capsys, *args: str) -> str:
    assert main(["review", *args]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and error.startswith("jobdedup review: error:")
    return error


def test_bad_input_one_line_exit_2(capsys, tmp_path):
    ads = str(DATA / "test_ads.parquet")
    assert "not a dedup output" in _one_line_error(capsys, "--ads", ads, "--out", str(tmp_path), "--quiet")
    out = tmp_path / "out"
    out.mkdir()
    pd.DataFrame({"x": [1]}).to_parquet(out / "pairs.parquet")
    pd.DataFrame({"x": [1]}).to_parquet(out / "groups.parquet")
    assert "lacks the column" in _one_line_error(capsys, "--ads", ads, "--out", str(out), "--quiet")
    labels = tmp_path / "groups.csv"
    labels.write_text("ad_id,group_id\na,1\n")
    small_ads, pairs, groups = small_output(pd.read_parquet(ads))
    good = tmp_path / "good"
    good.mkdir()
    pairs.to_parquet(good / "pairs.parquet")
    groups.to_parquet(good / "groups.parquet")
    small_ads.to_parquet(tmp_path / "ads.parquet")
    args = ["--ads", str(tmp_path / "ads.parquet"), "--out", str(good), "--quiet"]
    assert "not a pairs labels file" in _one_line_error(capsys, *args, "--labels", str(labels))
    assert "do not match" in _one_line_error(capsys, "--ads", ads, "--out", str(good), "--quiet")
    assert "--token" in _one_line_error(capsys, *args, "--host", "0.0.0.0")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        assert "in use" in _one_line_error(capsys, *args, "--port", port)
