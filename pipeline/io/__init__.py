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

from jobdedup.pipeline.io.contract import (
    ADS_COLUMNS,
    ADS_OPTIONAL_COLUMNS,
    ADS_REQUIRED_COLUMNS,
    DUP_TYPES,
    GROUP_LABEL_COLUMNS,
    PAIR_LABEL_COLUMNS,
    STRING,
    Labels,
)
from jobdedup.pipeline.io.formats import csv_delimiter
from jobdedup.pipeline.io.read import read_ads, read_ads_streamed, read_labels, read_table
from jobdedup.pipeline.io.validate import validate_ads, validate_labels
from jobdedup.pipeline.io.write import write_table

__all__ = [
    "ADS_COLUMNS",
    "ADS_OPTIONAL_COLUMNS",
    "ADS_REQUIRED_COLUMNS",
    "DUP_TYPES",
    "GROUP_LABEL_COLUMNS",
    "PAIR_LABEL_COLUMNS",
    "STRING",
    "Labels",
    "csv_delimiter",
    "read_ads",
    "read_ads_streamed",
    "read_labels",
    "read_table",
    "validate_ads",
    "validate_labels",
    "write_table",
]
