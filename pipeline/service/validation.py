"""The service's request checking: a body's ads, validated, or `BadInput` naming the field and the fix.

A body is one ad (a JSON object), a list of ads or `{"ads": [...]}`, at most `MAX_ADS` ads and
`MAX_BYTES` bytes; every contract column is a string or null, `ad_id` non-empty and unique in the
request, `description` present, `posted_at` a readable date.

Example:
    >>> parse_ads(b'{"ad_id": "a1", "description": "Night nurse"}')["ad_id"].tolist()
    ['a1']
"""

from __future__ import annotations

import json
import re

import pandas as pd

from jobdedup.pipeline.io import ADS_COLUMNS
from jobdedup.pipeline.io.dates import unreadable_dates

MAX_ADS = 10_000
MAX_BYTES = 20 * 1024 * 1024
# A body over MAX_BYTES is read to its end (and dropped) up to this size, so that the client, still
# sending, gets the 422 instead of a reset connection; beyond it the connection is closed.
DRAIN_BYTES = 5 * MAX_BYTES
STRING_FIELDS = ADS_COLUMNS  # every contract column is text (or null)
# A surrogate escape ("\ud800") in a body: JSON allows a lone one, which no UTF-8 text can hold.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class BadInput(Exception):
    """A request the service refuses with 422: which field, what is wrong, how to fix it."""

    def __init__(self, field: str, error: str, fix: str) -> None:
        super().__init__(error)
        self.field, self.error, self.fix = field, error, fix


def parse_ads(body: bytes) -> pd.DataFrame:
    """The ads of a request body (one JSON object, or a list of them), validated.

    Raises `BadInput` naming the first bad field (`ads[3].title`) and the fix.
    """
    if len(body) > MAX_BYTES:
        raise too_large(len(body))
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadInput(
            "body", f"not JSON ({type(error).__name__} at byte {getattr(error, 'pos', '?')})",
            "send one ad as a JSON object, or a JSON array of ads, with Content-Type: application/json",
        ) from None  # fmt: skip
    single = isinstance(data, dict)
    if isinstance(data, dict) and isinstance(data.get("ads"), list):
        data, single = data["ads"], False  # {"ads": [...]} is accepted too
    ads = [data] if single else data
    name = (lambda i: "ad") if single else (lambda i: f"ads[{i}]")
    if not isinstance(ads, list):
        raise BadInput(
            "body", f"a JSON {type(data).__name__}, not an ad or a list of ads",
            'send {"ad_id": "...", "description": "..."} or a list of such objects',
        )  # fmt: skip
    if not ads:
        raise BadInput("body", "the list of ads is empty", "send at least one ad")
    if len(ads) > MAX_ADS:
        raise BadInput(
            "body", f"{len(ads)} ads in one request (at most {MAX_ADS:,})",
            f"split the batch into requests of at most {MAX_ADS:,} ads",
        )  # fmt: skip
    seen: dict[str, int] = {}
    surrogates = _SURROGATE_ESCAPE.search(body) is not None
    for i, ad in enumerate(ads):
        if not isinstance(ad, dict):
            raise BadInput(
                name(i), f"a JSON {type(ad).__name__}, not an object", "send each ad as a JSON object"
            )
        ad_id = ad.get("ad_id")
        if ad_id is None:
            raise BadInput(f"{name(i)}.ad_id", "missing", "give every ad a non-empty string ad_id")
        for column in STRING_FIELDS:
            value = ad.get(column)
            if value is not None and not isinstance(value, str):
                fix = (
                    "give every ad a non-empty string ad_id (quote numbers: \"7\")" if column == "ad_id"
                    else f"send {column} as a JSON string (or null when unknown)"
                )  # fmt: skip
                raise BadInput(f"{name(i)}.{column}", f"a JSON {type(value).__name__}, not a string", fix)
            if surrogates and value is not None and not _is_unicode_text(value):
                raise BadInput(
                    f"{name(i)}.{column}", "holds a lone surrogate escape (such as \\ud800), which is not text",
                    "send valid Unicode text: escape a character outside the BMP as a surrogate pair or as UTF-8",
                )  # fmt: skip
        if not ad_id.strip():
            raise BadInput(f"{name(i)}.ad_id", "empty", "give every ad a non-empty string ad_id")
        if "description" not in ad:
            raise BadInput(
                f"{name(i)}.description",
                "missing",
                'send the ad text as description ("" or null if it has none)',
            )
        if ad_id in seen:
            raise BadInput(
                f"{name(i)}.ad_id",
                f"the same ad_id as ads[{seen[ad_id]}]",
                "give each ad of a request its own ad_id",
            )
        seen[ad_id] = i
    columns = {c: [ad.get(c) for ad in ads] for c in ADS_COLUMNS}
    undated = unreadable_dates(columns["posted_at"])
    if undated:
        i = next(i for i, value in enumerate(columns["posted_at"]) if value in undated)
        raise BadInput(
            f"{name(i)}.posted_at", f"{columns['posted_at'][i][:60]!r} is no date",
            "send an ISO 8601 date or datetime (2025-05-13, 2025-05-13T09:30:00Z), or null when unknown",
        )  # fmt: skip
    return pd.DataFrame(columns, dtype=object)


def _is_unicode_text(value: str) -> bool:
    """Whether `value` can be UTF-8 encoded (a lone surrogate cannot)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def too_large(size: int) -> BadInput:
    """The refusal of a body of `size` bytes or more (over `MAX_BYTES`)."""
    return BadInput(
        "body", f"{size:,} bytes or more (at most {MAX_BYTES:,} per request)",
        "send fewer or shorter ads per request (split the batch)",
    )  # fmt: skip


__all__ = ["DRAIN_BYTES", "MAX_ADS", "MAX_BYTES", "STRING_FIELDS", "BadInput", "parse_ads", "too_large"]
