"""jobdedup's pipeline: I/O, cleaning, sketching, candidates, grouping, orchestration and CLI.

Example:
    >>> from jobdedup.pipeline import Deduplicator, read_ads, read_labels  # doctest: +SKIP
    >>> model = Deduplicator().fit(read_ads("ads.csv"), read_labels("labels.csv"))  # doctest: +SKIP
"""

from jobdedup.pipeline.config import Config
from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.errors import InputError, JobdedupError
from jobdedup.pipeline.io import Labels, read_ads, read_labels, write_table

__all__ = [
    "Config",
    "Deduplicator",
    "InputError",
    "JobdedupError",
    "Labels",
    "read_ads",
    "read_labels",
    "write_table",
]
