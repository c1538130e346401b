"""Normalised fields of every ad, the inputs of field blocking and field features.

Example:
    >>> ads = pd.DataFrame({"title": ["Sr. Data Engineer (m/w/d)"], "company": ["ACME GmbH"],
    ...     "location": ["Berlin, Germany"], "occupation": [None], "contact": ["jobs@acme.de"],
    ...     "url": [None], "description": [""], "posted_at": ["2024-01-02"], "source": ["indeed"]})
    >>> normalize_fields(ads).loc[0, "company"]
    'acme'
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.features.listings import listing_keys
from jobdedup.features.normalize import (
    ad_regions,
    distinct,
    district_town,
    extract_contacts,
    extract_domains,
    location_parts,
    normalize_company,
    normalize_occupation,
    normalize_text_key,
    normalize_title,
)

FIELD_SOURCE_COLUMNS = ("title", "company", "location", "occupation", "contact", "url", "posted_at", "source")
"""Ads columns the normalised fields are made from."""

FIELD_COLUMNS = [
    "title",
    "title_tokens",
    "company",
    "occupation",
    "location",
    "city",
    "town",
    "emails",
    "phones",
    "domains",
    "posted_at",
    "source",
    "listing",
]


def _sorted_tokens(titles: pd.Series) -> pd.Series:
    """Title words sorted and de-duplicated: "engineer data senior" for any word order."""
    codes, uniques = distinct(titles)
    words = [" ".join(sorted(set(str(t).split()))) for t in uniques]
    keys = np.array([*words, pd.NA], dtype=object)
    return pd.Series(keys[codes], index=titles.index, dtype=object)


def _merge_items(a: pd.Series, b: pd.Series) -> pd.Series:
    """Row-wise sorted union of two Series of sorted, de-duplicated tuples; NA where both are NA."""
    has_a, has_b = a.notna().to_numpy(), b.notna().to_numpy()
    merged = np.where(has_a, a.to_numpy(dtype=object), b.to_numpy(dtype=object))
    for i in np.flatnonzero(has_a & has_b):
        merged[i] = tuple(sorted({*a.iat[i], *b.iat[i]}))
    return pd.Series(merged, index=a.index, dtype=object)


def normalize_fields(ads: pd.DataFrame) -> pd.DataFrame:
    """One row per ad (same index) with the `FIELD_COLUMNS`; missing values stay NA.

    E-mails, phones and domains come from `contact` and the description, domains also from
    `url` (job-board domains are dropped, so a board's URL never counts as a shared contact).
    National phone numbers are read in the ad's country (`ad_regions`: from its location, URL or
    source). `town` is the town a listed district lies in, normalised as `city` ("Rusholme,
    Manchester" -> "manchester"; `district_town`), NA where the location names no district.
    """
    location, city, country = location_parts(ads["location"].astype(object))
    town = location_parts(district_town(ads["location"].astype(object)).astype(object))[1]
    regions = ad_regions(country, ads["url"], ads["source"])
    emails, phones, text_domains = extract_contacts(ads["contact"], ads["description"], regions)
    domains = _merge_items(text_domains, extract_domains(ads["url"]))
    title = normalize_title(ads["title"].astype(object))
    posted = pd.to_datetime(ads["posted_at"].astype(object), errors="coerce", utc=True, format="mixed")
    return pd.DataFrame(
        {
            "title": title,
            "title_tokens": _sorted_tokens(title),
            "company": normalize_company(ads["company"].astype(object)),
            "occupation": normalize_occupation(ads["occupation"].astype(object)),
            "location": location,
            "city": city,
            "town": town,
            "emails": emails,
            "phones": phones,
            "domains": domains,
            "posted_at": posted.dt.tz_localize(None),
            "source": normalize_text_key(ads["source"].astype(object)),
            "listing": listing_keys(ads["url"]),
        },
        index=ads.index,
    )
