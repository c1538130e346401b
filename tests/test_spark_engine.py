"""The Spark engine (local[2]) gives exactly the embedded engine's pairs and groups.

Part of `make test`. Each test has a 10-minute limit (pytest-timeout, thread method): a hung Spark
job ends the run with every thread's stack instead of stalling CI; they take about a minute in all.
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from jobdedup.pipeline.cli import main
from jobdedup.pipeline.errors import InputError, JobdedupError
from jobdedup.pipeline.io import write_table
from tests.conftest import DATA, run_cli

pytestmark = [pytest.mark.spark, pytest.mark.timeout(600, method="thread")]


@pytest.fixture(scope="module")
def spark():
    from jobdedup.pipeline.spark_engine import spark_session

    session = spark_session(
        "local[2]",
        conf={
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "1g",
            "spark.sql.adaptive.coalescePartitions.enabled": "true",
        },
    )
    yield session
    session.stop()


def _assert_same(
    embedded: tuple[pd.DataFrame, pd.DataFrame], spark: tuple[pd.DataFrame, pd.DataFrame]
) -> None:
    (pairs_e, groups_e), (pairs_s, groups_s) = embedded, spark
    assert len(pairs_s) == len(pairs_e) > 0
    for name in ("ad_id_a", "ad_id_b", "is_duplicate", "via_lsh", "via_fields"):
        assert pairs_s[name].tolist() == pairs_e[name].tolist(), name
    assert pairs_s["dup_type"].fillna("").tolist() == pairs_e["dup_type"].fillna("").tolist()
    np.testing.assert_allclose(pairs_s["probability"], pairs_e["probability"], rtol=0, atol=1e-9)
    pd.testing.assert_frame_equal(groups_s, groups_e)
    pd.testing.assert_frame_equal(pairs_s, pairs_e, check_exact=False, rtol=0, atol=1e-9)


def test_spark_engine_matches_embedded(spark, default_model, test_result):
    from jobdedup.pipeline.spark_engine import SparkDeduplicator

    # 250 ads per partition: 3 partitions, so boilerplate must be merged across them as one slice.
    result = SparkDeduplicator(default_model, spark, ads_per_partition=250).run(DATA / "test_ads.parquet")
    try:
        # Outputs read kept stage results, not the plans that made them (issue #7: the plan text of
        # `pairs` reached 85 million characters and the 1 GB driver ran out of heap in `toPandas`).
        for frame in (result.pairs, result.groups):
            assert len(frame._jdf.queryExecution().toString()) < 100_000
        got = result.to_pandas()
    finally:
        result.unpersist()
    assert list(spark.sparkContext._jsc.sc().getRDDStorageInfo()) == []  # nothing left behind
    assert result.figures["partitions"] >= 3
    assert result.figures["components_checked"] > 0  # the chaining guard ran in applyInPandas
    _assert_same((test_result.pairs, test_result.groups), got)
    assert got[1]["group_size"].max() > 1


def test_cli_spark_engine_on_csv_matches_embedded(spark, test_ads, tmp_path):
    """The command line as a user runs it (its own process, its own Spark), with a CSV (read by the
    reader, handed to Spark as pandas) and an extra column named like an output column."""
    subset = test_ads.iloc[:160].copy()
    subset["group_id"] = [f"x{k}" for k in range(len(subset))]
    write_table(subset, tmp_path / "ads.csv")
    for engine in ("embedded", "spark"):
        done = run_cli(
            "dedup",
            "--ads",
            tmp_path / "ads.csv",
            "--out",
            tmp_path / engine,
            "--quiet",
            "--engine",
            engine,
            timeout=480,
        )
        assert done.returncode == 0, done.stderr[-2000:]
    read = {
        e: (pd.read_parquet(tmp_path / e / "pairs.parquet"), pd.read_parquet(tmp_path / e / "groups.parquet"))
        for e in ("embedded", "spark")
    }
    assert "input_group_id" in read["spark"][1].columns
    _assert_same(read["embedded"], read["spark"])


def test_spark_reader_rejects_repeated_ids(spark, tmp_path):
    from jobdedup.pipeline.spark_engine import spark_dedup

    ads = pd.DataFrame({"ad_id": ["a", "b", "a"], "description": ["x y z", "y z w", "z"]})
    ads.to_parquet(tmp_path / "ads.parquet", index=False)
    with pytest.raises(InputError, match=r"ad_id 'a' appears more than once, in rows 1 and 3"):
        spark_dedup(tmp_path / "ads.parquet", spark=spark)
    pd.DataFrame({"ad_id": ["a"], "text": ["x"]}).to_parquet(tmp_path / "bad.parquet", index=False)
    with pytest.raises(InputError, match="required ads column 'description' missing"):
        spark_dedup(tmp_path / "bad.parquet", spark=spark)


def test_connected_components_in_spark(spark):
    from jobdedup.pipeline.spark_engine import connected_components

    # a chain 0-1-...-9, a pair 20-21, a triangle 30-31-32
    edges = [(k, k + 1) for k in range(9)] + [(21, 20), (30, 31), (31, 32), (30, 32)]
    frame = spark.createDataFrame(edges, "i long, j long")
    labels, rounds = connected_components(frame)
    got = dict(labels.toPandas().astype(int).itertuples(index=False, name=None))
    assert got == {**{k: 0 for k in range(10)}, 20: 20, 21: 20, 30: 30, 31: 30, 32: 30}
    assert rounds <= 5  # pointer jumping: far fewer rounds than the chain's length


def test_missing_pyspark_is_one_clear_line(monkeypatch, tmp_path, capsys):
    from jobdedup.pipeline import spark_engine

    for name in [m for m in sys.modules if m == "pyspark" or m.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)  # makes `import pyspark` fail
    with pytest.raises(JobdedupError, match=r"pip install 'jobdedup\[spark\]'"):
        spark_engine.require_pyspark()
    code = main(
        ["dedup", "--engine", "spark", "--ads", str(DATA / "test_ads.parquet"), "--out", str(tmp_path)]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"jobdedup dedup: error: {spark_engine.PYSPARK_MISSING}"]
