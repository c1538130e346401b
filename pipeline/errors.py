"""Exceptions and warnings for problems a user can cause (and fix).

Every message is one line: the file, the row or column where there is one, the problem, and what to
do about it. Row numbers count data rows from 1 (a CSV header is not counted).

Example:
    >>> err = InputError("ads.csv: row 3: ad_id is empty; give every ad a non-empty ad_id.", row=3)
    >>> isinstance(err, JobdedupError), err.row
    (True, 3)
"""

from __future__ import annotations

import re

__all__ = ["InputError", "InputWarning", "JobdedupError"]

_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")


class JobdedupError(Exception):
    """Base class of errors a user can cause: bad input, bad options, missing files.

    The command line prints ``str(error)`` as the one-line reason and exits non-zero; anything else
    escaping is a bug.

    Args:
        message: what went wrong and how to fix it; line breaks are folded into spaces.
        path: the file concerned, if any.
        row: 1-based data row, if the problem is in one row.
        column: the column concerned, if any.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        message = _LINE_BREAKS.sub(" ", str(message)).strip()
        super().__init__(message)
        self.message = message
        self.path = path
        self.row = row
        self.column = column


class InputError(JobdedupError):
    """An input file or table is missing, unreadable or breaks the data contract."""


class InputWarning(UserWarning):
    """Input was usable but something was changed or dropped (bad bytes replaced, text cut)."""
