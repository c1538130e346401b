"""Stage 3 on Spark: candidate pairs from LSH band keys and field-blocking keys, equal keys joined.

The same pairs as `pipeline.candidates.generate_candidates`: buckets over `max_bucket_size` are
capped to stars on their smallest row, exactly as `pipeline.candidates.pairs_from_keys` does.

Example:
    >>> # candidates, capped = candidate_pairs(prepared, config.max_bucket_size, keep)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from jobdedup.pipeline.candidates import FIELD_ITEMS, FIELD_KEY_ROWS
from jobdedup.pipeline.spark_engine.adapters import explode_bands

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame


def candidate_pairs(
    prepared: SparkFrame, max_bucket_size: int, keep: Callable[[SparkFrame], SparkFrame]
) -> tuple[SparkFrame, int]:
    """Unique pairs `i` < `j` of prepared ads (`i`, `j`, `via_lsh`, `via_fields`), kept with `keep`,
    and the number of capped buckets."""
    from pyspark.sql import functions as F

    band_rows = prepared.select("_row", "bands").mapInPandas(explode_bands, "key long, i long")
    lsh_pairs, lsh_capped = _pairs_from_keys(band_rows, max_bucket_size, keep)
    field_pairs, field_capped = _pairs_from_keys(_field_keys(prepared), max_bucket_size, keep)
    candidates = keep(
        lsh_pairs.select("i", "j", F.lit(True).alias("via_lsh"), F.lit(False).alias("via_fields"))
        .unionByName(
            field_pairs.select("i", "j", F.lit(False).alias("via_lsh"), F.lit(True).alias("via_fields"))
        )
        .groupBy("i", "j")
        .agg(F.max("via_lsh").alias("via_lsh"), F.max("via_fields").alias("via_fields"))
    )
    return candidates, lsh_capped.count() + field_capped.count()


def _pairs_from_keys(
    keys: SparkFrame, max_bucket_size: int, keep: Callable[[SparkFrame], SparkFrame] = lambda frame: frame
) -> tuple[SparkFrame, SparkFrame]:
    """Pairs (i < j) of rows sharing `key`; buckets over the cap become stars on their smallest row.

    The same pairs as `pipeline.candidates.pairs_from_keys`; also returns the capped buckets.
    `keep` may cache the bucket sizes (they are read twice).
    """
    from pyspark.sql import functions as F

    sizes = keep(
        keys.groupBy("key").agg(F.count(F.lit(1)).alias("n"), F.min("i").alias("hub")).where("n >= 2")
    )
    keyed = keys.join(sizes, "key")
    small = keyed.where(F.col("n") <= max_bucket_size).select("key", "i")
    all_pairs = (
        small.alias("a")
        .join(small.alias("b"), "key")
        .where(F.col("a.i") < F.col("b.i"))
        .select(F.col("a.i").alias("i"), F.col("b.i").alias("j"))
    )
    stars = keyed.where((F.col("n") > max_bucket_size) & (F.col("i") > F.col("hub"))).select(
        F.col("hub").alias("i"), F.col("i").alias("j")
    )
    return all_pairs.unionByName(stars), sizes.where(F.col("n") > max_bucket_size)


def _field_keys(prepared: SparkFrame) -> SparkFrame:
    """(key, i) field-blocking keys, as `pipeline.candidates.field_block_keys` builds them."""
    from pyspark.sql import functions as F

    # `pipeline.candidates.employer_word`: the employer name's first word, none for no name.
    company = F.col("company")
    prepared = prepared.withColumn(
        "employer_word", F.when(company != "", F.split(company, " ", 2).getItem(0))
    )
    parts = []
    for kind, first, second, unless in FIELD_KEY_ROWS:
        held = F.col(first).isNotNull() & F.col(second).isNotNull()
        if unless is not None:
            held &= F.col(unless).isNull() | (F.col(second) != F.col(unless))
        parts.append(
            prepared.where(held).select(
                F.concat(F.lit(f"{kind}\x1e"), F.col(first), F.lit("\x1f"), F.col(second)).alias("key"),
                F.col("_row").alias("i"),
            )
        )
    for name in FIELD_ITEMS:
        parts.append(
            prepared.select(F.col("_row").alias("i"), F.explode(name).alias("item"))
            .where(F.col("item").isNotNull())
            .select(F.concat(F.lit(f"{name}\x1e"), F.col("item")).alias("key"), "i")
        )
    keys = parts[0]
    for part in parts[1:]:
        keys = keys.unionByName(part)
    return keys
