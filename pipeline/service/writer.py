"""The service's writes (`POST /v1/ads`, `DELETE /v1/ads/{ad_id}`) in a child process of their own.

An add of 1,000 ads holds the GIL for seconds: in the service's process every check queued behind
it. Here the writes run in one child process at a lower CPU priority (nice 10), so the checks of
the service's process keep a core and the GIL to themselves; the child is an ordinary other
writer of the index file (one transaction per add, SQLite's write lock, `--wait`), and the
service's key cache follows its commits as it follows a CLI `index add`'s. The child dies with the
service (Linux: a parent-death signal), so a SIGKILL of the service inside an add leaves its
transaction uncommitted, as before. The child is started by the first write and stopped once no
write came for `IDLE_SECONDS` (its model and working memory, hundreds of MB, are not kept for
nothing); the service decides that between requests, so no write is ever sent to a child leaving.

Only small things cross the pipe: the ads of a request in, their groups and merges out.

With `--workers N` (`pipeline.service.workers`) there is one child for all workers: uvicorn's
supervisor runs a `WriterBroker`, which owns the `WriterProcess` and relays the workers' writes
(`RemoteWriter`, over a Unix socket in Linux's abstract namespace) to it, one at a time.

Example:
    >>> # writer = WriterProcess(Path("ads.jdx"), model, wait=60.0)
    >>> # writer.add(ads)["added"]; writer.remove(["ad-1"]); writer.close()
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import multiprocessing
import os
import pickle
import secrets
import signal
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Client, Connection, Listener
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jobdedup.pipeline.errors import JobdedupError

if TYPE_CHECKING:  # (uvicorn's supervisor imports this module: it loads no pandas)
    import pandas as pd

NICENESS = 10  # the writes' CPU priority below the checks'
IDLE_SECONDS = 60.0  # the child is stopped after this long without a write
_PR_SET_PDEATHSIG = 1
STATUS = b"status"  # a worker's question to the broker (not a pickle)


class WriterProcess:
    """One child process that adds to and removes from one index file, one request at a time.

    Args:
        index_path: the index file.
        model: a fitted `Deduplicator` (sent to the child once).
        wait: seconds a write waits for another process writing to the index.
    """

    def __init__(self, index_path: Path, model: Any, wait: float, idle: float = IDLE_SECONDS) -> None:
        self._args = (str(index_path), model, wait)
        self._idle = idle
        self._lock = threading.Lock()
        self._process: Any = None
        self._connection: Connection | None = None
        self._timer: threading.Timer | None = None
        # The child is started from this one thread, which lives as long as the writer: Linux sends
        # the child's parent-death signal (`die_with_parent`) when the *thread* that forked it ends,
        # and the service's request threads end when idle, which killed the child mid-write.
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jobdedup-writer-starter")
        self.starts = 0  # children started (for tests and stats)
        self.calls = 0  # writes asked

    @property
    def running(self) -> bool:
        """Whether a child process is up."""
        return self._process is not None and self._process.is_alive()

    def _start(self) -> None:
        self._starter.submit(self._spawn).result()

    def _spawn(self) -> None:
        context = multiprocessing.get_context("spawn")
        self._connection, child = context.Pipe()
        self._process = context.Process(
            target=_serve_writes, args=(child, *self._args), name="jobdedup-writer", daemon=True
        )
        self._process.start()
        child.close()
        self.starts += 1

    def add(self, ads: pd.DataFrame) -> dict[str, Any]:
        """`Index.add(ads)`: `ads` (its groups table), `merges` (DataFrames), `added`, `skipped`,
        `duplicate_pairs`, and the index's `generation` after it."""
        return self._call("add", ads)

    def remove(self, ad_ids: list[str]) -> dict[str, int]:
        """`Index.remove(ad_ids)`'s counts and the index's `generation` after it."""
        return self._call("remove", ad_ids)

    def _call(self, job: str, argument: Any) -> Any:
        return _outcome(
            *pickle.loads(self.forward(pickle.dumps((job, argument), protocol=pickle.HIGHEST_PROTOCOL)))
        )

    def forward(self, request: bytes) -> bytes:
        """One pickled (job, argument) to the child (started if need be), its pickled reply back:
        what `WriterBroker` relays for the workers without unpickling either."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            if not self.running:
                self._stop()  # (a child that died: its pipe is closed)
                self._start()
            assert self._connection is not None
            try:
                self._connection.send_bytes(request)
                return self._connection.recv_bytes()
            finally:
                self.calls += 1
                self._timer = threading.Timer(self._idle, self._stop_idle, args=(self.calls,))
                self._timer.daemon = True
                self._timer.start()

    def status(self) -> dict[str, Any]:
        """Whether a child is up, its process id, children started and writes asked."""
        process = self._process
        running = process is not None and process.is_alive()
        return {
            "running": running,
            "pid": process.pid if running else None,
            "starts": self.starts,
            "calls": self.calls,
        }

    def _stop_idle(self, calls: int) -> None:
        """Stop the child if no write came since the `calls`-th (a timer that fired while a newer
        call held the lock finds a newer count and does nothing)."""
        with self._lock:
            if self.calls == calls:
                self._stop()

    def _stop(self) -> None:
        """Stop the child, if any, after the write in progress (the caller holds the lock)."""
        if self._process is None or self._connection is None:
            return
        with contextlib.suppress(OSError, EOFError):
            self._connection.send(("stop", None))
        self._process.join(timeout=30)
        if self._process.is_alive():
            self._process.kill()
        self._connection.close()
        self._process = self._connection = None

    def close(self) -> None:
        """Stop the child (after the write in progress, if any); the writer takes no write after."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._stop()
        self._starter.shutdown(wait=False)


@dataclass(frozen=True)
class ModelSettings:
    """A model the writer child loads itself (`model_files.model_from_args` of these command-line
    settings), so that `WriterBroker`'s process, uvicorn's supervisor, never loads one."""

    settings: dict[str, Any]

    def load(self) -> Any:
        """The fitted `Deduplicator`, without progress bars (as the service's own)."""
        from jobdedup.pipeline.model_files import model_from_args

        return model_from_args(argparse.Namespace(**self.settings)).with_config(show_progress=False)


class WriterBroker:
    """`--workers N`: one writer child for all workers, relayed by the supervisor.

    With a writer child per worker, a steady stream of adds kept N children alive, each with its
    imports, model and an add's working memory (~0.7 GB at 1,000,000 indexed ads). The broker runs
    in uvicorn's supervisor: it listens on a Unix socket (`address`, `authkey` for the workers'
    `RemoteWriter`), and relays each worker's pickled write to one `WriterProcess`
    as bytes (nothing is unpickled here), one write at a time. The child is a child of the
    supervisor: it dies with it, and stops when idle as before.

    Args:
        index_path: the index file.
        model: `ModelSettings` (or a fitted model) for the child.
        wait: seconds a write waits for another process writing to the index.
    """

    def __init__(self, index_path: Path, model: Any, wait: float, idle: float = IDLE_SECONDS) -> None:
        self.writer = WriterProcess(index_path, model, wait, idle)
        self.authkey = secrets.token_bytes(32)
        # Linux's abstract namespace: no file, so a SIGKILL of the service leaves nothing behind (a
        # socket in a temporary folder stayed in /tmp after each). Any local process may connect
        # here, as to the service's own port; only one with the authkey passes the handshake.
        self.address = f"\0jobdedup-writer-{os.getpid()}-{secrets.token_hex(8)}"
        self._listener = Listener(self.address, family="AF_UNIX", authkey=self.authkey)
        self._closed = threading.Event()
        threading.Thread(target=self._accept, name="jobdedup-writer-broker", daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection = self._listener.accept()
            except (OSError, EOFError, multiprocessing.AuthenticationError):
                if self._closed.is_set():
                    return
                continue  # (a client that failed the handshake)
            threading.Thread(target=self._relay, args=(connection,), daemon=True).start()

    def _relay(self, connection: Connection) -> None:
        """One worker's requests, answered in turn until it hangs up."""
        with contextlib.closing(connection):
            while True:
                try:
                    request = connection.recv_bytes()
                except (EOFError, OSError):
                    return
                if request == STATUS:
                    connection.send(self.writer.status())
                    continue
                try:
                    reply = self.writer.forward(request)
                except (EOFError, OSError):  # the child died inside the write (killed)
                    reply = pickle.dumps(
                        ("error", ("WriterDied", "the writer process ended during the write"))
                    )
                connection.send_bytes(reply)

    def close(self) -> None:
        """Stop listening, then the child (after the write in progress, if any)."""
        self._closed.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        self.writer.close()


class RemoteWriter:
    """A worker's writes through the supervisor's `WriterBroker`: `WriterProcess`'s interface."""

    def __init__(self, address: str, authkey: bytes) -> None:
        self._address, self._authkey = address, authkey
        self._lock = threading.Lock()
        self._connection: Connection | None = None

    def add(self, ads: pd.DataFrame) -> dict[str, Any]:
        """`Index.add(ads)`, as `WriterProcess.add`."""
        return self._call("add", ads)

    def remove(self, ad_ids: list[str]) -> dict[str, int]:
        """`Index.remove(ad_ids)`'s counts and the index's `generation` after it."""
        return self._call("remove", ad_ids)

    def status(self) -> dict[str, Any]:
        """The shared writer's `WriterProcess.status`."""
        return self._exchange(lambda connection: connection.send_bytes(STATUS))

    @property
    def running(self) -> bool:
        """Whether the shared child process is up."""
        return bool(self.status()["running"])

    def _call(self, job: str, argument: Any) -> Any:
        return _outcome(*self._exchange(lambda connection: connection.send((job, argument))))

    def _exchange(self, send: Any) -> Any:
        with self._lock:
            if self._connection is None:
                self._connection = Client(self._address, family="AF_UNIX", authkey=self._authkey)
            try:
                send(self._connection)
                return self._connection.recv()
            except (EOFError, OSError):
                self.close()
                raise

    def close(self) -> None:
        """Hang up (the broker and its child go on serving the other workers)."""
        if self._connection is not None:
            with contextlib.suppress(OSError):
                self._connection.close()
            self._connection = None


HEAP_ARENAS = 2
ARENA_LIMIT_VARIABLE = "MALLOC_ARENA_MAX"
"""glibc reads it when a process starts (`serve --workers` sets it for its processes)."""


def limit_heap_arenas() -> None:
    """At most `HEAP_ARENAS` glibc malloc arenas (by default each thread that allocates gets its
    own, up to 8 per core, and gives little back: the threadpool's checks and adds tripled the
    service's resident memory over a 15-minute load at 1,000,000 ads). glibc fixes the limit when
    it first makes a second arena, so this holds only if no other thread has allocated yet (the
    single-process `jobdedup serve` and the writer child call it before they start any thread).
    No-op off glibc."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").mallopt(-8, HEAP_ARENAS)  # M_ARENA_MAX


def trim_heap() -> None:
    """Give freed heap pages back to the system (an add frees hundreds of MB). No-op off glibc."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def _outcome(kind: str, value: Any) -> Any:
    """The child's reply ("ok", value) as the value, ("error", (class, message)) as the exception."""
    if kind == "ok":
        return value
    raise _error(*value)


def _error(kind: str, message: str) -> Exception:
    """The parent's exception for the child's (name, message): the index's errors keep their class."""
    from jobdedup.pipeline import index

    found = getattr(index, kind, None)
    if isinstance(found, type) and issubclass(found, JobdedupError):
        return found(message)
    if kind in ("JobdedupError", "InputError"):
        return JobdedupError(message)
    return RuntimeError(f"{kind} in the writer process")


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent dies (no-op elsewhere)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _serve_writes(connection: Connection, index_path: str, model: Any, wait: float) -> None:
    """The child's loop: one (job, argument) at a time, answered with ("ok", value) or ("error", (class, message))."""
    die_with_parent()
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    from jobdedup.pipeline.index.cache import KeyCache, open_cached
    from jobdedup.pipeline.index.key_files import key_directory

    limit_heap_arenas()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the service stops the child itself
    if isinstance(model, ModelSettings):
        model = model.load()
    # Keys are looked up in the files the service's checks map (an add reads no whole key store).
    with open_cached(index_path, KeyCache(key_directory(Path(index_path))), timeout=wait) as index:
        while True:
            try:
                job, argument = connection.recv()
            except EOFError:
                return
            if job == "stop":
                return
            try:
                if job == "add":
                    result = index.add(argument, model)
                    info = result.report
                    value: Any = {
                        "ads": result.groups,
                        "merges": result.merges,
                        "added": int(info.get("new_ads", 0)),
                        "skipped": len(result.skipped),
                        "duplicate_pairs": int(info.get("duplicate_pairs", 0)),
                    }
                else:
                    value = {k: int(v) for k, v in index.remove(argument).items()}
                value["generation"] = index.store.generation()  # (committed: what readers must reach)
                reply: tuple[str, Any] = ("ok", value)
            except Exception as failure:  # noqa: BLE001 - handed to the parent, which answers the request
                reply = ("error", (type(failure).__name__, str(failure)))
            trim_heap()
            connection.send(reply)


__all__ = [
    "ModelSettings",
    "RemoteWriter",
    "WriterBroker",
    "WriterProcess",
    "die_with_parent",
    "limit_heap_arenas",
    "trim_heap",
]
