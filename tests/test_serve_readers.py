"""`pipeline.service.readers`: the service's readers stay on a built state while the next is built,
follow writes before a write is answered, and let the write-ahead log restart."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing

import pytest

from jobdedup.pipeline.index import Index
from jobdedup.pipeline.index.cache import KeyCache
from jobdedup.pipeline.service.readers import PinnedReaders, ReadyBoard

pytestmark = pytest.mark.service


@pytest.fixture()
def model(default_model):
    return default_model.with_config(jobs=1, show_progress=False)


def _until(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _placeholder(test_ads):
    return test_ads.iloc[[0]].assign(ad_id="placeholder").reset_index(drop=True)


def test_checks_stay_on_the_built_state_while_the_next_is_built_and_a_write_waits_for_it(
    tmp_path, model, test_ads
):
    path = tmp_path / "ads.jdx"
    with Index.open(path) as writer:
        writer.add(test_ads.iloc[:40], model)
    building = threading.Event()
    release = threading.Event()
    placeholder = _placeholder(test_ads)

    def prepare(index) -> None:
        if index.store.pinned_generation > 1:  # (the first state: at once)
            building.set()
            assert release.wait(30)
        index.check(placeholder, model)

    readers = PinnedReaders(path, KeyCache(), 2, prepare)
    readers.keep_current()
    try:
        _until(lambda: readers.reached() == 1)
        with Index.open(path) as writer:
            writer.add(test_ads.iloc[40:80], model)
            committed = writer.store.generation()
        assert building.wait(30)  # the refresh thread is building the new state's view
        started = time.monotonic()
        with readers.reader() as index:  # a check meanwhile: the state before the commit, at once
            assert index.store.view().generation == 1 and index.stats()["ads"] == 40
            assert index.check(test_ads.iloc[[50]].reset_index(drop=True), model).groups[
                "status"
            ].tolist() != ["already_indexed"]
        assert time.monotonic() - started < 5
        waited: list[float] = []
        waiter = threading.Thread(
            target=lambda: (readers.wait_current(committed), waited.append(time.monotonic()))
        )
        waiter.start()
        time.sleep(0.3)
        assert not waited  # a write's answer waits for the readers to follow it
        release.set()
        waiter.join(30)
        assert waited and readers.reached() == committed
        for _ in range(2):
            with readers.reader() as index:
                assert index.store.pinned_generation == committed and index.stats()["ads"] == 80
    finally:
        release.set()
        readers.close()


def _started_readers(path, model, first_ads, size: int) -> PinnedReaders:
    """An index of `first_ads` and `size` readers over it, kept current (a placeholder check
    prepares each new state)."""
    with Index.open(path) as writer:
        writer.add(first_ads, model)
    placeholder = _placeholder(first_ads)
    readers = PinnedReaders(path, KeyCache(), size, lambda index: index.check(placeholder, model))
    readers.keep_current()
    return readers


def _log_frames(path) -> int:
    """Frames in the write-ahead log. A passive checkpoint reports -1 while the pool runs its own,
    so it is asked again until it runs."""
    frames = [-1]

    def measured() -> bool:
        frames[0] = db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
        return frames[0] >= 0

    with closing(sqlite3.connect(path)) as db:
        _until(measured)
    return frames[0]


def test_the_log_restarts_while_readers_stay_pinned(tmp_path, model, test_ads):
    """Readers always hold a snapshot; after each commit the pool moves on, checkpoints and moves
    once more, so that the next write starts the log from its beginning instead of growing it."""
    path = tmp_path / "ads.jdx"
    readers = _started_readers(path, model, test_ads.iloc[:20], 3)
    frames = []
    try:
        with Index.open(path) as writer:
            for first in range(20, 140, 30):
                writer.add(test_ads.iloc[first : first + 30], model)
                readers.wait_current(writer.store.generation())
                frames.append(_log_frames(path))
                _until(lambda: not readers._log_pending)  # (the second move, onto snapshots needing no log)
                with readers.reader() as index:
                    assert index.stats()["ads"] == first + 30
    finally:
        readers.close()
    assert frames[-1] < frames[0] + frames[1], frames  # a growing log would hold every add's frames


def test_the_ready_board_waits_for_live_processes_behind_and_forgets_dead_ones(tmp_path):
    board = ReadyBoard(tmp_path / "serving")
    board.publish(7)
    assert (tmp_path / "serving" / str(os.getpid())).read_text() == "7"
    assert board.behind(100) == []  # (its own process is not waited on)
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True, text=True
    )
    (tmp_path / "serving" / dead.stdout.strip()).write_text("1")
    live = os.getppid()
    (tmp_path / "serving" / str(live)).write_text("3")
    assert board.behind(3) == [] and not (tmp_path / "serving" / dead.stdout.strip()).exists()
    started = time.monotonic()
    assert board.wait(4, timeout=0.3) == [live]
    assert time.monotonic() - started >= 0.3
    later = threading.Timer(0.2, lambda: (tmp_path / "serving" / str(live)).write_text("4"))
    later.start()
    assert board.wait(4, timeout=10) == []
    board.close()
    assert not (tmp_path / "serving" / str(os.getpid())).exists()


def test_a_write_does_not_wait_for_a_long_check_whose_reader_is_moved_before_it_goes_back(
    tmp_path, model, test_ads
):
    """A reader out in a long check when a write commits: the write's answer does not wait for
    that check, and the reader, once back, is moved before anyone takes it again."""
    path = tmp_path / "ads.jdx"
    readers = _started_readers(path, model, test_ads.iloc[:40], 2)
    try:
        _until(lambda: readers.reached() == 1)
        inside, leave = threading.Event(), threading.Event()
        held: list = []

        def long_check() -> None:
            with readers.reader() as index:
                held.append(index)
                inside.set()
                assert leave.wait(30)
                held.append(index.stats()["ads"])  # (its state: the one it began with)

        checker = threading.Thread(target=long_check)
        checker.start()
        assert inside.wait(30)
        with Index.open(path) as writer:
            writer.add(test_ads.iloc[40:80], model)
            committed = writer.store.generation()
        started = time.monotonic()
        readers.wait_current(committed)
        assert time.monotonic() - started < 5 and readers.reached() == committed
        with readers.reader() as index:  # the idle one, moved
            assert index is not held[0] and index.stats()["ads"] == 80
        leave.set()
        checker.join(30)
        assert held[1] == 40
        for _ in range(4):  # whichever reader a request takes now reads the write
            with readers.reader() as index:
                assert index.stats()["ads"] == 80
    finally:
        leave.set()
        readers.close()


def test_a_refresh_failing_again_and_again_is_logged_once_then_its_recovery(
    tmp_path, model, test_ads, caplog
):
    path = tmp_path / "ads.jdx"
    with Index.open(path) as writer:
        writer.add(test_ads.iloc[:20], model)
    broken = threading.Event()
    broken.set()
    calls: list[float] = []

    def prepare(index) -> None:
        calls.append(time.monotonic())
        if broken.is_set():
            raise RuntimeError("no view")

    readers = PinnedReaders(path, KeyCache(), 1, prepare)
    with caplog.at_level("WARNING", logger="jobdedup.serve"):
        readers.keep_current()
        try:
            _until(lambda: len(calls) >= 10)  # tried again every poll
            broken.clear()
            _until(lambda: readers.reached() == 1)
        finally:
            readers.close()
    lines = [r.getMessage() for r in caplog.records if "refreshing" in r.getMessage()]
    assert len(lines) == 2, lines
    assert "failed (1 time(s) in a row" in lines[0] and "RuntimeError" in lines[0]
    assert "works again after" in lines[1]
