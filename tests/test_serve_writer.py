"""`pipeline.service.writer`: the service's writes in a child process, with the store's errors kept."""

from __future__ import annotations

import pytest

from jobdedup.pipeline.index import Index, IndexLockedError
from jobdedup.pipeline.service.writer import WriterProcess

pytestmark = pytest.mark.service


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
    # (idle 3 s against pauses of 0.6 s: slack for a loaded machine, where an add of 10 ads or a
    # timer's wake-up can take a second)
    writer = WriterProcess(path, default_model.with_config(show_progress=False), wait=5, idle=3.0)
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


def test_broker_relays_two_workers_writes_to_one_child(tmp_path, monkeypatch, default_model, test_ads):
    """`--workers N`: each worker's `RemoteWriter` reaches the one child of the `WriterBroker`; the
    store's errors keep their class on the way back, and a wrong key is refused. The broker's
    socket is no file (a SIGKILL of the service could not remove one): the temporary folder
    stays empty while it serves."""
    import tempfile
    from multiprocessing import AuthenticationError

    from jobdedup.pipeline.service.writer import ModelSettings, RemoteWriter, WriterBroker

    path = tmp_path / "ads.jdx"
    model = ModelSettings(
        {"model": None, "quiet": True, "jobs": None, "seed": None, "max_description_chars": None}
    )
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    broker = WriterBroker(path, model, wait=0.5)
    first, second = (RemoteWriter(broker.address, broker.authkey) for _ in range(2))
    try:
        assert list(temporary.iterdir()) == []
        assert first.status() == {"running": False, "pid": None, "starts": 0, "calls": 0}
        assert first.add(test_ads.iloc[:10])["added"] == 10
        assert second.add(test_ads.iloc[5:20])["added"] == 10  # the first's ads are seen: 5 skipped
        assert first.status()["pid"] == second.status()["pid"] == broker.writer.status()["pid"]
        assert broker.writer.starts == 1 and second.running
        with Index.open(path) as holder, holder.store.write(5), pytest.raises(IndexLockedError):
            second.remove([test_ads["ad_id"].iloc[0]])
        assert first.remove([test_ads["ad_id"].iloc[0]])["removed"] == 1
        with pytest.raises(AuthenticationError):
            RemoteWriter(broker.address, b"not the key").status()
    finally:
        first.close()
        second.close()
        broker.close()
    assert not broker.writer.running
    with Index.open(path, read_only=True) as index:
        assert index.stats()["ads"] == 19


def test_the_workers_supervisor_imports_neither_pandas_nor_lightgbm():
    """`serve --workers` execs its supervisor as `python -m jobdedup.pipeline.service.workers`: what that
    module and the writer broker import must stay light (pandas, pyarrow and LightGBM made the
    supervisor 173 MB of PSS at 1,000,000 ads, for nothing it used)."""
    import subprocess
    import sys

    probe = (
        "import sys, jobdedup.pipeline.service.workers, jobdedup.pipeline.service.writer, uvicorn.supervisors; "
        "print(sorted(m for m in ('pandas', 'pyarrow', 'lightgbm', 'numba', 'sklearn') if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert loaded.stdout.strip() == "[]", loaded.stdout + loaded.stderr
