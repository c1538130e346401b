"""Reading CSV, JSON Lines and Parquet files as tables of text columns (no contract checks).

CSV fields are separated by commas, or by semicolons or tabs when the header line says so (see
:func:`csv_delimiter`). Row numbers in messages count data rows from 1; a CSV header is not counted.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import re
import sys
import zlib
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from jobdedup.pipeline.errors import InputError
from jobdedup.pipeline.io.contract import STRING

_BOM = b"\xef\xbb\xbf"
_REPLACEMENT_BYTES = "\ufffd".encode()
_INDEX_COLUMN = re.compile(r"__index_level_\d+__")


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
    data = data.removeprefix(_BOM)
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


def _array_item(body: str, at: int) -> Any:
    """Item `at` of the JSON array `body`, parsed with real numbers."""
    return json.loads(body)[at]


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
            records.append(_json_record(item, partial(_array_item, body, n - 1), p, f"item {n} of the array"))
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
                records.append(_json_record(obj, partial(json.loads, line), p, f"line {lineno}"))
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
