"""Evidence that transfers to crawls the rules were not shaped on (issue 50), on the real shapes
that showed each gap: a job board's domain taken for an employer's, and two substantive texts that
share nothing taken for one vacancy."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobdedup.features.normalize.unique import FEW_VALUES
from jobdedup.features.pairs import build_pair_features
from jobdedup.models.rules import apply_rules, rule_names
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.prepare import prepare_batch

COLUMNS = ["ad_id", "description", "title", "company", "location", "occupation", "contact", "url",
           "posted_at", "source", "language"]  # fmt: skip


def _features(rows: list[dict], padded: bool) -> pd.DataFrame:
    """Features of the pair (0, 1); `padded` adds unrelated ads so that the batch takes the
    column path instead of the few-ads path."""
    filler = [
        {"ad_id": f"z{k}", "title": f"Filler role {k}", "company": f"Filler {k}", "location": "Oslo"}
        for k in range(FEW_VALUES + 4 if padded else 0)
    ]
    ads = pd.DataFrame([{c: row.get(c, pd.NA) for c in COLUMNS} for row in rows + filler])
    batch = prepare_batch(ads, Config(), np.zeros(0, dtype=np.uint64))
    return build_pair_features(batch.inputs, np.array([0]), np.array([1]))


@pytest.mark.parametrize("padded", [False, True])
def test_two_employers_on_one_job_board_share_no_contact(padded: bool) -> None:
    # justjoin.it cards of workit_poland_jjit_nfj: fields only, one title, one city, one day.
    common = {
        "title": "Python Developer",
        "location": "Warszawa",
        "posted_at": "2019-10-17",
        "source": "justjoin.it",
    }
    rows = [
        {
            **common,
            "ad_id": "a",
            "company": "ITLT",
            "url": "https://justjoin.it/offers/itlt-python-developer",
        },
        {**common, "ad_id": "b", "company": "7N", "url": "https://justjoin.it/offers/7n-python-developer"},
    ]
    features = _features(rows, padded)
    assert np.isnan(features["domain_match"].iloc[0])
    assert features["employer_conflict"].iloc[0] == 1
    rows[1]["company"] = "ITLT Sp. z o.o."  # the same employer written another way still agrees
    assert _features(rows, padded)["employer_conflict"].iloc[0] == 0


def test_an_employers_own_domain_named_in_both_texts_still_links_two_names() -> None:
    body = "Join our platform team building payment services. Apply at careers@acme-pay.com today. " * 3
    rows = [
        {"ad_id": "a", "title": "Backend Engineer", "company": "Acme Pay", "description": body},
        {"ad_id": "b", "title": "Backend Engineer", "company": "Zenith Staffing", "description": body},
    ]
    assert _features(rows, padded=False)["domain_match"].iloc[0] == 1


TEAM_TEXTS = [
    (
        "Our payments team builds the card authorisation engine in Java 17 and Spring Boot. You will own "
        "low-latency services that approve millions of transactions a day, tune the JVM, and work with fraud "
        "analysts on rules. Kafka and PostgreSQL experience is welcome; on-call one week in six."
    ),
    (
        "The logistics squad maintains a warehouse routing platform. You will write Java microservices that plan "
        "pick paths for robots, integrate with SAP EWM through IDocs, and improve simulation tooling used by "
        "operations engineers. Experience with Quarkus, Gradle and Kubernetes operators helps."
    ),
]


@pytest.mark.parametrize("padded", [False, True])
def test_one_posters_same_title_ads_of_one_day_with_other_texts_are_two_vacancies(padded: bool) -> None:
    # The fresh crawl's recruiter: 28 "Java Developer" ads, one company, town and day, each a
    # different team's ~500-character text sharing no sentence.
    common = {"title": "Java Developer", "company": "Harvey Tech Recruitment", "location": "Kraków",
              "posted_at": "2025-03-04", "source": "nofluffjobs"}  # fmt: skip
    rows = [{**common, "ad_id": f"j{k}", "description": text} for k, text in enumerate(TEAM_TEXTS)]
    features = _features(rows, padded)
    assert features["containment_core_max"].iloc[0] < 0.05
    assert rule_names(features).tolist() == ["no_shared_text"]
    assert apply_rules(np.array([0.57]), features)[0] <= 0.01
    # The same text reposted is untouched, and so is a pair a shared phone number ties together.
    rows[1]["description"] = TEAM_TEXTS[0]
    assert rule_names(_features(rows, padded)).tolist() == [None]
    rows[0]["description"] = TEAM_TEXTS[0] + " Call Anna on +48 12 345 67 89."
    rows[1]["description"] = TEAM_TEXTS[1] + " Call Anna on +48 12 345 67 89."
    assert rule_names(_features(rows, padded)).tolist() == [None]


def test_short_texts_are_not_substantive_enough_to_refuse() -> None:
    common = {"title": "Java Developer", "company": "Acme", "location": "Kraków"}
    rows = [
        {**common, "ad_id": "a", "description": "Java developer wanted, apply now."},
        {**common, "ad_id": "b", "description": "Great team, modern stack, remote Fridays."},
    ]
    assert rule_names(_features(rows, padded=False)).tolist() != ["no_shared_text"]


def test_the_shipped_model_groups_no_two_employers_of_one_board(default_model) -> None:
    # The group: fields-only "Python Developer, Warszawa" cards of ten employers on justjoin.it.
    names = ["ITLT", "7N", "Indoorway", "Stabilis", "ASPER BROTHERS", "IIIT", "Famicord Group", "CloudFerro"]
    rows = [
        {"ad_id": f"w{k}", "title": "Python Developer", "company": name, "location": "Warszawa",
         "posted_at": "2019-10-17", "source": "justjoin.it",
         "url": f"https://justjoin.it/offers/{name.lower().replace(' ', '-')}-python-developer"}
        for k, name in enumerate(names)
    ]  # fmt: skip
    ads = pd.DataFrame([{c: row.get(c, pd.NA) for c in COLUMNS} for row in rows])
    groups = default_model.with_config(show_progress=False).run(ads).groups
    assert groups["group_size"].max() == 1


@pytest.mark.parametrize("padded", [False, True])
def test_one_city_written_in_two_languages_is_one_place(padded: bool) -> None:
    # justjoin.it writes "Warszawa", nofluffjobs "Warsaw" (workit_poland_jjit_nfj): GeoNames'
    # alternate names, not a hand list, make them one city; two cities still conflict.
    common = {"title": "Senior Java Developer", "company": "ProData Consult", "posted_at": "2019-10-17"}
    rows = [{**common, "ad_id": "a", "location": "Warszawa"}, {**common, "ad_id": "b", "location": "Warsaw"}]
    assert _features(rows, padded)["location_conflict"].iloc[0] == 0
    rows[1]["location"] = "Krakau"
    assert _features(rows, padded)["location_conflict"].iloc[0] == 1
    rows[0]["location"] = "Kraków, Małopolskie"
    assert _features(rows, padded)["location_conflict"].iloc[0] == 0
