"""The libraries that replaced hand-written parsers (issue #14): lexbor HTML, phonenumbers with the
ad's region, tldextract offline, ftfy, cleanco's legal forms."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from jobdedup.features.normalize import (
    ad_regions,
    extract_contacts,
    extract_domains,
    extract_phones,
    normalize_company,
    normalize_title,
    registrable_domain,
)
from jobdedup.pipeline.clean import clean_description, markup_text, split_blocks, strip_markup

ROOT = Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------------ HTML


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.split("\n") if line.split()]


def test_block_elements_become_lines_and_inline_tags_spaces() -> None:
    html = (
        "<h2>Duties</h2><p>Build <b>data</b> pipelines<br>in Python</p>"
        "<ul><li>SQL</li><li>Spark &amp; Kafka</li></ul><b>Duties</b><b>Summary</b>"
    )
    assert _lines(strip_markup(html)) == [
        "Duties",
        "Build data pipelines",
        "in Python",
        "SQL",
        "Spark & Kafka",
        "Duties Summary",
    ]
    assert split_blocks(clean_description(html)) == [
        "duties", "build data pipelines", "in python", "sql", "spark & kafka", "duties summary"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("html", "words"),
    [
        ("<div title=\"a>b\" data-x='1>2'>kept</div>", ["kept"]),  # attributes holding ">"
        ("<p>unclosed <b>bold <li>item <div>deep", ["unclosed", "bold", "item", "deep"]),  # never closed
        ("<script>if (a < b) { x = '</div>' }</script>after", ["after"]),
        ("<script><script>inner()</script>outer()</script>text", ["outer()text"]),  # as browsers read it
        ("<style>p { color: red }</style><noscript><img src=x>no js</noscript>shown", ["shown"]),
        ("<template><p>hidden</p></template><!-- a comment -->visible", ["visible"]),
        (
            'text then a tag cut off at the end <a href="https://x',
            ["text", "then", "a", "tag", "cut", "off", "at", "the", "end"],
        ),
        ("</p></div>stray closers</li>", ["stray", "closers"]),
        ("<p>Caf&eacute; &#8211; R&amp;D &nbsp;x</p>", ["Café", "–", "R&D", "x"]),
        ("<<p>>double<<br>>", ["<", ">double<", ">"]),
    ],
)
def test_malformed_html(html: str, words: list[str]) -> None:
    assert markup_text(html).split() == words


def test_text_without_markup_is_left_alone() -> None:
    text = "Salary < 50k & bonus > 10%\nTel 0201 234 567"
    assert strip_markup(text) == text


def test_html_property_never_raises() -> None:
    for html in ["", "<", "<>", "</", "<!--", "<![CDATA[x", "\udc80<b>x</b>", "<p" * 1000, "\x00<b>\x00</b>"]:
        assert isinstance(clean_description(html), str)


# ---------------------------------------------------------------------------------- phones


def test_national_numbers_are_read_in_the_ads_region() -> None:
    texts = pd.Series(["Tel. 020 7946 0958"] * 3 + ["Bel 030 1234567", "Call +44 20 7946 0958"])
    regions = pd.Series(["GB", "NL", None, "DE", "IL"])
    out = extract_phones(texts, regions).tolist()
    assert out[0] == out[4] == ("+442079460958", "02079460958")  # the same number, written two ways
    assert out[1] in (("+31207946095", "0207946095"), pd.NA)  # another number, in Amsterdam
    assert out[2] == ("02079460958",)  # unknown country: the digits as written...
    assert set(out[2]) & set(out[0])  # ...which the same number in a British ad shares
    assert out[3] == ("+49301234567", "0301234567")


def test_invalid_numbers_and_times_are_not_phones() -> None:
    texts = pd.Series(
        ["hours 0900-1800 daily", "Job number: 01.01.04-181", "02-66655479 (one digit too many)"]
    )
    assert extract_phones(texts, pd.Series(["GB", "US", "IL"])).isna().all()


def test_north_american_numbers_anywhere() -> None:
    texts = pd.Series(["Help desk 877-372-7248", "(214) 555-0142", "1-855-833-5120"])
    out = extract_phones(texts, pd.Series(["NL", None, "GB"])).tolist()
    assert [keys[0] for keys in out] == ["+18773727248", "+12145550142", "+18558335120"]


def test_ad_regions_from_location_url_and_source() -> None:
    country = pd.Series(["NL", None, None, None, None, None], dtype="string")
    url = pd.Series([
        "https://www.adzuna.co.uk/jobs/1", "https://www.adzuna.co.uk/jobs/1", "https://nl.indeed.com/viewjob",
        "https://www.linkedin.com/jobs/view/1", None, "https://acme.io/jobs",
    ])  # fmt: skip
    source = pd.Series(["adzuna", "adzuna", "indeed", "linkedin", "karriere.at", None])
    assert ad_regions(country, url, source).tolist() == ["NL", "GB", "NL", pd.NA, "AT", pd.NA]


def test_fields_read_phones_in_the_ads_country() -> None:
    from jobdedup.features.fields import normalize_fields

    ads = pd.DataFrame(
        {
            "title": ["Nurse", "Nurse"],
            "company": ["Acme", "Acme"],
            "location": ["Leeds, UK", "Leeds"],
            "occupation": [None, None],
            "contact": ["Tel 0113 496 0000", "+44 113 496 0000"],
            "url": [None, "https://www.adzuna.co.uk/x"],
            "description": ["", ""],
            "posted_at": [None, None],
            "source": [None, None],
        }
    )
    phones = normalize_fields(ads)["phones"].tolist()
    assert phones[0] == phones[1] == ("+441134960000", "01134960000")


def test_extract_contacts_passes_regions() -> None:
    contact = pd.Series(["Tel 020 7946 0958", None])
    description = pd.Series([None, "Ring 020 7946 0958"])
    _, phones, _ = extract_contacts(contact, description, pd.Series(["GB", "GB"]))
    assert phones.tolist() == [("+442079460958", "02079460958")] * 2


# ---------------------------------------------------------------------------------- domains


def test_registrable_domains_follow_the_public_suffix_list() -> None:
    assert registrable_domain("careers.acme.co.uk") == "acme.co.uk"
    assert registrable_domain("avonandsomerset.police.uk") == "avonandsomerset.police.uk"  # police.uk
    assert registrable_domain("johnhoward.on.ca") == "johnhoward.on.ca"
    assert registrable_domain("jobs.tau.ac.il") == "tau.ac.il"
    assert registrable_domain("acme.github.io") == "acme.github.io"  # private section
    assert registrable_domain("homeoffice.gov.ukrecruitment") is None  # text glued to a URL
    assert registrable_domain("logo.png") is None
    assert registrable_domain("co.uk") is None
    assert extract_domains(pd.Series(["see https://jobs.acme.co.uk/1 or hr@acme.de"])).tolist() == [
        ("acme.co.uk", "acme.de")
    ]


def test_tldextract_needs_no_network_and_writes_no_cache(tmp_path: Path) -> None:
    # A fresh interpreter whose sockets all fail and whose home and cache folders are empty.
    script = """
import socket
def refuse(*args, **kwargs):
    raise OSError("network access attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
socket.getaddrinfo = refuse
from jobdedup.features.normalize import registrable_domain
assert registrable_domain("careers.acme.co.uk") == "acme.co.uk"
assert registrable_domain("x.blogspot.com") == "x.blogspot.com"
print("ok")
"""
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "TLDEXTRACT_CACHE": str(tmp_path / "tld"),
    }
    env.pop("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", None)
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
    assert not any(tmp_path.rglob("*")), list(tmp_path.rglob("*"))


# -------------------------------------------------------------------- mojibake, legal forms


def test_mojibake_is_repaired_by_ftfy() -> None:
    titles = pd.Series(["NestlÃ© Entwickler", "Nestlé Entwickler", "SENIOR DEVELOPER \x96 LONDON"])
    assert normalize_title(titles).tolist() == [
        "nestle entwickler",
        "nestle entwickler",
        "senior developer london",
    ]
    assert normalize_company(pd.Series(["CafÃ© Ãœber GmbH"])).tolist() == ["cafe uber"]


def test_legal_forms_ours_and_cleancos() -> None:
    names = [
        "Leue Medical GbR",  # cleanco's, not ours
        "Acme S. de R.L.",
        "Foo Sdn. Bhd.",
        "Bar sp. z o.o.",
        'קומבלק איי.טי. בע"מ',  # ours, not cleanco's
        "Maple ULC",
        "Start UG (haftungsbeschränkt)",
        "Pets at Home",  # a form inside a name stays
        "ACME Ltd",
    ]
    assert normalize_company(pd.Series(names)).tolist() == [
        "leue medical", "acme", "foo", "bar", "קומבלק איי טי", "maple", "start", "pets at home", "acme",
    ]  # fmt: skip


def test_legal_form_words_still_public() -> None:
    from jobdedup.features.normalize import LEGAL_FORM_WORDS

    assert {"gmbh", "ltd", "bv", "ag", "gbr", "בעמ"} <= LEGAL_FORM_WORDS
