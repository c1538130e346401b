"""jobdedup's pipeline: I/O, cleaning, sketching, candidates, grouping, orchestration and CLI.

Example:
    >>> from pipeline import Deduplicator, read_ads, read_labels  # doctest: +SKIP
    >>> model = Deduplicator().fit(read_ads("ads.csv"), read_labels("labels.csv"))  # doctest: +SKIP
"""

from pipeline.config import Config
from pipeline.engine import Deduplicator
from pipeline.errors import InputError, JobdedupError
from pipeline.io import Labels, read_ads, read_labels, write_table

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
