"""`pipeline.serve_writer`: the service's writes in a child process, with the store's errors kept."""

from __future__ import annotations

import pytest

from jobdedup.pipeline.index import Index, IndexLockedError
from jobdedup.pipeline.serve_writer import WriterProcess


def test_writer_process_adds_removes_and_reports_a_held_lock(tmp_path, default_model, test_ads):
    path = tmp_path / "ads.jdx"
    ads = test_ads.iloc[:30].reset_index(drop=True)
    writer = WriterProcess(path, default_model.with_config(show_progress=False), wait=0.5)
    try:
        added = writer.add(ads)
        assert added["added"] == 30 and added["ads"]["ad_id"].tolist() == ads["ad_id"].tolist()
        with Index.open(path, read_only=True) as index:
            assert index.stats()["ads"] == 30  # committed, seen by another process
        assert writer.remove([ads["ad_id"].iloc[0], "not-there"])["not_found"] == 1
        with (
            Index.open(path) as holder,
            holder.store.write(5),  # another writer holds the lock
            pytest.raises(IndexLockedError, match="another process is writing"),
        ):
            writer.remove([ads["ad_id"].iloc[1]])
        again = writer.add(ads)  # the child keeps serving: the removed ad comes back
        assert (again["added"], again["skipped"]) == (1, 29)
    finally:
        writer.close()


def test_writer_process_starts_with_the_first_write_and_stops_when_idle(tmp_path, default_model, test_ads):
    """No child before the first write; stopped after `idle` seconds without one, and started
    again by the next write, which sees what the earlier child committed; a killed child is
    replaced by the next write."""
    import time

    path = tmp_path / "ads.jdx"
    writer = WriterProcess(path, default_model.with_config(show_progress=False), wait=5, idle=1.0)
    try:
        assert not writer.running and writer.starts == 0
        assert writer.add(test_ads.iloc[:10])["added"] == 10
        assert writer.running
        time.sleep(0.6)
        assert writer.add(test_ads.iloc[10:15])["added"] == 5  # a write within the idle time keeps it
        time.sleep(0.6)
        assert writer.running and writer.starts == 1
        deadline = time.monotonic() + 30
        while writer.running and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not writer.running
        again = writer.add(test_ads.iloc[:20])
        assert (again["added"], again["skipped"], writer.starts) == (5, 15, 2)
        writer._process.kill()
        writer._process.join()
        assert writer.remove([test_ads["ad_id"].iloc[0]])["removed"] == 1 and writer.starts == 3
        with Index.open(path, read_only=True) as index:
            assert index.stats()["ads"] == 19
    finally:
        writer.close()
    assert not writer.running


def test_writer_child_outlives_the_thread_that_started_it(tmp_path, default_model, test_ads):
    """The service writes from request threads that end when idle; the child must not die with the
    thread whose write started it (Linux's parent-death signal follows the forking thread)."""
    import threading
    import time

    writer = WriterProcess(tmp_path / "ads.jdx", default_model.with_config(show_progress=False), wait=5)
    try:
        first = threading.Thread(target=writer.add, args=(test_ads.iloc[:10],))
        first.start()
        first.join()
        time.sleep(1.0)  # the thread that asked for the first write has ended
        assert writer.running and writer.starts == 1
        assert writer.add(test_ads.iloc[10:15])["added"] == 5 and writer.starts == 1
    finally:
        writer.close()
