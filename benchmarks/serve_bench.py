"""`jobdedup serve` under load: single-ad check latency over HTTP while another client adds batches.

The index is `benchmarks.index_bench`'s, cached with it in out/index_bench (git-ignored; the first N
ads of the benchmark corpus added through `Index.add` in 100,000-ad batches; built if absent: 7 min
for 1,000,000 ads on 2026-11-29's 2-core VM, 40 min on a loaded day, 25 s for 10,000) and copied
to out/serve_bench, so the run never changes it. The ads checked and added are the corpus's next
10,000 (`index_batch_N.parquet`), whose reposts partly sit in the index: the first half is checked
one ad per request. While checks run, one client adds 1,000-ad batches: with `--adds fresh` (the
default) new vacancies, replicas of the corpus no indexed ad belongs to, with the corpus's reposts
among them; with `--adds repeat` the second half of that file again and again under new ad_ids, so
each round reposts the last and the groups the checks meet grow by a copy a round.

Steps, each bounded in requests and time (the machine is shared; the load average is recorded):
1. start `jobdedup serve --workers W` on a free loopback port; time to ready, memory;
2. sequential single-ad checks (one client, no writes): the service's own latency;
3. closed loop: `--clients` concurrent clients send `--requests` single-ad checks in total, each
   the next as soon as its last is answered, while one more client adds `--add-batch`-ad batches
   back to back: end-to-end latency percentiles. Clients that wait for their answers send less
   when the service slows down, so with 8 clients on 2 cores the latency is ~8 x the CPU per check
   / 2: a throughput figure, not the latency an arriving ad sees;
3b. open loop, for each `--rate R`: `--requests` single-ad checks scheduled at R per second (request
   i at start + i / R), sent by at most `--clients` at once, the same adder running; each latency is
   counted from the request's *scheduled* time, so the time a request waits for a free client (a
   queue) counts too (no coordinated omission);
4. `POST /v1/check` with 1,000 ads, `--batch-repeat` times: ads per second (run before step 3:
   its adds make the groups a check reads back grow by the round, so runs with more adds met more);
5. memory of the service's processes (its `--workers` and their writers): PSS summed (shared
   pages counted once), RSS summed, at start and end, and the peaks of both sampled every second.

Run: .venv/bin/python -m benchmarks.serve_bench --size 1000000 [--requests 5000 --clients 8] [--rate 10 20]
[--adds fresh|repeat] [--write]
(--size 10000 for a quick run; results also in out/serve_bench/results_N.json)
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import itertools
import json
import os
import platform
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "out" / "serve_bench"
FRESH_REPLICA = 10_000  # the first replica the "fresh" adder sends (an index of 1,000,000 ads holds 0-90)
COLUMNS = ("ad_id", "description", "title", "company", "location", "occupation", "contact", "url",
           "posted_at", "source", "language")  # fmt: skip


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _memory(pid: int) -> dict[str, float]:
    """VmRSS and VmHWM (peak) in MB, summed over the process and its children (workers, writers):
    the peak is the sum of each process's own peak, an upper bound of the joint one. Pages several
    processes share (the memory-mapped key parts, `pipeline.index.key_files`) count once per process
    in these sums; `Pss` (proportional set size: a shared page split between its users) counts them
    once in all, the memory the service takes."""
    found = {"VmRSS": 0.0, "VmHWM": 0.0, "Pss": 0.0, "processes": 0}
    for process in [pid, *_children(pid)]:
        with contextlib.suppress(OSError):
            for line in Path(f"/proc/{process}/status").read_text().splitlines():
                if line.startswith(("VmRSS", "VmHWM")):
                    name, value = line.split(":")
                    found[name] = round(found[name] + int(value.split()[0]) / 1024, 1)
            for line in Path(f"/proc/{process}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    found["Pss"] = round(found["Pss"] + int(line.split()[1]) / 1024, 1)
            found["processes"] += 1
    return found


KINDS = ("keys.npy", "[heap]", "[anon]", ".so", "other")


def _kind(path: str) -> str:
    if path.endswith(".npy"):
        return "keys.npy"
    if path in ("[heap]", "[anon]"):
        return path
    return ".so" if ".so" in path else "other"


def pss_by_kind(pid: int) -> dict[int, dict[str, float]]:
    """Per process of the service (`pid` and its descendants): its parent and PSS in MB by kind."""
    found = {}
    for process in [pid, *_children(pid)]:
        kinds: collections.Counter = collections.Counter()
        kind = "other"
        try:
            for line in Path(f"/proc/{process}/smaps").read_text().splitlines():
                fields = line.split()
                if fields and "-" in fields[0] and not fields[0].endswith(":"):  # a mapping's header line
                    kind = _kind(fields[5] if len(fields) > 5 else "[anon]")
                elif fields and fields[0] == "Pss:":
                    kinds[kind] += int(fields[1]) / 1024
            status = Path(f"/proc/{process}/status").read_text()
        except OSError:
            continue
        parent = int(next(line.split()[1] for line in status.splitlines() if line.startswith("PPid:")))
        found[process] = {"parent": parent, **{k: round(kinds[k], 1) for k in KINDS}}
    return found


def _watch_memory(pid: int, peak: dict[str, float], stop: threading.Event) -> None:
    """Keep in `peak` the highest summed VmRSS and Pss seen, sampled every second until `stop`."""
    while not stop.wait(1.0):
        now = _memory(pid)
        for name in ("VmRSS", "Pss"):
            peak[name] = max(peak.get(name, 0.0), now[name])


def _children(pid: int) -> list[int]:
    """Every descendant process of `pid` (Linux /proc; threads and processes that end meanwhile are
    skipped)."""
    direct: list[int] = []
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                direct += [int(c) for c in (task / "children").read_text().split()]
    return [c for child in direct for c in (child, *_children(child))]


def wait_ready(service: subprocess.Popen, url: str, log: Path) -> None:
    """Return once the service answers /healthz; stop if it exited (its log is at `log`)."""
    import httpx

    while True:
        if service.poll() is not None:
            raise SystemExit(f"service exited {service.returncode}; see {log}")
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.5)


def _records(frame) -> list[dict]:
    frame = frame.astype(object).where(frame.notna(), None)
    return [{k: v for k, v in row.items() if k in COLUMNS} for row in frame.to_dict("records")]


def _percentiles(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000
    if not len(ms):
        return {}
    return {
        "n": len(ms),
        "p50_ms": round(float(np.percentile(ms, 50)), 1),
        "p90_ms": round(float(np.percentile(ms, 90)), 1),
        "p99_ms": round(float(np.percentile(ms, 99)), 1),
        "max_ms": round(float(ms.max()), 1),
        "mean_ms": round(float(ms.mean()), 1),
    }


HEADERS = {"Content-Type": "application/json"}


def _load_step(
    url: str,
    singles: list[bytes],
    offset: int,
    batches: Iterator[pd.DataFrame],
    args: argparse.Namespace,
    requests: int,
    rate: float | None,
) -> dict:
    """`requests` single-ad checks (bodies `singles[offset:]`, wrapping) from `args.clients` threads
    while one more client adds the batches of `batches` back to back (`add_batches`).

    Closed loop (`rate` None): each client sends its next check when the last is answered; latency
    = answer - send. Open loop: check i is due at start + i / `rate`; a free client sends it then
    (or as soon as one is free, when all are busy); latency = answer - due time, so waiting for a
    free client counts (no coordinated omission).
    """
    import httpx

    latencies: list[list[float]] = [[] for _ in range(args.clients)]
    late: list[float] = []  # open loop: seconds between due and send, where a client was not free
    errors: list[str] = []
    done = threading.Event()
    next_request = iter(range(requests))
    lock = threading.Lock()
    deadline = time.monotonic() + args.max_seconds

    def checker(k: int) -> None:
        with httpx.Client(base_url=url, headers=HEADERS, timeout=600) as own:
            while time.monotonic() < deadline:
                with lock:
                    i = next(next_request, None)
                if i is None:
                    return
                due = started + i / rate if rate else time.perf_counter()
                if (wait := due - time.perf_counter()) > 0:
                    time.sleep(wait)
                elif rate and wait < -0.001:
                    late.append(-wait)
                answer = own.post("/v1/check", content=singles[(offset + i) % len(singles)])
                latencies[k].append(time.perf_counter() - due)
                if answer.status_code != 200:
                    errors.append(f"{answer.status_code} {answer.text[:200]}")

    adds: list[dict] = []

    def adder() -> None:
        with httpx.Client(base_url=url, headers=HEADERS, timeout=600) as own:
            while not done.is_set():
                body = _records(next(batches))
                t = time.perf_counter()
                answer = own.post("/v1/ads", json=body)
                if answer.status_code != 200:
                    errors.append(f"add {answer.status_code} {answer.text[:200]}")
                    return
                adds.append({"seconds": time.perf_counter() - t, "added": answer.json()["added"]})

    load_before = os.getloadavg()
    writer = threading.Thread(target=adder, daemon=True)
    if args.add_batch:
        writer.start()
    started = time.perf_counter()
    workers = [threading.Thread(target=checker, args=(k,)) for k in range(args.clients)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    elapsed = time.perf_counter() - started
    done.set()
    if args.add_batch:
        writer.join(timeout=600)
    every = [s for part in latencies for s in part]
    return _percentiles(every) | {
        "mode": f"open loop, {rate} checks/s scheduled" if rate else "closed loop",
        "rate": rate,
        "clients": args.clients,
        "requests_asked": requests,
        "seconds": round(elapsed, 1),
        "checks_per_second": round(len(every) / elapsed, 1),
        "sent_late": len(late),
        "sent_late_median_ms": round(float(np.median(late)) * 1000, 1) if late else None,
        "adds_during": len(adds),
        "ads_added_during": int(sum(a["added"] for a in adds)),
        "add_seconds_median": round(float(np.median([a["seconds"] for a in adds])), 2) if adds else None,
        "errors": errors[:5],
        "load_average": [round(x, 2) for x in load_before],
    }


def add_batches(adds: str, add_ads: pd.DataFrame, size: int) -> Iterator[pd.DataFrame]:
    """The adder's endless `size`-ad batches. "repeat": `add_ads` again and again under new ids each
    round, so every round reposts the last one and the groups it touches grow by one copy a round
    (after r rounds each of its ads has r copies: a worst case, heavier re-posting than any crawl).
    "fresh": new vacancies, replicas of the benchmark corpus that no indexed ad is part of
    (`benchmarks.corpus.fresh_batches`), with the corpus's reposts among them, so groups stay the
    corpus's size as in a crawl that keeps bringing new ads."""
    if adds == "fresh":
        from benchmarks.corpus import fresh_batches

        yield from fresh_batches(FRESH_REPLICA, size)
        return
    for round_ in itertools.count():
        for start in range(0, len(add_ads), size):
            part = add_ads.iloc[start : start + size].copy()
            part["ad_id"] = part["ad_id"] + f"~serve{round_}"
            yield part


def key_files_mb(index_path: Path) -> float:
    """Disk use of the index's decoded key parts (`ads.jdx-keys/`: live parts and stale ones not
    yet removed), MB."""
    from jobdedup.pipeline.index.key_files import key_directory

    files = [f for f in key_directory(index_path).rglob("*") if f.is_file()]
    return round(sum(f.stat().st_size for f in files) / 1e6, 1)


def run(args: argparse.Namespace) -> dict:
    import httpx
    import pandas as pd

    from benchmarks.index_bench import build

    index_path, batch_path, build_log = build(args.size, 10_000, args.build_batch)
    OUT.mkdir(parents=True, exist_ok=True)
    work = OUT / f"serve_{args.size}.jdx"
    for leftover in OUT.glob(work.name + "*"):
        shutil.rmtree(leftover) if leftover.is_dir() else leftover.unlink()  # (-keys: decoded key parts)
    shutil.copy(index_path, work)
    ads = pd.read_parquet(batch_path)
    check_ads, add_ads = ads.iloc[:5000].reset_index(drop=True), ads.iloc[5000:].reset_index(drop=True)
    singles = [json.dumps(r).encode() for r in _records(check_ads)]
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = (OUT / "service.log").open("wb")
    began = time.perf_counter()
    service = subprocess.Popen(
        [sys.executable, "-m", "jobdedup.pipeline.cli", "serve", "--index", str(work), "--port", str(port), "--quiet",
         "--workers", str(args.workers), "--slow-check-ms", str(args.slow_check_ms)],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    results: dict = {
        "size": args.size,
        "workers": args.workers,
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
        "load_before": os.getloadavg(),
        "index_bytes": index_path.stat().st_size,
        "index_build": {k: build_log.get(k) for k in ("build_batch", "build_seconds")},
    }
    try:
        wait_ready(service, url, OUT / "service.log")
        results["ready_seconds"] = round(time.perf_counter() - began, 1)
        results["memory_at_start_mb"] = _memory(service.pid)
        results["key_files_mb_at_start"] = key_files_mb(work)
        peak: dict[str, float] = {}
        watching = threading.Event()
        threading.Thread(target=_watch_memory, args=(service.pid, peak, watching), daemon=True).start()
        client = httpx.Client(base_url=url, headers=HEADERS, timeout=600)
        stats = client.get("/v1/stats").json()
        results["index_ads"], results["keys_in_memory"] = stats["ads"], stats["service"]["keys_in_memory"]

        # 2. sequential single-ad checks, no writes
        sequential, decisions = [], {}
        stop_at = time.monotonic() + args.max_seconds / 4
        for body in singles[: args.sequential]:
            t = time.perf_counter()
            answer = client.post("/v1/check", content=body)
            sequential.append(time.perf_counter() - t)
            assert answer.status_code == 200, answer.text
            decision = answer.json()["ads"][0]["decision"]
            decisions[decision] = decisions.get(decision, 0) + 1
            if time.monotonic() > stop_at:
                break
        results["sequential_check"] = _percentiles(sequential) | {"decisions": decisions}
        print("sequential", results["sequential_check"], flush=True)

        # 4. batch checks of 1,000 ads, before the adds of step 3 (which grow the groups it reads back)
        batch_body = json.dumps(_records(check_ads.iloc[: args.batch_ads])).encode()
        batch_seconds = []
        for _ in range(args.batch_repeat):
            t = time.perf_counter()
            answer = client.post("/v1/check", content=batch_body)
            batch_seconds.append(time.perf_counter() - t)
            assert answer.status_code == 200, answer.text
        median = float(np.median(batch_seconds))
        results["batch_check"] = {
            "ads": args.batch_ads,
            "seconds": [round(s, 2) for s in batch_seconds],
            "ads_per_second": round(args.batch_ads / median, 1),
        }
        print("batch", results["batch_check"], flush=True)

        # 3. concurrent single-ad checks while another client adds batches: closed loop, then open loop
        offset, batches = args.sequential, add_batches(args.adds, add_ads, args.add_batch)
        results["adds"] = args.adds
        if args.requests_closed:
            results["concurrent_check"] = _load_step(
                url, singles, offset, batches, args, args.requests_closed, rate=None
            )
            print("concurrent", results["concurrent_check"], flush=True)
            offset += args.requests_closed
        results["open_loop_checks"] = []
        for rate in args.rate:
            results["open_loop_checks"].append(
                _load_step(url, singles, offset, batches, args, args.requests, rate=rate)
            )
            print("open loop", results["open_loop_checks"][-1], flush=True)
            offset += args.requests

        results["memory_at_end_mb"] = _memory(service.pid)
        results["pss_by_process_at_end"] = pss_by_kind(service.pid)
        results["key_files_mb_at_end"] = key_files_mb(work)
        watching.set()
        results["memory_peak_sampled_mb"] = peak
        results["service_stats"] = client.get("/v1/stats").json()["service"]
        results["load_after"] = os.getloadavg()
    finally:
        service.send_signal(signal.SIGTERM)
        try:
            service.wait(timeout=60)
        except subprocess.TimeoutExpired:
            service.kill()
        log.close()
    (OUT / f"results_{args.size}.json").write_text(json.dumps(results, indent=2) + "\n")
    return results


def table(r: dict) -> str:
    """The figures of one run as a Markdown table, beside issue 15's targets."""

    def pct(p: dict) -> str:
        return f"{p['p50_ms']} / {p['p90_ms']} / {p['p99_ms']} / {p['max_ms']} (n = {p['n']:,})" if p else "—"

    load, seq, batch = r.get("concurrent_check"), r["sequential_check"], r["batch_check"]
    start, end, peak = r["memory_at_start_mb"], r["memory_at_end_mb"], r["memory_peak_sampled_mb"]
    memory = (
        f"PSS {start['Pss']:,.0f} at start, {end['Pss']:,.0f} at end, peak {peak['Pss']:,.0f} (sampled); "
        f"RSS summed over {end['processes']} processes {start['VmRSS']:,.0f} / {end['VmRSS']:,.0f} / "
        f"{peak['VmRSS']:,.0f}"
    )
    batch_name = f"`POST /v1/check` of {batch['ads']:,} ads: ads/s (median of {len(batch['seconds'])})"
    rows = [("single-ad check, 1 client, no writes: p50 / p90 / p99 / max ms", pct(seq), "—")]
    for step in ([load] if load else []) + r.get("open_loop_checks", []):
        median = step["add_seconds_median"]
        adds = (
            f"{step['adds_during']} adds ({step['ads_added_during']:,} ads, {r.get('adds', 'repeat')}), "
            f"median {median} s each"
        )
        how = (
            f"open loop, {step['rate']:g} checks/s scheduled, at most {step['clients']} in flight"
            if step.get("rate")
            else f"closed loop, {step['clients']} clients"
        )
        rows += [
            (f"single-ad check, {how}, while 1 client adds 1,000-ad batches: p50 / p90 / p99 / max ms",
             pct(step), "p50 ≤ 20, p99 ≤ 100"),
            ("… checks per second answered; sent late (no client free)",
             f"{step['checks_per_second']}; {step.get('sent_late', 0)}", "—"),
            ("… adds during it", adds, "—"),
        ]  # fmt: skip
    rows += [
        (batch_name, f"{batch['ads_per_second']:,} ({batch['seconds']} s)", "≥ 2,000"),
        (f"service memory ({r['workers']} worker(s) and writers), MB", memory, "≤ 2,000"),
        ("start to ready, s (keys decoded into memory)", f"{r['ready_seconds']}", "—"),
    ]
    if "key_files_mb_at_end" in r:
        rows.append(
            ("decoded key files on disk at start / end, MB",
             f"{r['key_files_mb_at_start']:,.0f} / {r['key_files_mb_at_end']:,.0f}", "—")
        )  # fmt: skip
    index = f"Index of {r['index_ads']:,} ads ({r['index_bytes'] / 1e6:,.0f} MB), {r['keys_in_memory']:,} keys in memory"
    loads = [s["load_average"] for s in ([load] if load else []) + r.get("open_loop_checks", [])]
    lines = [f"{index}; load average {loads} at the load steps.", "", "| measure | figure | target |"]
    lines.append("|---|---|---|")
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=1_000_000, help="indexed ads (multiple of 10,000)")
    parser.add_argument(
        "--build-batch", type=int, default=100_000, help="ads per add when building the index"
    )
    parser.add_argument("--requests", type=int, default=5000, help="single-ad checks under load, in total")
    parser.add_argument(
        "--requests-closed", type=int, default=None, help="closed-loop checks (default --requests; 0: none)"
    )
    parser.add_argument("--clients", type=int, default=8, help="concurrent checking clients (most in flight)")
    parser.add_argument(
        "--rate", type=float, nargs="*", default=[], help="open-loop steps: single-ad checks per second"
    )
    parser.add_argument("--workers", type=int, default=2, help="service processes (`serve --workers`)")
    parser.add_argument(
        "--slow-check-ms", type=float, default=500,
        help="the service logs the steps of checks slower than this (out/serve_bench/service.log)",
    )  # fmt: skip
    parser.add_argument("--sequential", type=int, default=200, help="single-ad checks from one client first")
    parser.add_argument("--add-batch", type=int, default=1000, help="ads per add while checking (0: no adds)")
    parser.add_argument(
        "--adds", choices=("fresh", "repeat"), default="fresh",
        help="what the adder sends: new vacancies (fresh) or the same 5,000 ads again each round (repeat)",
    )  # fmt: skip
    parser.add_argument("--batch-ads", type=int, default=1000, help="ads in one POST /v1/check")
    parser.add_argument("--batch-repeat", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=1200, help="time limit of the load step")
    parser.add_argument("--write", action="store_true", help="print a Markdown table for RESULTS.md")
    args = parser.parse_args()
    args.requests_closed = args.requests if args.requests_closed is None else args.requests_closed
    results = run(args)
    text = table(results)
    print(text)
    if args.write:
        header = (
            f"\n## Service (`jobdedup serve`), {results['size']:,} indexed ads ({results['date']}, "
            f"{results['machine']})\n\n"
            f"`.venv/bin/python -m benchmarks.serve_bench --size {results['size']} --workers {results['workers']} "
            "--write`: HTTP on loopback, clients in the benchmark's process (httpx).\n\n"
        )
        with open(ROOT / "benchmarks" / "RESULTS.md", "a", encoding="utf-8") as handle:
            handle.write(header + text + "\n")


if __name__ == "__main__":
    main()
