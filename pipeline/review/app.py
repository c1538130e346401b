"""The review page's FastAPI application: the page and its scripts (served from the package, no
CDN) and a small JSON API over `ReviewData`, `LabelStore` and the estimates.

Example:
    >>> # uvicorn.run(create_review_app(data, store), host="127.0.0.1", port=8765)
"""

# No `from __future__ import annotations` here: FastAPI reads the endpoints' annotations (Request),
# imported inside create_review_app so that other commands do not import the web framework.
import hmac
import math
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.review.data import GroupFilter, ReviewData
from jobdedup.pipeline.review.estimates import MODES, precision_estimate, queue, retrain
from jobdedup.pipeline.review.labels import LabelStore

STATIC = Path(__file__).resolve().parent / "static"
# Ad text is inserted as text by the page's script; the policy is a second wall: no inline script,
# no script, style or image from anywhere but this server.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


def create_review_app(
    data: ReviewData, store: LabelStore, token: str | None = None, retrain_to: Path | None = None
) -> Any:
    """The FastAPI application of `jobdedup review` over `data`, writing answers to `store`.

    With `token`, every /api request needs `Authorization: Bearer TOKEN` (the page takes it from
    its URL's `#token=` and sends it); without, requests must name a loopback host (a web page
    elsewhere cannot reach the API through DNS rebinding). `retrain_to` turns on POST /api/retrain.
    """
    from fastapi import FastAPI, Request
    from fastapi.responses import FileResponse, JSONResponse, Response
    from fastapi.staticfiles import StaticFiles

    app = FastAPI(title="jobdedup review", docs_url=None, redoc_url=None, openapi_url=None)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    retraining = threading.Lock()

    def error(status: int, message: str) -> JSONResponse:
        return JSONResponse({"error": message}, status_code=status)

    @app.middleware("http")
    async def guard(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        if request.url.path.startswith("/api/"):
            if token is not None:
                given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
                if not hmac.compare_digest(given.encode(), token.encode()):
                    return error(401, "a token is needed: open the URL `jobdedup review` printed")
            else:
                host = request.headers.get("host", "").rsplit(":", 1)[0]
                if host not in LOOPBACK_NAMES and host != "testserver":
                    return error(403, f"host {host!r} refused: the page serves 127.0.0.1 only")
        response = await call_next(request)
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.exception_handler(JobdedupError)
    async def refused(request: Request, failure: JobdedupError) -> JSONResponse:
        return error(422, str(failure))

    @app.get("/")
    def page() -> Any:
        return FileResponse(STATIC / "index.html")

    @app.get("/api/meta")
    def meta() -> Any:
        return {
            "labels": str(store.path),
            "labels_missing_columns": store.missing,
            "threshold": float(data.model.threshold_),
            "ads": len(data.ads),
            "groups": len(data.summary),
            "retrain": retrain_to is not None,
            **data.choices(),
        }

    @app.get("/api/groups")
    def groups(
        source: str = "", corpus: str = "", employer: str = "", title: str = "",
        min_size: int = 1, max_size: int | None = None, page: int = 1, per_page: int = 50,
    ) -> Any:  # fmt: skip
        where = GroupFilter(source, corpus, employer, title, min_size, max_size)
        return data.group_list(where, page, per_page)

    @app.get("/api/groups/{group_id:path}")
    def group(group_id: str) -> Any:
        found = data.group(group_id)
        return found if found is not None else error(404, f"no group {group_id!r}")

    @app.get("/api/pair")
    def pair(a: str, b: str) -> Any:
        return data.pair(a, b)

    @app.get("/api/labels")
    def answers() -> Any:
        return store.answers()

    @app.post("/api/labels")
    async def answer(request: Request) -> Any:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return error(415, "send the answer as application/json")
        try:
            body = await request.json()
        except ValueError:
            return error(422, "the answer is not JSON")
        if not isinstance(body, dict):
            return error(422, "send one answer as a JSON object")
        from starlette.concurrency import run_in_threadpool

        values = {k: str(body.get(k) or "") for k in ("ad_id_a", "ad_id_b", "sample", "dup_type", "reason")}
        raw: Any = body.get("label")
        try:
            label = int(raw)
        except (TypeError, ValueError):
            return error(422, "label must be 0 or 1")
        await run_in_threadpool(
            store.answer, values["ad_id_a"], values["ad_id_b"], label,
            values["sample"], values["dup_type"], values["reason"],
        )  # fmt: skip
        return {"written": True, "estimate": precision_estimate(store.table(), data)}

    @app.get("/api/queue/{mode}")
    def pairs_to_show(mode: str, size: int = 200) -> Any:
        if mode not in MODES:
            return error(404, f"no mode {mode!r}; one of {', '.join(MODES)}")
        answered = {frozenset(key.split("|", 1)) for key in store.answers()}
        shown = queue(data, mode, max(1, min(size, 5000)), answered)
        return {
            "mode": mode,
            "pairs": [
                {"ad_id_a": a, "ad_id_b": b, "probability": None if math.isnan(p) else float(p)}
                for a, b, p in zip(shown["ad_id_a"], shown["ad_id_b"], shown["probability"])
            ],
        }

    @app.get("/api/estimate")
    def estimate() -> Any:
        return precision_estimate(store.table(), data)

    @app.post("/api/retrain")
    def retrain_model() -> Any:
        if retrain_to is None:
            return error(404, "retraining is off: start `jobdedup review` with --retrain MODEL")
        if not retraining.acquire(blocking=False):
            return error(409, "a retraining is already running")
        try:
            return retrain(data, store.path, retrain_to)
        finally:
            retraining.release()

    @app.get("/api/overlap")
    def overlap() -> Any:
        return data.overlap()

    return app


__all__ = ["create_review_app"]
