"""The incremental index: a persistent store of every ad seen, each new batch scored against it.

Example:
    >>> from jobdedup.pipeline.index import Index  # doctest: +SKIP
    >>> with Index.open("ads.jdx") as index:  # doctest: +SKIP
    ...     pairs, groups, merges = index.add(new_ads, model)
"""

from jobdedup.pipeline.index.core import Index
from jobdedup.pipeline.index.errors import IndexFileError, IndexLockedError
from jobdedup.pipeline.index.meta import IndexMismatchError
from jobdedup.pipeline.index.results import AddResult
from jobdedup.pipeline.index.sqlite_store import SqliteStore
from jobdedup.pipeline.index.store import IndexStore, open_store

__all__ = [
    "AddResult",
    "Index",
    "IndexFileError",
    "IndexLockedError",
    "IndexMismatchError",
    "IndexStore",
    "SqliteStore",
    "open_store",
]
