"""Field normalisers: canonical keys for titles, companies, locations and contact details.

Every public function takes a `pd.Series` of strings (NA allowed) and returns a Series with the
same index. Missing input stays `pd.NA`, and a value that normalises to nothing becomes `pd.NA`.
String results have dtype ``"string"``; the ``extract_*`` functions return an object Series of
sorted, de-duplicated tuples.

Each function normalises every *distinct* value once (`pd.factorize` + a Python function per
unique value) and broadcasts the result back, so a million rows with fifty thousand distinct
values cost fifty thousand normalisations. The rules use Python's `re`, which is Unicode-aware;
pandas' pyarrow-backed ``.str.replace`` runs RE2, whose ``\\w`` is ASCII-only, so it would break
Hebrew, Cyrillic or CJK text. RE2 (pyarrow.compute) only runs the contact extractors' pre-checks
over whole columns of long texts, with Python's character classes spelled out: the few texts that
can hold an e-mail, phone number or URL go on to the Python rules.

Example:
    >>> import pandas as pd
    >>> normalize_company(pd.Series(["ACME Ltd", "Acme Limited", "acme", None])).tolist()
    ['acme', 'acme', 'acme', <NA>]
"""

from __future__ import annotations

from jobdedup.features.normalize.companies import LEGAL_FORM_WORDS, normalize_company
from jobdedup.features.normalize.contact_fields import extract_contacts
from jobdedup.features.normalize.contacts import extract_emails
from jobdedup.features.normalize.domains import (
    FREE_MAIL_DOMAINS,
    GENERIC_DOMAINS,
    JOB_BOARD_DOMAINS,
    SUFFIX_LIST,
    extract_domains,
    registrable_domain,
)
from jobdedup.features.normalize.locations import (
    district_town,
    location_and_city,
    location_city,
    location_parts,
    normalize_location,
    short_town_name,
)
from jobdedup.features.normalize.phones import extract_phones
from jobdedup.features.normalize.regions import ad_regions
from jobdedup.features.normalize.text import normalize_occupation, normalize_text_key
from jobdedup.features.normalize.titles import TITLE_WORDS_ADDED, normalize_title
from jobdedup.features.normalize.unique import (
    FEW_VALUES,
    distinct,
    distinct_pairs,
    map_values,
    na_array,
    plain_values,
    string_array,
)

__all__ = [
    "FEW_VALUES",
    "FREE_MAIL_DOMAINS",
    "GENERIC_DOMAINS",
    "JOB_BOARD_DOMAINS",
    "LEGAL_FORM_WORDS",
    "SUFFIX_LIST",
    "TITLE_WORDS_ADDED",
    "ad_regions",
    "distinct",
    "distinct_pairs",
    "district_town",
    "extract_contacts",
    "extract_domains",
    "extract_emails",
    "extract_phones",
    "location_and_city",
    "location_city",
    "location_parts",
    "map_values",
    "na_array",
    "normalize_company",
    "normalize_location",
    "normalize_occupation",
    "normalize_text_key",
    "normalize_title",
    "plain_values",
    "registrable_domain",
    "short_town_name",
    "string_array",
]
