"""Duplicate types (FULL / SEMANTIC / TEMPORAL / PARTIAL): each rule on a real-looking pair, the
`dup_type` column of pairs.parquet, `per_type` in evaluate, and the Eurostat submission file."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from jobdedup.features.pairs import build_pair_features
from jobdedup.models.dup_types import assign_dup_types, per_type_metrics
from jobdedup.pipeline.cli import main
from jobdedup.pipeline.io import validate_ads

BODY = [
    "Northwind Analytics is looking for a Data Engineer to join our platform team in London.",
    (
        "You will design, build and run the batch and streaming pipelines that feed our pricing models, "
        "working closely with analysts and data scientists."
    ),
    (
        "What you will do: build ELT pipelines in Python and SQL on Snowflake; orchestrate jobs with "
        "Airflow; model data with dbt; monitor data quality and fix incidents; review code and mentor "
        "two junior engineers."
    ),
    (
        "What we are looking for: three or more years of data engineering experience, strong Python and "
        "SQL, experience with a cloud data warehouse, and the ability to explain technical trade-offs to "
        "people who are not engineers."
    ),
    (
        "What we offer: a salary of 65,000 to 75,000 GBP, 28 days of holiday, a pension with 6 percent "
        "employer contribution, hybrid working with two office days a week, and a yearly learning budget."
    ),
    "To apply, send your CV and a short note about a pipeline you are proud of to careers@northwind.example.",
]
REWORDED = [
    (
        "Data Engineer, London (hybrid). Our client Northwind Analytics wants a data engineer for its "
        "platform team."
    ),
    (
        "The role: you build ELT pipelines in Python and SQL on Snowflake, schedule them with Airflow and "
        "model the data in dbt, keep an eye on data quality and mentor two junior engineers."
    ),
    (
        "You bring at least three years in data engineering, good Python and SQL and hands-on work with a "
        "cloud data warehouse; you can explain trade-offs to non-engineers."
    ),
    (
        "Salary 65,000 to 75,000 GBP, 28 days holiday, 6 percent pension, two office days a week and a "
        "learning budget."
    ),
    "Interested? Send your CV to careers@northwind.example.",
    "We are an equal opportunity employer and welcome applications from everyone.",
]


def _ad(ad_id: str, description: str, **fields: str) -> dict[str, str]:
    base = {
        "ad_id": ad_id,
        "title": "Data Engineer",
        "company": "Northwind Analytics Ltd",
        "location": "London, UK",
        "posted_at": "2024-03-04",
        "source": "linkedin",
        "description": description,
    }
    return {**base, **fields}


@pytest.fixture(scope="module")
def ads() -> pd.DataFrame:
    html = "".join(f"<p>{block}</p>" for block in BODY)
    plain = "\n\n".join(BODY)
    rows = [
        _ad("100", plain),
        # FULL: the same ad scraped from another site two days later, rendered as HTML.
        _ad("101", html, source="indeed", posted_at="2024-03-06", company="NORTHWIND ANALYTICS LTD"),
        # SEMANTIC: an agency's rewording of the same vacancy, with an EEO line added.
        _ad(
            "102",
            "\n\n".join(REWORDED),
            source="reed",
            posted_at="2024-03-10",
            title="Data Engineer - London",
        ),
        # TEMPORAL: the same text re-advertised seven weeks later.
        _ad("103", plain, posted_at="2024-04-22", source="indeed"),
        # The same text filed under Manchester.
        _ad("104", plain.replace("London", "Manchester"), location="Manchester, UK", posted_at="2024-03-05"),
        # PARTIAL (information missing): a job-board snippet of the first lines.
        _ad("105", " ".join(" ".join(BODY).split()[:40]) + " ...", source="adzuna", posted_at="2024-03-05"),
    ]
    return validate_ads(pd.DataFrame(rows))


@pytest.fixture(scope="module")
def batch(default_model, ads):
    return default_model.prepare(ads)


def _type_of(batch, i: int, j: int) -> str:
    features = build_pair_features(batch.inputs, np.array([i]), np.array([j]))
    return str(assign_dup_types(features)[0])


def test_full_same_text_and_metadata_across_sites(batch):
    assert _type_of(batch, 0, 1) == "FULL"


def test_semantic_reworded_by_an_agency(batch):
    assert _type_of(batch, 0, 2) == "SEMANTIC"


def test_temporal_readvertised_after_thirty_days(batch):
    assert _type_of(batch, 0, 3) == "TEMPORAL"


def test_same_text_under_another_listing_city_is_semantic(batch):
    # The definition's PARTIAL is missing information; a listing city written differently is a
    # field that differs (whether it is one vacancy is the classifier's call, not the type's).
    assert _type_of(batch, 0, 4) == "SEMANTIC"


def test_partial_snippet_misses_information(batch):
    assert _type_of(batch, 0, 5) == "PARTIAL"


def test_partial_wins_over_temporal(batch):
    # The snippet (posted 2024-03-05) against the full re-advertisement of 2024-04-22.
    assert _type_of(batch, 3, 5) == "PARTIAL"


def test_temporal_wins_over_a_field_written_differently(batch):
    # The same text seven weeks apart, filed under another city.
    assert _type_of(batch, 3, 4) == "TEMPORAL"


def test_per_type_metrics_counts():
    figures = per_type_metrics(
        np.array([1, 1, 1, 0]),
        np.array(["FULL", "SEMANTIC", "SEMANTIC", None], dtype=object),
        np.array([1, 1, 0, 1]),
        np.array(["FULL", "FULL", None, "SEMANTIC"], dtype=object),
    )
    assert figures["FULL"]["recall"] == 1.0 and figures["FULL"]["precision"] == 0.5
    assert figures["SEMANTIC"]["labelled"] == 2 and figures["SEMANTIC"]["found"] == 1
    assert figures["SEMANTIC"]["recall"] == 0.0 and figures["SEMANTIC"]["precision"] == 0.0
    assert np.isnan(figures["TEMPORAL"]["recall"])


def test_dedup_writes_dup_type_and_eurostat_file(tmp_path, ads):
    ads.to_csv(tmp_path / "ads.csv", index=False)
    out = tmp_path / "out"
    code = main(
        ["dedup", "--ads", str(tmp_path / "ads.csv"), "--out", str(out), "--format", "eurostat", "--quiet"]
    )
    assert code == 0
    pairs = pd.read_parquet(out / "pairs.parquet")
    assert "dup_type" in pairs.columns
    accepted = pairs[pairs["is_duplicate"]]
    assert len(accepted) > 0 and accepted["dup_type"].isin(["FULL", "SEMANTIC", "TEMPORAL", "PARTIAL"]).all()
    assert pairs.loc[~pairs["is_duplicate"], "dup_type"].isna().all()
    lines = (out / "duplicates.csv").read_text().splitlines()
    assert lines and not lines[0].startswith("id1")
    rows = [line.split(",") for line in lines]
    assert all(len(row) == 3 and int(row[0]) < int(row[1]) for row in rows)
    assert all(row[2] in {"FULL", "SEMANTIC", "TEMPORAL", "PARTIAL"} for row in rows)
    assert ["100", "101", "FULL"] in rows
    groups = pd.read_parquet(out / "groups.parquet")
    sizes = groups.groupby("group_id").size()
    assert len(rows) == int((sizes * (sizes - 1) // 2).sum())  # every pair inside a group


def test_evaluate_reports_per_type(tmp_path, ads, capsys):
    ads.to_csv(tmp_path / "ads.csv", index=False)
    labels = pd.DataFrame(
        {
            "ad_id_a": ["100", "100", "100", "100", "100"],
            "ad_id_b": ["101", "102", "103", "104", "105"],
            "label": [1, 1, 1, 0, 1],
            "dup_type": ["FULL", "SEMANTIC", "TEMPORAL", "", "PARTIAL"],
        }
    )
    labels.to_csv(tmp_path / "labels.csv", index=False)
    code = main(
        [
            "evaluate",
            "--ads",
            str(tmp_path / "ads.csv"),
            "--labels",
            str(tmp_path / "labels.csv"),
            "--json",
            str(tmp_path / "eval.json"),
            "--quiet",
        ]
    )
    assert code == 0
    assert "duplicate type" in capsys.readouterr().out
    per_type = json.loads((tmp_path / "eval.json").read_text())["per_type"]
    assert set(per_type) == {"FULL", "SEMANTIC", "TEMPORAL", "PARTIAL"}
    assert per_type["FULL"]["labelled"] == 1 and per_type["FULL"]["recall"] == 1.0
    assert per_type["TEMPORAL"]["labelled"] == 1


@pytest.fixture(scope="module")
def renamed_batch(default_model):
    plain = "\n\n".join(BODY)
    rows = [
        _ad("200", plain),
        _ad("201", plain, source="indeed", title="Data Engineer - Platform Team"),
        _ad("202", plain, source="indeed", company="Northwind Data Analytics Ltd"),
    ]
    return default_model.prepare(validate_ads(pd.DataFrame(rows)))


def test_same_text_under_a_title_with_words_added_is_semantic(renamed_batch):
    # The title's words are a superset of the other's (a word-set similarity of 1.0): metadata
    # written differently, not essentially identical.
    assert _type_of(renamed_batch, 0, 1) == "SEMANTIC"


def test_same_text_under_an_employer_name_with_words_added_is_semantic(renamed_batch):
    assert _type_of(renamed_batch, 0, 2) == "SEMANTIC"
