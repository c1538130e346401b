"""The data contract's columns and file formats, and the `Labels` table every labels reader returns."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from jobdedup.pipeline.errors import InputError

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
