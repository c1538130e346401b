"""Evidence a careful reader uses (#13): employers, requisition numbers, places named in the text,
page chrome, specific title words, fields-only pairs; the rules and the employer guard built on it.

Examples are shaped like the real crawls the errors came from (karriere.at pages with a list of
other ads, LinkedIn rows without a description, one requisition filed under two cities).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from jobdedup.features.employers import same_employer_names
from jobdedup.features.mentions import PLACE_FLEXIBLE_HASHES, PLACE_FLEXIBLE_WORDS
from jobdedup.features.pairs import build_pair_features
from jobdedup.features.requisitions import requisition_numbers
from jobdedup.features.salaries import salary_bands
from jobdedup.models.rules import apply_rules, rule_names
from jobdedup.pipeline.clean import cut_listing_widgets
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.employer_guard import split_mixed_employers
from jobdedup.pipeline.prepare import prepare_batch
from jobdedup.pipeline.sketch import tokenize

BODY = (
    "Wir suchen zum nächstmöglichen Eintritt eine Verstärkung für unser IT Team in Salzburg. "
    "Ihre Aufgaben sind die Betreuung der Server und Storage Infrastruktur, Netzwerke und Backup. "
    "Sie bringen eine abgeschlossene technische Ausbildung und mehrere Jahre Erfahrung mit. "
    "Wir bieten ein attraktives Gehaltspaket ab EUR 55.000 Jahresbrutto und flexible Arbeitszeiten."
)


def _ads(rows: list[dict]) -> pd.DataFrame:
    columns = ["ad_id", "description", "title", "company", "location", "occupation", "contact", "url",
               "posted_at", "source", "language"]  # fmt: skip
    return pd.DataFrame([{c: row.get(c, pd.NA) for c in columns} for row in rows])


def _pair(rows: list[dict], config: Config | None = None) -> pd.Series:
    batch = prepare_batch(_ads(rows), config or Config(), np.zeros(0, dtype=np.uint64))
    return build_pair_features(batch.inputs, np.array([0]), np.array([1])).iloc[0]


def test_fields_only_pair_of_two_employers_conflicts():
    # Two LinkedIn rows without text, generic title, one city (jobspy_mrtrkmn_germany): different employers.
    rows = [
        {"ad_id": "a", "description": "", "title": "DevOps Engineer", "company": "Nimbus", "location": "Berlin, Germany",
         "posted_at": "2025-11-03", "source": "linkedin"},
        {"ad_id": "b", "description": "", "title": "DevOps Engineer", "company": "Capgemini", "location": "Berlin, Germany",
         "posted_at": "2025-11-04", "source": "linkedin"},
    ]  # fmt: skip
    features = _pair(rows)
    assert features["sides_without_text"] == 2
    assert features["employer_conflict"] == 1


def test_fields_only_pair_features_tell_a_missing_employer_and_a_date_gap():
    same = {"description": "", "title": "Backend Engineer", "company": "Trading 212", "location": "Berlin, Germany",
            "source": "linkedin"}  # fmt: skip
    agreeing = _pair(
        [{**same, "ad_id": "a", "posted_at": "2025-11-03"}, {**same, "ad_id": "b", "posted_at": "2025-11-05"}]
    )
    assert agreeing["employer_conflict"] == 0 and agreeing["date_gap_days"] == 2
    no_company = _pair([{**same, "ad_id": "a", "company": pd.NA}, {**same, "ad_id": "b"}])
    assert np.isnan(no_company["employer_conflict"])
    months_apart = _pair(
        [{**same, "ad_id": "a", "posted_at": "2025-01-03"}, {**same, "ad_id": "b", "posted_at": "2025-06-03"}]
    )
    assert months_apart["date_gap_days"] == 151


def test_karriere_style_list_of_other_ads_is_cut_and_links_nothing():
    # Each page ends with "Weitere IT Jobs in Salzburg" naming the other employer's ad.
    widget = "Weitere IT Jobs in Salzburg Alle 275 Jobs anzeigen Merken IT System Administrator (m/w/d) {other} Salzburg (Stadt) vor 7 Tagen"
    vega = f"{BODY} Bewerbungen an Vega International GmbH. " + widget.format(other="Merkur Versicherung AG")
    merkur = (
        "Teammerkur seit 1798 sucht Verstärkung für die Versicherung. Sie verantworten Server, Storage, Linux und "
        "das Notfall Rechenzentrum, Qualitätssicherung der Backups und Teilzeit oder Vollzeit ist möglich. "
    ) + widget.format(other="Vega International GmbH")
    assert cut_listing_widgets(vega).endswith("Bewerbungen an Vega International GmbH. ")
    rows = [
        {"ad_id": "a", "description": vega, "title": "IT System Administrator:in",
         "company": "Vega International Car Transport and Logistic Trading GmbH", "source": "karriere.at"},
        {"ad_id": "b", "description": merkur, "title": "IT System Administrator (w/m/d)",
         "company": "Merkur Versicherung AG", "source": "karriere.at"},
    ]  # fmt: skip
    features = _pair(rows)
    assert features["employer_named_in_text"] == 0  # the widget naming the other employer is gone
    assert features["employer_conflict"] == 1


def test_agency_ad_naming_the_employer_links_two_names():
    rows = [
        {"ad_id": "a", "description": f"On behalf of our client Merkur Versicherung we are hiring. {BODY}",
         "title": "IT System Administrator", "company": "Hays Specialist Recruitment"},
        {"ad_id": "b", "description": "Merkur Versicherung: IT Abteilung. Eine ganz andere Beschreibung des Jobs hier.",
         "title": "IT System Administrator", "company": "Merkur Versicherung AG"},
    ]  # fmt: skip
    features = _pair(rows)
    assert features["employer_named_in_text"] == 1
    assert features["employer_conflict"] == 0


def test_requisition_numbers_equal_and_different():
    found = requisition_numbers(
        pd.Series(["Data Engineer (JR-017958)", "Data Engineer", None]),
        pd.Series(
            ["Req ID: 12903. Apply now.", "Requisition ID: 423765", "Posting: 04/28/2026, position 500-2000"]
        ),
        pd.Series([None, "https://marvell.wd1.myworkdayjobs.com/job/Santa-Clara/Engineer_R-0012345", None]),
    )
    assert found.tolist() == [
        ("12903", "jr017958"),
        ("423765", "r0012345"),
        None,
    ]  # dates and ranges are no ids

    def pair(ref_a: str, ref_b: str, city_b: str) -> pd.Series:
        return _pair([
            {"ad_id": "a", "description": f"{BODY} Job Requisition {ref_a}", "title": "Supply Chain Data Analyst",
             "company": "Nestle Health Science", "location": "New York, NY"},
            {"ad_id": "b", "description": f"{BODY} Job Requisition {ref_b}", "title": "Supply Chain Data Analyst",
             "company": "Nestle Health Science", "location": city_b},
        ])  # fmt: skip

    same = pair("401880", "401880", "Des Plaines, IL")  # one requisition filed under two cities
    assert same["requisition_match"] == 1
    assert rule_names(same.to_frame().T).tolist() == ["same_requisition"]
    assert apply_rules(np.array([0.06]), same.to_frame().T)[0] >= 0.99
    other = pair("279186BR", "279188BR", "New York, NY")  # one template, two openings
    assert other["requisition_match"] == 0
    assert rule_names(other.to_frame().T).tolist() == [None]  # the classifier decides


def test_requisition_numbers_behind_markup_and_glued_words():
    found = requisition_numbers(
        pd.Series([None, None, None, None, "Design Verification Senior Staff Engineer"]),
        pd.Series([
            "EEO guidelines. **ReqID:** J10152946 **Business Line:** B&P",  # markdown scrape (Adzuna)
            "Salary: £26,000 - £30,000 DOEReference Number: 10082Recruit UK",  # lines glued
            "&lt;strong&gt;Job ID: &lt;/strong&gt;P77413&lt;/div&gt;",  # escaped HTML (Greenhouse)
            "Full-time position - 100% FTE, temporary",  # a share of a job is no id
            None,
        ]),
        pd.Series([None, None, None, None,
                   "https://marvell.wd1.myworkdayjobs.com/MarvellCareers/job/Petah-Tikva/Design-Verification_2600069"]),
    )  # fmt: skip
    assert found.tolist() == [("j10152946",), ("10082",), ("p77413",), None, ("2600069",)]
    apple = "https://jobs.apple.com/en-il/details/200626595-0865/bt-mac-system-engineer?team=HRDWR"
    assert requisition_numbers(pd.Series([None]), pd.Series([None]), pd.Series([apple])).tolist() == [
        ("200626595",)
    ]


def test_reference_label_glued_to_the_word_before_is_searched_for():
    """A scrape that dropped line breaks glues the label to the salary before it (Recruit UK's two
    IFA Administrator ads on Adzuna): the texts are still searched, and two references are two
    openings."""

    def ad(ad_id: str, ref: str) -> dict:
        return {"ad_id": ad_id, "title": "IFA Administrator", "company": "Recruit UK", "location": "Birmingham",
                "description": f"{BODY} Location: BirminghamSalary: £26,000 - £30,000Reference Number: {ref}"
                               "Recruit UK is working with a financial advisers' practice."}  # fmt: skip

    batch = prepare_batch(_ads([ad("a", "10298"), ad("b", "10082")]), Config(), np.zeros(0, dtype=np.uint64))
    assert batch.inputs.fields["refs"].tolist() == [("10298",), ("10082",)]
    features = build_pair_features(batch.inputs, np.array([0]), np.array([1]))
    assert features["requisition_match"].tolist() == [0.0]


def test_rand_salaries_are_no_requisition_numbers_and_r_ids_stay():
    """A self-named id in form, "R25000" is a South African salary in fact: beside a range, a pay
    period or a pay word it is no requisition (equal salaries would make two vacancies one), while
    Workday's and others' R-ids stay ids."""
    texts = [
        "Salary R25000 - R30000 per month. Contact number: 082 123 4567",  # searched: "number" 082
        "Remuneration: R18000pm, between R20000 and R25000 with bonus",
        "Job ID #R75091 The Brink's Company",
        "Requisition ID: 2020-R0281615 Schedule: Full-time",
        "Home-based | R1550643 Job Overview",
    ]
    found = requisition_numbers(pd.Series([None] * 5), pd.Series(texts), pd.Series([None] * 5)).tolist()
    assert found == [None, None, ("r75091",), ("2020r0281615", "r0281615"), ("r1550643",)]


def test_salary_bands_found_and_estimates_left_out():
    texts = pd.Series([
        "Data Architect - Bristol - up to £120,000 plus car allowance (SC clearance)",
        "Data Architect, Bristol. Salary: up to £90,000 + benefits",
        "Project Controls Analytics Consultant AECOM Leeds £39,945\n per year - estimated. Great benefits",
        "Day rate £400 per day inside IR35, £2,000 joining bonus",  # no yearly pay named
        "Gehalt EUR 55.000 bis EUR 65.000 brutto, $3,000,000 Series A",
        None,
    ])  # fmt: skip
    assert salary_bands(texts).tolist() == [
        "GBP 120000 120000", "GBP 90000 90000", None, None, "EUR 55000 65000", None,
    ]  # fmt: skip


def test_different_salary_bands_are_two_openings_unless_one_listing():
    # One agency, one title and town, two Adzuna snippets with other bands (jobspy_martadatauk_uk).
    common = {"title": "Data Architect", "company": "Anson McCade", "location": "Bristol, South West England",
              "source": "adzuna"}  # fmt: skip
    body = ("We are looking for a Data Architect to design enterprise data platforms, lead modelling and "
            "governance, and advise stakeholders across several programmes in Bristol, hybrid working.")  # fmt: skip
    rows = [
        {**common, "ad_id": "a", "description": f"{body} Up to £120,000 plus car allowance, SC clearance."},
        {**common, "ad_id": "b", "description": f"{body} Up to £90,000, public and private sector clients."},
    ]
    apart = _pair(rows)
    assert apart["salary_bands_disjoint"] == 1
    assert rule_names(apart.to_frame().T).tolist() == ["different_salary_bands"]
    assert apply_rules(np.array([0.97]), apart.to_frame().T)[0] <= 0.01
    rows[1]["description"] = f"{body} Salary £100,000 - £125,000 depending on experience."
    overlapping = _pair(rows)
    assert overlapping["salary_bands_disjoint"] == 0
    assert rule_names(overlapping.to_frame().T).tolist() == [None]
    rows[1]["description"] = f"{body} Competitive salary."  # one side names no band: no evidence
    assert np.isnan(_pair(rows)["salary_bands_disjoint"])


def test_one_requisition_accepts_a_pair_posted_far_apart():
    base = {"same_listing": np.nan, "employer_conflict": 0.0, "sides_without_text": 0.0, "title_token_set": 1.0,
            "title_level_differs": 0.0, "location_conflict": 0.0, "title_specific_only_max": 0.0, "title_words_unnamed": 0.0, "salary_bands_disjoint": np.nan,
            "containment_core_max": 0.9, "log_words_min": 5.0, "email_match": np.nan, "phone_match": np.nan}  # fmt: skip
    features = pd.DataFrame([
        {**base, "requisition_match": np.nan, "date_gap_days": 96.0},  # the Marvell re-advertisement
        {**base, "requisition_match": np.nan, "date_gap_days": 73.0},  # within about two months
        {**base, "requisition_match": 1.0, "date_gap_days": 120.0},  # one requisition still open
    ])  # fmt: skip
    assert rule_names(features).tolist() == [None, None, "same_requisition"]
    assert apply_rules(np.array([0.8, 0.8, 0.8]), features).tolist() == [0.8, 0.8, 0.99]


def test_multi_city_listing_named_in_the_text_is_no_place_conflict():
    text = f"{BODY} This role is based in our Bristol or London office, hybrid three days a week."
    common = {"title": "AI Deployment Engineer", "company": "Emponics", "source": "adzuna"}
    multi = _pair([
        {**common, "ad_id": "a", "description": text, "location": "Bristol, South West England"},
        {**common, "ad_id": "b", "description": text, "location": "London, UK"},
    ])  # fmt: skip
    assert multi["place_named_in_text"] == 1 and multi["location_conflict"] == 0
    per_town = _pair([
        {**common, "ad_id": "a", "description": BODY, "location": "Leeds, UK"},
        {**common, "ad_id": "b", "description": BODY, "location": "York, UK"},
    ])  # fmt: skip
    assert per_town["location_conflict"] == 1


def test_job_both_texts_call_remote_or_a_choice_of_offices_is_no_place_conflict():
    """Sites file a remote job under towns of their own choosing (Mindrift's freelance projects
    under Glasgow and Manchester); a template whose text says nothing of the kind stays two."""
    common = {"title": "Data Analyst (Contract)", "company": "Digital Waffle", "source": "adzuna"}
    for said in ("This is a fully remote contract, outside IR35.",
                 "Work from anywhere in the UK.",
                 "You live within commuting distance of one of our offices."):  # fmt: skip
        text = f"{BODY} {said}"
        flexible = _pair([
            {**common, "ad_id": "a", "description": text, "location": "London, UK"},
            {**common, "ad_id": "b", "description": text, "location": "Leeds, UK"},
        ])  # fmt: skip
        assert flexible["location_conflict"] == 0, said
    adverb = f"{BODY} You fix problems remotely and in person on site."
    per_town = _pair([
        {**common, "ad_id": "a", "description": adverb, "location": "Maidstone, Kent"},
        {**common, "ad_id": "b", "description": adverb, "location": "Canterbury, Kent"},
    ])  # fmt: skip
    assert per_town["location_conflict"] == 1
    one_side = _pair([
        {**common, "ad_id": "a", "description": f"{BODY} Fully remote.", "location": "London, UK"},
        {**common, "ad_id": "b", "description": BODY, "location": "Leeds, UK"},
    ])  # fmt: skip
    assert one_side["location_conflict"] == 1
    # The employer's template per town: each text names its own town, or another salary.
    own_towns = _pair([
        {**common, "ad_id": "a", "description": f"{BODY} Remote, with visits to our Leeds site.", "location": "Leeds, UK"},
        {**common, "ad_id": "b", "description": f"{BODY} Remote, with visits to our York site.", "location": "York, UK"},
    ])  # fmt: skip
    assert own_towns["location_conflict"] == 1
    other_pay = _pair([
        {**common, "ad_id": "a", "description": f"{BODY} Fully remote, GBP 300 a day.", "location": "London, UK"},
        {**common, "ad_id": "b", "description": f"{BODY} Fully remote, GBP 350 a day.", "location": "Leeds, UK"},
    ])  # fmt: skip
    assert other_pay["location_conflict"] == 1


def test_title_of_an_ad_without_text_says_where_the_job_is():
    """A fields-only ad's title is all its text: "(Remote)" in both titles, or a title naming the
    other listing's town, makes two listing cities one job (jobspy_mrtrkmn_germany's LinkedIn and
    Indeed rows); titles naming only their own towns stay a per-town template."""
    common = {"description": "", "company": "MindFriend PRO", "posted_at": "2026-02-16", "source": "linkedin"}
    remote = _pair([
        {**common, "ad_id": "a", "title": "Software Developer (Remote)", "location": "Berlin, Germany"},
        {**common, "ad_id": "b", "title": "Software Developer (Remote)", "location": "Hamburg, Germany"},
    ])  # fmt: skip
    assert remote["sides_without_text"] == 2 and remote["location_conflict"] == 0
    common = {"description": "", "company": "Amazon", "posted_at": "2026-02-16", "source": "indeed"}
    title = "Sr. Site Process Engineer / Process Improvement Specialist - Pforzheim"
    site = _pair([
        {**common, "ad_id": "a", "title": title, "location": "Pforzheim, BW, DE"},
        {**common, "ad_id": "b", "title": title, "location": "Frankfurt am Main, HE, DE"},
    ])  # fmt: skip
    assert site["place_named_in_text"] == 1 and site["location_conflict"] == 0
    assert rule_names(site.to_frame().T).tolist() == [None]
    per_town = _pair([
        {**common, "ad_id": "a", "title": "Support Worker Amersham", "location": "Amersham, UK"},
        {**common, "ad_id": "b", "title": "Support Worker High Wycombe", "location": "High Wycombe, UK"},
    ])  # fmt: skip
    assert per_town["location_conflict"] == 1


def test_place_flexible_hashes_are_the_tokenisers():
    words = tokenize([" ".join(PLACE_FLEXIBLE_WORDS)]).word_hash.astype(np.uint32)
    assert np.array_equal(np.unique(words), PLACE_FLEXIBLE_HASHES)
    assert len(PLACE_FLEXIBLE_HASHES) == len(PLACE_FLEXIBLE_WORDS)


def test_listing_filed_under_a_district_of_the_town_the_text_names():
    # Adzuna files one Emponics job under districts (martadatauk): "Filton, Bristol" and "The City,
    # Central London"; the text says "Bristol or London". The town a district lies in counts.
    text = f"{BODY} This role is based in our Bristol or London office, hybrid three days a week."
    common = {"title": "AI Deployment Engineer", "company": "Emponics", "source": "adzuna"}
    districts = _pair([
        {**common, "ad_id": "a", "description": text, "location": "Filton, Bristol"},
        {**common, "ad_id": "b", "description": text, "location": "The City, Central London"},
    ])  # fmt: skip
    assert districts["place_named_in_text"] == 1 and districts["location_conflict"] == 0
    # A district whose town the text does not name is still another place.
    elsewhere = _pair([
        {**common, "ad_id": "a", "description": BODY, "location": "Filton, Bristol"},
        {**common, "ad_id": "b", "description": BODY, "location": "Openshaw, Manchester"},
    ])  # fmt: skip
    assert elsewhere["place_named_in_text"] == 0 and elsewhere["location_conflict"] == 1
    # A county is no town: one agency template per town of a county that both texts name is two
    # vacancies (adzuna: "Amersham, Buckinghamshire" / "High Wycombe, Buckinghamshire").
    county_text = f"{BODY} Support workers needed across Buckinghamshire."
    per_town = _pair([
        {**common, "ad_id": "a", "description": county_text, "location": "Amersham, Buckinghamshire"},
        {**common, "ad_id": "b", "description": county_text, "location": "High Wycombe, Buckinghamshire"},
    ])  # fmt: skip
    assert per_town["place_named_in_text"] == 0 and per_town["location_conflict"] == 1


# DWP Digital's Performance Analyst campaign (martadatauk): the full ad offers "Your choice of
# Birmingham, Blackpool, Leeds, Manchester, Newcastle or Sheffield", and Adzuna files one copy under
# "Longbenton, Newcastle Upon Tyne": "Newcastle" names that listing's town, as "Frankfurt" names
# "Frankfurt am Main"; a town the text does not name stays a conflict.
_CAMPAIGN = "Location: Your choice of Birmingham, Blackpool, Leeds, Manchester, Newcastle or Sheffield."


@pytest.mark.parametrize(
    ("said", "listed", "other_listing", "named"),
    [
        (_CAMPAIGN, "Leeds, West Yorkshire", "Longbenton, Newcastle Upon Tyne", True),
        ("Offices in Frankfurt and Berlin.", "Berlin, Germany", "Frankfurt am Main, Hesse, Germany", True),
        ("Offices in Berlin.", "Berlin, Germany", "Frankfurt am Main, Hesse, Germany", False),
    ],
)
def test_text_names_a_town_without_the_river_its_full_name_adds(
    said: str, listed: str, other_listing: str, named: bool
):
    common = {"title": "Performance Analyst", "company": "DWP Digital", "source": "adzuna"}
    pair = _pair([
        {**common, "ad_id": "a", "description": f"{BODY} {said}", "location": listed},
        {**common, "ad_id": "b", "description": BODY, "location": other_listing},
    ])  # fmt: skip
    assert pair["place_named_in_text"] == float(named)
    assert pair["location_conflict"] == float(not named)


def test_one_requisition_filed_under_two_towns_is_one_vacancy():
    common = {"description": BODY, "company": "Careworx", "source": "adzuna"}
    with_ref = _pair([
        {**common, "ad_id": "a", "title": "Cashier - Woodbridge", "location": "Woodbridge, ON",
         "description": f"{BODY} Requisition ID: 4471203"},
        {**common, "ad_id": "b", "title": "Cashier - Whitby", "location": "Whitby, ON",
         "description": f"{BODY} Requisition ID: 4471203"},
    ])  # fmt: skip
    assert rule_names(with_ref.to_frame().T).tolist() == ["same_requisition"]


def test_same_listing_is_one_vacancy():
    url = "https://www.karriere.at/jobs/7095220"
    rows = [
        {"ad_id": "a", "description": BODY, "title": "IT Help Desk", "company": "GfS", "url": url},
        {"ad_id": "b", "description": BODY + " Neu!", "title": "IT Help Desk Mitarbeiter*in", "company": "GfS",
         "url": url + "?utm_source=x"},
    ]  # fmt: skip
    features = _pair(rows)
    assert features["same_listing"] == 1
    assert rule_names(features.to_frame().T).tolist() == ["same_listing"]


def test_malformed_url_is_no_listing():
    from jobdedup.features.listings import listing_keys

    urls = pd.Series(["http://[::1 http://[::1", "https://www.karriere.at/jobs/7095220/", None])
    assert listing_keys(urls).tolist() == [None, "karriere.at/jobs/7095220", None]


def test_specific_title_words_on_both_sides_are_counted():
    frontend = {
        "ad_id": "a",
        "description": BODY,
        "title": "Senior Frontend Engineer (m/w/d)",
        "location": "Amsterdam",
    }
    backend = {
        "ad_id": "b",
        "description": BODY,
        "title": "Backend Engineer - Amsterdam",
        "location": "Amsterdam",
    }
    features = _pair([frontend, backend])
    assert features["title_specific_only_min"] == 1  # frontend / backend
    assert features["title_specific_only_max"] == 2  # senior + frontend
    summer = _pair(
        [{**frontend, "title": "Accounting Summer Student"}, {**backend, "title": "Summer Student"}]
    )
    assert (summer["title_specific_only_min"], summer["title_specific_only_max"]) == (0, 1)


def test_block_shared_by_three_employers_is_chrome_whatever_the_titles():
    nav = "Zum Seiteninhalt springen Anmelden Neu hier Kostenlos registrieren Inserat teilen Link kopieren"
    rows = [
        {"ad_id": str(k), "description": f"{nav}\n{BODY} Stelle {k} bei Firma {k}.", "title": "IT System Administrator",
         "company": company}
        for k, company in enumerate(["Vega GmbH", "Merkur AG", "Grüne Erde GmbH"])
    ]  # fmt: skip
    batch = prepare_batch(_ads(rows), Config(), np.zeros(0, dtype=np.uint64))
    assert (batch.inputs.core_words < batch.inputs.words).all()  # the navigation line is left out
    one_employer = prepare_batch(
        _ads([{**row, "company": "Vega GmbH"} for row in rows]), Config(), np.zeros(0, np.uint64)
    )
    assert (
        one_employer.inputs.core_words == one_employer.inputs.words
    ).all()  # one title, one employer: kept


def test_employer_guard_splits_a_chain_through_ads_without_a_company():
    companies = pd.Series(["nimbus", None, "capgemini", "capgemini", None])
    edges = pd.DataFrame({"i": [0, 1, 2, 3], "j": [1, 2, 3, 4], "probability": [0.99, 0.97, 0.99, 0.98]})
    labels, splits = split_mixed_employers(np.zeros(5, dtype=np.int64), companies, edges, edges.iloc[:0])
    assert labels[0] == labels[1] and labels[2] == labels[3] == labels[4] and labels[0] != labels[2]
    assert [(s.size, s.employers, s.parts) for s in splits] == [(5, ("capgemini", "nimbus"), 2)]


def test_employer_guard_keeps_spelling_variants_and_agencies_carrying_one_client():
    companies = pd.Series(["saransh", "tata consultancy services", "jobs via dice", "tcs"])
    edges = pd.DataFrame({"i": [0, 0, 1, 1], "j": [1, 2, 2, 3], "probability": [0.97, 0.88, 0.82, 0.99]})
    links = pd.DataFrame({"i": [0, 0, 1], "j": [1, 2, 2]})  # every two of the three employers linked
    labels, splits = split_mixed_employers(np.zeros(4, dtype=np.int64), companies, edges, links)
    assert len(set(labels.tolist())) == 1 and splits == []
    # An agency linked to two clients that are not linked to each other joins neither.
    two_clients = pd.Series(["harnham", "acme", "globex"])
    edges = pd.DataFrame({"i": [0, 0], "j": [1, 2], "probability": [0.9, 0.9]})
    labels, splits = split_mixed_employers(np.zeros(3, dtype=np.int64), two_clients, edges, edges[["i", "j"]])
    assert len(set(labels.tolist())) == 3 and splits[0].parts == 3


def test_acronym_skipping_a_word_is_one_employer_only_when_long_and_anchored():
    # NICE's ads in jobspy_martadatauk_uk: "NICE" and "The National Institute for Health and Care
    # Excellence" (its H skipped); a three-letter acronym that skips a word is not matched.
    assert same_employer_names("nice", "national institute for health and care excellence")
    assert not same_employer_names("sap", "salt and pepper steakhouse")
    assert not same_employer_names("nce", "national institute for health and care excellence")
    assert not same_employer_names(
        "nihc", "national institute for health and care excellence"
    )  # not the last word's
    companies = pd.Series(["nice", None, "national institute for health and care excellence"])
    edges = pd.DataFrame({"i": [0, 1], "j": [1, 2], "probability": [0.95, 0.93]})
    labels, splits = split_mixed_employers(np.zeros(3, dtype=np.int64), companies, edges, edges.iloc[:0])
    assert len(set(labels.tolist())) == 1 and splits == []


def test_title_word_the_other_ad_never_names_marks_another_vacancy():
    # Whatnot (jobspy_ryrk1020_dfw): a generalist Data Engineer ad and one for the Payments team.
    general = (
        "We are hiring a Data Engineer to build our warehouse pipelines in Python and SQL. You will be "
        "matched to one of our product and analytics teams after onboarding. Hybrid in Seattle, Washington."
    )
    payments = general.replace("matched to one of our product and analytics teams", "on the payments team")
    common = {"company": "Whatnot", "location": "Seattle, WA", "source": "linkedin"}
    team = _pair([
        {**common, "ad_id": "a", "description": general, "title": "Data Engineer"},
        {**common, "ad_id": "b", "description": payments, "title": "Data Engineer, Payments"},
    ])  # fmt: skip
    assert team["title_specific_only_max"] >= 1 and team["title_words_unnamed"] == 1
    assert rule_names(team.to_frame().T).tolist() == ["title_word_unnamed"]
    # A retitled repost whose text names the extra word: no evidence against it.
    named = _pair([
        {**common, "ad_id": "a", "description": payments, "title": "Data Engineer"},
        {**common, "ad_id": "b", "description": payments, "title": "Data Engineer, Payments"},
    ])  # fmt: skip
    assert named["title_words_unnamed"] == 0
    assert rule_names(named.to_frame().T).tolist() == [None]
    # Against an ad without text only its title could name the word: no evidence either way.
    fields_only = _pair([
        {**common, "ad_id": "a", "description": "", "title": "Data Engineer"},
        {**common, "ad_id": "b", "description": payments, "title": "Data Engineer, Payments"},
    ])  # fmt: skip
    assert np.isnan(fields_only["title_words_unnamed"])


def test_a_name_table_at_most_half_full_finds_every_word_it_holds_and_no_other():
    """The open-addressing table of a vocabulary (an index's name words): every held word found,
    words it does not hold (near misses and random ones) not, whatever the clusters its probes
    meet at half load."""
    from jobdedup.pipeline.evidence_kernels import name_sets, word_table

    rng = np.random.default_rng(5)
    for n in (1, 7, 1000, 65_536, 100_000):
        held = np.unique(rng.integers(0, 2**32, n, dtype=np.uint64)).astype(np.uint32)
        assert len(word_table(held)) >= 2 * len(held)
        assert n < 8 or len(word_table(held)) < 4 * len(held)  # (half full at most, a quarter at least)
        others = np.setdiff1d(
            np.r_[held.astype(np.uint64) + 1, rng.integers(0, 2**32, n, dtype=np.uint64)] % 2**32, held
        )
        words = np.r_[held.astype(np.uint64), others]
        _, found = name_sets(words, np.array([0, len(words)]), held)
        assert found.tolist() == held.tolist()
