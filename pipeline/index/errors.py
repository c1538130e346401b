"""Errors of the incremental index a user can cause: a file that cannot be used as asked, a busy one.

Example:
    >>> isinstance(IndexLockedError("ads.jdx: busy"), IndexFileError)
    True
"""

from __future__ import annotations

from jobdedup.pipeline.errors import JobdedupError


class IndexFileError(JobdedupError):
    """The index cannot be used as asked (locked, foreign file, other sketch parameters)."""


class IndexLockedError(IndexFileError):
    """Another process is adding to or removing from the index."""
