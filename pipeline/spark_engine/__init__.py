"""The same pipeline on Apache Spark: one batch of ads, from Parquet, on a laptop or a cluster.

Every stage calls the embedded engine's own functions on pandas slices inside Spark (pandas UDFs),
so results equal `Deduplicator.run` on the same ads (tested: same pairs, probabilities, groups):

1. **ads** — read with Spark (Parquet) or handed over as pandas / Spark DataFrame; checked like
   `read_ads` (required columns, empty and repeated `ad_id`, blank optional values, long
   descriptions cut); each ad gets its input row number `_row` (the embedded engine's row index).
2. **boilerplate** — a first pass (`mapInPandas`) tokenises descriptions and emits (slice, block,
   title) and (slice, block, employer) rows; Spark counts distinct titles and distinct normalised
   companies per block. A slice is `config.chunk_size` consecutive rows, the scope in which the
   embedded engine learns batch boilerplate, so the sets are the same. The batch's vocabulary of
   employer and place words (`pipeline.prepare.name_vocabulary`) is made on the driver from the
   distinct company and location values.
3. **prepare** — `prepare_batch` per Arrow batch with the model's boilerplate ∪ its slice's
   boilerplate as known blocks (what a sub-slice finds itself is a subset of its slice's, so the
   result does not depend on partitioning) and the batch's name vocabulary. Per ad: shingle sets,
   signature and band keys as binary columns, normalised fields as typed columns.
4. **candidates** — LSH band keys and field-blocking keys exploded; equal keys joined in Spark,
   buckets over `max_bucket_size` capped to stars, exactly as `pipeline.candidates.pairs_from_keys`.
5. **score** — candidate pairs joined to both ads' prepared rows; `build_pair_features` and the
   model's `Deduplicator.predict_proba` (LightGBM booster rebuilt once per Python worker from the
   model's text, decision rules applied) in `mapInPandas`.
6. **group** — connected components of accepted pairs by min-label propagation with pointer
   jumping (DataFrame joins, no extra jars), then `group_ads` (the average-linkage chaining guard)
   and `split_mixed_employers` (the employer guard) per component of three or more ads, or of
   two or more companies, in a cogrouped `applyInPandas`.

The package's modules follow its jobs: `session` (pyspark check, session, kept stage results),
`reader` (stage 1), `adapters` (the embedded stage functions in pandas UDFs and the
serialisation of prepared ads between stages: 2, 3, 5), `candidates` (4), `graph` (6) and
`deduplicator` (`SparkDeduplicator` putting them together, outputs, `spark_dedup`, the command).

pyspark is an optional extra (`pip install 'jobdedup[spark]'`); this package imports it lazily.

Example:
    >>> # from jobdedup.pipeline.spark_engine import spark_dedup
    >>> # pairs, groups = spark_dedup("ads.parquet", "model.json")           # local[*]
    >>> # pairs, groups = spark_dedup(ads_df, model, spark=session, as_pandas=False)  # Spark frames
"""

from jobdedup.pipeline.spark_engine.deduplicator import (
    SparkDeduplicator,
    SparkDedupResult,
    cmd_dedup_spark,
    spark_dedup,
)
from jobdedup.pipeline.spark_engine.graph import connected_components
from jobdedup.pipeline.spark_engine.session import PYSPARK_MISSING, require_pyspark, spark_session

__all__ = [
    "PYSPARK_MISSING",
    "SparkDedupResult",
    "SparkDeduplicator",
    "cmd_dedup_spark",
    "connected_components",
    "require_pyspark",
    "spark_dedup",
    "spark_session",
]
