"""Reading, validating and writing the tables of the data contract (ads, labels, outputs).

Every table may be CSV (UTF-8, header row), JSON Lines or Parquet, chosen by the file extension
(``.csv``, ``.csv.gz``, ``.jsonl``, ``.jsonl.gz``, ``.ndjson``, ``.json``, ``.parquet``). Every column is
read as text (pandas ``string`` dtype, missing values are ``pd.NA``), so an id "007" stays "007".

CSV fields are separated by commas, or by semicolons or tabs when the header line says so (see
:func:`csv_delimiter`: spreadsheets in much of Europe export ``;``-separated files).

Row numbers in messages count data rows from 1; a CSV header is not counted. CSV syntax errors also
give the line of the file where the bad row starts.

Example:
    >>> ads = read_ads("ads.csv")  # doctest: +SKIP
    >>> labels = read_labels("labels.csv", ads=ads)  # doctest: +SKIP
    >>> write_table(ads, "out/ads.parquet")  # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import itertools
import json
import os
import re
import secrets
import sys
import warnings
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from pipeline.errors import InputError, InputWarning

__all__ = [
    "ADS_COLUMNS",
    "ADS_OPTIONAL_COLUMNS",
    "ADS_REQUIRED_COLUMNS",
    "DUP_TYPES",
    "GROUP_LABEL_COLUMNS",
    "PAIR_LABEL_COLUMNS",
    "Labels",
    "read_ads",
    "read_labels",
    "read_table",
    "validate_ads",
    "validate_labels",
    "write_table",
]

ADS_REQUIRED_COLUMNS: tuple[str, ...] = ("ad_id", "description")
ADS_OPTIONAL_COLUMNS: tuple[str, ...] = (
    "title",
    "company",
    "location",
    "occupation",
    "contact",
    "url",
    "posted_at",
    "source",
    "language",
)
ADS_COLUMNS: tuple[str, ...] = ADS_REQUIRED_COLUMNS + ADS_OPTIONAL_COLUMNS
PAIR_LABEL_COLUMNS: tuple[str, ...] = ("ad_id_a", "ad_id_b", "label")
GROUP_LABEL_COLUMNS: tuple[str, ...] = ("ad_id", "group_id")
DUP_TYPES: tuple[str, ...] = ("FULL", "SEMANTIC", "TEMPORAL", "PARTIAL")

STRING = pd.StringDtype("pyarrow")
"""The dtype of every text column we produce (missing values are ``pd.NA``)."""

_FORMATS: tuple[tuple[str, str, bool], ...] = (
    (".csv.gz", "csv", True),
    (".csv", "csv", False),
    (".jsonl.gz", "json", True),
    (".ndjson.gz", "json", True),
    (".json.gz", "json", True),
    (".jsonl", "json", False),
    (".ndjson", "json", False),
    (".json", "json", False),
    (".parquet", "parquet", False),
)
_KNOWN_EXTENSIONS = ".csv, .jsonl or .parquet (also .csv.gz, .jsonl.gz, .json)"
_BOM = b"\xef\xbb\xbf"
_REPLACEMENT_BYTES = "\ufffd".encode()
_INDEX_COLUMN = re.compile(r"__index_level_\d+__")
_LABEL_ONES = ("1", "1.0", "true")
_LABEL_ZEROS = ("0", "0.0", "false")
_MAX_SHOWN = 5


@dataclass
class Labels:
    """Labelled pairs, normalised from either form of the labels file.

    Attributes:
        pairs: ``ad_id_a``, ``ad_id_b`` (``ad_id_a < ad_id_b`` in string order, each pair once),
            ``label`` (int8, 1 = same vacancy), ``dup_type`` (string, upper case, may be NA), then any
            extra columns of the file. For the groups form: every within-group pair, all label 1.
        groups: ``ad_id``, ``group_id`` (one row per ad) when the file was in groups form, else None.
        all_pairs_known: True for the groups form: every pair of listed ads that is not in ``pairs``
            is a known non-duplicate. False for the pairs form: unlisted pairs are unknown.

    Example:
        >>> labels = read_labels("labels.csv")  # doctest: +SKIP
        >>> labels.pairs[labels.pairs["label"] == 1].head()  # doctest: +SKIP
    """

    pairs: pd.DataFrame
    groups: pd.DataFrame | None
    all_pairs_known: bool


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


def write_table(df: pd.DataFrame, path: str | os.PathLike[str]) -> None:
    """Write a DataFrame as Parquet, CSV or JSON Lines (by extension), atomically.

    The table goes to a temporary file in the same directory, which then replaces ``path`` in one step,
    so readers never see half a file. Missing parent directories are created. The index is not written.

    Args:
        df: table to write.
        path: destination; ``.parquet``, ``.csv``, ``.csv.gz``, ``.jsonl``, ``.jsonl.gz`` or ``.json``.

    Raises:
        InputError: unknown extension, or the file cannot be written.

    Example:
        >>> write_table(pairs, "out/pairs.parquet")  # doctest: +SKIP
    """
    p = Path(path)
    fmt, compressed = _format_of(p)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        if fmt == "parquet":
            df.to_parquet(tmp, index=False)
        elif fmt == "csv":
            df.to_csv(tmp, index=False, lineterminator="\n", compression="gzip" if compressed else None)
        else:
            df.to_json(
                tmp,
                orient="records",
                lines=True,
                force_ascii=False,
                date_format="iso",
                double_precision=15,
                compression="gzip" if compressed else None,
            )
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, p)
    except OSError as exc:
        raise InputError(
            f"{p}: cannot write the file ({exc.strerror or exc}); check that the directory is writable.",
            path=str(p),
        ) from exc
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()


def _format_of(p: Path) -> tuple[str, bool]:
    name = p.name.lower()
    for suffix, fmt, compressed in _FORMATS:
        if name.endswith(suffix):
            return fmt, compressed
    shown = "".join(p.suffixes[-2:]) or "no extension"
    raise InputError(
        f"{p}: unknown file type ({shown}); use {_KNOWN_EXTENSIONS}.",
        path=str(p),
    )


def _read_bytes(p: Path, compressed: bool) -> bytes:
    try:
        if p.stat().st_size == 0:
            raise InputError(
                f"{p}: the file is empty (0 bytes); expected a header row and data.", path=str(p)
            )
        if compressed:
            with gzip.open(p, "rb") as handle:
                data = handle.read()
        else:
            data = p.read_bytes()
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise InputError(
            f"{p}: not a valid gzip file ({exc}); unpack it or compress it again with gzip.", path=str(p)
        ) from exc
    except OSError as exc:
        raise InputError(f"{p}: cannot read the file ({exc.strerror or exc}).", path=str(p)) from exc
    if not data:
        raise InputError(f"{p}: the file is empty (nothing inside the gzip).", path=str(p))
    return data


def _is_utf8(data: bytes) -> bool:
    """Whether the bytes are valid UTF-8 (checked by Arrow, without building a Python str)."""
    offsets = pa.py_buffer(np.array([0, len(data)], dtype=np.int64))
    blob = pa.Array.from_buffers(pa.large_binary(), 1, [None, offsets, pa.py_buffer(data)])
    try:
        blob.cast(pa.large_string())
    except pa.ArrowInvalid:
        return False
    return True


def _decode(data: bytes) -> tuple[str, int]:
    """UTF-8 text and the number of replacement characters introduced."""
    try:
        return data.decode("utf-8"), 0
    except UnicodeDecodeError:
        text = data.decode("utf-8", errors="replace")
        return text, text.count("\ufffd") - data.count(_REPLACEMENT_BYTES)


def _repair_utf8(data: bytes) -> tuple[bytes, int]:
    """The bytes with invalid UTF-8 replaced by U+FFFD, and how many characters were replaced."""
    if _is_utf8(data):
        return data, 0
    text, replaced = _decode(data)
    return text.encode("utf-8"), replaced


def _check_unique_names(names: list[str], p: Path) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise InputError(
                f"{p}: column {name!r} appears more than once in the header; rename or drop one of them.",
                path=str(p),
                column=name,
            )
        seen.add(name)


def _to_frame(table: pa.Table) -> pd.DataFrame:
    """Arrow table of text columns to a DataFrame of ``string`` columns."""

    def mapper(t: pa.DataType) -> Any:
        if pa.types.is_string(t) or pa.types.is_large_string(t):
            return STRING
        return None

    df = table.to_pandas(types_mapper=mapper, ignore_metadata=True)
    for column in df.columns:
        if df[column].dtype != STRING:  # all-null columns and the like
            df[column] = df[column].astype(STRING)
    return df


# --------------------------------------------------------------------------------------------------
# CSV


@contextlib.contextmanager
def _large_csv_fields() -> Iterator[None]:
    old = csv.field_size_limit()
    csv.field_size_limit(sys.maxsize)
    try:
        yield
    finally:
        csv.field_size_limit(old)


_DELIMITER_NAMES = {",": "commas", ";": "semicolons", "\t": "tabs"}


def csv_delimiter(data: bytes) -> str:
    """The field separator of a CSV file, told from its header line (the first record).

    A comma, unless the header holds no comma outside quotes but semicolons or tabs — one of the
    two, not both — as spreadsheet exports in much of Europe do. A header that is ambiguous (both,
    or none of them) keeps the comma.

    Example:
        >>> csv_delimiter(b'ad_id;description;"title; long"\\r\\n1;a;b\\r\\n')
        ';'
        >>> csv_delimiter(b"ad_id\\tdescription\\n"), csv_delimiter(b"ad_id;x,y\\n"), csv_delimiter(b"ad_id\\n")
        ('\\t', ',', ',')
    """
    counts = dict.fromkeys(b",;\t", 0)
    quoted = False
    # Separators, quotes and line breaks are ASCII: no byte of a multi-byte UTF-8 character is one.
    for byte in data[: 1 << 20].removeprefix(_BOM):
        if byte == 0x22:  # '"' (an escaped '""' inside quotes toggles twice)
            quoted = not quoted
        elif quoted:
            continue
        elif byte in (0x0A, 0x0D):
            break
        elif byte in counts:
            counts[byte] += 1
    if counts[ord(",")]:
        return ","
    found = [chr(byte) for byte in b";\t" if counts[byte]]
    return found[0] if len(found) == 1 else ","


def _separated_by(delimiter: str) -> str:
    """Words for the messages: "commas", or "semicolons (as in the header line)"."""
    name = _DELIMITER_NAMES[delimiter]
    return name if delimiter == "," else f"{name} (as in the header line)"


def _csv_header(data: bytes, delimiter: str = ",") -> list[str]:
    head = data[: 1 << 20].decode("utf-8", errors="replace")
    with _large_csv_fields():
        for record in csv.reader(io.StringIO(head, newline=""), delimiter=delimiter):
            if record:
                return record
    return []


def _arrow_csv(data: bytes, header: list[str], block_size: int, delimiter: str = ",") -> pa.Table:
    return pa_csv.read_csv(
        pa.BufferReader(data),
        read_options=pa_csv.ReadOptions(block_size=block_size),
        parse_options=pa_csv.ParseOptions(delimiter=delimiter, newlines_in_values=True),
        convert_options=pa_csv.ConvertOptions(
            column_types={name: pa.string() for name in header},
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            null_values=[],
        ),
    )


def _read_csv(data: bytes, p: Path) -> tuple[pd.DataFrame, int]:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if not data[:4096].strip() and not data.strip():
        raise InputError(
            f"{p}: the file has no header row (it is blank); expected a CSV header.", path=str(p)
        )
    if b"\n" not in data and b"\r" not in data:
        data += b"\n"  # a header without a line break
    data, replaced = _repair_utf8(data)
    delimiter = csv_delimiter(data)
    header = _csv_header(data, delimiter)
    _check_unique_names(header, p)
    block_size = min(max(len(data) + 1, 1 << 20), 1 << 26)
    table = None
    while table is None:
        try:
            table = _arrow_csv(data, header, block_size, delimiter)
        except pa.ArrowInvalid as exc:
            message = str(exc)
            if "straddl" in message and block_size < len(data) + 1:
                block_size = min(len(data) + 1, 2**31 - 1)
            else:
                raise _csv_syntax_error(data, p, message, delimiter) from None
    if data.count(b'"') % 2:  # an odd number of quotes: is a quoted value left open at the end?
        unclosed = _unclosed_quote(data, p, delimiter)
        if unclosed is not None:
            raise unclosed
    _check_unique_names(table.column_names, p)
    for i, field in enumerate(table.schema):
        if not pa.types.is_string(field.type):
            table = table.set_column(i, field.name, pc.cast(table.column(i), pa.string()))
    return _to_frame(table), replaced


def _csv_syntax_error(data: bytes, p: Path, arrow_message: str, delimiter: str = ",") -> InputError:
    """Find the first bad record with the csv module to name its row and line."""
    text = data.decode("utf-8", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    width: int | None = None
    row = 0
    start_line = 1
    try:
        with _large_csv_fields():
            for record in reader:
                if record:
                    if width is None:
                        width = len(record)
                    else:
                        row += 1
                        if len(record) != width:
                            hint = (
                                "; a quote may be missing its closing quote"
                                if reader.line_num > start_line + 1 and len(record) < width
                                else ""
                            )
                            return InputError(
                                f"{p}: row {row} (line {start_line}) has {len(record)} field(s) but the "
                                f"header has {width}{hint}; fields are separated by {_separated_by(delimiter)}: "
                                f"quote values that contain {_DELIMITER_NAMES[delimiter]}, quotes or "
                                f'line breaks ("like{delimiter} this").',
                                path=str(p),
                                row=row,
                            )
                start_line = reader.line_num + 1
    except csv.Error as exc:
        return InputError(
            f"{p}: row {row + 1} (line {start_line}) is not valid CSV ({exc}); check its quoting.",
            path=str(p),
            row=row + 1,
        )
    detail = arrow_message.splitlines()[0][:200] if arrow_message else "unknown problem"
    return InputError(f"{p}: not valid CSV ({detail}); check quoting and separators.", path=str(p))


def _unclosed_quote(data: bytes, p: Path, delimiter: str = ",") -> InputError | None:
    """An error if the last record opens a quoted value that runs to the end of the file.

    A lenient CSV parser reads such a file without complaint, the rest of the file becoming one value.
    """
    text = data.decode("utf-8", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    seen_header = False
    row, last_row, start_line, last_line = 0, 0, 1, 1
    with _large_csv_fields():
        for record in reader:
            if record:
                if seen_header:
                    row += 1
                seen_header = True
                last_row, last_line = row, start_line
            start_line = reader.line_num + 1
        lines = io.StringIO(text, newline="")
        offset = sum(len(line) for _, line in zip(range(last_line - 1), lines, strict=False))
        try:
            for _ in csv.reader(io.StringIO(text[offset:], newline=""), delimiter=delimiter, strict=True):
                pass
        except csv.Error as exc:
            if "unexpected end of data" in str(exc):
                where = f"row {last_row} (line {last_line})" if last_row else f"the header (line {last_line})"
                return InputError(
                    f"{p}: {where} opens a quoted value that is never closed, so the rest of the file "
                    "would be read into it; add the missing closing quote.",
                    path=str(p),
                    row=last_row or None,
                )
    return None


# --------------------------------------------------------------------------------------------------
# JSON Lines


def _json_constant(name: str) -> str | None:
    return None if name == "NaN" else name


# numbers keep their literal text ("1.50", "007" is not valid JSON anyway)
_JSON_TEXT = json.JSONDecoder(parse_int=str, parse_float=str, parse_constant=_json_constant)


def _json_record(obj: Any, plain: Callable[[], Any], p: Path, where: str) -> dict[str, str | None]:
    """One JSON object as text values; ``plain()`` gives it parsed with real numbers."""
    if not isinstance(obj, dict):
        kind = {list: "an array", str: "a string or number", type(None): "null"}.get(type(obj), "a boolean")
        raise InputError(
            f"{p}: {where} is {kind}, not a JSON object; write one object per line.", path=str(p)
        )
    record: dict[str, str | None] = obj
    for key, value in obj.items():
        if value is None or type(value) is str:
            continue
        if value is True or value is False:
            record[key] = "true" if value else "false"
        else:  # a nested array or object: keep it as compact JSON text with its real numbers
            record[key] = json.dumps(plain()[key], ensure_ascii=False)
    return record


def _arrow_json(data: bytes) -> pd.DataFrame | None:
    """Fast path: the file read by Arrow, if every value is a string or null (else None)."""
    if data.lstrip(b"\xef\xbb\xbf \t\r\n")[:1] != b"{" or not _is_utf8(data):
        return None
    try:
        table = pa_json.read_json(
            pa.BufferReader(data),
            read_options=pa_json.ReadOptions(block_size=min(max(len(data) + 1, 1 << 20), 1 << 26)),
        )
    except (pa.ArrowException, ValueError):  # the slow path explains
        return None
    if table.num_rows == 0:
        return None
    for i, field in enumerate(table.schema):
        if pa.types.is_null(field.type):
            table = table.set_column(i, field.name, pc.cast(table.column(i), pa.string()))
        elif not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            return None
    return _to_frame(table)


def _read_json(data: bytes, p: Path) -> tuple[pd.DataFrame, int]:
    fast = _arrow_json(data)
    if fast is not None:
        return fast, 0
    text, replaced = _decode(data)
    text = text.lstrip("\ufeff")
    body = text.lstrip()
    records: list[dict[str, str | None]] = []
    if body.startswith("["):  # a .json file holding one array of objects
        try:
            items = _JSON_TEXT.decode(body)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}: not valid JSON ({exc}).", path=str(p)) from None
        if not isinstance(items, list):
            raise InputError(f"{p}: not valid JSON (the array is not closed).", path=str(p))
        for n, item in enumerate(items, 1):
            records.append(
                _json_record(item, lambda n=n: json.loads(body)[n - 1], p, f"item {n} of the array")
            )
    else:
        decode = _JSON_TEXT.decode
        for lineno, line in enumerate(text.split("\n"), 1):
            if not line or line.isspace():
                continue
            try:
                obj = decode(line)
            except json.JSONDecodeError as exc:
                raise InputError(
                    f"{p}: line {lineno} is not valid JSON ({exc.msg} at column {exc.colno}); "
                    "write one complete JSON object per line.",
                    path=str(p),
                    row=lineno,
                ) from None
            if type(obj) is dict and all(v is None or type(v) is str for v in obj.values()):
                records.append(obj)
            else:
                records.append(_json_record(obj, lambda line=line: json.loads(line), p, f"line {lineno}"))
    if not records:
        raise InputError(f"{p}: no records (the file has only blank lines).", path=str(p))
    df = pd.DataFrame.from_records(records)
    df = df.astype(STRING)
    df.columns = [str(c) for c in df.columns]
    return df, replaced


# --------------------------------------------------------------------------------------------------
# Parquet


def _read_parquet(p: Path, columns: list[str] | None = None) -> pd.DataFrame:
    """A Parquet file as text columns (only `columns`, if given)."""
    try:
        if p.is_file() and p.stat().st_size == 0:
            raise InputError(f"{p}: the file is empty (0 bytes); expected a Parquet file.", path=str(p))
        table = pq.read_table(p, columns=columns)
        # Decompression buffers are freed but kept by Arrow's allocator: hand them back (a 1 GB
        # file otherwise holds twice its decoded size).
        pa.default_memory_pool().release_unused()
    except (pa.ArrowException, OSError, ValueError) as exc:
        detail = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise InputError(
            f"{p}: not a readable Parquet file ({detail}); check that it was written completely.",
            path=str(p),
        ) from exc
    keep = [i for i, name in enumerate(table.column_names) if not _INDEX_COLUMN.fullmatch(name)]
    table = table.select(keep)
    _check_unique_names(table.column_names, p)
    for i, field in enumerate(table.schema):
        if not (pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            table = table.set_column(i, field.name, _arrow_to_text(table.column(i)))
    return _to_frame(table)


def _arrow_to_text(column: pa.ChunkedArray) -> pa.ChunkedArray | pa.Array:
    try:
        return pc.cast(column, pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        pass

    def text(value: Any) -> str | None:
        if value is None:
            return None
        if isinstance(value, bytes):
            return value.decode("utf-8", errors="replace")
        return json.dumps(value, ensure_ascii=False, default=str)

    return pa.array([text(v) for v in column.to_pylist()], type=pa.string())


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
            values = columns[name]
            columns[name] = values.mask(_blank(values))

    columns["description"], n_cut = _cut_long(columns["description"], max_description_chars)
    if n_cut:
        _warn_cut(source, n_cut, max_description_chars)

    out = pd.DataFrame({name: s.reset_index(drop=True) for name, s in columns.items()})
    extras = [c for c in df.columns if c not in ADS_COLUMNS]
    if extras:
        rest = df[extras].reset_index(drop=True)
        out = pd.concat([out, rest], axis=1)
    out.attrs = {**df.attrs, "truncated_descriptions": n_cut}
    return out


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


def _blank(values: pd.Series) -> np.ndarray:
    """True where the value is missing or only whitespace."""
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
