"""Stage adapters: the embedded stage functions inside Spark's pandas UDFs, and what crosses Spark.

Each `mapInPandas` body here calls the embedded engine's own functions on a pandas slice:
`block_codes` (what learning boilerplate counts), `prepare_batches` (`prepare_batch`),
`explode_bands` (LSH band keys as rows) and `score_batches` (`build_pair_features` and the model's
`Deduplicator.predict_proba`). Between stages an ad travels as one row: shingle sets, signature and
band keys as binary columns (`_sets_bytes` / `pair_inputs` turn them back into `PairInputs`),
normalised fields as text and array columns. The functions next to them (`slice_boilerplate`,
`name_vocabulary_of`, `prepare_ads`, `score_pairs`) run them in Spark with their output schemas.

Example:
    >>> # prepared = prepare_ads(ads_frame, config, model.boilerplate_, by_slice, chunk, names)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from xxhash import xxh3_64_intdigest

from jobdedup.features.fields import FIELD_COLUMNS, normalize_fields
from jobdedup.features.pairs import PairInputs, build_pair_features
from jobdedup.features.shingle_sets import ShingleSets
from jobdedup.models.classifier import PairClassifier
from jobdedup.models.dup_types import assign_dup_types
from jobdedup.models.rules import rule_names
from jobdedup.pipeline.candidates import band_keys
from jobdedup.pipeline.io import ADS_COLUMNS, STRING
from jobdedup.pipeline.sketch import EMPTY_SIGNATURE_VALUE, tokenize

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame

    from jobdedup.pipeline.config import Config
    from jobdedup.pipeline.engine import Deduplicator

_TEXT_FIELDS = (
    "title", "title_tokens", "company", "occupation", "location", "city", "subdivision", "town", "source",
    "listing",
    "salary_band",
)  # fmt: skip
_ITEM_FIELDS = ("emails", "phones", "domains", "refs")
_SETS = ("full", "core", "numbers", "employer_words", "place_words", "area_words", "title_words", "mentions")
# The columns of `PairInputs.fields`: the normalised fields, the requisition numbers `refs` and the
# salary band (`pipeline.prepare._prepare_chunk`).
_FIELDS = (*FIELD_COLUMNS, "refs", "salary_band")
SIDE_COLUMNS = ("words", "core_words", *_SETS, "signature", *_TEXT_FIELDS, *_ITEM_FIELDS, "posted_ns")
"""What one ad carries into pair features: PairInputs row i, serialised (columns of `prepare_ads`)."""
_NO_VALUE = "\x00none"
BLOCK_TITLE, BLOCK_EMPLOYER = 0, 1
"""Kinds of `block_codes` rows: the code is a title's hash, or an employer's."""


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


def block_codes(
    batches: Iterator[pd.DataFrame], chunk: int, min_titles: int, min_employers: int
) -> Iterator[pd.DataFrame]:
    """(slice, block hash, kind, code) of every description block: kind `BLOCK_TITLE` with the hash
    of the ad's normalised title, `BLOCK_EMPLOYER` with that of its normalised company; at most
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
            (BLOCK_TITLE, fields["title_tokens"], min_titles),
            (BLOCK_EMPLOYER, fields["company"], min_employers),
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


def prepare_batches(
    batches: Iterator[pd.DataFrame],
    config: Any,
    known: np.ndarray,
    by_slice: dict[int, np.ndarray],
    chunk: int,
    names: np.ndarray,
) -> Iterator[pd.DataFrame]:
    """Stages 1–2 with the embedded `prepare_batch`, one slice's rows at a time; `names` is the
    whole batch's `name_vocabulary`."""
    from jobdedup.pipeline.boilerplate import merge_block_sets
    from jobdedup.pipeline.prepare import prepare_batch

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


def explode_bands(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
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


def pair_inputs(frame: pd.DataFrame, num_perm: int) -> PairInputs:
    """PairInputs whose row k is the ad of `frame` row k (columns `SIDE_COLUMNS`)."""
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


def worker_model(spec: dict[str, Any]) -> Deduplicator:
    """The fitted `Deduplicator` whose `predict_proba` (classifier and decision rules) scores pairs,
    rebuilt from LightGBM's text once per Python worker (`SparkDeduplicator._spec`)."""
    from jobdedup.models.policy import DecisionPolicy
    from jobdedup.pipeline.config import Config
    from jobdedup.pipeline.engine import Deduplicator

    found = _MODELS.get(spec["digest"])
    if found is None:
        found = Deduplicator(Config.from_dict(spec["config"]), DecisionPolicy.from_dict(spec["policy"]))
        found.classifier_ = PairClassifier.from_texts(spec["boosters"], spec["threshold"], spec["params"])
        found.boilerplate_ = np.zeros(0, dtype=np.uint64)  # preparing is done; pairs need no blocks
        _MODELS[spec["digest"]] = found
    return found


def score_batches(
    batches: Iterator[pd.DataFrame], spec_broadcast: Any, num_perm: int
) -> Iterator[pd.DataFrame]:
    """Probability, rule, duplicate type and employer link (`pipeline.decide.employer_links`) of
    candidate pairs carrying both ads' prepared rows."""
    from jobdedup.pipeline.decide import employer_links

    model = worker_model(spec_broadcast.value)
    for frame in batches:
        m = len(frame)
        sides = pd.concat(
            [
                frame[[f"a_{c}" for c in SIDE_COLUMNS]].set_axis(list(SIDE_COLUMNS), axis=1),
                frame[[f"b_{c}" for c in SIDE_COLUMNS]].set_axis(list(SIDE_COLUMNS), axis=1),
            ],
            ignore_index=True,
        )
        features = build_pair_features(pair_inputs(sides, num_perm), np.arange(m), np.arange(m) + m)
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
                "rule": rule_names(features, model.policy),
                "type_if_duplicate": assign_dup_types(features) if m else np.zeros(0, dtype=object),
                "employer_link": linked,
            }
        )


# ---------------------------------------------------------------------- the same in Spark


def slice_boilerplate(ads: SparkFrame, config: Config, chunk: int) -> tuple[dict[int, np.ndarray], int]:
    """Batch boilerplate per slice of `chunk` rows, as the embedded engine learns it: {slice: sorted
    block hashes seen with >= `boilerplate_min_titles` titles or >= `boilerplate_min_employers`
    employers in that slice}, and the number of (slice, block) found."""
    from pyspark.sql import functions as F

    min_titles = config.boilerplate_min_titles
    min_employers = config.boilerplate_min_employers
    block_schema = "slice long, block long, kind long, code long"
    blocks = ads.select("_row", *ADS_COLUMNS).mapInPandas(
        lambda it: block_codes(it, chunk, min_titles, min_employers), block_schema
    )
    enough = ((F.col("kind") == BLOCK_TITLE) & (F.col("codes") >= min_titles)) | (
        (F.col("kind") == BLOCK_EMPLOYER) & (F.col("codes") >= min_employers)
    )
    found: pd.DataFrame = (  # (annotated: pyspark types toPandas with pandas' stubs, not installed)
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
    return by_slice, len(found)


def name_vocabulary_of(ads: SparkFrame) -> np.ndarray:
    """`pipeline.prepare.name_vocabulary` of the whole batch, made on the driver from the distinct
    company, location and title values (all the vocabulary depends on)."""
    from pyspark.sql import functions as F

    from jobdedup.pipeline.prepare import name_vocabulary

    values: pd.DataFrame = (  # (annotated: pyspark types toPandas with pandas' stubs, not installed)
        ads.select(F.lit("company").alias("column"), F.col("company").alias("value"))
        .unionByName(ads.select(F.lit("location").alias("column"), F.col("location").alias("value")))
        .unionByName(ads.select(F.lit("title").alias("column"), F.col("title").alias("value")))
        .where(F.col("value").isNotNull())
        .distinct()
        .toPandas()
    )
    columns = {
        name: values.loc[values["column"] == name, "value"].tolist()
        for name in ("company", "location", "title")
    }
    rows = max(len(found) for found in columns.values())
    distinct = pd.DataFrame(
        {
            name: pd.array(found + [None] * (rows - len(found)), dtype=STRING)
            for name, found in columns.items()
        }
    )
    return name_vocabulary(distinct)


def prepare_ads(
    ads: SparkFrame,
    config: Config,
    known: np.ndarray,
    by_slice: dict[int, np.ndarray],
    chunk: int,
    names: np.ndarray,
) -> SparkFrame:
    """One prepared row per ad (`_row`, `status`, `bands` and the `SIDE_COLUMNS`): `prepare_batches`
    with the model's boilerplate `known` and the batch's name vocabulary `names`."""
    from pyspark.sql.types import ArrayType, BinaryType, LongType, StringType, StructField, StructType

    known = np.asarray(known, dtype=np.uint64)
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
    return ads.select("_row", *ADS_COLUMNS).mapInPandas(
        lambda it: prepare_batches(it, config, known, by_slice, chunk, names), prepared_schema
    )


def score_pairs(
    candidates: SparkFrame, prepared: SparkFrame, spec: Any, num_perm: int, n_candidates: int
) -> SparkFrame:
    """Candidate pairs (`i`, `j`, `via_lsh`, `via_fields`) joined to both ads' prepared rows and
    scored by `score_batches`; `spec` is the broadcast `SparkDeduplicator._spec`."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StringType, StructField, StructType

    spark = candidates.sparkSession
    side = prepared.select("_row", *SIDE_COLUMNS)
    a_side = side.select([F.col(c).alias(f"a_{c}") for c in side.columns])
    b_side = side.select([F.col(c).alias(f"b_{c}") for c in side.columns])
    score_parts = max(spark.sparkContext.defaultParallelism * 2, math.ceil(n_candidates / 20_000))
    with_sides = (
        candidates.repartition(score_parts, "i")
        .join(a_side, F.col("i") == F.col("a__row"))
        .join(b_side, F.col("j") == F.col("b__row"))
        .drop("a__row", "b__row")
    )
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
    return with_sides.mapInPandas(lambda it: score_batches(it, spec, num_perm), score_schema)
