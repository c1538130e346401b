"""Places: parse free-text job locations and write them the way different job sites do.

A location is parsed into a `Place` (town, region, country); `render_location` writes it in one of
the site styles seen in the real data ("Dallas, TX, US" on Indeed, "Dallas, Texas, United States" on
LinkedIn, just "Dallas" on Glassdoor, "London, UK" / "Central London, London" on Adzuna, ...).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

US_STATES = dict(
    AL="Alabama",
    AK="Alaska",
    AZ="Arizona",
    AR="Arkansas",
    CA="California",
    CO="Colorado",
    CT="Connecticut",
    DE="Delaware",
    DC="District of Columbia",
    FL="Florida",
    GA="Georgia",
    HI="Hawaii",
    ID="Idaho",
    IL="Illinois",
    IN="Indiana",
    IA="Iowa",
    KS="Kansas",
    KY="Kentucky",
    LA="Louisiana",
    ME="Maine",
    MD="Maryland",
    MA="Massachusetts",
    MI="Michigan",
    MN="Minnesota",
    MS="Mississippi",
    MO="Missouri",
    MT="Montana",
    NE="Nebraska",
    NV="Nevada",
    NH="New Hampshire",
    NJ="New Jersey",
    NM="New Mexico",
    NY="New York",
    NC="North Carolina",
    ND="North Dakota",
    OH="Ohio",
    OK="Oklahoma",
    OR="Oregon",
    PA="Pennsylvania",
    RI="Rhode Island",
    SC="South Carolina",
    SD="South Dakota",
    TN="Tennessee",
    TX="Texas",
    UT="Utah",
    VT="Vermont",
    VA="Virginia",
    WA="Washington",
    WV="West Virginia",
    WI="Wisconsin",
    WY="Wyoming",
)
REGIONS: dict[str, dict[str, str]] = {
    "US": US_STATES,
    "CA": dict(
        ON="Ontario",
        BC="British Columbia",
        QC="Quebec",
        AB="Alberta",
        MB="Manitoba",
        NS="Nova Scotia",
        SK="Saskatchewan",
        NB="New Brunswick",
    ),
    "NL": dict(
        NH="North Holland",
        ZH="South Holland",
        UT="Utrecht",
        NB="North Brabant",
        GE="Gelderland",
        LI="Limburg",
        OV="Overijssel",
        GR="Groningen",
        FR="Friesland",
        DR="Drenthe",
        FL="Flevoland",
        ZE="Zeeland",
    ),
    "DE": dict(
        BW="Baden-Württemberg",
        BY="Bavaria",
        BE="Berlin",
        BB="Brandenburg",
        HB="Bremen",
        HH="Hamburg",
        HE="Hesse",
        NI="Lower Saxony",
        NW="North Rhine-Westphalia",
        RP="Rhineland-Palatinate",
        SN="Saxony",
        SH="Schleswig-Holstein",
        TH="Thuringia",
    ),
    "IN": dict(
        KA="Karnataka",
        MH="Maharashtra",
        TN="Tamil Nadu",
        TS="Telangana",
        DL="Delhi",
        HR="Haryana",
        UP="Uttar Pradesh",
        WB="West Bengal",
        GJ="Gujarat",
        PB="Punjab",
    ),
    "IL": dict(TA="Tel Aviv District", HA="Haifa District", M="Center District", JM="Jerusalem District"),
    "FR": dict(
        IDF="Île-de-France",
        ARA="Auvergne-Rhône-Alpes",
        O="Occitanie",
        NAQ="Nouvelle-Aquitaine",
        PAC="Provence-Alpes-Côte d'Azur",
        HDF="Hauts-de-France",
    ),
    "GB": dict(ENG="England", SCT="Scotland", WLS="Wales", NIR="Northern Ireland"),
    "AT": dict(
        W="Vienna",
        OÖ="Upper Austria",
        NÖ="Lower Austria",
        ST="Styria",
        T="Tyrol",
        S="Salzburg",
        K="Carinthia",
        V="Vorarlberg",
    ),
}
COUNTRY_NAMES = dict(
    US="United States",
    CA="Canada",
    NL="Netherlands",
    DE="Germany",
    IN="India",
    IL="Israel",
    FR="France",
    GB="United Kingdom",
    AT="Austria",
)
COUNTRY_ALIASES = {
    "us": "US",
    "usa": "US",
    "united states": "US",
    "united states of america": "US",
    "ca": "CA",
    "canada": "CA",
    "nl": "NL",
    "netherlands": "NL",
    "nederland": "NL",
    "the netherlands": "NL",
    "de": "DE",
    "germany": "DE",
    "deutschland": "DE",
    "in": "IN",
    "india": "IN",
    "il": "IL",
    "israel": "IL",
    "fr": "FR",
    "france": "FR",
    "uk": "GB",
    "gb": "GB",
    "united kingdom": "GB",
    "england": "GB",
    "scotland": "GB",
    "wales": "GB",
    "northern ireland": "GB",
    "at": "AT",
    "austria": "AT",
    "österreich": "AT",
}
CORPUS_COUNTRY = {
    "adzuna_job_salary_sample": "GB",
    "glassdoor_ds_jobs": "US",
    "jobpostings_soc_sample": "US",
    "jobspy_anushk97_dallas": "US",
    "jobspy_dhanashrinanekar_india": "IN",
    "jobspy_elkaza_austria": "AT",
    "jobspy_fr_paris": "FR",
    "jobspy_martadatauk_uk": "GB",
    "jobspy_mcnakhaee_netherlands": "NL",
    "jobspy_milanakdj_toronto": "CA",
    "jobspy_mrtrkmn_germany": "DE",
    "jobspy_multisite_bangalore": "IN",
    "jobspy_ryrk1020_dfw": "US",
    "jobspy_sammathur4_dallas": "US",
    "jobspy_sunjana2199_googlejobs": "US",
    "jobspy_thedarianwong_vancouver": "CA",
    "jobspy_yshauly_israel": "IL",
}
UK_POSTCODES = {
    "London": ["EC2A", "EC1V", "W1T", "SE1", "E14", "WC2H", "N1"],
    "Manchester": ["M1", "M2", "M3"],
    "Birmingham": ["B1", "B3", "B4"],
    "Leeds": ["LS1", "LS2"],
    "Bristol": ["BS1", "BS2"],
    "Glasgow": ["G1", "G2"],
    "Edinburgh": ["EH1", "EH2", "EH3"],
    "Sheffield": ["S1", "S3"],
    "Liverpool": ["L1", "L3"],
    "Nottingham": ["NG1", "NG7"],
    "Cardiff": ["CF10", "CF11"],
    "Reading": ["RG1", "RG2"],
    "Cambridge": ["CB1", "CB2"],
    "Oxford": ["OX1", "OX4"],
    "Belfast": ["BT1", "BT2"],
    "Newcastle Upon Tyne": ["NE1"],
    "Leicester": ["LE1"],
    "Milton Keynes": ["MK9"],
}
GREATER = {
    "London": "Greater London",
    "Manchester": "Greater Manchester",
    "Glasgow": "Greater Glasgow",
    "Toronto": "Greater Toronto Area",
    "Amsterdam": "Amsterdam Area",
    "Dallas": "Dallas-Fort Worth Metroplex",
    "Houston": "Greater Houston",
    "Vancouver": "Greater Vancouver",
    "Tel Aviv": "Tel Aviv District",
}
NOT_TOWNS = {
    "remote",
    "anywhere",
    "hybrid",
    "various",
    "multiple locations",
    "home based",
    "nationwide",
    "remote job",
    "europe",
    "emea",
    "worldwide",
}


AREA_RE = re.compile(
    r"^(North|South|East|West|Central|Greater|The|City of|Inner|Outer)\b|(shire|Midlands|County|District|"
    r"Area|Region|Metroplex|Valley|Islands?|Coast)$"
)


@dataclass(frozen=True)
class Place:
    """A parsed location; any part may be empty."""

    town: str = ""
    region: str = ""  # region code as in REGIONS (e.g. "TX", "NH"), or a free-text county
    country: str = ""  # ISO code as in COUNTRY_NAMES


def _region_code(country: str, text: str) -> str:
    """Region code for a region written as a code or a full name in `country`, else ''."""
    table = REGIONS.get(country, {})
    if text.upper() in table:
        return text.upper()
    for code, name in table.items():
        if name.lower() == text.lower():
            return code
    return ""


def parse_location(location: str | None, default_country: str = "") -> Place:
    """Parse a site's location string ("Dallas, TX, US", "Leiden, South Holland, Netherlands", ...)."""
    parts = [p.strip() for p in re.split(r",", location or "") if p.strip()]
    country = ""
    last = parts[-1] if parts else ""
    us_style = len(parts) == 2 and last.isupper() and last in REGIONS.get(default_country or "US", {})
    if parts and last.lower() in COUNTRY_ALIASES and not us_style:
        country = COUNTRY_ALIASES[parts[-1].lower()]
        if parts[-1].lower() in {"england", "scotland", "wales", "northern ireland"} and len(parts) > 1:
            parts = parts[:-1] + [parts[-1]]  # "Edinburgh, Scotland" keeps Scotland as region
        else:
            parts = parts[:-1]
    country = country or default_country
    town, region = "", ""
    if parts:
        town = parts[0]
        if town.lower() in NOT_TOWNS or town.lower() in COUNTRY_ALIASES:
            town = ""
        elif (
            len(parts) == 1
            and _region_code(country, town)
            and town not in {"Berlin", "Hamburg", "Bremen", "Utrecht", "Groningen", "New York", "Salzburg"}
        ):
            region, town = _region_code(country, town), ""
    if len(parts) > 1:
        region = _region_code(country, parts[1]) or parts[1]
    return Place(town=town, region=region, country=country)


def region_name(place: Place) -> str:
    """Full region name ("Texas") or the free-text county."""
    return REGIONS.get(place.country, {}).get(place.region, place.region)


def render_location(place: Place, site: str, rng: np.random.Generator) -> str:
    """Write `place` the way `site` would; falls back to simpler forms when parts are unknown."""
    if not place.town:
        return COUNTRY_NAMES.get(place.country, "") if rng.random() < 0.7 else ""
    code = place.region if place.region in REGIONS.get(place.country, {}) else ""
    full_region = region_name(place)
    country_full = COUNTRY_NAMES.get(place.country, "")
    cc = {"GB": "UK", "US": "US"}.get(place.country, place.country)
    options: list[str] = []
    if site == "linkedin":
        if place.country == "US" and code and rng.random() < 0.5:
            options.append(f"{place.town}, {code}")
        elif full_region and country_full:
            options.append(
                f"{place.town}, {full_region}, {country_full if place.country != 'GB' else rng.choice(['UK', 'United Kingdom'])}"
            )
        elif country_full:
            options.append(f"{place.town}, {country_full}")
    elif site == "indeed":
        if code and place.country not in {"GB", "IL"}:
            options.append(f"{place.town}, {code}, {cc}")
        elif place.country == "GB" and place.town in UK_POSTCODES:
            options.append(f"{place.town} {rng.choice(UK_POSTCODES[place.town])}")
        options.append(place.town)
    elif site == "glassdoor":
        options.append(f"{place.town}, {code}" if place.country == "US" and code else place.town)
    elif site == "zip_recruiter":
        options.append(f"{place.town}, {code}, USA" if code else f"{place.town}, {country_full}")
    elif site in {"adzuna", "reed", "totaljobs", "cv-library.co.uk"}:
        if place.town in UK_POSTCODES and rng.random() < 0.3:
            options.append(f"{place.town}, {full_region or 'UK'}, {rng.choice(UK_POSTCODES[place.town])}")
        options.append(f"{place.town}, UK" if place.country == "GB" else f"{place.town}, {country_full}")
        if full_region and code == "":
            options.append(f"{place.town}, {full_region}")
        if place.town == "London":
            options += ["Central London, London", "City of London, London"]
    else:
        options.append(f"{place.town}, {country_full}" if country_full else place.town)
    if place.town in GREATER and rng.random() < 0.15:
        options = [GREATER[place.town]]
    return str(options[int(rng.integers(len(options)))])


def towns_by_country(locations: list[str | None], corpora: list[str]) -> dict[str, list[Place]]:
    """Towns seen at least twice in the corpus, per country, with the region they were seen with."""
    seen: dict[tuple[str, str], dict[str, int]] = {}
    for loc, corpus in zip(locations, corpora):
        place = parse_location(loc, CORPUS_COUNTRY.get(corpus, ""))
        town = place.town
        if not town or not place.country or len(town) > 30 or re.search(r"[\d(/]", town):
            continue
        if not re.match(r"^[A-ZÀ-Ý][\w' .-]+$", town) or AREA_RE.search(town):
            continue
        regions = seen.setdefault((place.country, town), {})
        regions[place.region] = regions.get(place.region, 0) + 1
    result: dict[str, list[Place]] = {}
    for (country, town), regions in sorted(seen.items()):
        if sum(regions.values()) < 2:
            continue
        ranked = sorted(regions.items(), key=lambda kv: (kv[0] == "", -kv[1], kv[0]))
        result.setdefault(country, []).append(Place(town=town, region=ranked[0][0], country=country))
    return result


def with_town(place: Place, other: Place) -> Place:
    """`place` moved to `other`'s town (and its region when known)."""
    return replace(place, town=other.town, region=other.region or place.region)
