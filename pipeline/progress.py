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


class SilentBar:
    """What a stage gives when progress is off: counts like a bar, shows nothing."""

    def __init__(self) -> None:
        self.n = 0

    def update(self, count: int = 1) -> None:
        """Count `count` more done."""
        self.n += count

    def close(self) -> None:
        """Nothing to close."""


class Progress:
    """Stage bars on stderr; silent when disabled or when stderr is not a terminal in CI."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self.timings: dict[str, float] = {}

    @contextmanager
    def stage(self, name: str, total: int | None = None, unit: str = "it") -> Iterator[tqdm | SilentBar]:
        """A bar for one stage; completes itself at the end if the stage did not update it."""
        # (Disabled: no tqdm at all. Its first bar makes a multiprocessing lock, a named semaphore
        # that a service's worker processes left behind: "leaked semaphore objects" at shutdown.)
        bar = (
            tqdm(
                total=total,
                desc=f"{name:<10}",
                unit=f" {unit}",
                unit_scale=True,
                file=sys.stderr,
                leave=True,
                dynamic_ncols=True,
            )
            if self.enabled
            else SilentBar()
        )
        start = time.perf_counter()
        try:
            yield bar
            if total is not None and bar.n < total:
                bar.update(total - bar.n)
        finally:
            bar.close()
            self.timings[name] = self.timings.get(name, 0.0) + time.perf_counter() - start
