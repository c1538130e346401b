"""Normalised fields of every ad, the inputs of field blocking and field features.

Example:
    >>> ads = pd.DataFrame({"title": ["Sr. Data Engineer (m/w/d)"], "company": ["ACME GmbH"],
    ...     "location": ["Berlin, Germany"], "occupation": [None], "contact": ["jobs@acme.de"],
    ...     "url": [None], "description": [""], "posted_at": ["2024-01-02"], "source": ["indeed"]})
    >>> normalize_fields(ads).loc[0, "company"]
    'acme'
"""

from __future__ import annotations

import pandas as pd

from features.normalize import (
    extract_domains,
    extract_emails,
    extract_phones,
    location_city,
    normalize_company,
    normalize_location,
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
    "emails",
    "phones",
    "domains",
    "posted_at",
    "source",
]


def _sorted_tokens(titles: pd.Series) -> pd.Series:
    """Title words sorted and de-duplicated: "engineer data senior" for any word order."""
    present = titles.dropna()
    uniques = present.unique()
    keys = {t: " ".join(sorted(set(str(t).split()))) for t in uniques}
    out = pd.Series(pd.NA, index=titles.index, dtype=object)
    out[present.index] = present.map(keys)
    return out


def _merge_items(*series: pd.Series) -> pd.Series:
    """Row-wise union of tuple-valued Series; NA where no row has items."""

    def merge(*values: object) -> object:
        items = sorted({x for v in values if isinstance(v, tuple | list | frozenset | set) for x in v})
        return tuple(items) if items else pd.NA

    return pd.Series([merge(*row) for row in zip(*series)], index=series[0].index, dtype=object)


def normalize_fields(ads: pd.DataFrame) -> pd.DataFrame:
    """One row per ad (same index) with the `FIELD_COLUMNS`; missing values stay NA.

    E-mails, phones and domains come from `contact` and the description, domains also from
    `url` (job-board domains are dropped, so a board's URL never counts as a shared contact).
    """
    contact = ads["contact"].astype(object)
    description = ads["description"].astype(object)
    contact_text = contact.fillna("").astype(str) + "\n" + description.fillna("").astype(str)
    emails = extract_emails(contact_text.where(contact_text.str.strip() != "", pd.NA))
    phones = extract_phones(contact_text.where(contact_text.str.strip() != "", pd.NA))
    domains = _merge_items(extract_domains(contact_text), extract_domains(ads["url"].astype(object)))
    title = normalize_title(ads["title"].astype(object))
    location = normalize_location(ads["location"].astype(object))
    posted = pd.to_datetime(ads["posted_at"].astype(object), errors="coerce", utc=True, format="mixed")
    return pd.DataFrame(
        {
            "title": title,
            "title_tokens": _sorted_tokens(title),
            "company": normalize_company(ads["company"].astype(object)),
            "occupation": normalize_occupation(ads["occupation"].astype(object)),
            "location": location,
            "city": location_city(ads["location"].astype(object)),
            "emails": emails,
            "phones": phones,
            "domains": domains,
            "posted_at": posted.dt.tz_localize(None),
            "source": normalize_text_key(ads["source"].astype(object)),
        },
        index=ads.index,
    )
