"""What the service does around every request: the bearer token, a declared body too large, a
failure answered 500, and one log line per request (and per slow check), never ad text.

Example:
    >>> # app.add_middleware(Guard, service=service, error=error)
"""

from __future__ import annotations

import hmac
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from jobdedup.pipeline.service.validation import DRAIN_BYTES, too_large

if TYPE_CHECKING:
    from jobdedup.pipeline.service.state import Service

log = logging.getLogger("jobdedup.serve")


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
                bad = too_large(int(declared))
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


__all__ = ["Guard", "log_slow_check"]
