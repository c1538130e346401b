"""Tests of features.normalize: real-looking values in several languages, NA handling, properties."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jobdedup.features.normalize import (
    JOB_BOARD_DOMAINS,
    contacts,
    district_town,
    domains,
    extract_contacts,
    extract_domains,
    extract_emails,
    extract_phones,
    location_city,
    location_parts,
    normalize_company,
    normalize_location,
    normalize_occupation,
    normalize_text_key,
    normalize_title,
    phones,
    short_town_name,
    text,
)


def run(func, values):  # type: ignore[no-untyped-def]
    return func(pd.Series(values, dtype=object)).tolist()


# ---------------------------------------------------------------------------------- text key


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  Düsseldorf – Café  ", "dusseldorf cafe"),
        ("Ｄiffer", "differ"),  # full-width letters (NFKC)
        ("Straße", "strasse"),
        ("Москва, Ёлки!", "москва елки"),
        ("Αθήνα", "αθηνα"),
        ('מנכ"ל / סמנכ״ל', "מנכל סמנכל"),
        ("\u200fתל\u200b אביב\u200e", "תל אביב"),  # RTL marks and zero-width space removed
        ("東京 エンジニア", "東京 エンジニア"),
        ("हिन्दी डेवलपर", "हिन्दी डेवलपर"),  # Devanagari vowel signs stay inside words
        ("C++ / C# / .NET Developer", "cpp csharp dotnet developer"),
        ("NestlÃ© Health Science", "nestle health science"),  # mojibake repaired
        ("O'Fallon", "ofallon"),
    ],
)
def test_text_key_examples(raw: str, expected: str) -> None:
    assert run(normalize_text_key, [raw]) == [expected]


def test_text_key_na_and_empty() -> None:
    s = pd.Series(["Data Engineer", None, "", "  --- !!", float("nan")], index=[10, 11, 12, 13, 14])
    out = normalize_text_key(s)
    assert list(out.index) == [10, 11, 12, 13, 14]
    assert out.iloc[0] == "data engineer"
    assert out.iloc[1:].isna().all()
    assert str(out.dtype) == "string"


def test_accepts_pyarrow_string_series() -> None:
    s = pd.Series(["ACME GmbH", None], dtype="string")
    assert normalize_company(s).tolist() == ["acme", pd.NA]


def test_rejects_non_series() -> None:
    with pytest.raises(TypeError, match="pandas Series"):
        normalize_title(["Data Engineer"])  # type: ignore[arg-type]


def test_occupation() -> None:
    assert run(normalize_occupation, ["IT & Telecoms Jobs", "Gesundheit / Soziales", None]) == [
        "it telecoms jobs",
        "gesundheit soziales",
        pd.NA,
    ]


# ---------------------------------------------------------------------------------- titles


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Senior Java Developer (m/w/d)", "senior java developer"),
        ("IT-System-Administrator(m/d/w)", "it system administrator"),
        ("Backend Developer:in (f/m/d)", "backend developer"),
        ("Python Entwickler*in Inspektionssoftware (m/w/d)", "python entwickler inspektionssoftware"),
        ("Softwareentwickler/in Java (w/m/d)", "softwareentwickler java"),
        ("Staff Data Engineer (all genders)", "staff data engineer"),
        ("Senior Full Stack Developer (gn*)", "senior full stack developer"),
        ("Data Scientist d/f/m", "data scientist"),
        ("Chef de projet data (H/F)", "chef de projet data"),
        ("Chargé(e) de recrutement F/H", "charge de recrutement"),
        ("Développeur·se Power BI", "developpeur power bi"),
        ("Data Analist (m/v/x)", "data analist"),
        ("Verkoopmedewerker (M/V)", "verkoopmedewerker"),
        ("מנהל/ת פרויקטים Salesforce", "מנהל פרויקטים salesforce"),
        ("דרוש/ה סטודנט/ית לאגף הון אנושי", "דרוש סטודנט לאגף הון אנושי"),
        ("Программист C++ (удалённо)", "программист cpp удаленно"),
        ("Python Developer | Remote", "python developer"),
        ("Senior Python Engineer - Hybrid", "senior python engineer"),
        ("MuleSoft Developer (Remote)", "mulesoft developer"),
        ("Manager Observability Architect | Germany | Remote", "manager observability architect"),
        ("Senior Java FullStack Developer (m/w/d) - Remote", "senior java fullstack developer"),
        ("HR Business Partner - 13 month Contract - Hybrid", "hr business partner"),
        ("QA Engineer with .NET and C# – R01536322", "qa engineer with dotnet and csharp"),
        ("Sales Executive £30k - £35k per annum", "sales executive"),
        ("Sr. Eng Mgr", "senior engineer manager"),
        ("Jr Dev", "junior developer"),
        ("Software Engineer III", "software engineer 3"),
        ("Developer", "developer"),  # "dev" inside words is untouched
        ("DevOps Engineer", "devops engineer"),
        ("Remote", "remote"),  # a qualifier alone is kept rather than emptied
    ],
)
def test_title_examples(raw: str, expected: str) -> None:
    assert run(normalize_title, [raw]) == [expected]


def test_title_keeps_seniority_and_shift() -> None:
    senior, junior, nights = run(
        normalize_title, ["Senior Data Engineer", "Junior Data Engineer", "Nurse (Nights)"]
    )
    assert senior != junior
    assert nights == "nurse nights"


def test_title_same_vacancy_across_sites() -> None:
    variants = [
        "Sr. Data Engineer (m/w/d)",
        "Senior Data Engineer",
        "SENIOR DATA ENGINEER - Remote",
        "Senior Data Engineer (all genders)",
    ]
    assert set(run(normalize_title, variants)) == {"senior data engineer"}


# ---------------------------------------------------------------------------------- companies


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("ACME Ltd", "acme"),
        ("Acme Limited", "acme"),
        ("acme", "acme"),
        ("The ACME Company", "acme"),
        ("Grüne Erde GmbH", "grune erde"),
        ("SYSTAVO GmbH & Co. KG", "systavo"),
        ("Innatera Nanosystems B.V.", "innatera nanosystems"),
        ("ING Bank N.V.", "ing bank"),
        ("Amazon Development Center (Netherlands) B.V.", "amazon development center"),
        ("Amazon Web Services EMEA SARL, Dutch Branch", "amazon web services"),
        ("Genesis Tech Solutions Pvt Limited", "genesis tech solutions"),
        ("Mobile Programming India Private Limited", "mobile programming"),
        ("Tesla, Inc.", "tesla"),
        ("Fusion Solutions, L.L.C.", "fusion solutions"),
        ("NVIDIA Corporation", "nvidia"),
        ("DeepL SE", "deepl"),
        ("Volvo AB", "volvo"),
        ("Booking.com", "booking"),
        ("Welltower™ Inc. (NYSE:WELL)", "welltower"),
        ("Bain &amp; Company", "bain"),
        ("Het Nederlands Kanker Instituut", "nederlands kanker instituut"),
        ('קומבלק איי.טי. בע"מ', "קומבלק איי טי"),
        ("תיגבור - מאגר כח אדם מקצועי זמני בע''מ", "תיגבור מאגר כח אדם מקצועי זמני"),
        ("330779353 CoreLogic Solutions, LLC", "corelogic solutions"),
        ("NestlÃ©", "nestle"),
        ("Limited", "limited"),  # never emptied
        ("SA Power Networks", "sa power networks"),  # a legal word at the start is a name
        ("Dell Careers", "dell"),  # an employer's own careers page
        ("Coinbase Careers Page", "coinbase"),
        ("Rubrik Job Board", "rubrik"),
        ("Michael Page", "michael page"),  # "page" alone is a name's word
        ("Careers", "careers"),
    ],
)
def test_company_examples(raw: str, expected: str) -> None:
    assert run(normalize_company, [raw]) == [expected]


@pytest.mark.parametrize(
    "raw",
    [
        "hackajob",
        "Jobs via Dice",
        "Jobs via eFinancialCareers",
        "myGwork - LGBTQ+ Business Community",
        "Jobgether",
    ],
)
def test_aggregators_posting_for_other_employers_leave_the_employer_unknown(raw: str) -> None:
    # "hackajob is collaborating with Barclays ..." (martadatauk): the ad is Barclays', not hackajob's.
    assert run(normalize_company, [raw]) == [pd.NA]


def test_boards_that_hire_under_their_own_name_stay_employers() -> None:
    assert run(normalize_company, ["LinkedIn", "Glassdoor", "Indeed"]) == ["linkedin", "glassdoor", "indeed"]


# ---------------------------------------------------------------------------------- locations


@pytest.mark.parametrize(
    ("raw", "expected", "city"),
    [
        ("Dallas, TX", "dallas tx", "dallas"),
        ("Dallas, Texas, United States", "dallas tx", "dallas"),
        ("Dallas, TX, USA", "dallas tx", "dallas"),
        ("Dallas, TX 75201", "dallas tx", "dallas"),
        ("Italy, TX, USA", "italy tx", "italy"),  # a town called Italy
        ("London", "london", "london"),
        ("London, England, UK", "london", "london"),
        ("London Area, United Kingdom", "london", "london"),
        ("London SW1A 1AA", "london", "london"),
        ("Cheshire, UK, Cheshire", "cheshire", "cheshire"),
        ("Amsterdam, North Holland, Netherlands", "amsterdam nh", "amsterdam"),
        ("Amsterdam, NH, NL", "amsterdam nh", "amsterdam"),
        ("Amsterdam-Zuidoost, NH, NL", "amsterdam nh", "amsterdam"),
        ("1012 AB Amsterdam", "amsterdam", "amsterdam"),
        ("Den Haag, ZH, NL", "the hague zh", "the hague"),
        ("München, BY, DE", "munich by", "munich"),
        ("Munich, Bavaria, Germany", "munich by", "munich"),
        ("10115 Berlin", "berlin", "berlin"),
        ("Toronto, ON, CA", "toronto on", "toronto"),
        ("Toronto, Ontario, Canada", "toronto on", "toronto"),
        ("Sharon, CA", "sharon ca", "sharon"),
        ("Bengaluru East, Karnataka, India", "bengaluru ka", "bengaluru"),
        ("Bangalore", "bengaluru", "bengaluru"),
        ("Hybrid work in Noida, Uttar Pradesh", "noida up", "noida"),
        ("Tel Aviv-Yafo, Tel Aviv District, Israel", "tel aviv ta", "tel aviv"),
        ("תל אביב-יפו, TA", "tel aviv ta", "tel aviv"),
        ("Paris, Île-de-France, France", "paris idf", "paris"),
        ("Paris, A8, FR", "paris idf", "paris"),
        ("Seattle, WA (+2 others)", "seattle wa", "seattle"),
        ("San Francisco, CA | New York City, NY", "san francisco ca", "san francisco"),
        ("Austin, Texas Metropolitan Area", "austin tx", "austin"),
        ("Texas, United States", "tx", pd.NA),
        ("United States", "united states", pd.NA),
        ("Nederland", "netherlands", pd.NA),
        ("Remote", "remote", pd.NA),
        ("Remote - USA", "remote", pd.NA),
        ("Home Office, DE", "remote", pd.NA),
        ("Werk van thuis, NL", "remote", pd.NA),
        ("Remote in Kochi, Kerala", "kochi kl", "kochi"),
    ],
)
def test_location_examples(raw: str, expected: str, city: object) -> None:
    assert run(normalize_location, [raw]) == [expected]
    assert run(location_city, [raw]) == [city]


@pytest.mark.parametrize(
    ("raw", "subdivision"),
    [
        ("Dallas, TX", "tx"),
        ("Florida, United States", "fl"),
        ("Dallas County, TX", "tx"),
        ("New York, United States", "ny"),  # a city-state written alone names its state
        ("Berlin", "be"),
        ("Munich, Bavaria, Germany", "by"),
        ("Amsterdam, NH, NL", "nh"),
        ("Remote, OR", pd.NA),  # remote: the region says nothing of where the work is
        ("Washington", pd.NA),  # WA or DC
        ("London", pd.NA),
        ("United States", pd.NA),
        (None, pd.NA),
    ],
)
def test_location_subdivision(raw: object, subdivision: object) -> None:
    assert location_parts(pd.Series([raw], dtype=object))[3].tolist() == [subdivision]


def test_location_na() -> None:
    assert run(normalize_location, [None, "", "  ,  "]) == [pd.NA, pd.NA, pd.NA]
    assert run(location_city, [None, ""]) == [pd.NA, pd.NA]


# ---------------------------------------------------------------------------------- contacts


def test_extract_emails() -> None:
    out = run(
        extract_emails,
        [
            "Jobs@ACME.co.uk, jobs@acme.co.uk",
            "Bewerbung an bewerbung(at)firma.de oder HR@Firma.de.",
            "contact ties.herpers@nn\\.nl or e\\-mail",
            "logo@2x.png and no address",
            None,
            "",
        ],
    )
    assert out == [
        ("jobs@acme.co.uk",),
        ("bewerbung@firma.de", "hr@firma.de"),
        ("ties.herpers@nn.nl",),
        pd.NA,
        pd.NA,
        pd.NA,
    ]


def test_extract_phones() -> None:
    texts = [
        "Call +44 20 7946 0958",
        "Tel. 020 7946 0958",
        "Tel: +43 (0) 5242 6951",
        "bel 06 17 33 63 28",
        "EEO Department at (703) 218-6000.",
        "Salary £25,000 - £30,000, posted 09.06.2026, job 2024-05-16, id 123456789",
        None,
    ]
    regions = [None, "GB", "AT", "NL", "NL", "GB", None]
    out = extract_phones(pd.Series(texts, dtype=object), pd.Series(regions, dtype=object)).tolist()
    assert out[0] == out[1] == ("+442079460958", "02079460958")
    at = ("+4352426951", "052426951")
    assert out[2] == extract_phones(pd.Series(["05242 6951"]), pd.Series(["AT"]))[0] == at
    assert out[3] == ("+31617336328", "0617336328")
    # North American 3-3-4 is read as such in an ad of another or no country.
    assert out[4] == run(extract_phones, ["+1 703 218 6000"])[0] == ("+17032186000", "7032186000")
    assert out[5] is pd.NA and out[6] is pd.NA
    # A national number in an ad of unknown country cannot be placed: its digits are its key,
    # shared with the same number in an ad whose country is known.
    assert run(extract_phones, ["Tel. 020 7946 0958"]) == [("02079460958",)]


def test_extract_domains() -> None:
    out = run(
        extract_domains,
        [
            "https://careers.acme.co.uk/job/1",
            "https://de.indeed.com/viewjob?jk=1",
            "https://marvell.wd1.myworkdayjobs.com/en-US/job/1",
            "Apply: jobs@acme.de or www.acme.com, not someone@gmail.com",
            "https://www.linkedin.com/jobs/view/1 https://www.tau.ac.il/jobs",
            "http://www.Oticon.com",
            "acme.com.au",
            None,
        ],
    )
    assert out == [
        ("acme.co.uk",),
        pd.NA,
        pd.NA,
        ("acme.com", "acme.de"),
        ("tau.ac.il",),
        ("oticon.com",),
        ("acme.com.au",),
        pd.NA,
    ]


@pytest.mark.parametrize(
    ("python", "re2"),
    [
        (r"\s", contacts._RE2_SPACE),
        (r"\d", f"[{contacts._RE2_DIGITS}]"),
        (text._INVISIBLE_RE.pattern, contacts._HAS_INVISIBLE.re2),
        ("(?i)[aä]", "[aAäÄ]"),  # the letters of "(at)" / "(ät)" in `_RE2_OBFUSCATED_AT`
        ("(?i)t", "[tT]"),
        ("(?i)w", "[wW]"),  # "www." in `_RE2_MAY_HAVE_DOMAINS`
    ],
)
def test_re2_pre_checks_see_the_characters_python_re_sees(python: str, re2: str) -> None:
    # The contact pre-checks run in RE2 (pyarrow), whose \s and \d differ from Python's.
    chars = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    strings = pa.array(chars)
    in_re2 = strings.filter(pc.match_substring_regex(strings, f"^{re2}$")).to_pylist()
    assert set(in_re2) == set(re.findall(python, "".join(chars)))


# Texts where the fast scans could part from the regexes they replace.
_SCAN_TEXTS = [
    "see https://jobs.acme.co.uk/x and HTTPS://WWW.Acme.DE, wWw.acme.nl/x.www.y.com",
    "httpſ://acme.de ftp://files.acme.com:21 user:pw@https://x.acme.io http://",
    "mail@www.acme.com www.www.acme.com-www.acme.org.",
    "Tel +44 (0) 20 7946 0958 / (+43) 5242-6951, fax 0044 20 7946 0959",
    "( +31 348 123 456 )  12.05.2024 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9",
    "x+49 30 1234567 ,0201 234 567 \u00a0 0201\u00a0234\u00a0567 ٠١٢٣٤٥٦٧٨٩ 𑽐𑽑𑽒𑽓𑽔𑽕𑽖𑽗𑽘",
    "jobs (at) acme.de [ät] { AT } (a t) (@) ((at))",
]
_SCAN_PIECES = st.sampled_from(
    ["http", "s", "ſ", "://", "www.", "W", "w", ".", "acme", "de", "/", "@", "(", ")", "[", "{", "at", "ÄT",
     " ", "\n", "\u3000", "+", "0", "44", "20 7946", "\u00a0", "-", "٣", "𑽐", "x"]
)  # fmt: skip


def _scans_agree(text: str) -> None:
    assert domains._url_hosts(text) == [m.group(1) for m in domains._URL_HOST_RE.finditer(text)]
    spans = [m.span() for m in phones._PHONE_RE.finditer(text)]
    assert [m.span() for m in phones._phone_matches(text)] == spans
    assert contacts._has_obfuscated_at(text) == bool(contacts._OBFUSCATED_AT_RE.search(text))


@pytest.mark.parametrize("text", _SCAN_TEXTS)
def test_fast_scans_find_what_the_regexes_find(text: str) -> None:
    _scans_agree(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(_SCAN_PIECES, max_size=40).map("".join))
def test_fast_scans_find_what_the_regexes_find_on_any_mix(text: str) -> None:
    _scans_agree(text)


_PRE_CHECKS = {
    "emails": contacts._MAY_HAVE_EMAILS,
    "phone": contacts._PHONE_HINT,
    "domains": contacts._MAY_HAVE_DOMAINS,
    "invisible": contacts._HAS_INVISIBLE,
}
# One-token texts with the line ends and spaces `_MAY_HAVE_DOMAINS`' anchors could part on.
_EDGE_TEXTS = ["acme.com", "acme.com\n", "acme.com\n\n", "\nacme.com", " acme.com /x\n", "acme.com/x\ny",
               "\u3000acme.com\u2028", "a b", "\x0bacme.com\x0c", "", "\n", "12345678\n", "1 2\u00a03-4/5\\6(7)8",
               "1" + " " * 31 + "2", "1" + " " * 30 + "2", "\u200bx", "(\u3000ÄT\x1f)"]  # fmt: skip


@pytest.mark.parametrize("name", _PRE_CHECKS)
def test_pre_checks_in_python_find_what_re2_finds(name: str) -> None:
    """Few texts are pre-checked with Python's `re`, many with RE2: the same texts match."""
    from tests.conftest import DATA

    ads = pd.concat([pd.read_parquet(DATA / f) for f in ("train_ads.parquet", "natural_train_ads.parquet")])
    texts = [
        *_SCAN_TEXTS,
        *_EDGE_TEXTS,
        *ads["description"].dropna(),
        *ads["contact"].dropna(),
        *ads["url"].dropna(),
    ]
    check = _PRE_CHECKS[name]
    in_re2 = pc.match_substring_regex(pa.array(texts), check.re2).to_pylist()
    assert [bool(check.python.search(t)) for t in texts] == in_re2
    assert 0 < sum(in_re2) < len(texts) or name == "invisible"


def test_phone_pre_check_reads_digits_as_python_does() -> None:
    # NFKC turns the circled digits into "020 7946 0958", but the pre-check on the raw text needs
    # 8 digits in a row: Kawi digits are digits from Unicode 15 on (RE2's \p{Nd}), not in Python 3.11.
    kawi = "𑽐𑽑𑽒𑽓𑽔𑽕𑽖𑽗"
    expected = ("+442079460958", "02079460958") if kawi.isdecimal() else pd.NA
    texts = pd.Series([f"{kawi} Tel ⓪②⓪ ⑦⑨④⑥ ⓪⑨⑤⑧", "12345678 Tel ⓪②⓪ ⑦⑨④⑥ ⓪⑨⑤⑧"])
    out = extract_phones(texts, pd.Series(["GB", "GB"])).tolist()
    assert out == [expected, ("+442079460958", "02079460958")]


def test_extract_contacts_is_the_extractors_on_the_joined_text() -> None:
    contact = [None, "", "jobs (", "acme.com", "+44 20", "(at", "x@acme.de", None, "\u200b", None]
    description = [
        "(at) acme.de",
        "at) acme.de",
        "at) acme.de",
        "/jobs/1",
        "7946 0958",
        "\n ) firma.de",
        None,
        "𑽐𑽑𑽒𑽓𑽔𑽕𑽖𑽗 Tel ⓪②⓪ ⑦⑨④⑥ ⓪⑨⑤⑧",  # not digits to Python 3.11; NFKC makes 020 7946 0958
        "acme.com",
        " \n",
    ]
    c, d = pd.Series(contact, dtype=object), pd.Series(description, dtype=object)
    joined = c.fillna("") + "\n" + d.fillna("")
    regions = pd.Series(["GB"] * len(c), dtype=object)
    found = extract_contacts(c, d, regions)
    assert found[1].tolist() == extract_phones(joined, regions).tolist()
    for func, out in zip((extract_emails, extract_domains), (found[0], found[2]), strict=True):
        assert out.tolist() == func(joined).tolist(), func.__name__


def test_job_boards_listed() -> None:
    for board in (
        "linkedin.com",
        "indeed.com",
        "glassdoor.com",
        "adzuna.co.uk",
        "ziprecruiter.com",
        "karriere.at",
        "greenhouse.io",
        "myworkdayjobs.com",
        "lever.co",
        "naukri.com",
    ):
        assert board in JOB_BOARD_DOMAINS


# ---------------------------------------------------------------------------------- scale


def test_many_rows_few_values_is_fast() -> None:
    import time

    values = [f"Senior Engineer {i} (m/w/d)" for i in range(2000)] + [None]
    s = pd.Series(values * 200, dtype=object)  # 400k rows, 2k distinct
    start = time.perf_counter()
    out = normalize_title(s)
    assert time.perf_counter() - start < 5
    assert out.iloc[0] == "senior engineer 0" and out.isna().sum() == 200


# ---------------------------------------------------------------------------------- properties

_TEXT = st.text(st.characters(codec="utf-8"), max_size=60) | st.text(
    st.sampled_from(list("aAéÉßİıﬁ ½²Ⅻ/()-|,.'\"*:#+&@ ＡДжΩשׁת״׳ع中\u200b\u200f\u0301\u05b8")), max_size=40
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT | st.none(), max_size=8))
def test_never_raises_and_aligned(values: list[str | None]) -> None:
    s = pd.Series(values, dtype=object)
    for func in (
        normalize_text_key,
        normalize_title,
        normalize_company,
        normalize_location,
        location_city,
        normalize_occupation,
        extract_emails,
        extract_phones,
        extract_domains,
    ):
        out = func(s)
        assert list(out.index) == list(s.index)
        assert all(pd.isna(o) for o, v in zip(out, values, strict=True) if v is None)
        assert all(pd.isna(o) or (o != "" and o != ()) for o in out)


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_idempotent(text: str) -> None:
    # normalize_location is not in the list: "amsterdam nh" has lost the commas that tell a
    # city from its region, so it is meant for raw location strings only.
    for func in (normalize_text_key, normalize_title, normalize_company, normalize_occupation):
        once = func(pd.Series([text], dtype=object))
        twice = func(once.astype(object))
        assert once.equals(twice), (func.__name__, text, once.iloc[0], twice.iloc[0])


def test_district_town_is_the_town_a_listed_district_lies_in():
    towns = run(district_town, ["Filton, Bristol", "The City, Central London", "Openshaw, Greater Manchester",
                                "Maidstone, Kent", "Leeds, West Yorkshire", "Bristol, South West England",
                                "Dallas, TX", "Amersham, Buckinghamshire", "Leeds", None, ""])  # fmt: skip
    assert towns[:3] == ["Bristol", "Central London", "Greater Manchester"]
    assert all(pd.isna(t) for t in towns[3:])
    # "Tyne & Wear" is a county; "Newcastle Upon Tyne" is a town.
    tyne = run(
        district_town, ["Longbenton, Newcastle Upon Tyne", "Gateshead, Tyne & Wear", "Jarrow, Tyne and Wear"]
    )
    assert tyne[0] == "Newcastle Upon Tyne" and pd.isna(tyne[1]) and pd.isna(tyne[2])


def test_short_town_name_drops_the_river_a_full_name_adds():
    full = ["Newcastle Upon Tyne", "Stoke-on-Trent", "Frankfurt am Main", "Alphen aan den Rijn",
            "Newcastle-under-Lyme", "Weston-super-Mare", "Châlons-en-Champagne", "Halle an der Saale"]  # fmt: skip
    assert [short_town_name(t) for t in full] == [
        "Newcastle", "Stoke", "Frankfurt", "Alphen", "Newcastle", "Weston", "Châlons", "Halle",
    ]  # fmt: skip
    # Names with no such part, or whose words only look like one, are kept.
    for name in ["Leeds", "Milton Keynes", "Bonn", "Den Haag", "Southampton", "Amsterdam Zuid"]:
        assert short_town_name(name) == name


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "ä", "", " ", None, float("nan"), pd.NA, 1, 1.0, True]), max_size=20)
)
def test_distinct_is_factorize(values: list) -> None:
    """`distinct` tells a few values apart with a dict, more with `pd.factorize`: the same codes and values."""
    from jobdedup.features.normalize import distinct

    for s in (
        pd.Series(values, dtype=object),
        pd.Series([v for v in values if isinstance(v, str)], dtype="string"),
    ):
        codes, once = distinct(s)
        expected_codes, expected = pd.factorize(s, use_na_sentinel=True)
        assert codes.tolist() == expected_codes.tolist()
        assert once.tolist() == list(np.asarray(expected, dtype=object))
