"""E-mails, phones and domains of an ad's contact field and description, in one pass."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from jobdedup.features.normalize.contacts import (
    _MAY_HAVE_DOMAINS,
    _MAY_HAVE_EMAILS,
    _PHONE_HINT,
    _any_of,
    _arrow_text,
    _contact_checks,
    _contact_items,
    _contact_series,
    _emails,
    _Extractor,
    _text_checks,
)
from jobdedup.features.normalize.domains import _domains
from jobdedup.features.normalize.phones import _phones
from jobdedup.features.normalize.unique import _check_series

_MAY_HAVE_CONTACTS = _any_of(_MAY_HAVE_EMAILS, _PHONE_HINT, _MAY_HAVE_DOMAINS)
_EXTRACTORS: list[_Extractor] = [_emails, _phones, _domains]


def extract_contacts(
    contact: pd.Series, description: pd.Series, regions: pd.Series | None = None
) -> tuple[pd.Series, pd.Series, pd.Series]:
    """`extract_emails`, `extract_phones` and `extract_domains` of ``contact + "\\n" + description``.

    Missing parts read as "". The texts are not joined where the contact is empty: there every
    pre-check gives the same answer on the description as on "\\n" + description (and a missing
    description leaves "\\n", in which nothing is found).

    `regions` are the ads' countries for reading national phone numbers (see `extract_phones`).

    Returns:
        (emails, phones, domains), object Series indexed like `contact`.
    """
    # (Arrow compute, not pandas operators: each of those costs ~50 µs even on a single ad.)
    heads = _arrow_text(_check_series(contact, "extract_contacts")).fill_null("")
    bodies = _arrow_text(_check_series(description, "extract_contacts"))
    has_head = np.flatnonzero(pc.not_equal(heads, "").to_numpy(zero_copy_only=False))
    checks = _contact_checks(bodies, _MAY_HAVE_CONTACTS)
    tails = bodies.take(has_head).fill_null("").cast(heads.type)
    joined = pc.binary_join_element_wise(heads.take(has_head), tails, pa.scalar("\n", heads.type))
    checks[has_head] = _contact_checks(joined, _MAY_HAVE_CONTACTS)
    rows = np.flatnonzero(checks[:, 0])
    pairs = zip(heads.take(rows).to_pylist(), bodies.take(rows).to_pylist())
    texts = [h + "\n" + (b or "") for h, b in pairs]
    emails, phones, domains = _contact_series(texts, rows, checks[rows], _EXTRACTORS, contact, regions)
    return emails, phones, domains


def _ad_contacts(
    contact: str | None, description: str | None, region: str | None
) -> list[tuple[str, ...] | None]:
    """`extract_contacts` of one ad from its plain values (None where missing): [emails, phones,
    domains], each None where there are none."""
    head = contact or ""
    text = head + "\n" + (description or "")
    return _contact_items(
        text, _text_checks(text if head else description, _MAY_HAVE_CONTACTS), _EXTRACTORS, region
    )
