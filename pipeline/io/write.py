"""Writing tables atomically as Parquet, CSV or JSON Lines."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

import pandas as pd

from jobdedup.pipeline.errors import InputError
from jobdedup.pipeline.io.contract import _format_of


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
