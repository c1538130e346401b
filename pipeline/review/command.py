"""`jobdedup review` on the command line: its parser, the checks of its input, and the run.

Example:
    jobdedup review --ads ads.parquet --out out/batch1 --labels my_labels.csv
    jobdedup review --ads ads.parquet --index ads.jdx
"""

from __future__ import annotations

import argparse
import errno
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from jobdedup.pipeline.errors import JobdedupError


def add_review_parser(
    commands: argparse._SubParsersAction, common: Callable[[argparse.ArgumentParser], None]
) -> None:
    """Register `jobdedup review`."""
    review = commands.add_parser(
        "review",
        help="a local web page over a dedup output or an index: browse groups, read pairs side by side, label, "
        "see precision live",
        description="Starts a web page over the folder `jobdedup dedup --ads ADS --out OUT` wrote, or over an "
        "index (--index; its texts from ADS): groups "
        "largest first with filters, a group's ads and a pair side by side (fields, shared text blocks, the "
        "model's contributions, duplicate type and rule), labelling with y / n / u / b appended to LABELS in "
        "the format `jobdedup label` writes, a uniform sample of accepted pairs with the running precision "
        "estimate `jobdedup evaluate` reports, and the source-overlap matrix. Listens on 127.0.0.1 and prints "
        "the URL; beyond loopback only with --host and --token.",
    )
    review.add_argument(
        "--ads", type=Path, required=True, help="the ads file the dedup run read (or the index's ads)"
    )
    source = review.add_mutually_exclusive_group(required=True)
    source.add_argument("--out", type=Path, help="the dedup output folder (pairs.parquet, groups.parquet)")
    source.add_argument(
        "--index", type=Path,
        help="an index file (`jobdedup index add`), read-only: its groups, each group's pairs scored "
        "at launch with --model; --ads must hold every indexed ad",
    )  # fmt: skip
    review.add_argument(
        "--labels", type=Path, default=Path("review_labels.csv"),
        help="labels CSV answers are appended to (created if absent; default review_labels.csv)",
    )  # fmt: skip
    review.add_argument(
        "--model",
        type=Path,
        default=None,
        help="the model the dedup run or `index add` used (default: bundled)",
    )
    review.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    review.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    review.add_argument("--token", default=None, help="secret the page's URL carries; needed beyond loopback")
    review.add_argument(
        "--retrain", type=Path, default=None, metavar="MODEL",
        help="offer a button that trains a model on the labels (as `label --retrain`) and saves it here",
    )  # fmt: skip
    review.add_argument("--force", action="store_true", help="let --retrain overwrite an existing file")
    common(review)


def listening_socket(host: str, port: int) -> socket.socket:
    """A socket bound to `host`:`port` (0: a free port), or a one-line error saying what to do."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.bind((host, port))
    except OSError as failure:
        sock.close()
        if failure.errno == errno.EADDRINUSE:
            raise JobdedupError(
                f"port {port} is in use; give another --port, or none for a free one"
            ) from None
        raise JobdedupError(
            f"cannot listen on {host}:{port} ({failure.strerror}); check --host and --port"
        ) from None
    sock.listen(128)  # (the printed URL answers as soon as it is printed; requests wait for the app)
    return sock


def check_bind(host: str, token: str | None) -> None:
    """Beyond loopback only with a token (the page writes labels and shows every ad)."""
    from jobdedup.pipeline.service.command import is_loopback

    if not is_loopback(host) and not token:
        raise JobdedupError(f"--host {host} is beyond loopback: give --token SECRET too, or leave --host out")
    if token is not None and (len(token) < 8 or any(c.isspace() for c in token)):
        raise JobdedupError("--token must be at least 8 characters without spaces; choose a longer secret")


def cmd_review(args: argparse.Namespace) -> int:
    """Run `jobdedup review` until interrupted."""
    import uvicorn

    from jobdedup.pipeline.model_files import model_from_args
    from jobdedup.pipeline.review.app import create_review_app
    from jobdedup.pipeline.review.data import ReviewData
    from jobdedup.pipeline.review.labels import LabelStore

    check_bind(args.host, args.token)
    if args.retrain and args.retrain.exists() and not args.force:
        raise JobdedupError(f"{args.retrain}: exists; pass --force to let --retrain overwrite it")
    sock = listening_socket(args.host, args.port)  # (first: a port in use fails before the loading)
    model = model_from_args(args)
    if args.index is not None:
        data = ReviewData.load_index(args.ads, args.index, model)
    else:
        data = ReviewData.load(args.ads, args.out, model)
    store = LabelStore(args.labels)
    port = sock.getsockname()[1]
    shown_host = f"[{args.host}]" if ":" in args.host else args.host
    url = f"http://{shown_host}:{port}/" + (f"#token={args.token}" if args.token else "")
    print(f"review: {len(data.ads)} ads, {len(data.summary)} groups; answers go to {store.path}")
    if store.missing:
        print(f"note: {store.path} has no {', '.join(store.missing)} column(s); those are not written")
    print(f"open {url}  (Ctrl-C stops)", flush=True)
    # The explanations need the ads prepared as dedup prepared them: started now, in the background.
    threading.Thread(target=data.batch, name="prepare-ads", daemon=True).start()
    app = create_review_app(data, store, token=args.token, retrain_to=args.retrain)
    config = uvicorn.Config(app, access_log=False, log_level="warning", timeout_graceful_shutdown=2)
    uvicorn.Server(config).run(sockets=[sock])
    return 0


__all__ = ["add_review_parser", "check_bind", "cmd_review", "listening_socket"]
