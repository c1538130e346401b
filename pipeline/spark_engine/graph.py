"""Stage 6 on Spark: accepted pairs → groups, with the embedded engine's guards.

Connected components of the accepted pairs are found in Spark by min-label propagation with
pointer jumping (DataFrame joins, no extra jars). Each component of three or more ads, or of two
or more companies, then goes whole to one Python worker (a cogrouped `applyInPandas`), which
runs `pipeline.decide.decide_groups` (the average-linkage chaining guard, copy units and the
employer guard, as the model's policy says) on it as `Deduplicator.run` does on the whole batch:
each step acts on one group at a time, and a group never leaves its component.

Example:
    >>> # grouping = group_components(scored, prepared, spec, config, threshold, keep)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jobdedup.features.pairs import build_pair_features
from jobdedup.pipeline.decide import decide_groups
from jobdedup.pipeline.spark_engine.adapters import SIDE_COLUMNS, pair_inputs, worker_model
from jobdedup.pipeline.spark_engine.session import release

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame

    from jobdedup.pipeline.config import Config


@dataclass
class Grouping:
    """Where grouping put the ads that have an accepted pair.

    Attributes:
        components: `v` (ad row), `comp` (its component: smallest row), `size`, `companies`.
        clusters: `v`, `sub`: the group inside its component, for the components checked.
        accepted_pairs: pairs at or over the threshold.
        components_checked: components of three or more ads (re-clustered by `group_ads`).
        rounds: rounds of `connected_components`.
    """

    components: SparkFrame
    clusters: SparkFrame
    accepted_pairs: int
    components_checked: int
    rounds: int


def group_components(
    scored: SparkFrame,
    prepared: SparkFrame,
    spec: Any,
    config: Config,
    threshold: float,
    keep: Callable[[SparkFrame], SparkFrame],
) -> Grouping:
    """Groups of the scored pairs (`i`, `j`, `probability`, `employer_link`) over the prepared ads,
    with the frames kept by `keep`; `spec` is the broadcast `SparkDeduplicator._spec`."""
    from pyspark.sql import functions as F

    spark = scored.sparkSession
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
    release(labels)
    # Two ads are one group unless they name two employers; larger components are re-clustered.
    checked = components.where((F.col("size") >= 3) | (F.col("companies") >= 2))
    side = prepared.select("_row", *SIDE_COLUMNS).withColumnRenamed("_row", "v")
    members = checked.select("comp", "v").join(side, "v").select("v", "comp", *SIDE_COLUMNS)
    checked_edges = edges.join(checked.select(F.col("v").alias("i"), F.col("comp").alias("edge_comp")), "i")
    settings = {"num_perm": config.num_perm, "link_threshold": threshold}
    clusters = keep(
        members.groupBy("comp")
        .cogroup(
            checked_edges.select("edge_comp", "i", "j", "probability", "employer_link").groupBy("edge_comp")
        )
        .applyInPandas(lambda m, e: _cluster_component(m, e, spec, settings), "v long, sub long")
    )
    n_big = components.where(F.col("size") >= 3).select("comp").distinct().count()
    return Grouping(components, clusters, int(n_edges), int(n_big), int(rounds))


def _cluster_component(
    members: pd.DataFrame, edges: pd.DataFrame, spec_broadcast: Any, settings: dict[str, Any]
) -> pd.DataFrame:
    """`decide_groups` over one connected component, as `Deduplicator.run` calls it over a batch:
    (v, sub) = ad row and its group inside the component."""
    if members.empty:
        return pd.DataFrame({"v": np.zeros(0, np.int64), "sub": np.zeros(0, np.int64)})
    model = worker_model(spec_broadcast.value)
    members = members.sort_values("v", kind="stable").reset_index(drop=True)
    rows = members["v"].to_numpy(np.int64)
    local = pd.Series(np.arange(len(rows)), index=rows)
    inputs = pair_inputs(members, settings["num_perm"])
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

    links = accepted.loc[edges["employer_link"].to_numpy(bool), ["i", "j"]].reset_index(drop=True)
    labels = decide_groups(
        len(rows), accepted, score, settings["link_threshold"], inputs.fields, model.policy, links=links
    )
    return pd.DataFrame({"v": rows, "sub": np.asarray(labels, dtype=np.int64)})


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
        release(labels)
        labels = jumped
        if changed == 0:
            release(both)
            return labels, rounds
    raise RuntimeError(f"connected components did not converge in {max_iterations} rounds")
