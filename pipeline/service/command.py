"""`jobdedup serve` on the command line: its parser, the token and bind checks, and the run.

Example:
    jobdedup serve --index ads.jdx --port 8000 --token-file token.txt
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.service.app import create_app
from jobdedup.pipeline.service.state import SLOW_CHECK_SECONDS, Service
from jobdedup.pipeline.service.workers import EVENT_LOOP, HTTP_PARSER

log = logging.getLogger("jobdedup.serve")


def add_serve_parser(
    commands: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Register `jobdedup serve`."""
    serve = commands.add_parser(
        "serve",
        help="HTTP service over an index: check single ads in milliseconds, add batches, read groups",
        description="Serves POST /v1/check (no writes), POST /v1/ads (as `index add`), GET /v1/ads/{ad_id}, "
        "GET /v1/groups/{group_id}, DELETE /v1/ads/{ad_id}, GET /v1/stats, GET /healthz and /openapi.json. "
        "Binds 127.0.0.1 unless --host says otherwise; with --token-file every request but /healthz needs "
        "'Authorization: Bearer TOKEN', and beyond loopback the write endpoints need it. Logs never hold ad text.",
    )
    serve.add_argument("--index", type=Path, required=True, help="index file (created if absent)")
    serve.add_argument("--model", type=Path, default=None, help="model file (default: the bundled model)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    serve.add_argument("--token-file", type=Path, default=None, help="file holding the bearer token")
    serve.add_argument(
        "--wait", type=float, default=60.0, metavar="SECONDS",
        help="how long a write waits for another process writing to the index (default 60)",
    )  # fmt: skip
    serve.add_argument(
        "--workers", type=int, default=1,
        help="service processes sharing the port (default 1; 2 on two cores: concurrent checks use both)",
    )  # fmt: skip
    serve.add_argument(
        "--slow-check-ms", type=float, default=SLOW_CHECK_SECONDS * 1000, metavar="MS",
        help="log the steps of every check slower than this, without ad text "
        f"(default {SLOW_CHECK_SECONDS * 1000:.0f})",
    )  # fmt: skip
    common(serve)


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address or name (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def writes_allowed(host: str, token_given: bool) -> bool:
    """Whether the write endpoints are on: on loopback, or beyond it with a token file."""
    return is_loopback(host) or token_given


def read_token(path: Path) -> str:
    """The token in `path` (surrounding whitespace dropped); refuses a missing or empty file."""
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as failure:
        raise JobdedupError(
            f"{path}: cannot read the token file ({failure.strerror}); give a readable file"
        ) from None
    if not token or any(c.isspace() for c in token):
        raise JobdedupError(f"{path}: the token file must hold one token without spaces; write one into it")
    return token


def make_service(args: argparse.Namespace) -> Service:
    """The `Service` of a `jobdedup serve` command line, its keys loaded and kernels warmed up."""
    from jobdedup.pipeline.model_files import model_from_args
    from jobdedup.pipeline.service.writer import limit_heap_arenas

    limit_heap_arenas()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    token = read_token(args.token_file) if args.token_file else None
    allowed = writes_allowed(args.host, token is not None)
    if not allowed:
        log.warning("listening on %s without --token-file: write endpoints are off", args.host)
    model = model_from_args(args)
    writer = None
    if getattr(args, "writer", None):  # a `--workers` process: writes through the supervisor's broker
        from jobdedup.pipeline.service.writer import RemoteWriter

        address, key = args.writer
        writer = RemoteWriter(address, bytes.fromhex(key))
    service = Service(
        args.index, model, token=token, writes_allowed=allowed, wait=args.wait, writer=writer,
        slow_check_seconds=args.slow_check_ms / 1000,
    )  # fmt: skip
    started = time.perf_counter()
    service.warm_up()
    service.keep_current()
    with service.reader() as index:
        entries = index.store.view().entries
    log.info(
        "index %s: %d keys (%.0f MB, mapped from %s), ready in %.1f s",
        args.index,
        entries,
        service.cache.nbytes() / 1e6,
        service.cache.directory,
        time.perf_counter() - started,
    )
    return service


def worker_app() -> Any:
    """The application of one `--workers` process (uvicorn's factory; `pipeline.service.workers`)."""
    from jobdedup.pipeline.service.workers import worker_settings
    from jobdedup.pipeline.service.writer import die_with_parent

    die_with_parent()  # (the supervisor's SIGKILL takes the workers, and their writers, with it)
    return create_app(make_service(worker_settings()))


def cmd_serve(args: argparse.Namespace) -> int:
    """Run `jobdedup serve` until interrupted (`--workers` > 1: `pipeline.service.workers`)."""
    import uvicorn

    if args.workers > 1:
        from jobdedup.pipeline.service.workers import run_workers

        if args.token_file:
            read_token(args.token_file)  # a bad token file stops here, not in each worker
        return run_workers(args, writes_allowed=writes_allowed(args.host, args.token_file is not None))
    config = uvicorn.Config(
        create_app(make_service(args)),
        host=args.host,
        port=args.port,
        http=HTTP_PARSER,
        loop=EVENT_LOOP,
        access_log=False,  # our own one-line log, without query strings or bodies
        log_level="info" if not args.quiet else "warning",
        timeout_graceful_shutdown=5,
    )
    uvicorn.Server(config).run()
    return 0


__all__ = [
    "add_serve_parser",
    "cmd_serve",
    "is_loopback",
    "make_service",
    "read_token",
    "worker_app",
    "writes_allowed",
]
