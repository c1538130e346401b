"""Normalise each distinct value of a Series once and broadcast the results back to its rows."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
from pandas.api.internals import create_dataframe_from_blocks

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
0.6 ms) than a single ad's own work. `features.fields.normalize_fields` of so few ads calls the
normalisers' functions of one value on plain values (`plain_values`, `map_values`): their Series
cost ~3 ms an ad."""


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


def distinct_pairs(
    first: np.ndarray, second: np.ndarray, width: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct (first[p], second[p]) of codes in 0..width-1, as (firsts, seconds, pair_of):
    pair p is (firsts[pair_of[p]], seconds[pair_of[p]]); what a pair of values gives is then
    computed once per distinct pair.

    Example:
        >>> [a.tolist() for a in distinct_pairs(np.array([1, 0, 1]), np.array([2, 2, 2]), 3)]
        [[0, 1], [2, 2], [1, 0, 1]]
    """
    width = max(width, 1)
    keys, pair_of = np.unique(first.astype(np.int64) * width + second, return_inverse=True)
    return keys // width, keys % width, pair_of


def plain_values(frame: pd.DataFrame, columns: Sequence[str]) -> dict[str, list[str | None]]:
    """The values of `frame`'s `columns` as Python strings, None where missing (what `map_values`
    takes), for up to `FEW_VALUES` rows: one conversion of the frame (a column's costs ~25 µs).

    Example:
        >>> plain_values(pd.DataFrame({"a": ["x", None], "b": [float("nan"), "y"]}), ["b"])
        {'b': [None, 'y']}
    """
    cells = frame.to_numpy(dtype=object, na_value=None)
    values = {}
    for column in columns:
        found = cells[:, frame.columns.get_loc(column)]
        values[column] = [v if v is None or isinstance(v, str) else str(v) for v in found]
    return values


def map_values(values: list[Any], func: Callable[[Any], Any], missing: Any = None) -> list[Any]:
    """`func` of each value, each distinct one once, `missing` where a value is None: `_map_unique`
    for up to `FEW_VALUES` `plain_values` (a service's check), without its Series.

    Example:
        >>> map_values(["b", None, "b"], str.upper)
        ['B', None, 'B']
    """
    done: dict[Any, Any] = {}
    return [missing if v is None else done[v] if v in done else done.setdefault(v, func(v)) for v in values]


def string_array(values: Sequence[str | None]) -> pd.api.extensions.ExtensionArray:
    """`pd.array(values, dtype=pd.StringDtype("pyarrow"))` of Python strings and None (missing),
    made from one pyarrow array: pandas' checks of each value cost as much again (~10 µs a column).

    Example:
        >>> string_array(["a", None]).tolist()
        ['a', <NA>]
    """
    return pd.arrays.ArrowStringArray(pa.array(values, type=pa.large_string()))


def na_array(results: Sequence[Any]) -> np.ndarray:
    """`results` as an object array, None as `pd.NA` (the normalisers' missing value).

    Example:
        >>> na_array([("a",), None]).tolist()
        [('a',), <NA>]
    """
    values = np.empty(len(results), dtype=object)  # (filled one by one: tuples stay items)
    for i, r in enumerate(results):
        values[i] = pd.NA if r is None else r
    return values


def assigned_objects(values: np.ndarray) -> np.ndarray | pd.api.extensions.ExtensionArray:
    """The column `frame[name] = values` makes of an object array of strings (or of other items)
    and None: pandas' "str" (NaN where missing) where every present value is a string, else the
    object array itself (all missing, or items such as tuples).

    Example:
        >>> assigned_objects(np.array(["a", None], dtype=object)).tolist()
        ['a', nan]
        >>> assigned_objects(np.array([None, ("a",)], dtype=object)).tolist()
        [None, ('a',)]
    """
    if pd.api.types.infer_dtype(values, skipna=True) != "string":
        return values
    return pd.array(values, dtype=pd.StringDtype(na_value=np.nan))


def frame_of_arrays(
    columns: pd.Index, arrays: Sequence[np.ndarray | pd.api.extensions.ExtensionArray], index: pd.Index
) -> pd.DataFrame:
    """`pd.DataFrame(dict(zip(columns, arrays)), index=index)` of arrays whose dtypes are final (an
    object array stays object, as a Series of dtype object keeps it: pandas would make "str" of
    strings), made from its blocks: the numpy arrays of each dtype side by side in one, as pandas
    consolidates them, and each ExtensionArray one of its own. Pandas' construction costs ~190 µs
    for a few ads' 16 fields, this ~40 µs.

    Example:
        >>> frame = frame_of_arrays(pd.Index(["a", "b"]), [np.array(["x"], dtype=object), string_array(["y"])],
        ...                         pd.RangeIndex(1))
        >>> frame.dtypes.tolist() == [object, pd.StringDtype("pyarrow")], frame.to_dict("list")
        (True, {'a': ['x'], 'b': ['y']})
    """
    blocks = []
    by_dtype: dict[np.dtype, list[int]] = {}
    for at, values in enumerate(arrays):
        if isinstance(values, np.ndarray):
            by_dtype.setdefault(values.dtype, []).append(at)
        else:
            blocks.append((values, np.array([at])))
    for placement in by_dtype.values():
        blocks.append((np.stack([arrays[at] for at in placement]), np.array(placement)))
    return create_dataframe_from_blocks(blocks, index=index, columns=columns)


def _unique_results(s: pd.Series, func: Callable[[str], Any]) -> tuple[np.ndarray, list[Any]]:
    """Codes of `s` (-1 = missing) and `func` of each of its distinct non-missing values."""
    codes, uniques = distinct(s)
    return codes, [func(v if isinstance(v, str) else str(v)) for v in uniques]


def _broadcast(results: list[Any], codes: np.ndarray, s: pd.Series, dtype: str | None) -> pd.Series:
    """Per-distinct-value results back on the rows of `s`; None and missing input become `pd.NA`."""
    values = na_array([*results, None])  # code -1 (missing input) indexes the last slot
    # (A dtype instance for "string": pandas' lookup of a dtype's name costs ~25 µs a Series.)
    resolved = object if dtype is None else pd.StringDtype() if dtype == "string" else dtype
    return pd.Series(values[codes], index=s.index, dtype=resolved, name=s.name)


def _map_unique(s: pd.Series, func: Callable[[str], Any], dtype: str | None) -> pd.Series:
    """Apply `func` once per distinct non-missing value of `s` and broadcast the results.

    `func` returns None for "nothing left"; that and missing input both become `pd.NA`.
    """
    codes, results = _unique_results(s, func)
    return _broadcast(results, codes, s, dtype)
