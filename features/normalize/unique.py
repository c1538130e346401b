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


def _unique_results(s: pd.Series, func: Callable[[str], Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes of `s` (-1 = missing) and `func` of each of its distinct non-missing values."""
    codes, uniques = pd.factorize(s, use_na_sentinel=True)
    return codes, [func(v if isinstance(v, str) else str(v)) for v in np.asarray(uniques, dtype=object)]


def _broadcast(results: list[Any], codes: np.ndarray, s: pd.Series, dtype: str | None) -> pd.Series:
    """Per-distinct-value results back on the rows of `s`; None and missing input become `pd.NA`."""
    values = np.empty(len(results) + 1, dtype=object)
    for i, r in enumerate(results):
        values[i] = pd.NA if r is None else r
    values[-1] = pd.NA  # code -1 (missing input) indexes the last slot
    return pd.Series(values[codes], index=s.index, dtype=object if dtype is None else dtype, name=s.name)


def _map_unique(s: pd.Series, func: Callable[[str], Any], dtype: str | None) -> pd.Series:
    """Apply `func` once per distinct non-missing value of `s` and broadcast the results.

    `func` returns None for "nothing left"; that and missing input both become `pd.NA`.
    """
    codes, results = _unique_results(s, func)
    return _broadcast(results, codes, s, dtype)
