"""Reading the contract's tables: any table as text (`read_table`), ads (whole or with descriptions
streamed slice by slice from Parquet) and labels, each checked by `pipeline.io.validate`.
"""

from __future__ import annotations

import itertools
import os
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from jobdedup.pipeline.errors import InputError, InputWarning
from jobdedup.pipeline.io.contract import STRING, Labels, _format_of
from jobdedup.pipeline.io.formats import (
    _arrow_to_text,
    _read_bytes,
    _read_csv,
    _read_json,
    _read_parquet,
    _to_frame,
)
from jobdedup.pipeline.io.validate import _cut_long, _warn_cut, validate_ads, validate_labels

# --------------------------------------------------------------------------------------------------
# Generic tables


def read_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read a CSV, JSON Lines or Parquet file with every column as text.

    Values are never converted: "007" stays "007", an empty CSV field stays "", "NA" stays "NA".
    JSON ``null`` and Parquet nulls become ``pd.NA``; JSON numbers and booleans keep their literal text
    ("1.50", "true"). Bytes that are not UTF-8 are replaced with U+FFFD; their count is warned about
    (:class:`InputWarning`) and kept in ``df.attrs["replaced_characters"]``.

    Args:
        path: file to read; the format follows the extension.

    Returns:
        DataFrame with a RangeIndex and ``string`` columns in file order.

    Raises:
        InputError: missing, empty or unreadable file, unknown extension, malformed row.

    Example:
        >>> df = read_table("ads.csv")  # doctest: +SKIP
        >>> df.dtypes.unique()  # doctest: +SKIP
        array([<StringDtype(storage='pyarrow', na_value=<NA>)>], dtype=object)
    """
    p = Path(path)
    fmt, compressed = _format_of(p)
    if not p.exists():
        raise InputError(f"{p}: file not found; check the path.", path=str(p))
    if fmt == "parquet":
        df = _read_parquet(p)
        replaced = 0
    else:
        if p.is_dir():
            raise InputError(f"{p}: is a directory, not a {fmt.upper()} file.", path=str(p))
        data = _read_bytes(p, compressed)
        if fmt == "csv":
            df, replaced = _read_csv(data, p)
        else:
            df, replaced = _read_json(data, p)
    if replaced:
        warnings.warn(
            InputWarning(
                f"{p}: {replaced} character(s) were not valid UTF-8 and were replaced with U+FFFD; "
                "save the file as UTF-8 to keep them."
            ),
            stacklevel=2,
        )
    df.attrs["replaced_characters"] = replaced
    return df


# --------------------------------------------------------------------------------------------------
# Ads


def read_ads(path: str | os.PathLike[str], max_description_chars: int = 100_000) -> pd.DataFrame:
    """Read and validate an ads file (see :func:`validate_ads`).

    Args:
        path: CSV, JSON Lines or Parquet file of ads.
        max_description_chars: longer descriptions are cut to this length, with a warning.

    Returns:
        The ads, contract columns first (all present, ``string`` dtype), extra columns after.

    Raises:
        InputError: unreadable file, missing required column, no ads, empty or duplicate ``ad_id``.

    Example:
        >>> ads = read_ads("ads.csv")  # doctest: +SKIP
        >>> list(ads.columns[:3])  # doctest: +SKIP
        ['ad_id', 'description', 'title']
    """
    df = read_table(path)
    return validate_ads(df, source=str(path), max_description_chars=max_description_chars)


def read_ads_streamed(
    path: str | os.PathLike[str], max_description_chars: int = 100_000, chunk_size: int = 50_000
) -> tuple[pd.DataFrame, Iterator[pd.Series]]:
    """`read_ads` for large batches: the ads without descriptions, and the descriptions slice by slice.

    From a Parquet file the descriptions are read as they are consumed, `chunk_size` rows at a
    time in file order, so a million ads' texts (~3 GB) are never all in memory; each slice is
    checked as `read_ads` checks the column (cast to text, cut at `max_description_chars`, one
    warning with the total after the last slice). Other formats are read whole and sliced.

    Returns:
        (ads validated as by `read_ads`, without the `description` column; an iterator of
        `string` Series of `chunk_size` rows (the last one shorter), together `len(ads)` rows).

    Example:
        >>> ads, texts = read_ads_streamed("ads.parquet", chunk_size=50_000)  # doctest: +SKIP
        >>> sum(len(t) for t in texts) == len(ads)  # doctest: +SKIP
        True
    """
    p = Path(path)
    if _format_of(p)[0] != "parquet" or not p.is_file() or p.stat().st_size == 0:
        ads = read_ads(p, max_description_chars)
        texts = ads.pop("description")
        return ads, (texts.iloc[i : i + chunk_size] for i in range(0, len(texts), chunk_size))
    try:
        names = pq.read_schema(p).names
    except (pa.ArrowException, OSError) as exc:
        raise InputError(
            f"{p}: not a readable Parquet file ({exc}); check that it was written completely.", path=str(p)
        ) from exc
    if "description" not in names:
        read_ads(p, max_description_chars)  # raises the contract's error for the missing column
    df = _read_parquet(p, columns=[name for name in names if name != "description"])
    df.insert(min(1, len(df.columns)), "description", pd.Series(pd.NA, index=df.index, dtype=STRING))
    ads = validate_ads(df, source=str(p), max_description_chars=max_description_chars).drop(
        columns="description"
    )
    return ads, _parquet_descriptions(p, len(ads), max_description_chars, chunk_size)


def _parquet_descriptions(p: Path, n_rows: int, max_chars: int, chunk_size: int) -> Iterator[pd.Series]:
    """The description column of a Parquet file in slices of exactly `chunk_size` rows (see above)."""
    pending: list[pa.Array] = []
    held, cut, done = 0, 0, 0
    # Read page by page: by default a row group's whole column chunk (a million ads' texts: ~1 GB
    # compressed) is buffered before the first batch.
    parquet = pq.ParquetFile(p, buffer_size=1 << 20, pre_buffer=False)
    batches = parquet.iter_batches(batch_size=chunk_size, columns=["description"])
    for batch in itertools.chain(batches, [None]):  # None: flush what is left
        if batch is not None:
            pending.append(batch.column(0))
            held += batch.num_rows
        while held >= chunk_size or (batch is None and held):
            column = pa.chunked_array(pending).combine_chunks() if len(pending) > 1 else pending[0]
            size = min(chunk_size, held)
            piece, rest = column.slice(0, size), column.slice(size)
            pending, held = ([rest] if len(rest) else []), held - size
            if not (pa.types.is_string(piece.type) or pa.types.is_large_string(piece.type)):
                piece = _arrow_to_text(pa.chunked_array([piece]))
            texts = _to_frame(pa.table({"description": piece}))["description"]
            texts, n_cut = _cut_long(texts, max_chars)
            cut += n_cut
            texts.index = pd.RangeIndex(done, done + size)
            done += size
            yield texts
        pa.default_memory_pool().release_unused()
    if done != n_rows:
        raise InputError(
            f"{p}: the file changed while it was read ({done} descriptions for {n_rows} ads).", path=str(p)
        )
    if cut:
        _warn_cut(str(p), cut, max_chars)


# --------------------------------------------------------------------------------------------------
# Labels


def read_labels(path: str | os.PathLike[str], ads: pd.DataFrame | None = None) -> Labels:
    """Read and validate a labels file in pairs or groups form (see :func:`validate_labels`).

    Args:
        path: CSV, JSON Lines or Parquet file of labels.
        ads: if given, every labelled ``ad_id`` must be one of its ``ad_id`` values.

    Returns:
        The normalised :class:`Labels`.

    Raises:
        InputError: neither form's columns, bad label value, self pair, conflicting labels,
            ids not in ``ads``.

    Example:
        >>> labels = read_labels("labels.csv", ads=read_ads("ads.csv"))  # doctest: +SKIP
        >>> labels.all_pairs_known  # doctest: +SKIP
        False
    """
    df = read_table(path)
    return validate_labels(df, ads=ads, source=str(path))
