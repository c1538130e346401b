"""Normalise each distinct value of a Series once and broadcast the results back to its rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

# --------------------------------------------------------------------------------------------
# Vectorisation helper
# --------------------------------------------------------------------------------------------


def _check_series(s: Any, func: str) -> pd.Series:
    if not isinstance(s, pd.Series):
        raise TypeError(
            f"{func}() expects a pandas Series of strings, got {type(s).__name__}; "
            f"wrap the values with pd.Series(...)."
        )
    return s


FEW_VALUES = 16
"""Up to this many values (a service's check) take the plain-Python paths: `pd.factorize` here, and
the RE2 pre-checks of contacts, listing widgets and requisition hints, cost more per call (20 µs to
0.6 ms) than a single ad's own work."""


def distinct(s: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """`pd.factorize(s, use_na_sentinel=True)`: codes (-1 = missing) and the distinct non-missing
    values in order of first appearance (an object array); a dict for up to `FEW_VALUES` values.

    Example:
        >>> codes, values = distinct(pd.Series(["b", None, "a", "b"]))
        >>> codes.tolist(), values.tolist()
        ([0, -1, 1, 0], ['b', 'a'])
    """
    if len(s) > FEW_VALUES:
        codes, uniques = pd.factorize(s, use_na_sentinel=True)
        return codes, np.asarray(uniques, dtype=object)
    seen: dict[Any, int] = {}
    codes = np.array(
        [seen.setdefault(v, len(seen)) if isinstance(v, str) or not pd.isna(v) else -1 for v in s.tolist()],
        dtype=np.intp,
    )
    return codes, np.fromiter(seen, dtype=object, count=len(seen))


def _unique_results(s: pd.Series, func: Callable[[str], Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes of `s` (-1 = missing) and `func` of each of its distinct non-missing values."""
    codes, uniques = distinct(s)
    return codes, [func(v if isinstance(v, str) else str(v)) for v in uniques]


def _broadcast(results: list[Any], codes: np.ndarray, s: pd.Series, dtype: str | None) -> pd.Series:
    """Per-distinct-value results back on the rows of `s`; None and missing input become `pd.NA`."""
    values = np.empty(len(results) + 1, dtype=object)
    for i, r in enumerate(results):
        values[i] = pd.NA if r is None else r
    values[-1] = pd.NA  # code -1 (missing input) indexes the last slot
    # (A dtype instance for "string": pandas' lookup of a dtype's name costs ~25 µs a Series.)
    resolved = object if dtype is None else pd.StringDtype() if dtype == "string" else dtype
    return pd.Series(values[codes], index=s.index, dtype=resolved, name=s.name)


def _map_unique(s: pd.Series, func: Callable[[str], Any], dtype: str | None) -> pd.Series:
    """Apply `func` once per distinct non-missing value of `s` and broadcast the results.

    `func` returns None for "nothing left"; that and missing input both become `pd.NA`.
    """
    codes, results = _unique_results(s, func)
    return _broadcast(results, codes, s, dtype)
