"""Which `posted_at` values the pipeline cannot read as a date.

`features.fields` reads `posted_at` with pandas' lenient parser (`features.fields.parse_posted_at`);
a value it cannot read becomes an unknown date, which the
date-gap feature and the TEMPORAL type then treat as "dates unknown". `unreadable_dates` finds
those values, so that reading a file warns about them and the service refuses them, instead of
either dropping the date silently.

Example:
    >>> sorted(unreadable_dates(["2025-05-13", None, "2025-13-45", "13 May 2025", "soon", "2025-13-45"]))
    ['2025-13-45', 'soon']
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from datetime import datetime

import pandas as pd

from jobdedup.features.fields import parse_posted_at

# The ISO 8601 forms that need no pandas call: a date, a time to the minute / second / fraction,
# and a zone. `datetime.fromisoformat` then says whether the numbers are a real date and time.
_ISO_FORM = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?(?:Z|[+-]\d{2}:?\d{2})?"
)


def _readable(value: str) -> bool:
    """Whether the pipeline's date parser reads `value` as a date (ISO forms without pandas)."""
    text = value.strip()
    if _ISO_FORM.fullmatch(text):
        try:
            datetime.fromisoformat(text)
            return True
        except ValueError:
            return False
    return not parse_posted_at(pd.Series([text], dtype=object)).isna().iloc[0]


def unreadable_dates(values: Iterable[str | None]) -> set[str]:
    """The distinct non-blank values among `values` that are no date the pipeline can read (each
    distinct value parsed once: a crawl's dates repeat, a million ads hold a few thousand)."""
    return {value for value in set(values) if value is not None and value.strip() and not _readable(value)}
