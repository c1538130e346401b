"""`jobdedup serve`: an HTTP service over one index file (FastAPI on uvicorn).

Endpoints (JSON in and out; `/openapi.json` describes them, no documentation page is served, so
nothing is ever loaded from the internet):

- `POST /v1/check` — one ad (an object) or a list of ads (contract columns): for each, its
  duplicates among the indexed ads and the other ads of the request, the group it would join and the
  decision. Nothing is written. `Index.check` underneath: the very matching of `index add`.
- `POST /v1/ads` — add a batch exactly as `jobdedup index add` does (one transaction); returns every
  ad's group and the merges.
- `GET /v1/ads/{ad_id}`, `GET /v1/groups/{group_id}`, `DELETE /v1/ads/{ad_id}`, `GET /v1/stats`,
  `GET /healthz`.

Design: checks run on a small pool of read connections sharing one `KeyCache` (the index's band and
field keys decoded once into memory-mapped files beside the index, so a check looks up its ~45 keys
with `searchsorted` and reads only the candidate rows from SQLite; `--workers N` processes share
them, `pipeline.service.workers`). Writes run one at a time in a child process at a lower CPU
priority (`pipeline.service.writer`), so an add never holds the checks' GIL; the cache follows every
committed write, the child's and other processes' (`meta.generation`). A CLI `index add` on the same
file is serialised with the child's writes by SQLite's write lock (waiting up to `--wait` seconds),
and checks never wait for either: they read the last committed state whose view the service has
built (`pipeline.service.readers`), and a write is answered once every worker's readers follow it.

Security: binds 127.0.0.1 unless `--host` says otherwise. With `--token-file`, every request but
`/healthz` needs `Authorization: Bearer <token>`; listening beyond loopback without a token file,
the write endpoints refuse (403). Logs carry method, path, status, ad counts and times, never ad
text (uvicorn's access log is off; request bodies and error details are not logged).

Example:
    jobdedup serve --index ads.jdx --port 8000 --token-file token.txt
    curl -s -X POST localhost:8000/v1/check -H "Authorization: Bearer $(cat token.txt)" \\
         -H 'Content-Type: application/json' -d '{"ad_id": "a1", "description": "..."}'
"""

# No `from __future__ import annotations` here: FastAPI reads the endpoints' annotations (Request),
# imported inside create_app so that other commands do not import the web framework.
import argparse
import gc
import hmac
import ipaddress
import json
import logging
import math
import os
import re
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jobdedup.features.normalize import FEW_VALUES
from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.io import ADS_COLUMNS
from jobdedup.pipeline.io.dates import unreadable_dates
from jobdedup.pipeline.service.workers import EVENT_LOOP, HTTP_PARSER
from jobdedup.pipeline.service.writer import trim_heap

MAX_ADS = 10_000
MAX_BYTES = 20 * 1024 * 1024
# A body over MAX_BYTES is read to its end (and dropped) up to this size, so that the client, still
# sending, gets the 422 instead of a reset connection; beyond it the connection is closed.
DRAIN_BYTES = 5 * MAX_BYTES
READERS = 4  # read connections (checks in flight at once; more wait for a free one)
SLOW_CHECK_SECONDS = 0.5  # default of `--slow-check-ms`: a slower check logs where its time went
STRING_FIELDS = ADS_COLUMNS  # every contract column is text (or null)
# A surrogate escape ("\ud800") in a body: JSON allows a lone one, which no UTF-8 text can hold.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")
log = logging.getLogger("jobdedup.serve")


class BadInput(Exception):
    """A request the service refuses with 422: which field, what is wrong, how to fix it."""

    def __init__(self, field: str, error: str, fix: str) -> None:
        super().__init__(error)
        self.field, self.error, self.fix = field, error, fix


# ---------------------------------------------------------------------- input
def parse_ads(body: bytes) -> pd.DataFrame:
    """The ads of a request body (one JSON object, or a list of them), validated.

    Raises `BadInput` naming the first bad field (`ads[3].title`) and the fix.
    """
    if len(body) > MAX_BYTES:
        raise _too_large(len(body))
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadInput(
            "body", f"not JSON ({type(error).__name__} at byte {getattr(error, 'pos', '?')})",
            "send one ad as a JSON object, or a JSON array of ads, with Content-Type: application/json",
        ) from None  # fmt: skip
    single = isinstance(data, dict)
    if isinstance(data, dict) and isinstance(data.get("ads"), list):
        data, single = data["ads"], False  # {"ads": [...]} is accepted too
    ads = [data] if single else data
    name = (lambda i: "ad") if single else (lambda i: f"ads[{i}]")
    if not isinstance(ads, list):
        raise BadInput(
            "body", f"a JSON {type(data).__name__}, not an ad or a list of ads",
            'send {"ad_id": "...", "description": "..."} or a list of such objects',
        )  # fmt: skip
    if not ads:
        raise BadInput("body", "the list of ads is empty", "send at least one ad")
    if len(ads) > MAX_ADS:
        raise BadInput(
            "body", f"{len(ads)} ads in one request (at most {MAX_ADS:,})",
            f"split the batch into requests of at most {MAX_ADS:,} ads",
        )  # fmt: skip
    seen: dict[str, int] = {}
    surrogates = _SURROGATE_ESCAPE.search(body) is not None
    for i, ad in enumerate(ads):
        if not isinstance(ad, dict):
            raise BadInput(
                name(i), f"a JSON {type(ad).__name__}, not an object", "send each ad as a JSON object"
            )
        ad_id = ad.get("ad_id")
        if ad_id is None:
            raise BadInput(f"{name(i)}.ad_id", "missing", "give every ad a non-empty string ad_id")
        for column in STRING_FIELDS:
            value = ad.get(column)
            if value is not None and not isinstance(value, str):
                fix = (
                    "give every ad a non-empty string ad_id (quote numbers: \"7\")" if column == "ad_id"
                    else f"send {column} as a JSON string (or null when unknown)"
                )  # fmt: skip
                raise BadInput(f"{name(i)}.{column}", f"a JSON {type(value).__name__}, not a string", fix)
            if surrogates and value is not None and not _is_unicode_text(value):
                raise BadInput(
                    f"{name(i)}.{column}", "holds a lone surrogate escape (such as \\ud800), which is not text",
                    "send valid Unicode text: escape a character outside the BMP as a surrogate pair or as UTF-8",
                )  # fmt: skip
        if not ad_id.strip():
            raise BadInput(f"{name(i)}.ad_id", "empty", "give every ad a non-empty string ad_id")
        if "description" not in ad:
            raise BadInput(
                f"{name(i)}.description",
                "missing",
                'send the ad text as description ("" or null if it has none)',
            )
        if ad_id in seen:
            raise BadInput(
                f"{name(i)}.ad_id",
                f"the same ad_id as ads[{seen[ad_id]}]",
                "give each ad of a request its own ad_id",
            )
        seen[ad_id] = i
    columns = {c: [ad.get(c) for ad in ads] for c in ADS_COLUMNS}
    undated = unreadable_dates(columns["posted_at"])
    if undated:
        i = next(i for i, value in enumerate(columns["posted_at"]) if value in undated)
        raise BadInput(
            f"{name(i)}.posted_at", f"{columns['posted_at'][i][:60]!r} is no date",
            "send an ISO 8601 date or datetime (2025-05-13, 2025-05-13T09:30:00Z), or null when unknown",
        )  # fmt: skip
    return pd.DataFrame(columns, dtype=object)


def _is_unicode_text(value: str) -> bool:
    """Whether `value` can be UTF-8 encoded (a lone surrogate cannot)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _too_large(size: int) -> BadInput:
    return BadInput(
        "body", f"{size:,} bytes or more (at most {MAX_BYTES:,} per request)",
        "send fewer or shorter ads per request (split the batch)",
    )  # fmt: skip


def _records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """JSON-ready rows: numpy scalars to Python, NaN/NA to None (column lists, not a frame's
    `astype`/`where`/`to_dict`, which cost a single-ad check ~1.5 ms)."""
    columns = [[_plain(value) for value in frame[name].tolist()] for name in frame.columns]
    return [dict(zip(frame.columns, row)) for row in zip(*columns)]


def _plain(value: Any) -> Any:
    """One value of `_records`: None for a missing one, Python scalars for numpy's."""
    if value is None or value is pd.NA or value is pd.NaT or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if isinstance(value, np.generic) else value


def check_response(result: Any, threshold: float) -> dict[str, Any]:
    """The `/v1/check` answer from `Index.check`'s result: per ad its decision and duplicates."""
    pairs = result.pairs
    duplicates: dict[str, list[dict[str, Any]]] = {}
    if len(pairs):
        found = np.flatnonzero(pairs["is_duplicate"].to_numpy(dtype=bool))
        columns = ("ad_id_a", "ad_id_b", "probability", "dup_type", "b_in_index")
        for a, b, p, kind, in_index in zip(*(pairs[name].to_numpy()[found].tolist() for name in columns)):
            entry = {"probability": round(float(p), 6), "dup_type": None if pd.isna(kind) else str(kind)}
            duplicates.setdefault(a, []).append({"ad_id": b, "in_index": bool(in_index), **entry})
            if not in_index:
                duplicates.setdefault(b, []).append({"ad_id": a, "in_index": False, **entry})
    answers = []
    for row in _records(result.groups):
        ad_id = row["ad_id"]
        found_for = sorted(duplicates.get(ad_id, []), key=lambda d: -d["probability"])
        if row["status"] == "already_indexed":
            decision = "already_indexed"
        else:
            decision = "duplicate" if row["group_size"] > 1 else "new"
        answers.append({**row, "decision": decision, "duplicates": found_for})
    return {"ads": answers, "merges": _records(result.merges), "threshold": threshold}


# ---------------------------------------------------------------------- state
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


# ---------------------------------------------------------------------- app
def create_app(service: Service) -> Any:
    """The FastAPI application over `service`."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    from jobdedup.pipeline.index import IndexLockedError
    from jobdedup.pipeline.prepare import SMALL_BATCH  # fewer ads: checked on one thread (check_model)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        yield
        service.close()

    app = FastAPI(
        title="jobdedup",
        version="1",
        description="Duplicate job ads against a jobdedup index: check single ads, add batches, read groups.",
        docs_url=None,  # the Swagger/ReDoc pages load scripts from a CDN: not served
        redoc_url=None,
        lifespan=lifespan,
    )

    def error(status: int, message: str, fix: str, **extra: Any) -> JSONResponse:
        return JSONResponse({"error": message, "fix": fix, **extra}, status_code=status)

    app.add_middleware(Guard, service=service, error=error)

    async def read_body(request: Request) -> bytes:
        """The body, counted as it streams (a Content-Length may be absent or wrong)."""
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size <= MAX_BYTES:
                chunks.append(chunk)
            elif size > DRAIN_BYTES:
                break
        if size > MAX_BYTES:
            raise _too_large(size)
        return b"".join(chunks)

    @app.exception_handler(BadInput)
    async def bad_input(request: Request, failure: BadInput) -> JSONResponse:
        return error(422, failure.error, failure.fix, field=failure.field)

    @app.exception_handler(JobdedupError)
    async def refused(request: Request, failure: JobdedupError) -> JSONResponse:
        status = 503 if isinstance(failure, IndexLockedError) else 422
        return error(status, str(failure), "correct the request" if status == 422 else "try again later")

    def writable() -> None:
        if service.writer is None:
            raise PermissionError

    @app.exception_handler(PermissionError)
    async def forbidden(request: Request, failure: PermissionError) -> JSONResponse:
        return error(
            403, "write endpoints are off: the service listens beyond loopback without a token",
            "restart it with --token-file, or bind it to 127.0.0.1",
        )  # fmt: skip

    ad_schema = {
        "type": "object",
        "required": ["ad_id", "description"],
        "properties": {c: {"type": ["string", "null"]} for c in ADS_COLUMNS} | {"ad_id": {"type": "string"}},
    }
    body_schema = {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {
                    "schema": {
                        "oneOf": [
                            ad_schema,
                            {"type": "array", "items": ad_schema, "minItems": 1, "maxItems": MAX_ADS},
                        ]
                    }
                }
            },
        }
    }

    @app.post("/v1/check", openapi_extra=body_schema, summary="Check ads against the index (no writes)")
    async def check(request: Request) -> Any:
        ads = parse_ads(await read_body(request))
        from starlette.concurrency import run_in_threadpool

        model = service.check_model if len(ads) < SMALL_BATCH else service.model

        def work() -> JSONResponse:
            queued = time.perf_counter()
            with service.reader() as index:
                reader_seconds = time.perf_counter() - queued
                result = index.check(ads, model)
            if len(ads) >= SMALL_BATCH:
                trim_heap()  # a batch's hundreds of MB of temporaries, given back (ms, beside seconds)
            seconds = time.perf_counter() - queued
            if seconds >= service.slow_check_seconds:
                log_slow_check(len(ads), seconds, reader_seconds, result.report.get("timings", {}))
            # Encoded here, in the worker thread: FastAPI would encode a returned dict on the event
            # loop with `jsonable_encoder` (34 ms for 1,000 ads, beside 3 ms for `json.dumps`).
            return JSONResponse(check_response(result, float(service.model.threshold_)))

        answer = await run_in_threadpool(work)
        request.state.ads = len(ads)
        return answer

    @app.post("/v1/ads", openapi_extra=body_schema, summary="Add a batch as `jobdedup index add` does")
    async def add(request: Request) -> Any:
        writable()
        ads = parse_ads(await read_body(request))
        from starlette.concurrency import run_in_threadpool

        request.state.ads = len(ads)

        def work() -> JSONResponse:  # (encoded off the event loop, as a check's answer)
            added = service.write(lambda: service.writer.add(ads))
            return JSONResponse({**added, "ads": _records(added["ads"]), "merges": _records(added["merges"])})

        return await run_in_threadpool(work)

    @app.get("/v1/ads/{ad_id:path}", summary="An indexed ad's group and the group's members")
    def get_ad(ad_id: str) -> Any:
        with service.reader() as index:
            found = group_of_ad(index, ad_id)
        if found is None:
            return error(404, f"ad_id {ad_id!r} is not in the index", "add it with POST /v1/ads")
        return found

    @app.get("/v1/groups/{group_id:path}", summary="A group's members")
    def get_group(group_id: str) -> Any:
        with service.reader() as index:
            found = group_by_name(index, group_id)
        if found is None:
            return error(
                404, f"no group {group_id!r} in the index", "take group ids from /v1/ads or /v1/check"
            )
        return found

    @app.delete("/v1/ads/{ad_id:path}", summary="Remove an ad (its group keeps its id)")
    def delete_ad(ad_id: str) -> Any:
        writable()
        outcome = service.write(lambda: service.writer.remove([ad_id]))
        if outcome["removed"] == 0:
            return error(404, f"ad_id {ad_id!r} is not in the index", "nothing to remove")
        return {"ad_id": ad_id, **{k: int(v) for k, v in outcome.items()}}

    @app.get("/v1/stats", summary="What the index holds, and the service's figures")
    def stats() -> Any:
        with service.reader() as index:
            view = index.store.view()
            figures = service.index_stats(index, view.generation)
        figures["service"] = {
            "generation": view.generation,
            "keys_in_memory": view.entries,
            "key_memory_bytes": service.cache.nbytes(),
            "resident_bytes": _resident_bytes(),
            "process": os.getpid(),  # (with --workers, which worker answered)
            **_writer_status(service.writer),
            "uptime_seconds": round(time.time() - service.started, 1),
            "threshold": float(service.model.threshold_),
        }
        return figures

    @app.get("/healthz", summary="Liveness (no token needed)")
    def healthz() -> Any:
        return {"status": "ok"}

    return app


class Guard:
    """The service's outermost own layer (a plain ASGI middleware: Starlette's `BaseHTTPMiddleware`
    cost ~0.4 ms a request): the bearer token, a declared body too large to read, a failure
    answered 500 in one log line, and one log line per request (method, path, status, ads, ms;
    never ad text).

    Args:
        app: the ASGI application inside.
        service: whose `token` every request but /healthz needs.
        error: makes the JSON error response (status, message, fix, extra fields).
    """

    def __init__(self, app: Any, service: Service, error: Callable[..., Any]) -> None:
        self.app, self.error = app, error
        self.token = service.token.encode() if service.token is not None else None

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        refused = self.refusal(scope)
        if refused is not None:
            await refused(scope, receive, send)
            _log(scope, refused.status_code, started)
            return
        status, begun = 500, False

        async def sending(message: dict[str, Any]) -> None:
            nonlocal status, begun
            if message["type"] == "http.response.start":
                status, begun = message["status"], True
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception as failure:  # noqa: BLE001 - one line, no ad text, and keep serving
            log.error("%s %s failed: %s", scope["method"], scope["path"], type(failure).__name__)
            if not begun:  # (once the answer has begun, nothing can replace it)
                failed = self.error(500, "internal error", "see the service log; the index is unchanged")
                await failed(scope, receive, send)
                status = failed.status_code
        _log(scope, status, started)

    def refusal(self, scope: dict[str, Any]) -> Any:
        """The response refusing the request before it is read (401, or 422 for a declared body
        over `DRAIN_BYTES`), or None."""
        path, headers = scope["path"], dict(scope["headers"])
        if self.token is not None and path != "/healthz":
            scheme, _, credential = headers.get(b"authorization", b"").partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(credential.strip(), self.token):
                response = self.error(
                    401,
                    "missing or wrong bearer token",
                    "send Authorization: Bearer <the token of --token-file>",
                )
                response.headers["WWW-Authenticate"] = "Bearer"
                return response
        if scope["method"] in ("POST", "DELETE") and path.startswith("/v1/"):
            declared = headers.get(b"content-length", b"").decode("latin-1")
            if declared.isdigit() and int(declared) > DRAIN_BYTES:
                bad = _too_large(int(declared))
                return self.error(422, bad.error, bad.fix, field=bad.field)
        return None


def _log(scope: dict[str, Any], status: int, started: float) -> None:
    """One line per request: method, path, status, the ads of a check or add (`request.state.ads`),
    milliseconds."""
    ads = scope.get("state", {}).get("ads")
    log.info(
        "%s %s %d%s %.1f ms",
        scope["method"],
        scope["path"],
        status,
        f" ads={ads}" if ads is not None else "",
        (time.perf_counter() - started) * 1000,
    )


def log_slow_check(ads: int, seconds: float, reader_seconds: float, timings: dict[str, float]) -> None:
    """One warning line for a check slower than `--slow-check-ms`: its wait for a pooled reader
    and its steps (`Index.check`'s timings; "check" holds the read transaction's start and the
    key view's refresh), so that a stall in the log says where it was. No ad text.

    Example:
        >>> log_slow_check(1, 3.1, 0.0, {"validate": 0.001, "check": 3.05})  # logs one warning
    """
    steps = ", ".join(f"{step} {value * 1000:.1f}" for step, value in timings.items())
    log.warning(
        "slow check of %d ad(s): %.1f ms, %.1f ms of it waiting for a reader; steps (ms): %s",
        ads,
        seconds * 1000,
        reader_seconds * 1000,
        steps or "none recorded",
    )


def _writer_status(writer: Any) -> dict[str, Any]:
    """Whether the writer child is up and its process id (with `--workers`, the one all share)."""
    status = writer.status() if writer is not None else {"running": False, "pid": None}
    return {"writer_running": bool(status["running"]), "writer_process": status["pid"]}


def _resident_bytes() -> int | None:
    try:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None


# ---------------------------------------------------------------------- reads for the endpoints
def group_of_ad(index: Any, ad_id: str) -> dict[str, Any] | None:
    """{ad_id, group_id, group_size, members} of an indexed ad, or None."""
    store = index.store
    with store.read():
        found = store.find_ads([ad_id])
        if not len(found):
            return None
        gid = int(found["gid"].iloc[0])
        return _group(store, gid) | {"ad_id": ad_id}


def group_by_name(index: Any, group_id: str) -> dict[str, Any] | None:
    """{group_id, group_size, members} of a group, or None (also for a group merged into another)."""
    store = index.store
    with store.read():
        row = store.db.execute("SELECT gid FROM groups WHERE name = ?", (group_id,)).fetchone()
        if row is None:
            founder = store.find_ads([group_id])
            founder = founder[founder["id"] == founder["gid"]]
            if not len(founder):
                return None
            gid = int(founder["gid"].iloc[0])
        else:
            gid = int(row[0])
        found = _group(store, gid)
        return found if found["group_size"] else None


def _group(store: Any, gid: int) -> dict[str, Any]:
    members = store.group_members(np.asarray([gid], dtype=np.int64))["id"].to_numpy()
    name = store.group_names(np.asarray([gid], dtype=np.int64)).get(gid)
    return {
        "group_id": name,
        "group_size": len(members),
        "members": sorted(store._ad_ids(np.sort(members)).tolist()),
    }


# ---------------------------------------------------------------------- command line
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
    "Service",
    "add_serve_parser",
    "check_response",
    "cmd_serve",
    "create_app",
    "log_slow_check",
    "make_service",
    "parse_ads",
    "worker_app",
]
