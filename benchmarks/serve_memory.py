"""Where `jobdedup serve --workers 2`'s memory goes: PSS per process and per kind of mapping.

`serve_bench` sums the service's memory; this says whose it is. On a copy of `index_bench`'s index
(out/index_bench/index_N.jdx, built there if absent; copied to out/serve_memory), it starts the
service, then takes PSS (`/proc/PID/smaps`: shared pages split between their users) of each
process — the supervisor, its workers, writer children — split into the mapped key files
(`*.npy`), the heap, other anonymous memory and shared libraries, at three moments: after start,
after `--checks` single-ad checks, and after `--adds` adds of 1,000 ads each sent on a fresh
connection (so they reach both workers, as adds from several ingesting clients do) followed by as
many checks again.

Run: .venv/bin/python -m benchmarks.serve_memory --size 1000000 [--checks 100 --adds 6]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pandas as pd

from benchmarks.index_bench import BUILD_BATCH, build
from benchmarks.serve_bench import KINDS, _free_port, _records, pss_by_kind, wait_ready

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "serve_memory"


def _table(moment: str, service_pid: int, found: dict[int, dict[str, float]], writers: set[int]) -> list[str]:
    """Rows of the table; `writers`: the writer children's pids as the workers report them (a
    writer started by a worker, as before `WriterBroker`, is told by its parent)."""
    rows = []
    for process, figures in found.items():
        if process == service_pid:
            role = "supervisor"
        else:
            role = "writer" if process in writers or figures["parent"] != service_pid else "worker"
        total = sum(figures[k] for k in KINDS)
        if total < 20:  # (multiprocessing's resource tracker)
            continue
        cells = " | ".join(f"{figures[k]:,.0f}" for k in KINDS)
        rows.append(f"| {moment} | {process} ({role}, parent {figures['parent']}) | {cells} | {total:,.0f} |")
    total = sum(sum(f[k] for k in KINDS) for f in found.values())
    rows.append(f"| {moment} | **all {len(found)} processes** | | | | | | **{total:,.0f}** |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=1_000_000, help="indexed ads")
    parser.add_argument("--checks", type=int, default=100, help="single-ad checks before and after the adds")
    parser.add_argument("--adds", type=int, default=6, help="1,000-ad adds, each on a fresh connection")
    args = parser.parse_args()
    index_path, batch_path, _ = build(args.size, 10_000, BUILD_BATCH)
    OUT.mkdir(parents=True, exist_ok=True)
    work = OUT / f"serve_{args.size}.jdx"
    for old in OUT.glob(f"serve_{args.size}.jdx*"):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    shutil.copyfile(index_path, work)
    ads = pd.read_parquet(batch_path)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "jobdedup.pipeline.cli", "serve", "--index", str(work), "--port", str(port),
               "--quiet", "--workers", "2"]  # fmt: skip
    with (OUT / "service.log").open("wb") as log:
        service = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_ready(service, url, OUT / "service.log")
        lines = _table("started", service.pid, pss_by_kind(service.pid), set())
        with httpx.Client(base_url=url, timeout=600) as client:
            for i in range(args.checks):
                client.post("/v1/check", json=_records(ads.iloc[[i]]))
        lines += _table(f"{args.checks} checks", service.pid, pss_by_kind(service.pid), set())
        for r in range(args.adds):
            part = ads.iloc[r * 1000 : (r + 1) * 1000].copy()
            part["ad_id"] = part["ad_id"] + f"-memory-{r}"
            with httpx.Client(base_url=url, timeout=600) as fresh:
                assert fresh.post("/v1/ads", json=_records(part)).status_code == 200
        with httpx.Client(base_url=url, timeout=600) as client:
            for i in range(args.checks):
                client.post("/v1/check", json=_records(ads.iloc[[args.checks + i]]))
            writers = {client.get("/v1/stats").json()["service"].get("writer_process")}
        found = pss_by_kind(service.pid)
        lines += _table(f"+ {args.adds} adds, {args.checks} checks", service.pid, found, writers)
    finally:
        service.terminate()
        service.wait(timeout=60)
    print(
        f"PSS in MB, {args.size:,} indexed ads, `serve --workers 2` ({time.strftime('%Y-%m-%d %H:%M %Z')})\n"
    )
    print("| moment | process | key files | heap | other anonymous | libraries | other | total |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
