"""Stage 1 on Spark: the ads as a Spark frame of text columns with their input row numbers, checked
as `pipeline.io.read_ads` checks a file.

Example:
    >>> # frame, extras, source = spark_ads(spark, "ads.parquet", max_chars=100_000)
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jobdedup.pipeline.errors import InputError, InputWarning
from jobdedup.pipeline.io import ADS_COLUMNS, ADS_OPTIONAL_COLUMNS, validate_ads

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession


def _blank(column: Any) -> Any:
    """True where a text column is missing or only whitespace."""
    return column.isNull() | column.rlike(r"(?U)^\s*$")


def _with_row_numbers(frame: SparkFrame) -> SparkFrame:
    """`_row` = position in read order (0..n-1): partition offset + rank inside the partition."""
    from pyspark.sql import functions as F

    tagged = frame.withColumn("_mid", F.monotonically_increasing_id()).withColumn(
        "_pid", F.spark_partition_id()
    )
    counts = sorted(tagged.groupBy("_pid").count().collect())
    offsets, total = {}, 0
    for row in counts:
        offsets[int(row["_pid"])] = total
        total += int(row["count"])
    offset = F.lit(0).cast("long")
    for pid, start in offsets.items():
        offset = F.when(F.col("_pid") == pid, F.lit(start).cast("long")).otherwise(offset)
    local = F.col("_mid") - F.shiftleft(F.col("_pid").cast("long"), 33)
    return tagged.withColumn("_row", offset + local).drop("_mid", "_pid")


def spark_ads(spark: SparkSession, ads: Any, max_chars: int) -> tuple[SparkFrame, list[str], str]:
    """The ads as a Spark frame of text columns + `_row`, checked like `read_ads`; extra names; source."""
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    if isinstance(ads, str | os.PathLike):
        source = str(ads)
        path = Path(ads)
        if "://" in source:  # hdfs://, s3a://, file://: for Spark to read
            ads = spark.read.parquet(source)
        elif path.suffix.lower() != ".parquet" and not path.is_dir():
            from jobdedup.pipeline.io import read_ads

            ads = read_ads(path, max_chars)
        else:
            if not path.exists():
                raise InputError(f"{path}: file not found; check the path.", path=source)
            ads = spark.read.parquet(str(path))
    else:
        source = "ads"
    if isinstance(ads, pd.DataFrame):
        checked = validate_ads(ads, source=source, max_description_chars=max_chars)
        checked.columns = [str(c) for c in checked.columns]
        text = checked.astype(object).where(checked.notna(), None)
        for name in text.columns:
            text[name] = [None if v is None else str(v) for v in text[name]]
        text.insert(0, "_row", np.arange(len(text), dtype=np.int64))
        schema = StructType(
            [StructField("_row", LongType(), False)]
            + [StructField(name, StringType(), True) for name in checked.columns]
        )
        frame = spark.createDataFrame(text, schema=schema)
        return frame, [c for c in checked.columns if c not in ADS_COLUMNS], source
    if not isinstance(ads, SparkFrame):
        raise TypeError(f"ads must be a path, a pandas or a Spark DataFrame, not {type(ads).__name__}")
    names = [c for c in ads.columns if not (c.startswith("__index_level_") and c.endswith("__"))]
    if any(c not in names for c in ("ad_id", "description")):
        validate_ads(pd.DataFrame(columns=names), source=source)  # raises the reader's message
    extras = [c for c in names if c not in ADS_COLUMNS]
    columns = []
    for name in ADS_COLUMNS:
        value = F.col(f"`{name}`").cast("string") if name in names else F.lit(None).cast("string")
        if name in ADS_OPTIONAL_COLUMNS:
            value = F.when(_blank(value), F.lit(None).cast("string")).otherwise(value)
        columns.append(value.alias(name))
    columns += [F.col(f"`{name}`").cast("string").alias(name) for name in extras]
    frame = _with_row_numbers(ads.select(*columns))
    checks = frame.agg(
        F.count(F.lit(1)).alias("n"),
        F.sum(_blank(F.col("ad_id")).cast("long")).alias("blank"),
        F.min(F.when(_blank(F.col("ad_id")), F.col("_row"))).alias("first_blank"),
        F.sum((F.length("description") > max_chars).cast("long")).alias("cut"),
    ).first()
    assert checks is not None  # (an aggregate of the whole table has one row)
    if not checks["n"]:
        raise InputError(f"{source}: no ads (the table has no rows); add at least one ad.", path=source)
    if checks["blank"]:
        row = int(checks["first_blank"]) + 1
        raise InputError(
            f"{source}: row {row}: ad_id is empty ({int(checks['blank'])} row(s) in all); "
            "give every ad a unique, non-empty ad_id.",
            path=source,
            row=row,
            column="ad_id",
        )
    repeated = (
        frame.groupBy("ad_id")
        .agg(F.count(F.lit(1)).alias("n"), F.array_sort(F.collect_list("_row")).alias("rows"))
        .where(F.col("n") > 1)
    )
    first = repeated.orderBy(F.element_at("rows", 2)).select("ad_id", "rows").first()
    if first is not None:
        count = repeated.count()
        raise InputError(
            f"{source}: ad_id {str(first['ad_id'])[:56]!r} appears more than once, in rows "
            f"{first['rows'][0] + 1} and {first['rows'][1] + 1} ({count} duplicated id(s) in all); ad_id "
            "must be unique: drop the repeated rows or give them distinct ids.",
            path=source,
            column="ad_id",
        )
    if checks["cut"]:
        frame = frame.withColumn(
            "description",
            F.when(F.length("description") > max_chars, F.substring("description", 1, max_chars)).otherwise(
                F.col("description")
            ),
        )
        warnings.warn(
            InputWarning(
                f"{source}: {int(checks['cut'])} ad(s) have descriptions longer than {max_chars} characters; "
                f"they were cut to {max_chars} (raise max_description_chars to keep more)."
            ),
            stacklevel=3,
        )
    return frame, extras, source
