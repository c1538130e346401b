"""The job-board listing an ad was scraped from, as a key: two ads with one key are one listing
(a re-scrape, or the same page under another tracking link) and so one vacancy.

The key is the URL with scheme, `www.`, fragment, trailing slash, letter case of the host and
tracking parameters (`utm_*`, Adzuna's `se` / `v`, `gh_src`, `refId`, `trackingId`, ...) taken
off; parameters that name the listing (Indeed's `jk`, Glassdoor's `jl`, Greenhouse's `gh_jid`)
stay, sorted. Parsing is the standard library's `urllib.parse`.

Example:
    >>> listing_keys(pd.Series(["https://www.adzuna.co.uk/jobs/details/57?utm_medium=api&utm_source=6",
    ...                         "http://adzuna.co.uk/jobs/details/57/", None])).tolist()
    ['adzuna.co.uk/jobs/details/57', 'adzuna.co.uk/jobs/details/57', None]
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit

import numpy as np
import pandas as pd

from jobdedup.features.normalize import distinct

TRACKING_PARAMETERS = frozenset(
    "se v domain gh_src src source ref refid trackingid tracking_id from campaign medium fbclid gclid "
    "sessionid session_id lang locale".split()
)


def _listing_key(url: str) -> str | None:
    try:
        parts = urlsplit(url.strip())
    except ValueError:  # e.g. "http://[::1": an unclosed IPv6 host is no URL
        return None
    host = parts.netloc.lower().removeprefix("www.")
    if not host:
        return None
    query = sorted(
        (name, value)
        for name, value in parse_qsl(parts.query, keep_blank_values=False)
        if not name.lower().startswith("utm_") and name.lower() not in TRACKING_PARAMETERS
    )
    key = host + parts.path.rstrip("/")
    return f"{key}?{urlencode(query)}" if query else key


def listing_keys(urls: pd.Series) -> pd.Series:
    """Per ad, its listing key (None where the URL is missing or not a URL); each distinct URL once."""
    codes, urls_once = distinct(urls)
    keys = np.array([_listing_key(str(url)) for url in urls_once] + [None], dtype=object)
    return pd.Series(keys[codes], index=urls.index, dtype=object)
