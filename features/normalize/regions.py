"""The country of each ad (ISO 3166 alpha-2), the default region for reading its national phone numbers.

Cheap signals only, each worked out once per distinct value and taken in this order: the country
written in the location ("Amsterdam, NH, NL"), the country-code top-level domain or country
subdomain of the ad's URL ("www.adzuna.co.uk", "nl.indeed.com"), and the same of its source
("karriere.at"). An ad with none of them has no region. (The ad's language would tell a region
for 7 more of the 1,190 real ads with phone-like numbers, but the incremental index does not
store that column, and re-prepared indexed ads must get the same fields as in a batch.)

Example:
    >>> ad_regions(pd.Series(["NL", None, None, None]),
    ...            url=pd.Series([None, "https://www.adzuna.co.uk/jobs/1", "https://de.indeed.com/x", None]),
    ...            source=pd.Series([None, "adzuna", "indeed", "linkedin"])).tolist()
    ['NL', 'GB', 'DE', <NA>]
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import phonenumbers

from jobdedup.features.normalize.domains import JOB_BOARD_DOMAINS, SUFFIX_LIST
from jobdedup.features.normalize.unique import _map_unique

__all__ = ["ad_regions"]

# Country-code top-level domains sold worldwide as generic names ("acme.io", "jobs.ai").
_GENERIC_CC_TLDS = frozenset("io ai co me tv cc ly fm to gl sh ws la am so vc gg im".split())
_TLD_REGIONS = {"uk": "GB"}
_REGIONS = frozenset(phonenumbers.SUPPORTED_REGIONS)
_HOST_RE = re.compile(r"^\s*(?:[a-z][a-z0-9+.-]*://)?(?:[^\s/@]*@)?([^\s/:?#]+)", re.I)


def _code_region(code: str) -> str | None:
    if code in _GENERIC_CC_TLDS:
        return None
    region = _TLD_REGIONS.get(code, code.upper())
    return region if len(code) == 2 and region in _REGIONS else None


def _domain_region(text: str) -> str | None:
    """The country of a URL or host by its top-level domain, or a job board's country subdomain."""
    m = _HOST_RE.match(text)
    if not m or "." not in m.group(1):
        return None
    parts = SUFFIX_LIST(m.group(1).lower())
    if parts.suffix and (region := _code_region(parts.suffix.rsplit(".", 1)[-1])):
        return region
    board = parts.top_domain_under_public_suffix in JOB_BOARD_DOMAINS
    return _code_region(parts.subdomain.split(".")[0]) if board and parts.subdomain else None


def _ad_region(location_country: str | None, url: str | None, source: str | None) -> str | None:
    """`ad_regions` of one ad from its plain values (None where missing)."""
    if location_country is not None:
        return location_country
    found = (_domain_region(value) for value in (url, source) if value is not None)
    return next((region for region in found if region is not None), None)


def ad_regions(location_country: pd.Series, url: pd.Series, source: pd.Series) -> pd.Series:
    """Each ad's country: ISO 3166 alpha-2 code ("GB", "NL", "IL"), NA where none can be told.

    Args:
        location_country: the country written in each ad's location (`location_parts`' third part).
        url, source: the ads' columns, NA allowed.

    Returns:
        "string" Series aligned to `location_country`.
    """
    signals = [
        location_country.astype(object),
        _map_unique(url.astype(object), _domain_region, None),
        _map_unique(source.astype(object), _domain_region, None),
    ]
    region = np.full(len(location_country), pd.NA, dtype=object)
    for signal in reversed(signals):  # earlier signals overwrite later ones
        values = signal.to_numpy(dtype=object)
        known = pd.notna(values)
        region[known] = values[known]
    # (a StringDtype instance: "string", without pandas' ~25 µs lookup of the name)
    return pd.Series(region, index=location_country.index, dtype=pd.StringDtype())
