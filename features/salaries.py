"""Salary bands named in an ad's text: the lowest and highest yearly amount of its main currency.

The definition counts "a different salary band" among what marks two openings: one agency's
"Data Architect, up to £120,000 plus car allowance" and its "Data Architect, up to £90,000" are
two vacancies, however alike the rest. A band is each amount written with a currency ("£45,000",
"$120k", "EUR 80.000") between 10,000 and 1,000,000 (yearly pay: day rates, bonuses and funding
rounds fall outside), in the currency most of them use. Adzuna's own estimates ("£41,384 per year
- estimated"), which differ between two copies of one ad filed under two towns, are left out.
A band is written "GBP 60000 75000" (currency, lowest, highest) so that it travels as text.

Example:
    >>> salary_bands(pd.Series(["Up to £90,000 + car", "£60k - £75k DOE", "£41,384 per year - estimated",
    ...                         None])).tolist()
    ['GBP 90000 90000', 'GBP 60000 75000', None, None]
    >>> bands = pd.Series(["GBP 90000 90000", "GBP 100000 120000", "GBP 85000 95000", None])
    >>> salary_bands_disjoint(bands, np.array([0, 0, 0]), np.array([1, 2, 3])).tolist()
    [1.0, 0.0, nan]
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from jobdedup.features.requisitions import matching_values

LOWEST, HIGHEST = 10_000.0, 1_000_000.0
"""Amounts counted as yearly pay."""
TOLERANCE = 0.02
"""Two bands this close (relative) still overlap: "£75,000" and "£74,000 - £76,000"."""
_CURRENCIES = {"£": "GBP", "€": "EUR", "$": "USD"}
_SYMBOLS = (*_CURRENCIES, *_CURRENCIES.values())
_HINT = "[£€$]|GBP|EUR|USD"  # RE2 over Arrow text finds the few texts worth reading
# An amount, read where a currency symbol or code was found (`str.find` jumps there: a regex
# scanning whole texts for where to start took 4x as long).
_AMOUNT_RE = re.compile(
    r"(£|€|\$|(?<![A-Za-z])(?:GBP|EUR|USD)(?![A-Za-z]))\s?(\d{1,3}(?:[,.]\d{3})+|\d+(?:\.\d+)?)(\s?[kK]\b)?"
    r"(?!\s*(?:per|a|an)\s+\w+\s*-\s*estimated)"
)
_THOUSANDS_RE = re.compile(r"\d{1,3}(?:[,.]\d{3})+")


def _amounts(text: str) -> list[re.Match[str]]:
    """The amounts with a currency written in `text`."""
    found = []
    for symbol in _SYMBOLS:
        at = text.find(symbol)
        while at >= 0:
            match = _AMOUNT_RE.match(text, at)
            if match:
                found.append(match)
            at = text.find(symbol, at + 1)
    return sorted(found, key=lambda match: match.start())


def _band(text: str) -> str | None:
    """The band of one text, or None when it names no yearly amount."""
    amounts: dict[str, list[float]] = {}
    for found in _amounts(text):
        number = found.group(2)
        value = float(re.sub(r"[,.]", "", number)) if _THOUSANDS_RE.fullmatch(number) else float(number)
        if found.group(3):
            value *= 1000
        if LOWEST <= value <= HIGHEST:
            currency = found.group(1)
            amounts.setdefault(_CURRENCIES.get(currency, currency), []).append(value)
    if not amounts:
        return None
    currency = max(amounts, key=lambda name: len(amounts[name]))
    values = amounts[currency]
    return f"{currency} {min(values):.0f} {max(values):.0f}"


def salary_bands(texts: pd.Series) -> pd.Series:
    """Per ad, its band ("GBP 60000 75000") or None; only texts naming a currency are searched."""
    bands: list[str | None] = [None] * len(texts)
    for row, text in matching_values(texts, _HINT):
        bands[row] = _band(text)
    return pd.Series(bands, index=texts.index, dtype=object)


def _band_parts(band: str) -> tuple[str, float, float]:
    """The currency, lowest and highest amount of a band as `salary_bands` writes it."""
    currency, lowest, highest = band.split(" ")
    return currency, float(lowest), float(highest)


def salary_bands_disjoint(bands: pd.Series, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Per pair: 1.0 when both ads name a band in one currency and the bands do not overlap, 0.0
    when they overlap, NaN when either names none or the currencies differ."""
    out = np.full(len(left), np.nan)
    band = bands.to_numpy(dtype=object)
    named = np.flatnonzero(~pd.isna(band))
    if not len(left) or not len(named):
        return out
    # Only the few ads naming a band are parsed (a million-ad batch has ~150,000), in plain Python:
    # pandas' split into a frame costs ~0.1 ms even for the two ads of a pair.
    names, lowest, highest = zip(*(_band_parts(str(b)) for b in band[named]))
    codes: dict[str, int] = {}
    currency = np.full(len(bands), -1)
    low, high = np.full(len(bands), np.nan), np.full(len(bands), np.nan)
    currency[named] = [codes.setdefault(name, len(codes)) for name in names]
    low[named], high[named] = lowest, highest
    known = (currency[left] >= 0) & (currency[left] == currency[right])
    apart = (high[left] < low[right] * (1 - TOLERANCE)) | (high[right] < low[left] * (1 - TOLERANCE))
    out[known] = apart[known].astype(float)
    return out
