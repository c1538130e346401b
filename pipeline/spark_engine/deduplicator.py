"""The Spark engine's driver: `SparkDeduplicator.run` puts the stages together, and the outputs.

`spark_dedup` is the one-call form, `cmd_dedup_spark` the `dedup --engine spark` command.

Example:
    >>> # result = SparkDeduplicator(Deduplicator.load("model.json"), spark).run("ads.parquet")
    >>> # pairs, groups = result.to_pandas(); result.unpersist()
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import sys
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.io import ADS_COLUMNS, STRING
from jobdedup.pipeline.spark_engine.adapters import (
    name_vocabulary_of,
    prepare_ads,
    score_pairs,
    slice_boilerplate,
)
from jobdedup.pipeline.spark_engine.candidates import candidate_pairs
from jobdedup.pipeline.spark_engine.graph import Grouping, group_components
from jobdedup.pipeline.spark_engine.reader import spark_ads
from jobdedup.pipeline.spark_engine.session import materialize, release, require_pyspark, spark_session

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

    from jobdedup.pipeline.engine import Deduplicator


@dataclass
class SparkDedupResult:
    """Spark DataFrames of one run, sorted as the embedded engine sorts them, and run figures.

    Attributes:
        pairs: `ad_id_a`, `ad_id_b`, `probability`, `is_duplicate`, `via_lsh`, `via_fields`, `rule`,
            `dup_type`.
        groups: `ad_id`, `group_id`, `group_size`, `status`, then the input's extra columns (as text).
        figures: counts (ads, candidate pairs, capped buckets, components, iterations) and
            `seconds` per stage.
    """

    pairs: SparkFrame
    groups: SparkFrame
    figures: dict[str, Any] = field(default_factory=dict)
    _cached: list[SparkFrame] = field(default_factory=list, repr=False)

    def to_pandas(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        """(pairs, groups) as pandas DataFrames with the embedded engine's dtypes."""
        # (annotated: pyspark types toPandas with pandas' stubs, which are not installed)
        spark_pairs: pd.DataFrame = self.pairs.toPandas()
        spark_groups: pd.DataFrame = self.groups.toPandas()
        # Built the way `Deduplicator.run` builds its frames, so dtypes match too.
        pairs = pd.DataFrame(
            {
                "ad_id_a": spark_pairs["ad_id_a"].to_numpy(dtype=object),
                "ad_id_b": spark_pairs["ad_id_b"].to_numpy(dtype=object),
                "probability": spark_pairs["probability"].to_numpy(dtype=np.float64),
                "is_duplicate": spark_pairs["is_duplicate"].to_numpy(dtype=bool),
                "via_lsh": spark_pairs["via_lsh"].to_numpy(dtype=bool),
                "via_fields": spark_pairs["via_fields"].to_numpy(dtype=bool),
                "rule": _text_array(spark_pairs["rule"]),
            }
        )
        pairs["dup_type"] = _text_array(spark_pairs["dup_type"])
        groups = pd.DataFrame(
            {
                "ad_id": spark_groups["ad_id"].to_numpy(dtype=object),
                "group_id": spark_groups["group_id"].to_numpy(dtype=object),
                "group_size": spark_groups["group_size"].to_numpy(dtype=np.int64),
                "status": spark_groups["status"].to_numpy(dtype=object),
            }
        )
        extras = spark_groups.iloc[:, 4:].astype(STRING)
        return pairs, pd.concat([groups, extras], axis=1) if len(extras.columns) else groups

    def unpersist(self) -> None:
        """Free the materialised intermediate frames (after the outputs were written or collected)."""
        for frame in self._cached:
            release(frame)
        self._cached.clear()


def _text_array(column: pd.Series) -> pd.api.extensions.ExtensionArray:
    """A collected text column as the embedded engine's `string` array (missing = pd.NA)."""
    values = column.astype(object)
    return pd.array(values.where(values.notna(), None).to_numpy(), dtype="string")


class SparkDeduplicator:
    """Runs a fitted `Deduplicator`'s pipeline on Spark; results equal `Deduplicator.run`'s.

    Args:
        model: a fitted `pipeline.engine.Deduplicator` (e.g. `Deduplicator.load(path)`).
        spark: the session to use (default: `spark_session()`, i.e. local[*]).
        ads_per_partition: ads per Spark partition for preparing (at least the default parallelism).

    Example:
        >>> # result = SparkDeduplicator(Deduplicator.load("model.json")).run("ads.parquet")
        >>> # pairs, groups = result.to_pandas()
    """

    def __init__(
        self, model: Deduplicator, spark: SparkSession | None = None, ads_per_partition: int = 20_000
    ):
        require_pyspark()
        self.model = model
        self.spark = spark or spark_session()
        self.ads_per_partition = ads_per_partition

    def _spec(self) -> dict[str, Any]:
        """What Python workers need to rebuild the model's pair decisions (`adapters.worker_model`)."""
        spec = {
            "boosters": self.model.classifier_.to_texts(),
            "threshold": float(self.model.threshold_),
            "params": self.model.classifier_.get_params(),
            "config": self.model.config.to_dict(),
            "policy": self.model.policy.to_dict(),
        }
        # Workers are reused across runs: a model is known by all of it, not by its boosters alone.
        spec["digest"] = hashlib.sha256(json.dumps(spec, sort_keys=True, default=str).encode()).hexdigest()
        return spec

    def run(self, ads: Any) -> SparkDedupResult:
        """Deduplicate `ads` (Parquet path, other ads file, pandas or Spark DataFrame).

        The returned frames are lazy views over cached intermediates; call `unpersist()` on the
        result after writing or collecting them.
        """
        spark, model, config = self.spark, self.model, self.model.config
        seconds: dict[str, float] = {}
        cached: list[SparkFrame] = []
        clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            seconds[name] = round(now - clock, 2)
            clock = now

        def keep(frame: SparkFrame) -> SparkFrame:
            frame = materialize(frame)
            cached.append(frame)
            return frame

        # 1. ads, in input order, cut into range partitions
        frame, extras, _ = spark_ads(spark, ads, config.max_description_chars)
        n_ads = frame.count()
        partitions = max(spark.sparkContext.defaultParallelism, math.ceil(n_ads / self.ads_per_partition))
        ads_frame = keep(frame.repartitionByRange(partitions, "_row"))
        lap("read")

        # 2. batch boilerplate per slice of chunk_size rows, as the embedded engine learns it;
        #    the batch's employer and place words, as `prepare_batch` finds them for the whole batch
        chunk = int(getattr(config, "chunk_size", 0) or max(n_ads, 1))
        by_slice, blocks_found = slice_boilerplate(ads_frame, config, chunk)
        names = name_vocabulary_of(ads_frame)
        lap("boilerplate")

        # 3. prepare: the embedded stages 1–2 per slice, with the slice's boilerplate known
        prepared = keep(prepare_ads(ads_frame, config, model.boilerplate_, by_slice, chunk, names))
        lap("prepare")

        # 4. candidates: LSH band keys and field blocks, equal keys joined
        candidates, capped = candidate_pairs(prepared, config.max_bucket_size, keep)
        n_candidates = candidates.count()
        lap("candidates")

        # 5. score: both ads' prepared rows joined to every pair, features + LightGBM per partition
        spec = spark.sparkContext.broadcast(self._spec())
        scored = keep(score_pairs(candidates, prepared, spec, config.num_perm, n_candidates))
        lap("score")

        # 6. group: connected components of accepted pairs, chaining and employer guards per component
        threshold = float(model.threshold_)
        grouping = group_components(scored, prepared, spec, config, threshold, keep)
        lap("group")

        assigned = keep(_assigned_groups(ads_frame, grouping))
        groups = _groups_frame(assigned, prepared, ads_frame, extras)
        pairs = _pairs_frame(scored, assigned, threshold)
        figures = {
            "ads": int(n_ads),
            "partitions": int(partitions),
            "boilerplate_blocks_found": blocks_found,
            "candidate_pairs": int(n_candidates),
            "capped_buckets": int(capped),
            "accepted_pairs": grouping.accepted_pairs,
            "components_checked": grouping.components_checked,
            "cc_rounds": grouping.rounds,
            "seconds": seconds,
        }
        return SparkDedupResult(pairs=pairs, groups=groups, figures=figures, _cached=cached)


def _assigned_groups(ads: SparkFrame, grouping: Grouping) -> SparkFrame:
    """Per ad: `_row`, `g_comp`, `g_sub` (its group), `ad_id`, `group_id` (the group's smallest
    ad_id, as `pipeline.engine._group_ids` names groups) and `group_size`."""
    from pyspark.sql import functions as F

    assigned = (
        ads.select("_row", "ad_id")
        .join(grouping.components.select(F.col("v").alias("_row"), "comp"), "_row", "left")
        .join(grouping.clusters.select(F.col("v").alias("_row"), "sub"), "_row", "left")
        .select(
            "_row",
            "ad_id",
            F.coalesce("comp", "_row").alias("g_comp"),
            F.coalesce("sub", F.lit(-1).cast("long")).alias("g_sub"),
        )
    )
    named = assigned.groupBy("g_comp", "g_sub").agg(
        F.min("ad_id").alias("group_id"), F.count(F.lit(1)).alias("group_size")
    )
    return assigned.join(named, ["g_comp", "g_sub"])


def _groups_frame(
    assigned: SparkFrame, prepared: SparkFrame, ads: SparkFrame, extras: list[str]
) -> SparkFrame:
    """The groups output in input order: `ad_id`, `group_id`, `group_size`, `status`, then the
    input's extra columns, named as the embedded engine names them."""
    from pyspark.sql import functions as F

    extra_names = _output_names(extras)
    carried = ads.select("_row", *[F.col(f"`{c}`").alias(f"_extra{k}") for k, c in enumerate(extras)])
    return (
        assigned.join(prepared.select("_row", "status"), "_row")
        .join(carried, "_row")
        .orderBy("_row")
        .select(
            "ad_id",
            "group_id",
            "group_size",
            "status",
            *[F.col(f"_extra{k}").alias(extra_names[c]) for k, c in enumerate(extras)],
        )
    )


def _pairs_frame(scored: SparkFrame, assigned: SparkFrame, threshold: float) -> SparkFrame:
    """The pairs output sorted as the embedded engine sorts it: a pair is a duplicate when it is
    accepted and both ads ended in one group; its type is given only then."""
    from pyspark.sql import functions as F

    a_group = assigned.select(
        F.col("_row").alias("i"),
        F.col("ad_id").alias("ad_id_a"),
        F.col("g_comp").alias("ca"),
        F.col("g_sub").alias("sa"),
    )
    b_group = assigned.select(
        F.col("_row").alias("j"),
        F.col("ad_id").alias("ad_id_b"),
        F.col("g_comp").alias("cb"),
        F.col("g_sub").alias("sb"),
    )
    duplicate = (
        (F.col("probability") >= threshold) & (F.col("ca") == F.col("cb")) & (F.col("sa") == F.col("sb"))
    )
    return (
        scored.join(a_group, "i")
        .join(b_group, "j")
        .withColumn("is_duplicate", duplicate)
        .orderBy("i", "j")
        .select(
            "ad_id_a",
            "ad_id_b",
            "probability",
            "is_duplicate",
            "via_lsh",
            "via_fields",
            "rule",
            F.when(F.col("is_duplicate"), F.col("type_if_duplicate")).alias("dup_type"),
        )
    )


def _output_names(extras: list[str]) -> dict[str, str]:
    """Names of the extra input columns in groups (as `pipeline.engine._with_extra_columns` names them)."""
    from jobdedup.pipeline.engine import _with_extra_columns

    groups = pd.DataFrame(columns=["ad_id", "group_id", "group_size", "status"])
    ads = pd.DataFrame(columns=[*ADS_COLUMNS, *extras])
    named = list(_with_extra_columns(groups, ads).columns[len(groups.columns) :])
    return dict(zip(extras, named))


def spark_dedup(
    ads: Any,
    model: Deduplicator | str | os.PathLike[str] | None = None,
    spark: SparkSession | None = None,
    *,
    as_pandas: bool = True,
    ads_per_partition: int = 20_000,
) -> tuple[Any, Any]:
    """Find duplicates among `ads` with Spark: (pairs, groups) as in the data contract.

    Args:
        ads: Parquet file or folder (read by Spark), another ads file, or a pandas / Spark DataFrame.
        model: a `Deduplicator`, a model file, or None for the bundled default model.
        spark: session to run in (default `spark_session()`: local[*]).
        as_pandas: collect the results to pandas (else lazy Spark DataFrames over cached data).

    Example:
        >>> # pairs, groups = spark_dedup("data/test_ads.parquet")
    """
    require_pyspark()
    from jobdedup.pipeline.engine import Deduplicator

    if model is None or isinstance(model, str | os.PathLike):
        from jobdedup.pipeline.model_files import DEFAULT_MODEL

        model = Deduplicator.load(model or DEFAULT_MODEL)
    result = SparkDeduplicator(model, spark, ads_per_partition=ads_per_partition).run(ads)
    if not as_pandas:
        return result.pairs, result.groups
    try:
        return result.to_pandas()
    finally:
        result.unpersist()


def cmd_dedup_spark(args: Any) -> int:
    """`jobdedup dedup --engine spark`: the dedup command on Spark (local[*] or --spark-master)."""
    require_pyspark()
    from jobdedup.pipeline.model_files import model_from_args, write_outputs

    if getattr(args, "format", "parquet") == "eurostat":
        raise JobdedupError(
            "--format eurostat is not available with --engine spark yet; use --engine embedded"
        )
    model = model_from_args(args)
    master = getattr(args, "spark_master", None) or "local[*]"
    spark = spark_session(master)
    result = SparkDeduplicator(model, spark).run(args.ads)
    try:
        pairs, groups = result.to_pandas()
    finally:
        result.unpersist()
    write_outputs(pairs, groups, args.out)
    duplicated = int((groups["group_size"] > 1).sum())
    print(
        f"{len(groups)} ads, {groups['group_id'].nunique()} groups, {duplicated} ads have a duplicate; "
        f"{len(pairs)} candidate pairs, {int(pairs['is_duplicate'].sum())} duplicates; "
        f"wrote {args.out / 'pairs.parquet'} and {args.out / 'groups.parquet'} (Spark, {master})"
    )
    if result.figures["capped_buckets"]:
        print(
            f"note: {result.figures['capped_buckets']} oversized buckets were capped to star pairs",
            file=sys.stderr,
        )
    return 0
