"""The service's read connections, pinned to the last state whose view is built, kept current.

Every pooled connection holds a read transaction open on one committed state (`CachedSqliteStore.pin`).
A commit (the service's writer child, a CLI `index add`, another service) changes nothing under a
check: a refresh thread notices it within `REFRESH_SECONDS`, opens the new state on a connection of
its own, builds the key cache's view and what checks derive from it (the boilerplate set, the
name-word table: ~40 ms of CPU at 1,000,000 ads) with one placeholder check, and only then moves the
pool on (idle connections at once, busy ones as they come back). Before, the first checks after each
commit waited for that build (their "check" and "prepare" steps: two thirds of the time of the checks
over 100 ms under adds).

Read-your-writes: an answer to `POST /v1/ads` or `DELETE` leaves only once every service process
over the index has moved its readers past that write (`wait_current`): this process's refresh is
woken at once; the others say where they are in a file each (`ReadyBoard`), which the writing
process waits on for up to `CURRENT_SECONDS`. Checks in flight are not waited for: a reader
coming back from one after a move goes to the refresh thread, which moves it before it is pooled.

The write-ahead log: a reader holding an old snapshot keeps SQLite from restarting the log, which
would then only grow. After each move the refresh thread checkpoints the log (passive: it never
waits for the writer) and, once everything in it is in the database file, moves the readers on
once more, to snapshots that need no log, so that the next write starts the log from its beginning.

Example:
    >>> # readers = PinnedReaders(Path("ads.jdx"), KeyCache(...), 4, dummy_check)
    >>> # readers.keep_current(); with readers.reader() as index: index.check(ads, model)
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from jobdedup.pipeline.service.writer import trim_heap

REFRESH_SECONDS = 0.05  # how often the refresh thread looks for a commit
CURRENT_SECONDS = 10.0  # longest a write's answer waits for the other service processes to follow it
BOARD_POLL_SECONDS = 0.002
FAILURE_LOG_SECONDS = 10.0  # a refresh failing again and again is logged once this often
log = logging.getLogger("jobdedup.serve")


class ReadyBoard:
    """The generation each service process over one index has moved its readers to: a file per
    process (named by its pid) in `directory`, rewritten whole (`os.replace`) at each move."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.own = directory / str(os.getpid())

    def publish(self, generation: int) -> None:
        """Say this process's readers are at `generation` (a directory that cannot be written:
        nothing; other processes then do not wait for this one)."""
        with contextlib.suppress(OSError):
            self.directory.mkdir(parents=True, exist_ok=True)
            temporary = self.directory / f".{self.own.name}.tmp"
            temporary.write_text(str(generation))
            os.replace(temporary, self.own)

    def behind(self, generation: int) -> list[int]:
        """The other live processes whose readers are not yet at `generation` (files of processes
        gone are removed)."""
        late = []
        with contextlib.suppress(OSError):
            for path in self.directory.iterdir():
                if not path.name.isdigit() or path == self.own:
                    continue
                with contextlib.suppress(OSError, ValueError):
                    if int(path.read_text()) >= generation:
                        continue
                    if _alive(int(path.name)):
                        late.append(int(path.name))
                    else:
                        path.unlink()
        return late

    def wait(self, generation: int, timeout: float) -> list[int]:
        """Wait up to `timeout` seconds for every other process to reach `generation`; returns
        those still behind (empty: all there)."""
        deadline = time.monotonic() + timeout
        late = self.behind(generation)
        while late and time.monotonic() < deadline:
            time.sleep(BOARD_POLL_SECONDS)
            late = self.behind(generation)
        return late

    def close(self) -> None:
        self.own.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PinnedReaders:
    """A pool of read connections (`open_cached` Indexes over one file and one `KeyCache`), which
    the refresh thread pins to the newest state whose view it has built (`keep_current`; before
    it runs, each read is a short transaction of its own, as an unpinned store does).

    Args:
        index_path: the index file.
        cache: the process's key cache.
        readers: pooled connections (checks in flight at once).
        prepare: what builds a new state's derived tables on an Index pinned to it (a placeholder
            check).
        board: where this process says where its readers are (None: no other process waits).
    """

    def __init__(
        self,
        index_path: Path,
        cache: Any,
        readers: int,
        prepare: Callable[[Any], None],
        board: ReadyBoard | None = None,
    ) -> None:
        from jobdedup.pipeline.index.cache import open_cached

        self.prepare = prepare
        self.board = board
        self.size = readers
        self.pool: queue.Queue[Any] = queue.Queue()
        for _ in range(readers):
            self.pool.put(open_cached(index_path, cache))
        self._refreshing = open_cached(index_path, cache)  # the refresh thread's look at the newest
        self.ready = -1  # the newest generation whose view and derived tables are built
        self._epoch = 0  # bumped when readers should move (a new state, or the log checkpointed)
        self._pins: dict[int, tuple[int, int]] = {}  # id(reader) -> (epoch, generation) of its pin
        self._busy: set[int] = set()  # id(reader) of those out in a request
        self._returned: queue.Queue[Any] = queue.Queue()  # back from a request, to be moved first
        self._moved = threading.Condition()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._log_pending = False  # readers' snapshots may still need the log
        self._trim = False  # a replaced view's memory to give back once readers have moved
        self._published = -1  # what `board` last heard
        self.thread: threading.Thread | None = None

    @contextlib.contextmanager
    def reader(self) -> Iterator[Any]:
        """A pooled Index (pinned, once `keep_current` runs). One the pool moved on from while it
        was out does not go back to the pool as it comes back: the refresh thread, woken, moves it
        first, so that no request after a write's answer reads the state before the write."""
        index = self.pool.get()
        self._busy.add(id(index))
        try:
            yield index
        finally:
            self._busy.discard(id(index))
            if id(index) in self._pins and not self._moved_on(index):
                self._returned.put(index)
                self._wake.set()
            else:
                self.pool.put(index)

    def refresh(self) -> None:
        """Build the newest committed state's view if it is new, then move every idle reader the
        pool moved on from; once the log is all in the database file, move them once more (onto
        snapshots that need no log, so that the next write restarts it)."""
        store = self._refreshing.store
        try:
            self._prepare_if_new(self._refreshing, store.pin())
        finally:
            store.unpin()
        if self._log_pending and self._log_checkpointed():
            self._log_pending = False
            self._epoch += 1
        self._move_idle()

    def _moved_on(self, index: Any) -> bool:
        """Whether `index` is pinned at the pool's current epoch."""
        return self._pins.get(id(index), (None,))[0] == self._epoch

    def _prepare_if_new(self, index: Any, generation: int) -> None:
        """Build the derived tables of `generation`, the state `index` is pinned to, if it is
        newer than `ready`, and make it the state readers move to."""
        if generation > self.ready:
            self.prepare(index)
            self._advance(generation)

    def _advance(self, generation: int) -> None:
        first = self.ready < 0
        self.ready = generation
        self._epoch += 1
        self._log_pending = True
        self._trim = self._trim or not first

    def _move_idle(self) -> None:
        """Pin the idle readers whose pin is older than the pool's epoch; a pin that lands on a
        state newer than `ready` (a commit since) has that state built on it first."""
        pins = list(self._pins.values())
        if self._returned.empty() and len(pins) == self.size and all(e == self._epoch for e, _ in pins):
            return  # (none to move: the pool stays untouched)
        idle: list[Any] = []
        for waiting in (self._returned, self.pool):
            with contextlib.suppress(queue.Empty):
                while len(idle) < self.size:
                    idle.append(waiting.get_nowait())
        try:
            stale = [index for index in idle if not self._moved_on(index)]
            while stale:
                for index in stale:
                    generation = index.store.pin()
                    self._prepare_if_new(index, generation)
                    self._pins[id(index)] = (self._epoch, generation)
                stale = [index for index in idle if not self._moved_on(index)]
        finally:
            for index in idle:
                self.pool.put(index)
        if self._trim:
            self._trim = False
            trim_heap()  # (the views and derived tables the new one replaced, given back)
        reached = self.reached()
        with self._moved:
            self._moved.notify_all()
        if self.board is not None and reached is not None and reached != self._published:
            self.board.publish(reached)
            self._published = reached

    def reached(self) -> int | None:
        """The generation every request taking a reader from now on reads at or past (None: not
        all are pinned yet): the prepared state, or an older one a reader in the pool still holds.
        A reader out in a check does not count: it goes back only once moved."""
        if len(self._pins) < self.size:
            return None
        busy = set(self._busy)
        held = [generation for key, (_, generation) in list(self._pins.items()) if key not in busy]
        return min([self.ready, *held])

    def _log_checkpointed(self) -> bool:
        """A passive checkpoint; whether the whole log is now in the database file."""
        busy, frames, done = self._refreshing.store.db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return not busy and frames >= 0 and frames == done

    def wait_current(self, generation: int) -> None:
        """Return once this process's readers and every other service process's are at
        `generation` or later (a write's answer: read-your-writes for whoever asks next, whichever
        worker takes the request); a process still behind after `CURRENT_SECONDS` is logged."""
        deadline = time.monotonic() + CURRENT_SECONDS
        behind = self.thread is not None and self.thread.is_alive()
        if behind:
            self._wake.set()
            with self._moved:
                while time.monotonic() < deadline:
                    reached = self.reached()
                    if reached is not None and reached >= generation:
                        behind = False
                        break
                    self._moved.wait(min(max(deadline - time.monotonic(), 0.0), REFRESH_SECONDS))
        late = self.board.wait(generation, max(deadline - time.monotonic(), 0.0)) if self.board else []
        if behind or late:
            log.warning(
                "a write's answer left before the service's readers followed it (behind: %s)",
                ", ".join(str(pid) for pid in ([os.getpid()] if behind else []) + late),
            )

    def keep_current(self) -> None:
        """Run `refresh` every `REFRESH_SECONDS`, and at once when a write of this process or a
        reader coming back asks, in a background thread."""
        self.thread = threading.Thread(target=self._refresh_loop, name="jobdedup-refresh", daemon=True)
        self.thread.start()

    def _refresh_loop(self) -> None:
        failures, logged = 0, -math.inf  # (failures in a row; when the last was logged)
        while not self._stop.is_set():
            self._wake.wait(REFRESH_SECONDS)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                self.refresh()
            except Exception as failure:  # noqa: BLE001 - readers keep their snapshot; tried again
                failures += 1
                if time.monotonic() - logged >= FAILURE_LOG_SECONDS:  # (not 20 lines a second)
                    logged = time.monotonic()
                    log.warning(
                        "refreshing the index's view failed (%d time(s) in a row; readers keep the last "
                        "state): %s",
                        failures,
                        type(failure).__name__,
                    )
            else:
                if failures:
                    log.warning("refreshing the index's view works again after %d failure(s)", failures)
                failures, logged = 0, -math.inf

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self.thread is not None:
            self.thread.join(timeout=10)
        if self.board is not None:
            self.board.close()
        for waiting in (self.pool, self._returned):
            while not waiting.empty():
                waiting.get().close()
        self._refreshing.close()


__all__ = ["CURRENT_SECONDS", "REFRESH_SECONDS", "PinnedReaders", "ReadyBoard"]
