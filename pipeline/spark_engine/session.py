"""Spark set-up for the Spark engine: the pyspark check, the session, and how stage results are kept.

Example:
    >>> # spark = spark_session("local[2]", conf={"spark.sql.shuffle.partitions": "8"})
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import TYPE_CHECKING

from jobdedup.pipeline.errors import JobdedupError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame as SparkFrame
    from pyspark.sql import SparkSession

PYSPARK_MISSING = (
    "the Spark engine needs pyspark, which is not installed: pip install 'jobdedup[spark]' "
    "(or pip install 'pyspark>=4.0'), or use --engine embedded"
)


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


def materialize(frame: SparkFrame) -> SparkFrame:
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


def release(frame: SparkFrame) -> None:
    """Drop the blocks of a frame made by `materialize` (best effort; else Spark's cleaner does)."""
    try:
        frame._jdf.queryExecution().analyzed().rdd().unpersist(False)
    except Exception:  # noqa: BLE001 - not a LogicalRDD (another Spark version): leave it to the cleaner
        frame.unpersist()
