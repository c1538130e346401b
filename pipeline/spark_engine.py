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

pyspark is an optional extra (`pip install 'jobdedup[spark]'`); this module imports it lazily.

Example:
    >>> # from pipeline.spark_engine import spark_dedup
    >>> # pairs, groups = spark_dedup("ads.parquet", "model.json")           # local[*]
    >>> # pairs, groups = spark_dedup(ads_df, model, spark=session, as_pandas=False)  # Spark frames
"""

from __future__ import annotations

import hashlib
import math
import os
import sys
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from xxhash import xxh3_64_intdigest

from features.fields import FIELD_COLUMNS, normalize_fields
from features.pairs import PairInputs, build_pair_features
from features.shingle_sets import ShingleSets
from models.classifier import PairClassifier
from models.dup_types import assign_dup_types
from models.rules import rule_names
from pipeline.candidates import band_keys
from pipeline.employer_guard import split_mixed_employers
from pipeline.errors import InputError, InputWarning, JobdedupError
from pipeline.group import group_ads
from pipeline.io import ADS_COLUMNS, ADS_OPTIONAL_COLUMNS, STRING, validate_ads
from pipeline.sketch import EMPTY_SIGNATURE_VALUE, tokenize

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

    from pipeline.engine import Deduplicator

__all__ = ["SparkDedupResult", "SparkDeduplicator", "require_pyspark", "spark_dedup", "spark_session"]

PYSPARK_MISSING = (
    "the Spark engine needs pyspark, which is not installed: pip install 'jobdedup[spark]' "
    "(or pip install 'pyspark>=4.0'), or use --engine embedded"
)
_TEXT_FIELDS = ("title", "title_tokens", "company", "occupation", "location", "city", "source")
_ITEM_FIELDS = ("emails", "phones", "domains", "refs")
_SETS = ("full", "core", "numbers", "employer_words", "place_words", "mentions")
# The columns of `PairInputs.fields`: the normalised fields and the requisition numbers `refs`
# (`pipeline.prepare._prepare_chunk`).
_FIELDS = (*FIELD_COLUMNS, "refs")
# What one ad carries into pair features: PairInputs row i, serialised.
_SIDE_COLUMNS = ("words", "core_words", *_SETS, "signature", *_TEXT_FIELDS, *_ITEM_FIELDS, "posted_ns")
_FIELD_COMBOS = {
    "company+title": ("company", "title_tokens"),
    "company+city": ("company", "city"),
    "title+city": ("title_tokens", "city"),
}
_NO_VALUE = "\x00none"
_BLOCK_TITLE, _BLOCK_EMPLOYER = 0, 1


def require_pyspark() -> None:
    """Raise a one-line `JobdedupError` saying what to install when pyspark is missing."""
    try:
        import pyspark
        import pyspark.sql  # noqa: F401
    except ImportError:
        raise JobdedupError(PYSPARK_MISSING) from None


def spark_session(
    master: str = "local[*]", app_name: str = "jobdedup", conf: dict[str, str] | None = None
) -> SparkSession:
    """A SparkSession for jobdedup (the active one with these settings, else a new one).

    Local masters get the driver on 127.0.0.1, no UI, 4 GB driver memory, a JVM that exits when
    it runs out of heap (pyspark then fails at once; an out-of-memory error inside the thread
    serving `toPandas` otherwise leaves the driver waiting forever) and this interpreter for the
    Python workers (`PYSPARK_PYTHON`, unless already set). On a cluster, install jobdedup on the
    executors and point `PYSPARK_PYTHON` at their interpreter.

    Example:
        >>> # spark = spark_session("local[2]", conf={"spark.sql.shuffle.partitions": "8"})
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    local = master.startswith("local")
    if local:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # The Spark path is tested against the pandas this project installs (3.x included).
    warnings.filterwarnings(
        "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
    )
    warnings.filterwarnings("ignore", message="The copy keyword is deprecated", module=r"pyspark\.")
    settings = {
        "spark.ui.enabled": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.session.timeZone": "UTC",
        "spark.python.worker.reuse": "true",
        "spark.ui.showConsoleProgress": "false",
    }
    if local:
        settings.update(
            {
                "spark.driver.host": "127.0.0.1",
                "spark.driver.bindAddress": "127.0.0.1",
                "spark.driver.memory": "4g",
                "spark.driver.extraJavaOptions": "-XX:+ExitOnOutOfMemoryError",
                "spark.sql.shuffle.partitions": "16",
            }
        )
    settings.update(conf or {})
    builder = SparkSession.builder.master(master).appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark


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
        spark_pairs, spark_groups = self.pairs.toPandas(), self.groups.toPandas()
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
            _release(frame)
        self._cached.clear()


def _text_array(column: pd.Series) -> pd.api.extensions.ExtensionArray:
    """A collected text column as the embedded engine's `string` array (missing = pd.NA)."""
    values = column.astype(object)
    return pd.array(values.where(values.notna(), None).to_numpy(), dtype="string")


# ------------------------------------------------------------------------------------- ads


def _blank(column: Any) -> Any:

    return column.isNull() | column.rlike(r"(?U)^\s*$")


def _materialize(frame: SparkFrame) -> SparkFrame:
    """`frame` computed now and kept (memory, spilling to disk), as a frame whose plan is just that data.

    Every stage reads the previous stages' results more than once, so they are kept. They are kept
    as local checkpoints, not `persist()`: a persisted frame's plan still holds the whole plan that
    made it, and each cached relation prints the plan of the cached relations it reads, so the plan
    text of the final pairs doubled with every stage (85 million characters for 650 ads). Spark
    renders that text on every adaptive re-plan; in a 1 GB driver that ran out of heap inside the
    thread serving `toPandas`, and pyspark then waited forever for the thread's result (issue #7).
    A checkpoint's plan is one scan of its blocks, so later plans stay small. The blocks live on
    the executors; unlike cached blocks they cannot be recomputed if an executor is lost (the run
    then fails and must be repeated, as with the connected-components rounds).
    """
    from pyspark import StorageLevel

    return frame.localCheckpoint(eager=True, storageLevel=StorageLevel.MEMORY_AND_DISK)


def _release(frame: SparkFrame) -> None:
    """Drop the blocks of a frame made by `_materialize` (best effort; else Spark's cleaner does)."""
    try:
        frame._jdf.queryExecution().analyzed().rdd().unpersist(False)
    except Exception:  # noqa: BLE001 - not a LogicalRDD (another Spark version): leave it to the cleaner
        frame.unpersist()


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


def _spark_ads(spark: SparkSession, ads: Any, max_chars: int) -> tuple[SparkFrame, list[str], str]:
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
            from pipeline.io import read_ads

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


# ---------------------------------------------------------------------- pandas UDF bodies


def _as_ads(frame: pd.DataFrame) -> pd.DataFrame:
    """A Spark batch of text columns in the dtypes `read_ads` gives (missing = pd.NA)."""
    return frame.reindex(columns=list(ADS_COLUMNS)).astype(STRING)


def _code_hashes(values: pd.Series) -> np.ndarray:
    """64-bit hash of each normalised value (missing values are one value, as in `_prepare_chunk`)."""
    values = values.astype(object).where(values.notna(), _NO_VALUE)
    return np.fromiter((xxh3_64_intdigest(str(v).encode()) for v in values), np.uint64, len(values)).view(
        np.int64
    )


def _block_codes(
    batches: Iterator[pd.DataFrame], chunk: int, min_titles: int, min_employers: int
) -> Iterator[pd.DataFrame]:
    """(slice, block hash, kind, code) of every description block: kind `_BLOCK_TITLE` with the hash
    of the ad's normalised title, `_BLOCK_EMPLOYER` with that of its normalised company; at most
    `min_titles` titles and `min_employers` employers per block (all that counting them needs)."""
    for frame in batches:
        ads = _as_ads(frame)
        texts = ads["description"].astype(object).where(ads["description"].notna(), "").tolist()
        tokens = tokenize(texts)
        names = pd.DataFrame({name: pd.Series(pd.NA, index=ads.index, dtype=STRING) for name in ADS_COLUMNS})
        names["title"] = ads["title"]
        names["company"] = ads["company"]
        fields = normalize_fields(names.astype(object))
        slices = frame["_row"].to_numpy(np.int64) // chunk
        doc = tokens.block_doc
        kinds = (
            (_BLOCK_TITLE, fields["title_tokens"], min_titles),
            (_BLOCK_EMPLOYER, fields["company"], min_employers),
        )
        for kind, values, least in kinds:
            seen = pd.DataFrame(
                {
                    "slice": slices[doc],
                    "block": tokens.block_hash.view(np.int64),
                    "kind": np.full(len(doc), kind, dtype=np.int64),
                    "code": _code_hashes(values)[doc],
                }
            ).drop_duplicates()
            yield seen.groupby(["slice", "block"], sort=False).head(least)


def _sets_bytes(sets: ShingleSets) -> list[bytes]:
    """Each ad's set as raw bytes of `ShingleSets.values` (read back by `_sets_from_bytes`)."""
    values, indptr = sets.values, sets.indptr
    return [values[indptr[k] : indptr[k + 1]].tobytes() for k in range(len(sets))]


def _items(value: Any) -> list[str] | None:
    return list(value) if isinstance(value, tuple | list) and len(value) else None


def _prepare_batches(
    batches: Iterator[pd.DataFrame],
    config: Any,
    known: np.ndarray,
    by_slice: dict[int, np.ndarray],
    chunk: int,
    names: np.ndarray,
) -> Iterator[pd.DataFrame]:
    """Stages 1–2 with the embedded `prepare_batch`, one slice's rows at a time; `names` is the
    whole batch's `name_vocabulary`."""
    from pipeline.boilerplate import merge_block_sets
    from pipeline.prepare import prepare_batch

    one_worker = config.replace(jobs=1)
    empty = np.zeros(0, dtype=np.uint64)
    for frame in batches:
        frame = frame.sort_values("_row", kind="stable").reset_index(drop=True)
        slices = frame["_row"].to_numpy(np.int64) // chunk
        for slice_id in np.unique(slices):
            part = frame[slices == slice_id].reset_index(drop=True)
            boilerplate = merge_block_sets(known, by_slice.get(int(slice_id), empty))
            batch = prepare_batch(_as_ads(part), one_worker, boilerplate, names=names)
            inputs = batch.inputs
            signatures = np.ascontiguousarray(inputs.signatures)
            usable = signatures[:, 0] != EMPTY_SIGNATURE_VALUE
            keys = np.zeros((len(part), config.lsh_bands), dtype=np.uint64)
            if usable.any():
                keys[usable] = band_keys(signatures[usable], config.lsh_bands, config.lsh_rows)
            fields = inputs.fields
            posted = fields["posted_at"].to_numpy(dtype="datetime64[ns]")
            out = {
                "_row": part["_row"].to_numpy(np.int64),
                "status": batch.status.astype(object).to_numpy(),
                "words": np.asarray(inputs.words, dtype=np.int64),
                "core_words": np.asarray(inputs.core_words, dtype=np.int64),
                **{name: _sets_bytes(getattr(inputs, name)) for name in _SETS},
                "signature": [row.tobytes() for row in signatures],
                "bands": [row.tobytes() if ok else b"" for row, ok in zip(keys, usable)],
            }
            for name in _TEXT_FIELDS:
                values = fields[name].astype(object)
                out[name] = [v if isinstance(v, str) else None for v in values]
            for name in _ITEM_FIELDS:
                out[name] = [_items(v) for v in fields[name].astype(object)]
            out["posted_ns"] = pd.array(np.where(np.isnat(posted), 0, posted.view(np.int64)), dtype="Int64")
            out["posted_ns"][np.isnat(posted)] = pd.NA
            yield pd.DataFrame(out)


def _explode_bands(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
    """(key, i) rows of every ad's LSH band keys (binary uint64 arrays → long rows)."""
    for frame in batches:
        blobs = frame["bands"].tolist()
        counts = np.array([len(b) // 8 for b in blobs], dtype=np.int64)
        keys = np.frombuffer(b"".join(blobs), dtype=np.uint64).view(np.int64)
        yield pd.DataFrame({"key": keys, "i": np.repeat(frame["_row"].to_numpy(np.int64), counts)})


def _sets_from_bytes(blobs: list[bytes]) -> ShingleSets:
    dtype = ShingleSets.from_lists([[0]]).values.dtype  # the hash width ShingleSets stores
    sizes = np.fromiter((len(b) // dtype.itemsize for b in blobs), np.int64, len(blobs))
    indptr = np.zeros(len(blobs) + 1, dtype=np.int64)
    np.cumsum(sizes, out=indptr[1:])
    return ShingleSets(indptr=indptr, values=np.frombuffer(b"".join(blobs), dtype=dtype).copy())


def _pair_inputs(frame: pd.DataFrame, num_perm: int) -> PairInputs:
    """PairInputs whose row k is the ad of `frame` row k (columns `_SIDE_COLUMNS`)."""
    signature_bytes = frame["signature"].tolist()
    width = len(signature_bytes[0]) // num_perm if signature_bytes else 4
    signatures = np.frombuffer(b"".join(signature_bytes), dtype=np.dtype(f"<u{width}")).reshape(-1, num_perm)
    fields: dict[str, Any] = {}
    for name in _FIELDS:
        if name in _TEXT_FIELDS:
            fields[name] = pd.Series([v if isinstance(v, str) else pd.NA for v in frame[name]], dtype=object)
        elif name in _ITEM_FIELDS:
            fields[name] = pd.Series(
                [tuple(v) if v is not None and len(v) else pd.NA for v in frame[name]], dtype=object
            )
    posted = pd.array(frame["posted_ns"], dtype="Int64")
    fields["posted_at"] = pd.Series(
        np.where(
            posted.isna(),
            np.datetime64("NaT", "ns"),
            posted.fillna(0).to_numpy(np.int64).view("datetime64[ns]"),
        )
    )
    return PairInputs(
        fields=pd.DataFrame({name: fields[name] for name in _FIELDS}),
        **{name: _sets_from_bytes(frame[name].tolist()) for name in _SETS},
        signatures=signatures,
        words=frame["words"].to_numpy(np.int64),
        core_words=frame["core_words"].to_numpy(np.int64),
    )


_MODELS: dict[str, Deduplicator] = {}


def _worker_model(spec: dict[str, Any]) -> Deduplicator:
    """The fitted `Deduplicator` whose `predict_proba` (classifier and decision rules) scores pairs,
    rebuilt from LightGBM's text once per Python worker (`SparkDeduplicator._spec`)."""
    from pipeline.config import Config
    from pipeline.engine import Deduplicator

    found = _MODELS.get(spec["digest"])
    if found is None:
        found = Deduplicator(Config.from_dict(spec["config"]))
        found.classifier_ = PairClassifier.from_text(spec["booster"], spec["threshold"], spec["params"])
        found.boilerplate_ = np.zeros(0, dtype=np.uint64)  # preparing is done; pairs need no blocks
        _MODELS[spec["digest"]] = found
    return found


def _score_batches(
    batches: Iterator[pd.DataFrame], spec_broadcast: Any, num_perm: int
) -> Iterator[pd.DataFrame]:
    """Probability, rule, duplicate type and employer link (`pipeline.engine.employer_links`) of
    candidate pairs carrying both ads' prepared rows."""
    from pipeline.engine import employer_links

    model = _worker_model(spec_broadcast.value)
    for frame in batches:
        m = len(frame)
        sides = pd.concat(
            [
                frame[[f"a_{c}" for c in _SIDE_COLUMNS]].set_axis(list(_SIDE_COLUMNS), axis=1),
                frame[[f"b_{c}" for c in _SIDE_COLUMNS]].set_axis(list(_SIDE_COLUMNS), axis=1),
            ],
            ignore_index=True,
        )
        features = build_pair_features(_pair_inputs(sides, num_perm), np.arange(m), np.arange(m) + m)
        probability = model.predict_proba(features)[:, 1] if m else np.zeros(0)
        pairs = frame[["i", "j"]].astype(np.int64).reset_index(drop=True)
        linked = pd.MultiIndex.from_frame(pairs).isin(
            pd.MultiIndex.from_frame(employer_links(pairs, features))
        )
        yield pd.DataFrame(
            {
                "i": pairs["i"].to_numpy(),
                "j": pairs["j"].to_numpy(),
                "via_lsh": frame["via_lsh"].to_numpy(bool),
                "via_fields": frame["via_fields"].to_numpy(bool),
                "probability": probability.astype(np.float64),
                "rule": rule_names(features),
                "type_if_duplicate": assign_dup_types(features) if m else np.zeros(0, dtype=object),
                "employer_link": linked,
            }
        )


def _cluster_component(
    members: pd.DataFrame, edges: pd.DataFrame, spec_broadcast: Any, settings: dict[str, Any]
) -> pd.DataFrame:
    """`group_ads` and `split_mixed_employers` over one connected component, as `Deduplicator.run`
    calls them: (v, sub) = ad row and its group inside the component."""
    if members.empty:
        return pd.DataFrame({"v": np.zeros(0, np.int64), "sub": np.zeros(0, np.int64)})
    model = _worker_model(spec_broadcast.value)
    members = members.sort_values("v", kind="stable").reset_index(drop=True)
    rows = members["v"].to_numpy(np.int64)
    local = pd.Series(np.arange(len(rows)), index=rows)
    inputs = _pair_inputs(members, settings["num_perm"])
    edges = edges.sort_values(["i", "j"], kind="stable")
    accepted = pd.DataFrame(
        {
            "i": local.reindex(edges["i"].to_numpy(np.int64)).to_numpy(np.int64),
            "j": local.reindex(edges["j"].to_numpy(np.int64)).to_numpy(np.int64),
            "probability": edges["probability"].to_numpy(np.float64),
        }
    )

    def score(left: np.ndarray, right: np.ndarray) -> np.ndarray:
        if len(left) == 0:
            return np.zeros(0)
        return model.predict_proba(build_pair_features(inputs, left, right))[:, 1]

    labels = group_ads(len(rows), accepted, score, settings["link_threshold"], settings["max_exact_size"])
    links = accepted.loc[edges["employer_link"].to_numpy(bool), ["i", "j"]].reset_index(drop=True)
    labels, _ = split_mixed_employers(labels, inputs.fields["company"], accepted, links)
    return pd.DataFrame({"v": rows, "sub": np.asarray(labels, dtype=np.int64)})


# ----------------------------------------------------------------------- Spark-side stages


def _pairs_from_keys(
    keys: SparkFrame, max_bucket_size: int, keep: Any = lambda frame: frame
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

    parts = []
    for name, (first, second) in _FIELD_COMBOS.items():
        parts.append(
            prepared.where(F.col(first).isNotNull() & F.col(second).isNotNull()).select(
                F.concat(F.lit(f"{name}\x1e"), F.col(first), F.lit("\x1f"), F.col(second)).alias("key"),
                F.col("_row").alias("i"),
            )
        )
    for name in ("emails", "phones"):
        parts.append(
            prepared.select(F.col("_row").alias("i"), F.explode(name).alias("item"))
            .where(F.col("item").isNotNull())
            .select(F.concat(F.lit(f"{name}\x1e"), F.col("item")).alias("key"), "i")
        )
    keys = parts[0]
    for part in parts[1:]:
        keys = keys.unionByName(part)
    return keys


def connected_components(edges: SparkFrame, max_iterations: int = 100) -> tuple[SparkFrame, int]:
    """(v, comp) for every vertex of the undirected graph `edges` (i, j); comp = smallest vertex.

    Min-label propagation over DataFrame joins with pointer jumping (label := label of label), so
    chains converge in few rounds; each round is checkpointed locally to keep plans short.
    Returns the labels and the number of rounds.
    """
    from pyspark.sql import functions as F

    both = edges.select(F.col("i").alias("src"), F.col("j").alias("dst")).unionByName(
        edges.select(F.col("j").alias("src"), F.col("i").alias("dst"))
    )
    both = both.localCheckpoint()
    labels = (
        both.groupBy("src")
        .agg(F.min("dst").alias("m"))
        .select(F.col("src").alias("v"), F.least("src", "m").alias("comp"))
        .localCheckpoint()
    )
    for rounds in range(1, max_iterations + 1):
        neighbour = (
            both.join(labels.withColumnRenamed("v", "src"), "src")
            .groupBy("dst")
            .agg(F.min("comp").alias("near"))
            .withColumnRenamed("dst", "v")
        )
        spread = labels.join(neighbour, "v").select("v", F.least("comp", "near").alias("comp"))
        jumped = (
            spread.alias("x")
            .join(spread.alias("y"), F.col("x.comp") == F.col("y.v"))
            .select(F.col("x.v").alias("v"), F.least(F.col("x.comp"), F.col("y.comp")).alias("comp"))
            .localCheckpoint()
        )
        changed = jumped.join(labels.withColumnRenamed("comp", "old"), "v").where("comp != old").count()
        _release(labels)
        labels = jumped
        if changed == 0:
            _release(both)
            return labels, rounds
    raise RuntimeError(f"connected components did not converge in {max_iterations} rounds")


# --------------------------------------------------------------------------------- engine


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
        booster = self.model.classifier_.to_text()
        return {
            "booster": booster,
            "threshold": float(self.model.threshold_),
            "params": self.model.classifier_.get_params(),
            "config": self.model.config.to_dict(),
            "digest": hashlib.sha256(booster.encode()).hexdigest(),
        }

    def run(self, ads: Any) -> SparkDedupResult:
        """Deduplicate `ads` (Parquet path, other ads file, pandas or Spark DataFrame).

        The returned frames are lazy views over cached intermediates; call `unpersist()` on the
        result after writing or collecting them.
        """
        from pyspark.sql import functions as F
        from pyspark.sql.types import (
            ArrayType,
            BinaryType,
            BooleanType,
            DoubleType,
            LongType,
            StringType,
            StructField,
            StructType,
        )

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
            frame = _materialize(frame)
            cached.append(frame)
            return frame

        # 1. ads, in input order, cut into range partitions
        frame, extras, _ = _spark_ads(spark, ads, config.max_description_chars)
        n_ads = frame.count()
        partitions = max(spark.sparkContext.defaultParallelism, math.ceil(n_ads / self.ads_per_partition))
        ads_frame = keep(frame.repartitionByRange(partitions, "_row"))
        lap("read")

        # 2. batch boilerplate per slice of chunk_size rows, as the embedded engine learns it;
        #    the batch's employer and place words, as `prepare_batch` finds them for the whole batch
        chunk = int(getattr(config, "chunk_size", 0) or max(n_ads, 1))
        min_titles = config.boilerplate_min_titles
        min_employers = config.boilerplate_min_employers
        block_schema = "slice long, block long, kind long, code long"
        blocks = ads_frame.select("_row", *ADS_COLUMNS).mapInPandas(
            lambda it: _block_codes(it, chunk, min_titles, min_employers), block_schema
        )
        enough = ((F.col("kind") == _BLOCK_TITLE) & (F.col("codes") >= min_titles)) | (
            (F.col("kind") == _BLOCK_EMPLOYER) & (F.col("codes") >= min_employers)
        )
        found = (
            blocks.groupBy("slice", "block", "kind")
            .agg(F.countDistinct("code").alias("codes"))
            .where(enough)
            .select("slice", "block")
            .distinct()
            .toPandas()
        )
        by_slice = {
            int(s): np.sort(part["block"].to_numpy(np.int64).view(np.uint64))
            for s, part in found.groupby("slice")
        }
        names = _name_vocabulary(ads_frame)
        lap("boilerplate")

        # 3. prepare: the embedded stages 1–2 per slice, with the slice's boilerplate known
        known = np.asarray(model.boilerplate_, dtype=np.uint64)
        prepared_schema = StructType(
            [
                StructField("_row", LongType(), False),
                StructField("status", StringType()),
                StructField("words", LongType()),
                StructField("core_words", LongType()),
                *[StructField(name, BinaryType()) for name in (*_SETS, "signature", "bands")],
                *[StructField(name, StringType()) for name in _TEXT_FIELDS],
                *[StructField(name, ArrayType(StringType())) for name in _ITEM_FIELDS],
                StructField("posted_ns", LongType()),
            ]
        )
        prepared = keep(
            ads_frame.select("_row", *ADS_COLUMNS).mapInPandas(
                lambda it: _prepare_batches(it, config, known, by_slice, chunk, names), prepared_schema
            )
        )
        lap("prepare")

        # 4. candidates: LSH band keys and field blocks, equal keys joined
        band_rows = prepared.select("_row", "bands").mapInPandas(
            _explode_bands, StructType([StructField("key", LongType()), StructField("i", LongType())])
        )
        lsh_pairs, lsh_capped = _pairs_from_keys(band_rows, config.max_bucket_size, keep)
        field_pairs, field_capped = _pairs_from_keys(_field_keys(prepared), config.max_bucket_size, keep)
        candidates = keep(
            lsh_pairs.select("i", "j", F.lit(True).alias("via_lsh"), F.lit(False).alias("via_fields"))
            .unionByName(
                field_pairs.select("i", "j", F.lit(False).alias("via_lsh"), F.lit(True).alias("via_fields"))
            )
            .groupBy("i", "j")
            .agg(F.max("via_lsh").alias("via_lsh"), F.max("via_fields").alias("via_fields"))
        )
        n_candidates = candidates.count()
        capped = lsh_capped.count() + field_capped.count()
        lap("candidates")

        # 5. score: both ads' prepared rows joined to every pair, features + LightGBM per partition
        spec = spark.sparkContext.broadcast(self._spec())
        side = prepared.select("_row", *_SIDE_COLUMNS)
        a_side = side.select([F.col(c).alias(f"a_{c}") for c in side.columns])
        b_side = side.select([F.col(c).alias(f"b_{c}") for c in side.columns])
        score_parts = max(spark.sparkContext.defaultParallelism * 2, math.ceil(n_candidates / 20_000))
        with_sides = (
            candidates.repartition(score_parts, "i")
            .join(a_side, F.col("i") == F.col("a__row"))
            .join(b_side, F.col("j") == F.col("b__row"))
            .drop("a__row", "b__row")
        )
        num_perm = config.num_perm
        score_schema = StructType(
            [
                StructField("i", LongType()),
                StructField("j", LongType()),
                StructField("via_lsh", BooleanType()),
                StructField("via_fields", BooleanType()),
                StructField("probability", DoubleType()),
                StructField("rule", StringType()),
                StructField("type_if_duplicate", StringType()),
                StructField("employer_link", BooleanType()),
            ]
        )
        scored = keep(with_sides.mapInPandas(lambda it: _score_batches(it, spec, num_perm), score_schema))
        lap("score")

        # 6. group: connected components of accepted pairs, chaining and employer guards per component
        from pipeline.engine import MIN_LINK_THRESHOLD

        threshold = float(model.threshold_)
        edges = keep(
            scored.where(F.col("probability") >= threshold).select("i", "j", "probability", "employer_link")
        )
        n_edges = edges.count()
        rounds = 0
        if n_edges:
            labels, rounds = connected_components(edges.select("i", "j"))
        else:
            labels = spark.createDataFrame([], "v long, comp long")
        sizes = (
            labels.join(prepared.select(F.col("_row").alias("v"), "company"), "v")
            .groupBy("comp")
            .agg(F.count(F.lit(1)).alias("size"), F.countDistinct("company").alias("companies"))
        )
        components = keep(labels.join(sizes, "comp"))
        _release(labels)
        # Two ads are one group unless they name two employers; larger components are re-clustered.
        checked = components.where((F.col("size") >= 3) | (F.col("companies") >= 2))
        members = checked.select("comp", "v").join(side.withColumnRenamed("_row", "v"), "v")
        checked_edges = edges.join(
            checked.select(F.col("v").alias("i"), F.col("comp").alias("edge_comp")), "i"
        )
        settings = {
            "num_perm": num_perm,
            "link_threshold": max(threshold, MIN_LINK_THRESHOLD),
            "max_exact_size": config.max_group_size_exact,
        }
        member_schema = ", ".join(
            ["v long", "comp long", "words long", "core_words long"]
            + [f"{c} binary" for c in (*_SETS, "signature")]
            + [f"{c} string" for c in _TEXT_FIELDS]
            + [f"{c} array<string>" for c in _ITEM_FIELDS]
            + ["posted_ns long"]
        )
        members = members.select(*[c.split()[0] for c in member_schema.split(", ")])
        clusters = keep(
            members.groupBy("comp")
            .cogroup(
                checked_edges.select("edge_comp", "i", "j", "probability", "employer_link").groupBy(
                    "edge_comp"
                )
            )
            .applyInPandas(lambda m, e: _cluster_component(m, e, spec, settings), "v long, sub long")
        )
        n_big = components.where(F.col("size") >= 3).select("comp").distinct().count()
        lap("group")

        # outputs: group ids (smallest ad_id), sizes, pairs with final decisions, sorted as embedded
        assigned = (
            ads_frame.select("_row", "ad_id")
            .join(components.select(F.col("v").alias("_row"), "comp"), "_row", "left")
            .join(clusters.select(F.col("v").alias("_row"), "sub"), "_row", "left")
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
        assigned = keep(assigned.join(named, ["g_comp", "g_sub"]))
        extra_names = _output_names(extras)
        carried = ads_frame.select(
            "_row", *[F.col(f"`{c}`").alias(f"_extra{k}") for k, c in enumerate(extras)]
        )
        groups = (
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
        pairs = (
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
        figures = {
            "ads": int(n_ads),
            "partitions": int(partitions),
            "boilerplate_blocks_found": len(found),
            "candidate_pairs": int(n_candidates),
            "capped_buckets": int(capped),
            "accepted_pairs": int(n_edges),
            "components_checked": int(n_big),
            "cc_rounds": int(rounds),
            "seconds": seconds,
        }
        return SparkDedupResult(pairs=pairs, groups=groups, figures=figures, _cached=cached)


def _name_vocabulary(ads: SparkFrame) -> np.ndarray:
    """`pipeline.prepare.name_vocabulary` of the whole batch, made on the driver from the distinct
    company and location values (all the vocabulary depends on)."""
    from pyspark.sql import functions as F

    from pipeline.prepare import name_vocabulary

    values = (
        ads.select(F.lit("company").alias("column"), F.col("company").alias("value"))
        .unionByName(ads.select(F.lit("location").alias("column"), F.col("location").alias("value")))
        .where(F.col("value").isNotNull())
        .distinct()
        .toPandas()
    )
    columns = {
        name: values.loc[values["column"] == name, "value"].tolist() for name in ("company", "location")
    }
    rows = max(len(found) for found in columns.values())
    distinct = pd.DataFrame(
        {
            name: pd.array(found + [None] * (rows - len(found)), dtype=STRING)
            for name, found in columns.items()
        }
    )
    return name_vocabulary(distinct)


def _output_names(extras: list[str]) -> dict[str, str]:
    """Names of the extra input columns in groups (as `pipeline.engine._with_extra_columns` names them)."""
    from pipeline.engine import _with_extra_columns

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
    from pipeline.engine import Deduplicator

    if model is None or isinstance(model, str | os.PathLike):
        default = Path(__file__).resolve().parent.parent / "models" / "default" / "model.json"
        model = Deduplicator.load(model or default)
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
    from pipeline.model_files import model_from_args, write_outputs

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
