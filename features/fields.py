"""Normalised fields of every ad, the inputs of field blocking and field features.

Example:
    >>> ads = pd.DataFrame({"title": ["Sr. Data Engineer (m/w/d)"], "company": ["ACME GmbH"],
    ...     "location": ["Berlin, Germany"], "occupation": [None], "contact": ["jobs@acme.de"],
    ...     "url": [None], "description": [""], "posted_at": ["2024-01-02"], "source": ["indeed"]})
    >>> normalize_fields(ads).loc[0, "company"]
    'acme'
"""

from __future__ import annotations

from functools import cache

import numpy as np
import pandas as pd

from jobdedup.features.listings import _listing_key, listing_keys
from jobdedup.features.normalize import (
    FEW_VALUES,
    ad_regions,
    distinct,
    district_town,
    extract_contacts,
    location_parts,
    map_values,
    na_array,
    normalize_company,
    normalize_occupation,
    normalize_text_key,
    normalize_title,
    plain_values,
    string_array,
)
from jobdedup.features.normalize.companies import _company
from jobdedup.features.normalize.contact_fields import _ad_contacts
from jobdedup.features.normalize.locations import _city, _district_town, _location_parts
from jobdedup.features.normalize.regions import _ad_region
from jobdedup.features.normalize.text import _text_key
from jobdedup.features.normalize.titles import _title
from jobdedup.features.normalize.unique import assigned_objects, frame_of_arrays

FIELD_SOURCE_COLUMNS = ("title", "company", "location", "occupation", "contact", "url", "posted_at", "source")
"""Ads columns the normalised fields are made from."""

FIELD_COLUMNS = [
    "title",
    "title_tokens",
    "company",
    "occupation",
    "location",
    "city",
    "subdivision",
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
    words = [_token_key(str(t)) for t in uniques]
    keys = np.array([*words, pd.NA], dtype=object)
    return pd.Series(keys[codes], index=titles.index, dtype=object)


def _token_key(title: str) -> str:
    """`_sorted_tokens` of one title."""
    return " ".join(sorted(set(title.split())))


def parse_posted_at(values: pd.Series | np.ndarray) -> pd.Series | pd.DatetimeIndex:
    """`posted_at` values (objects: text or missing) as UTC times, NaT where pandas' lenient parser
    reads no date: the one reading of dates (`pipeline.io.dates` asks it which values are lost).

    Example:
        >>> parse_posted_at(pd.Series(["2025-05-13", "2025-13-45"], dtype=object)).isna().tolist()
        [False, True]
    """
    return pd.to_datetime(values, errors="coerce", utc=True, format="mixed")


def normalize_fields(ads: pd.DataFrame) -> pd.DataFrame:
    """One row per ad (same index) with the `FIELD_COLUMNS`; missing values stay NA.

    E-mails, phones and domains come from `contact` and the description only: an ad's `url` says
    where it was found (a job board, an aggregator, an applicant-tracking system), not who posts it,
    so two ads on one site share no contact by their URLs (justjoin.it's ads of ITLT and 7N).
    National phone numbers are read in the ad's country (`ad_regions`: from its location, URL or
    source). `town` is the town a listed district lies in, normalised as `city` ("Rusholme,
    Manchester" -> "manchester"; `district_town`), NA where the location names no district.
    """
    if 0 < len(ads) <= FEW_VALUES:
        return _few_fields(ads, ads.index, {})
    location, city, country, subdivision = location_parts(ads["location"].astype(object))
    town = location_parts(district_town(ads["location"].astype(object)).astype(object))[1]
    regions = ad_regions(country, ads["url"], ads["source"])
    emails, phones, text_domains = extract_contacts(ads["contact"], ads["description"], regions)
    title = normalize_title(ads["title"].astype(object))
    posted = parse_posted_at(ads["posted_at"].astype(object))
    return pd.DataFrame(
        {
            "title": title,
            "title_tokens": _sorted_tokens(title),
            "company": normalize_company(ads["company"].astype(object)),
            "occupation": normalize_occupation(ads["occupation"].astype(object)),
            "location": location,
            "city": city,
            "subdivision": subdivision,
            "town": town,
            "emails": emails,
            "phones": phones,
            "domains": text_domains,
            "posted_at": posted.dt.tz_localize(None),
            "source": normalize_text_key(ads["source"].astype(object)),
            "listing": listing_keys(ads["url"]),
        },
        index=ads.index,
    )


def few_fields(ads: pd.DataFrame, extra: dict[str, np.ndarray]) -> pd.DataFrame:
    """`normalize_fields` of 1 to `FEW_VALUES` ads on a fresh RangeIndex, followed by the `extra`
    object columns as assigning them would make them (`assigned_objects`): a single ad's prepared
    fields in one construction (adding a column to the frame costs ~85 µs)."""
    return _few_fields(ads, pd.RangeIndex(len(ads)), extra)


@cache
def _columns(extra: tuple[str, ...]) -> pd.Index:
    """The `FIELD_COLUMNS` and `extra` (an Index of names costs ~20 µs a frame)."""
    return pd.Index([*FIELD_COLUMNS, *extra])


def _few_fields(ads: pd.DataFrame, index: pd.Index, extra: dict[str, np.ndarray]) -> pd.DataFrame:
    """`normalize_fields` of 1 to `FEW_VALUES` ads (a service's check) on `index`, and the `extra`
    columns: the normalisers' functions of one value on plain Python values, each distinct value
    once (their Series cost ~3 ms an ad), the frame made from its blocks (`frame_of_arrays`)."""
    value = plain_values(ads, (*FIELD_SOURCE_COLUMNS, "description"))
    location, city, country, subdivision = zip(
        *map_values(value["location"], _location_parts, (None, None, None, None))
    )
    regions = [_ad_region(*signals) for signals in zip(country, value["url"], value["source"])]
    ads_contacts = list(zip(value["contact"], value["description"], regions))
    emails, phones, text_domains = zip(*map_values(ads_contacts, lambda ad: _ad_contacts(*ad)))
    title = map_values(value["title"], _title)
    posted = parse_posted_at(np.array(value["posted_at"], dtype=object))
    arrays = [  # (in `FIELD_COLUMNS` order)
        string_array(title),
        na_array(map_values(title, _token_key)),
        string_array(map_values(value["company"], _company)),
        string_array(map_values(value["occupation"], _text_key)),
        string_array(location),
        string_array(city),
        string_array(subdivision),
        string_array(map_values(map_values(value["location"], _district_town), _city)),
        # (arrays of tuples and NA stay object columns)
        na_array(emails),
        na_array(phones),
        na_array(text_domains),
        posted.tz_localize(None).array,
        string_array(map_values(value["source"], _text_key)),
        np.array(map_values(value["url"], _listing_key), dtype=object),
        *map(assigned_objects, extra.values()),
    ]
    return frame_of_arrays(_columns(tuple(extra)), arrays, index)
