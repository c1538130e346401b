"""The service's state: the index, model, read connections and writer that one process works with.

Example:
    >>> # service = Service(Path("ads.jdx"), model); service.warm_up(); service.keep_current()
    >>> # with service.reader() as index: index.check(ads, service.check_model)
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from jobdedup.features.normalize import FEW_VALUES

READERS = 4  # read connections (checks in flight at once; more wait for a free one)
SLOW_CHECK_SECONDS = 0.5  # default of `--slow-check-ms`: a slower check logs where its time went


class Service:
    """The index, model and connections one service process works with.

    Args:
        index_path: the index file (created if absent).
        model: a fitted `Deduplicator`.
        token: the bearer token every request but /healthz needs (None: no auth).
        writes_allowed: False when listening beyond loopback without a token (writes refused).
        wait: seconds a write waits for another process writing to the index.
        readers: read connections.
        writer: where writes go (`RemoteWriter` with `--workers`); default a child of this process.
        slow_check_seconds: a check slower than this logs its steps (`log_slow_check`).
    """

    def __init__(
        self,
        index_path: Path,
        model: Any,
        token: str | None = None,
        writes_allowed: bool = True,
        wait: float = 60.0,
        readers: int = READERS,
        writer: Any = None,
        slow_check_seconds: float = SLOW_CHECK_SECONDS,
    ) -> None:
        from jobdedup.pipeline.index.cache import KeyCache
        from jobdedup.pipeline.index.key_files import key_directory
        from jobdedup.pipeline.service.readers import PinnedReaders, ReadyBoard
        from jobdedup.pipeline.service.writer import WriterProcess

        self.index_path = Path(index_path)
        self.model = model.with_config(show_progress=False)
        # Checks: one thread each (a few ads: the second thread's wake-up costs more than it saves).
        self.check_model = self.model.with_config(jobs=1)
        self.token = token
        self.slow_check_seconds = slow_check_seconds
        keys = key_directory(self.index_path)
        self.cache = KeyCache(keys)
        placeholder = _placeholder_ads(1)
        self.readers = PinnedReaders(
            self.index_path,
            self.cache,
            readers,
            prepare=lambda index: index.check(placeholder, self.check_model),
            board=ReadyBoard(keys / "serving"),
        )
        # Writes in a child process (`pipeline.service.writer`), so that they never stall checks.
        if writer is None and writes_allowed:
            writer = WriterProcess(self.index_path, self.model, wait)
        self.writer = writer
        self.started = time.time()
        self.requests = 0
        self._index_stats: tuple[int, dict[str, Any]] | None = None  # (generation, `Index.stats`)

    def reader(self) -> Any:
        """A pooled read connection (`PinnedReaders.reader`), as a context manager."""
        return self.readers.reader()

    def warm_up(self) -> None:
        """Load the keys into memory and check one ad, then more than a few (compiled kernels loaded,
        and the RE2 patterns only batches compile made, before the first request: ~0.3 s); then
        move what is loaded to the collector's permanent generation (`gc.freeze`)."""
        with self.reader() as index:
            index.store.view()
            for n in (1, FEW_VALUES + 1):
                index.check(_placeholder_ads(n), self.check_model)
        # What is loaded by now (modules, model, the index's view) stays: a full garbage collection,
        # about one in 300 checks, no longer walks it (measured ~68 ms -> ~1 ms at 1,000,000 ads).
        gc.collect()
        gc.freeze()

    def index_stats(self, index: Any, generation: int) -> dict[str, Any]:
        """`Index.stats` of the index as of `generation`, computed once per generation (at
        1,000,000 ads its counts and largest groups take ~0.7 s on a read connection, which a
        monitor polling `/v1/stats` took from the checks)."""
        held = self._index_stats
        if held is None or held[0] != generation:
            from jobdedup.pipeline.index.core import Index

            held = self._index_stats = (generation, Index.stats(index))
        return dict(held[1])

    def keep_current(self) -> None:
        """Follow every commit (of this service's writer or any other process) in a background
        thread, before a request needs it (`PinnedReaders`): checks stay on the last state whose
        key view and derived tables (~65-85 ms at 1,000,000 ads) are built until the next one is."""
        self.readers.keep_current()

    def write(self, call: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """`call()` on the writer, answered once every reader of every service process over the
        index sees its outcome (read-your-writes, whichever worker takes the next request)."""
        outcome = call()
        generation = outcome.pop("generation", None)
        if generation is not None:
            self.readers.wait_current(int(generation))
        return outcome

    def close(self) -> None:
        self.readers.close()
        if self.writer is not None:
            self.writer.close()


def _placeholder_ads(n: int) -> pd.DataFrame:
    """`n` ads no index holds, checked to load kernels and the index's state before a request."""
    ids = [f"\x00warm-up {i}" for i in range(n)]
    return pd.DataFrame({"ad_id": ids, "description": "warm up the kernels " * 5})


__all__ = ["READERS", "SLOW_CHECK_SECONDS", "Service"]
