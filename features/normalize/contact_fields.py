"""E-mails, phones and domains of an ad's contact field and description, in one pass."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jobdedup.features.normalize.contacts import (
    _MAY_HAVE_DOMAINS,
    _MAY_HAVE_EMAILS,
    _PHONE_HINT,
    _any_of,
    _arrow_text,
    _contact_checks,
    _contact_series,
    _emails,
)
from jobdedup.features.normalize.domains import _domains
from jobdedup.features.normalize.phones import _phones
from jobdedup.features.normalize.unique import _check_series

_MAY_HAVE_CONTACTS = _any_of(_MAY_HAVE_EMAILS, _PHONE_HINT, _MAY_HAVE_DOMAINS)


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
    head = _check_series(contact, "extract_contacts").fillna("").astype(str)
    body = _check_series(description, "extract_contacts").astype(str)
    has_head = (head != "").to_numpy()
    bodies = _arrow_text(body)
    checks = _contact_checks(bodies, _MAY_HAVE_CONTACTS)
    checks[has_head] = _contact_checks(
        _arrow_text(head[has_head] + "\n" + body[has_head].fillna("")), _MAY_HAVE_CONTACTS
    )
    rows = np.flatnonzero(checks[:, 0])
    heads = _arrow_text(head).take(rows).to_pylist()
    texts = [h + "\n" + (b or "") for h, b in zip(heads, bodies.take(rows).to_pylist())]
    emails, phones, domains = _contact_series(
        texts, rows, checks[rows], [_emails, _phones, _domains], head, regions
    )
    return emails, phones, domains
