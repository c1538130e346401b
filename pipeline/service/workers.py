"""`jobdedup serve --workers N`: N service processes on one listening socket, so checks use every core.

A check holds its process's GIL for most of its ~30-70 ms; in one process, concurrent checks queue
behind each other on one core. Here uvicorn's supervisor binds the socket and starts N worker
processes (spawned, not forked), each a whole service (`pipeline.service.state.Service`: its model,
read connections, a key cache mapping the decoded key parts that all of them share through
`pipeline.index.key_files`). The workers' writes go to one writer child that the supervisor
starts with the first write (`pipeline.service.writer.WriterBroker`; one writer for all, as one
would do: a child per worker kept N alive under a steady stream of adds, ~0.7 GB each at
1,000,000 ads); every worker's cache follows every commit. Workers and writer die with the
supervisor (Linux parent-death signal), so a SIGKILL of the service still leaves an add in
progress uncommitted.

The workers get the command line's settings through an environment variable (`SETTINGS`): paths
and numbers only (the token stays in its file; each worker reads it), and the broker's socket and
key; each builds its app with `pipeline.service.command.worker_app`.

Example:
    jobdedup serve --index ads.jdx --workers 2
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

SETTINGS = "JOBDEDUP_SERVE_SETTINGS"
# uvicorn's C HTTP parser and libuv event loop (what `uvicorn[standard]` brings, without its file
# watcher and websockets): /healthz p50 0.88-1.13 -> 0.53-0.79 ms, against h11 and asyncio.
HTTP_PARSER = "httptools"
EVENT_LOOP = "uvloop"
HEALTH_CHECK_SECONDS = 120  # the supervisor restarts a worker that does not answer its ping this long
_PASSED = (
    "index",
    "model",
    "host",
    "port",
    "token_file",
    "wait",
    "slow_check_ms",
    "quiet",
    "jobs",
    "seed",
    "max_description_chars",
)


def run_workers(args: argparse.Namespace, writes_allowed: bool) -> int:
    """Serve with `args.workers` processes under uvicorn's supervisor until interrupted (with
    `writes_allowed`, the supervisor relays the workers' writes to one writer child).

    The command line's process has pandas, LightGBM and the engine loaded (~170 MB of PSS at
    1,000,000 indexed ads), which the supervisor never uses: it hands the settings over to a fresh
    interpreter running `supervise` (same process id, same standard streams) and is replaced by it.
    """
    from jobdedup.pipeline.service.writer import ARENA_LIMIT_VARIABLE, HEAP_ARENAS

    settings = {k: _plain(getattr(args, k, None)) for k in _PASSED}
    settings.update(workers=args.workers, writes_allowed=writes_allowed)
    os.environ[SETTINGS] = json.dumps(settings)
    # glibc's arena limit from each process's start (the supervisor's, its workers' and the
    # writer's): a worker's `limit_heap_arenas` call comes after uvicorn's health-check thread has
    # made a second arena, and glibc fixes its limit when it first makes one (~100 MB of PSS per
    # worker at 1,000,000 ads). A value the user set is kept.
    os.environ.setdefault(ARENA_LIMIT_VARIABLE, str(HEAP_ARENAS))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, "-m", "jobdedup.pipeline.service.workers"])
    return 1  # (not reached)


def supervise() -> int:
    """uvicorn's supervisor over the workers, as `run_workers` set it up (what `uvicorn.run(...,
    workers=N)` does, but the listening socket gets TCP_NODELAY, which the connections it accepts
    inherit (Linux): uvicorn binds it with protocol 0, so asyncio does not set TCP_NODELAY on those
    connections, and a response written in two parts (headers, body) waited ~40 ms for the
    client's delayed ACK (/healthz took 44 ms with two workers, 1.2 ms with one))."""
    import uvicorn
    from uvicorn.supervisors import Multiprocess

    from jobdedup.pipeline.service.writer import ModelSettings, WriterBroker

    settings = json.loads(os.environ[SETTINGS])
    broker = None
    if settings.pop("writes_allowed"):  # (else the write endpoints are off)
        model = ModelSettings({k: settings[k] for k in _PASSED})  # (model_from_args picks its own)
        broker = WriterBroker(Path(settings["index"]), model, settings["wait"])
    settings["writer"] = [broker.address, broker.authkey.hex()] if broker is not None else None
    os.environ[SETTINGS] = json.dumps(settings)
    config = uvicorn.Config(
        "jobdedup.pipeline.service.command:worker_app",
        factory=True,
        host=settings["host"],
        port=settings["port"],
        workers=settings["workers"],
        http=HTTP_PARSER,
        loop=EVENT_LOOP,
        access_log=False,
        log_level="info" if not settings["quiet"] else "warning",
        timeout_graceful_shutdown=5,
        timeout_worker_healthcheck=HEALTH_CHECK_SECONDS,
    )
    sock = config.bind_socket()
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    try:
        with contextlib.suppress(KeyboardInterrupt):
            Multiprocess(config, sockets=[sock]).run()
    finally:
        if broker is not None:
            broker.close()
    return 0


def worker_settings() -> argparse.Namespace:
    """In a worker process: the command line's settings, as `run_workers` passed them."""
    settings = json.loads(os.environ[SETTINGS])
    for name in ("index", "model", "token_file"):
        settings[name] = Path(settings[name]) if settings[name] is not None else None
    return argparse.Namespace(**settings)


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Path) else value


__all__ = ["SETTINGS", "run_workers", "supervise", "worker_settings"]

if __name__ == "__main__":
    sys.exit(supervise())
