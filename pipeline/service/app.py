"""The service's FastAPI application: its routes over one `Service` (see the package's docstring).

Example:
    >>> # uvicorn.run(create_app(service), host="127.0.0.1", port=8000)
"""

# No `from __future__ import annotations` here: FastAPI reads the endpoints' annotations (Request),
# imported inside create_app so that other commands do not import the web framework.
import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.io import ADS_COLUMNS
from jobdedup.pipeline.service.answers import check_response, group_by_name, group_of_ad, records
from jobdedup.pipeline.service.guard import Guard, log_slow_check
from jobdedup.pipeline.service.state import Service
from jobdedup.pipeline.service.validation import (
    DRAIN_BYTES,
    MAX_ADS,
    MAX_BYTES,
    BadInput,
    parse_ads,
    too_large,
)
from jobdedup.pipeline.service.writer import trim_heap


def create_app(service: Service) -> Any:
    """The FastAPI application over `service`."""
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    from jobdedup.pipeline.index import IndexLockedError
    from jobdedup.pipeline.prepare import SMALL_BATCH  # fewer ads: checked on one thread (check_model)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
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
            raise too_large(size)
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
            return JSONResponse({**added, "ads": records(added["ads"]), "merges": records(added["merges"])})

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


__all__ = ["create_app"]
