"""Checking ads and labels tables against the data contract: one `InputError` naming the file, row or
column and the fix for anything a user can get wrong.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, cast

import numpy as np
import pandas as pd

from jobdedup.features.normalize import string_array
from jobdedup.pipeline.errors import InputError, InputWarning
from jobdedup.pipeline.io.contract import (
    _LABEL_ONES,
    _LABEL_ZEROS,
    _MAX_SHOWN,
    ADS_COLUMNS,
    ADS_OPTIONAL_COLUMNS,
    ADS_REQUIRED_COLUMNS,
    DUP_TYPES,
    GROUP_LABEL_COLUMNS,
    PAIR_LABEL_COLUMNS,
    STRING,
    Labels,
)
from jobdedup.pipeline.io.dates import unreadable_dates


def _cut_long(description: pd.Series, max_chars: int) -> tuple[pd.Series, int]:
    """Descriptions longer than `max_chars` cut to that length (a copy if any), and how many were."""
    too_long = (description.str.len() > max_chars).fillna(False).to_numpy(dtype=bool)
    n_cut = int(too_long.sum())
    if n_cut:
        description = description.copy()
        description[too_long] = description[too_long].str.slice(0, max_chars)
    return description, n_cut


def _warn_cut(source: str, n_cut: int, max_chars: int) -> None:
    warnings.warn(
        InputWarning(
            f"{source}: {n_cut} ad(s) have descriptions longer than {max_chars} characters; they were "
            f"cut to {max_chars} (raise max_description_chars to keep more)."
        ),
        stacklevel=4,
    )


DATES_CHECKED = "posted_at_checked"
"""The `attrs` key of a validated table: its dates were checked (and warned about) once, so
validating it again, as `Index.add` does with the ads `read_ads` gave it, warns no second time."""


def _warn_dates(source: str, posted_at: list[str | None], ids: list[str]) -> None:
    """An `InputWarning` naming the first ad whose `posted_at` is no date the pipeline can read
    (such ads are kept, as undated); `posted_at` holds None for a missing value."""
    bad = unreadable_dates(posted_at)
    if bad:
        rows = [row for row, value in enumerate(posted_at) if value in bad]
        value = posted_at[rows[0]]
        assert value is not None  # (one of `bad`, which holds no None)
        _warn_bad_dates(source, len(rows), rows[0], ids[rows[0]], value)


def _warn_dates_column(source: str, posted_at: pd.Series, ids: pd.Series) -> None:
    """`_warn_dates` of a column, each distinct value read once."""
    bad = unreadable_dates(pd.unique(posted_at.dropna().to_numpy(dtype=object)).tolist())
    if bad:
        rows = np.flatnonzero(posted_at.isin(bad).to_numpy(dtype=bool, na_value=False))
        first = int(rows[0])
        _warn_bad_dates(source, len(rows), first, ids.iloc[first], posted_at.iloc[first])


def _warn_bad_dates(source: str, count: int, first: int, ad_id: str, value: str) -> None:
    warnings.warn(
        InputWarning(
            f"{source}: {count} ad(s) have a posted_at that is no date (first: row {first + 1}, "
            f"ad_id {_show(ad_id)}: {_show(value)}); they are kept as undated. "
            "Write dates as ISO 8601 (2025-05-13 or 2025-05-13T09:30:00Z)."
        ),
        stacklevel=5,
    )


def validate_ads(
    df: pd.DataFrame, *, source: str = "ads", max_description_chars: int = 100_000
) -> pd.DataFrame:
    """Check a DataFrame of ads against the data contract and normalise it.

    ``ad_id`` must be present, non-empty and unique (ids are kept exactly as given, as text).
    ``description`` must be present; missing values stay ``pd.NA``. Absent optional columns are added
    as all-``pd.NA``; blank values in optional contract columns become ``pd.NA``. Extra columns are
    kept untouched after the contract columns. The input is not modified.

    Args:
        df: ads, e.g. from :func:`read_table` or built in Python.
        source: name used in messages (the file path).
        max_description_chars: longer descriptions are cut to this length, with an
            :class:`InputWarning`; the number cut is in ``attrs["truncated_descriptions"]``.

    Returns:
        A new DataFrame with a RangeIndex.

    Raises:
        InputError: missing required column, no rows, empty or duplicate ``ad_id``.
        ValueError: ``max_description_chars`` below 1.

    A ``posted_at`` that is no date the pipeline can read (`pipeline.io.dates`) gives an
    :class:`InputWarning` naming the first such ad; the ads are kept, as undated.

    Example:
        >>> ads = validate_ads(pd.DataFrame({"ad_id": ["007", "7"], "description": ["a", None]}))
        >>> ads["ad_id"].tolist(), ads["title"].isna().all()
        (['007', '7'], np.True_)
    """
    if max_description_chars < 1:
        raise ValueError(f"max_description_chars must be at least 1, got {max_description_chars}")
    _require_unique_columns(df, source)
    _require_columns(df, ADS_REQUIRED_COLUMNS, source, "ads")
    if len(df) == 0:
        raise InputError(
            f"{source}: no ads (the table has a header but no rows); add at least one ad.", path=source
        )

    few = _few_text_ads(df, max_description_chars, source)
    if few is not None:
        return _with_extras(few, df, 0)
    n = len(df)
    columns: dict[str, pd.Series] = {}
    for name in ADS_COLUMNS:
        if name in df.columns:
            columns[name] = _as_text(df[name])
        else:
            columns[name] = pd.Series(pd.NA, index=pd.RangeIndex(n), dtype=STRING)

    ids = columns["ad_id"]
    blank = _blank(ids)
    if blank.any():
        first = int(np.flatnonzero(blank)[0]) + 1
        raise InputError(
            f"{source}: row {first}: ad_id is empty ({int(blank.sum())} row(s) in all); "
            "give every ad a unique, non-empty ad_id.",
            path=source,
            row=first,
            column="ad_id",
        )
    repeated = ids.duplicated(keep="first").to_numpy(dtype=bool)
    if repeated.any():
        second = int(np.flatnonzero(repeated)[0])
        ad_id = ids.iloc[second]
        first = int(np.flatnonzero((ids == ad_id).to_numpy(dtype=bool))[0])
        n_ids = ids[repeated].nunique()
        raise InputError(
            f"{source}: ad_id {_show(ad_id)} appears more than once, in rows {first + 1} and {second + 1} "
            f"({n_ids} duplicated id(s) in all); ad_id must be unique: drop the repeated rows or give "
            "them distinct ids.",
            path=source,
            row=second + 1,
            column="ad_id",
        )

    for name in ADS_OPTIONAL_COLUMNS:
        if name in df.columns:
            blank = _blank(columns[name])
            if blank.any():
                columns[name] = columns[name].mask(blank)

    columns["description"], n_cut = _cut_long(columns["description"], max_description_chars)
    if n_cut:
        _warn_cut(source, n_cut, max_description_chars)
    if not df.attrs.get(DATES_CHECKED):
        _warn_dates_column(source, columns["posted_at"], ids)

    out = pd.DataFrame({name: s.reset_index(drop=True) for name, s in columns.items()})
    return _with_extras(out, df, n_cut)


def _with_extras(out: pd.DataFrame, df: pd.DataFrame, n_cut: int) -> pd.DataFrame:
    """The validated contract columns `out`, then the input's extra columns untouched, and its attrs."""
    extras = [at for at, c in enumerate(df.columns) if c not in ADS_COLUMNS]
    if extras:
        rest = df.iloc[:, extras].reset_index(drop=True)  # (by position: half the cost of by name)
        out = pd.concat([out, rest], axis=1)
    out.attrs = {**df.attrs, "truncated_descriptions": n_cut, DATES_CHECKED: True}
    return out


def _few_text_ads(df: pd.DataFrame, max_description_chars: int, source: str) -> pd.DataFrame | None:
    """`validate_ads`' contract columns for a few rows (a service's check) of text or missing values
    with unique, non-blank ad_ids and no description to cut, built in Python: pandas costs ~1 ms
    per column operation, ~10 ms for one ad. None for anything else (the general path handles it).
    """
    if len(df) > _FEW_ROWS:
        return None
    # (one conversion: a column's costs ~10 µs; with None for missing values, as below, half the
    # cost of pandas' NaN for missing text)
    cells = df.to_numpy(dtype=object, na_value=None)
    columns: dict[str, list[str | None]] = {}
    for name in ADS_COLUMNS:
        if name not in df.columns:
            columns[name] = [None] * len(df)
            continue
        values = [
            None if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)) else v
            for v in cells[:, df.columns.get_loc(name)].tolist()
        ]
        if not all(v is None or isinstance(v, str) for v in values):
            return None  # numbers and other values: `_as_text` writes them as text
        if name in ADS_OPTIONAL_COLUMNS:
            values = [v if v is not None and v.strip() else None for v in values]
        columns[name] = values
    ids = columns["ad_id"]
    if any(v is None or not v.strip() for v in ids) or len(set(ids)) < len(ids):
        return None
    if any(v is not None and len(v) > max_description_chars for v in columns["description"]):
        return None
    if not df.attrs.get(DATES_CHECKED):
        _warn_dates(source, columns["posted_at"], cast(list[str], ids))  # (no None: checked above)
    return pd.DataFrame({name: string_array(values) for name, values in columns.items()})


def validate_labels(df: pd.DataFrame, ads: pd.DataFrame | None = None, *, source: str = "labels") -> Labels:
    """Check a labels DataFrame (pairs or groups form) and normalise it.

    Pairs form: ``ad_id_a``, ``ad_id_b``, ``label`` (0/1, also "0.0"/"1.0"/true/false), optional
    ``dup_type``. Each pair is stored once with ``ad_id_a < ad_id_b``; repeats with the same label are
    dropped. Groups form: ``ad_id``, ``group_id``; an ad listed twice in the same group is kept once.

    Args:
        df: labels, e.g. from :func:`read_table` or built in Python.
        ads: if given, every labelled ``ad_id`` must be one of its ``ad_id`` values.
        source: name used in messages (the file path).

    Returns:
        The normalised :class:`Labels`.

    Raises:
        InputError: neither form's columns (or both), no rows, empty id, bad label, an ad paired with
            itself, conflicting labels for one pair, an ad in two groups, ids not in ``ads``.

    Example:
        >>> labels = validate_labels(pd.DataFrame({"ad_id_a": ["b"], "ad_id_b": ["a"], "label": ["1"]}))
        >>> labels.pairs[["ad_id_a", "ad_id_b"]].iloc[0].tolist(), labels.all_pairs_known
        (['a', 'b'], False)
    """
    _require_unique_columns(df, source)
    has_pairs = all(c in df.columns for c in PAIR_LABEL_COLUMNS)
    has_groups = all(c in df.columns for c in GROUP_LABEL_COLUMNS)
    if has_pairs == has_groups:
        problem = "has the columns of both forms" if has_pairs else "is in neither labels form"
        raise InputError(
            f"{source}: {problem}; expected either pairs ({', '.join(PAIR_LABEL_COLUMNS)}, optional "
            f"dup_type) or groups ({', '.join(GROUP_LABEL_COLUMNS)}); columns found: "
            f"{_show_columns(df)}.",
            path=source,
        )
    if len(df) == 0:
        raise InputError(
            f"{source}: no labels (the table has a header but no rows); add at least one label.",
            path=source,
        )
    labels = _pairs_labels(df, source) if has_pairs else _group_labels(df, source)
    if ads is not None:
        _check_known_ids(labels, ads, source)
    return labels


def _pairs_labels(df: pd.DataFrame, source: str) -> Labels:
    a = _as_text(df["ad_id_a"]).reset_index(drop=True)
    b = _as_text(df["ad_id_b"]).reset_index(drop=True)
    for name, ids in (("ad_id_a", a), ("ad_id_b", b)):
        _reject_blank(ids, name, source, "every labelled pair needs two ad_ids")

    raw = _as_text(df["label"]).reset_index(drop=True)
    token = raw.str.strip().str.lower()
    ones = token.isin(_LABEL_ONES).fillna(False).to_numpy(dtype=bool)
    zeros = token.isin(_LABEL_ZEROS).fillna(False).to_numpy(dtype=bool)
    bad = ~(ones | zeros)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        value = raw.iloc[first]
        shown = "empty" if pd.isna(value) or not str(value).strip() else _show(value)
        raise InputError(
            f"{source}: row {first + 1}: label is {shown} ({int(bad.sum())} bad label(s) in all); "
            "use 1 for the same vacancy and 0 for different ones.",
            path=source,
            row=first + 1,
            column="label",
        )
    label = ones.astype(np.int8)

    same = (a == b).fillna(False).to_numpy(dtype=bool)
    if same.any():
        first = int(np.flatnonzero(same)[0])
        raise InputError(
            f"{source}: row {first + 1}: ad {_show(a.iloc[first])} is paired with itself; "
            "remove that row (a pair needs two different ads).",
            path=source,
            row=first + 1,
        )

    swap = (a > b).fillna(False).to_numpy(dtype=bool)
    low = a.where(~swap, b)
    high = b.where(~swap, a)
    pairs = pd.DataFrame({"ad_id_a": low, "ad_id_b": high, "label": label})

    if "dup_type" in df.columns:
        dup_type = _as_text(df["dup_type"]).reset_index(drop=True).str.strip().str.upper()
        dup_type = dup_type.mask(dup_type == "")
        unknown = (dup_type.notna() & ~dup_type.isin(DUP_TYPES)).to_numpy(dtype=bool)
        if unknown.any():
            first = int(np.flatnonzero(unknown)[0])
            raise InputError(
                f"{source}: row {first + 1}: dup_type is {_show(dup_type.iloc[first])} "
                f"({int(unknown.sum())} unknown value(s) in all); use one of {', '.join(DUP_TYPES)}, "
                "or leave it empty.",
                path=source,
                row=first + 1,
                column="dup_type",
            )
        typed_negative = (dup_type.notna().to_numpy(dtype=bool)) & (label == 0)
        if typed_negative.any():
            first = int(np.flatnonzero(typed_negative)[0])
            raise InputError(
                f"{source}: row {first + 1}: label 0 (different vacancies) with dup_type "
                f"{_show(dup_type.iloc[first])}; a duplicate type is for label 1 only, so fix the label "
                "or empty the dup_type.",
                path=source,
                row=first + 1,
                column="dup_type",
            )
        pairs["dup_type"] = dup_type
    else:
        pairs["dup_type"] = pd.array([pd.NA] * len(pairs), dtype=STRING)

    repeated = pairs.duplicated(["ad_id_a", "ad_id_b"], keep=False).to_numpy(dtype=bool)
    if repeated.any():
        spread = pairs[repeated].groupby(["ad_id_a", "ad_id_b"], sort=False)["label"].nunique()
        conflicts = spread[spread > 1]
        if len(conflicts):
            lo, hi = conflicts.index[0]
            rows = np.flatnonzero(((pairs["ad_id_a"] == lo) & (pairs["ad_id_b"] == hi)).to_numpy(dtype=bool))
            first = int(rows[0])
            other = int(next(r for r in rows if pairs["label"].iat[r] != pairs["label"].iat[first]))
            raise InputError(
                f"{source}: the pair {_show(lo)} / {_show(hi)} is labelled {pairs['label'].iat[first]} in "
                f"row {first + 1} and {pairs['label'].iat[other]} in row {other + 1} "
                f"({len(conflicts)} conflicting pair(s) in all); keep one label per pair.",
                path=source,
                row=other + 1,
            )

    extras = [c for c in df.columns if c not in (*PAIR_LABEL_COLUMNS, "dup_type")]
    if extras:
        pairs = pd.concat([pairs, df[extras].reset_index(drop=True)], axis=1)
    pairs = pairs[~pairs.duplicated(["ad_id_a", "ad_id_b"], keep="first").to_numpy(dtype=bool)]
    pairs = pairs.reset_index(drop=True)
    pairs.attrs = {"repeated_pairs_dropped": len(df) - len(pairs)}
    return Labels(pairs=pairs, groups=None, all_pairs_known=False)


def _group_labels(df: pd.DataFrame, source: str) -> Labels:
    ad_id = _as_text(df["ad_id"]).reset_index(drop=True)
    group_id = _as_text(df["group_id"]).reset_index(drop=True)
    _reject_blank(ad_id, "ad_id", source, "every labelled ad needs its ad_id")
    _reject_blank(group_id, "group_id", source, "give every ad a group_id (a group of its own if unique)")

    groups = pd.DataFrame({"ad_id": ad_id, "group_id": group_id})
    extras = [c for c in df.columns if c not in GROUP_LABEL_COLUMNS]
    if extras:
        groups = pd.concat([groups, df[extras].reset_index(drop=True)], axis=1)

    again = groups.duplicated("ad_id", keep="first").to_numpy(dtype=bool)
    if again.any():
        same_group = groups.duplicated(["ad_id", "group_id"], keep="first").to_numpy(dtype=bool)
        clash = again & ~same_group
        if clash.any():
            second = int(np.flatnonzero(clash)[0])
            the_id = ad_id.iat[second]
            first = int(np.flatnonzero((ad_id == the_id).to_numpy(dtype=bool))[0])
            raise InputError(
                f"{source}: ad {_show(the_id)} is in group {_show(group_id.iat[first])} in row {first + 1} "
                f"and in group {_show(group_id.iat[second])} in row {second + 1}; an ad belongs to one "
                "group: merge the groups or fix the row.",
                path=source,
                row=second + 1,
                column="group_id",
            )
        groups = groups[~again]
    groups = groups.reset_index(drop=True)

    members = groups[["ad_id", "group_id"]]
    both = members.merge(members, on="group_id", suffixes=("_a", "_b"))
    both = both[(both["ad_id_a"] < both["ad_id_b"]).fillna(False).to_numpy(dtype=bool)]
    pairs = pd.DataFrame(
        {
            "ad_id_a": both["ad_id_a"].astype(STRING).to_numpy(),
            "ad_id_b": both["ad_id_b"].astype(STRING).to_numpy(),
            "label": np.ones(len(both), dtype=np.int8),
            "dup_type": pd.array([pd.NA] * len(both), dtype=STRING),
        }
    )
    pairs = pairs.astype({"ad_id_a": STRING, "ad_id_b": STRING})
    pairs = pairs.sort_values(["ad_id_a", "ad_id_b"], kind="stable", ignore_index=True)
    return Labels(pairs=pairs, groups=groups, all_pairs_known=True)


def _check_known_ids(labels: Labels, ads: pd.DataFrame, source: str) -> None:
    if "ad_id" not in ads.columns:
        raise InputError(f"{source}: the ads given to check the labels have no ad_id column.", path=source)
    known = _as_text(ads["ad_id"])
    if labels.groups is not None:
        used = labels.groups["ad_id"]
    else:
        used = pd.concat([labels.pairs["ad_id_a"], labels.pairs["ad_id_b"]], ignore_index=True)
    missing = used[~used.isin(known).fillna(False).to_numpy(dtype=bool)].unique()
    if len(missing):
        shown = ", ".join(_show(v) for v in missing[:_MAX_SHOWN])
        more = ", ..." if len(missing) > _MAX_SHOWN else ""
        raise InputError(
            f"{source}: {len(missing)} labelled ad_id(s) are not in the ads: {shown}{more}; "
            "label only ads of the ads file (or pass the ads file the labels were made for).",
            path=source,
            column="ad_id",
        )


# --------------------------------------------------------------------------------------------------
# Helpers


def _as_text(values: pd.Series) -> pd.Series:
    """The column as ``string`` dtype; numbers become their text ("7", "7.5")."""
    if values.dtype == STRING:
        return values
    return values.astype(STRING)


_FEW_ROWS = 1_000  # up to this many values, a Python loop beats pandas' ~1 ms per string operation


def _blank(values: pd.Series) -> np.ndarray:
    """True where the value is missing or only whitespace (or not text)."""
    if len(values) <= _FEW_ROWS:  # (str.strip finds the same whitespace as pyarrow's trim: tested)
        return np.fromiter(
            (not isinstance(v, str) or not v.strip() for v in values.tolist()), dtype=bool, count=len(values)
        )
    stripped = values.str.strip()
    return (values.isna() | (stripped == "")).fillna(True).to_numpy(dtype=bool)


def _reject_blank(values: pd.Series, column: str, source: str, fix: str) -> None:
    blank = _blank(values)
    if blank.any():
        first = int(np.flatnonzero(blank)[0]) + 1
        raise InputError(
            f"{source}: row {first}: {column} is empty ({int(blank.sum())} row(s) in all); {fix}.",
            path=source,
            row=first,
            column=column,
        )


def _require_unique_columns(df: pd.DataFrame, source: str) -> None:
    repeated = df.columns[df.columns.duplicated()]
    if len(repeated):
        name = str(repeated[0])
        raise InputError(
            f"{source}: column {name!r} appears more than once; rename or drop one of them.",
            path=source,
            column=name,
        )


def _require_columns(df: pd.DataFrame, required: tuple[str, ...], source: str, what: str) -> None:
    missing = [c for c in required if c not in df.columns]
    if not missing:
        return
    names = [str(c) for c in df.columns]
    hints = []
    for name in missing:
        near = [c for c in names if c.strip().lower() == name]
        if near:
            hints.append(f" (found {near[0]!r}: rename it to {name!r})")
    plural = "s" if len(missing) > 1 else ""
    raise InputError(
        f"{source}: required {what} column{plural} {', '.join(repr(m) for m in missing)} missing"
        f"{''.join(hints)}; columns found: {_show_columns(df)}; add the missing column{plural} to the "
        "header.",
        path=source,
        column=missing[0],
    )


def _show_columns(df: pd.DataFrame, limit: int = 20) -> str:
    names = [repr(str(c)) for c in df.columns]
    if not names:
        return "none"
    if len(names) > limit:
        return ", ".join(names[:limit]) + f", ... ({len(names)} in all)"
    return ", ".join(names)


def _show(value: Any, limit: int = 60) -> str:
    text = repr(str(value))
    return text if len(text) <= limit else text[: limit - 4] + "...'"
