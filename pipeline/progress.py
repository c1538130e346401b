"""Progress on stderr, one bar per stage, with counts and rates.

Example:
    >>> with Progress(enabled=False).stage("prepare", total=10, unit="ads") as bar:
    ...     bar.update(10)
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from tqdm import tqdm


class Progress:
    """Stage bars on stderr; silent when disabled or when stderr is not a terminal in CI."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str, total: int | None = None, unit: str = "it") -> Iterator[tqdm]:
        """A bar for one stage; completes itself at the end if the stage did not update it."""
        bar = tqdm(
            total=total,
            desc=f"{name:<10}",
            unit=f" {unit}",
            unit_scale=True,
            file=sys.stderr,
            disable=not self.enabled,
            leave=True,
            dynamic_ncols=True,
        )
        start = time.perf_counter()
        try:
            yield bar
            if total is not None and bar.n < total:
                bar.update(total - bar.n)
        finally:
            bar.close()
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start
