"""Throughput and memory of jobdedup beside datasketch, measured in one run (`make bench`).

For each corpus size (built by `benchmarks.corpus` from the real ads in ../shared):
- jobdedup `dedup` end to end (read, prepare = clean + fields + shingles + MinHash, candidates =
  LSH bands + field blocking, score = pair features + LightGBM, group, write) with the engine's
  stage timings and peak memory, each size in a fresh subprocess so the peak is its own;
- jobdedup's text → MinHash → LSH pairs path alone (like for like with datasketch);
- the plain datasketch way: per-shingle `MinHash.update` (sha1), `MinHashLSH.insert` + `query`,
  union-find; it runs at a few hundred ads/s, so it is timed on the first `--plain-sample` ads and
  reported as a rate;
- datasketch's fastest way: `MinHash.bulk` with an xxhash `hashfunc` and an LSH insertion session,
  on up to `--fast-sample` ads (100,000: its objects would not fit in memory at a million).
Both datasketch ways use the same 5-word shingles of `str.lower().split()` and 42 bands × 3 rows.

Run: .venv/bin/python -m benchmarks.bench --sizes 10000 100000 [1000000] [--plot benchmarks/scaling.png]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Self

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
MODEL = ROOT / "models" / "default" / "model.json"
BANDS, ROWS, K = 42, 3, 5


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class TreeMemory:
    """Peak resident memory of this process and all its descendants together (worker processes
    included), sampled every `interval` seconds from /proc in a background thread."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval, self.peak_mb, self._stop = interval, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak_mb = max(self.peak_mb, _tree_rss_mb(os.getpid()))


def _tree_rss_mb(root: int) -> float:
    parent: dict[int, int] = {}
    rss: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                fields = stat[stat.rindex(")") + 2 :].split()
                parent[int(entry.name)], rss[int(entry.name)] = int(fields[1]), int(fields[21])
            except (OSError, ValueError, IndexError):
                continue
    members, frontier = {root}, [root]
    while frontier:
        children = [pid for pid, ppid in parent.items() if ppid in frontier and pid not in members]
        members.update(children)
        frontier = children
    return sum(rss.get(pid, 0) for pid in members) * os.sysconf("SC_PAGE_SIZE") / 2**20


def measure_jobdedup(size: int, jobs: int) -> dict:
    """`jobdedup dedup` work end to end in this process as the CLI does it (read without texts,
    run with descriptions streamed from the file, write outputs), with the engine's own stage
    timings, this process's peak memory and the peak of all processes (workers included)
    together (called in a subprocess)."""
    import tempfile

    from benchmarks.corpus import ensure
    from jobdedup.pipeline.engine import Deduplicator
    from jobdedup.pipeline.io import read_ads_streamed
    from jobdedup.pipeline.model_files import write_outputs

    path = ensure(size)
    model = Deduplicator.load(MODEL).with_config(show_progress=False, jobs=jobs)
    with TreeMemory() as memory:
        start = time.perf_counter()
        ads, descriptions = read_ads_streamed(path, chunk_size=model.config.chunk_size)
        read_seconds = time.perf_counter() - start
        result = model.run(ads, keep_text=False, descriptions=descriptions)
        with tempfile.TemporaryDirectory() as out:
            t = time.perf_counter()
            write_outputs(result.pairs, result.groups, Path(out))
            write_seconds = time.perf_counter() - t
        total = time.perf_counter() - start
    timings = {"read": read_seconds, **result.timings, "write": write_seconds, "dedup_end_to_end": total}
    return {
        "size": size,
        "pairs": len(result.pairs),
        "timings": timings,
        "peak_mb": _peak_mb(),
        "peak_all_mb": memory.peak_mb,
    }


def measure_sketch_lsh(size: int, jobs: int) -> dict:
    """Like for like with datasketch: text → shingles → MinHash → LSH candidate pairs, nothing else."""
    from benchmarks.corpus import ensure
    from jobdedup.pipeline.candidates import lsh_candidates
    from jobdedup.pipeline.config import Config
    from jobdedup.pipeline.sketch import sketch_texts

    cfg = Config()
    texts = pd.read_parquet(ensure(size), columns=["description"])["description"].fillna("").tolist()
    sketch_texts(texts[:100], cfg.shingle_size, cfg.num_perm, cfg.seed, jobs=jobs)  # compiled code loaded
    t = time.perf_counter()
    signatures = sketch_texts(texts, cfg.shingle_size, cfg.num_perm, cfg.seed, jobs=jobs)
    lsh_candidates(signatures, cfg.lsh_bands, cfg.lsh_rows, cfg.max_bucket_size)
    return {"size": size, "sketch_lsh": time.perf_counter() - t, "peak_mb": _peak_mb()}


def _shingles(text: str) -> list[bytes]:
    words = text.lower().split()
    if len(words) < K:
        return [" ".join(words).encode()] if words else []
    return [" ".join(words[i : i + K]).encode() for i in range(len(words) - K + 1)]


def _union_find_groups(n: int, pairs: list[tuple[int, int]]) -> int:
    parent = list(range(n))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[ra] = rb
    return len({find(x) for x in range(n)})


def measure_datasketch(size: int, plain_sample: int, fast_sample: int) -> dict:
    """The plain and the fastest datasketch ways (called in a subprocess)."""
    import xxhash
    from datasketch import MinHash, MinHashLSH

    from benchmarks.corpus import ensure

    texts = pd.read_parquet(ensure(size), columns=["description"])["description"].fillna("").tolist()
    out: dict = {"size": size}
    # Plain: per-shingle update (sha1) + MinHashLSH insert/query + union-find, on a sample.
    sample = texts[:plain_sample]
    t = time.perf_counter()
    lsh = MinHashLSH(num_perm=BANDS * ROWS, params=(BANDS, ROWS))
    sketches = []
    for i, text in enumerate(sample):
        m = MinHash(num_perm=BANDS * ROWS)
        for shingle in _shingles(text):
            m.update(shingle)
        sketches.append(m)
        lsh.insert(str(i), m)
    pairs = [(i, int(j)) for i, m in enumerate(sketches) for j in lsh.query(m) if int(j) > i]
    _union_find_groups(len(sample), pairs)
    out["plain_seconds"] = time.perf_counter() - t
    out["plain_ads"] = len(sample)
    # Fastest: bulk with xxhash + insertion session + union-find, on up to `fast_sample` ads
    # (its Python objects take ~60 KB per ad: a million would not fit in memory).
    texts = texts[:fast_sample]
    t = time.perf_counter()
    shingle_lists = [_shingles(text) for text in texts]
    minhashes = MinHash.bulk(shingle_lists, num_perm=BANDS * ROWS, hashfunc=xxhash.xxh32_intdigest)
    lsh = MinHashLSH(num_perm=BANDS * ROWS, params=(BANDS, ROWS))
    with lsh.insertion_session() as session:
        for i, m in enumerate(minhashes):
            session.insert(str(i), m)
    pairs = [(i, int(j)) for i, m in enumerate(minhashes) for j in lsh.query(m) if int(j) > i]
    _union_find_groups(len(texts), pairs)
    out["fast_seconds"] = time.perf_counter() - t
    out["fast_ads"] = len(texts)
    out["peak_mb"] = _peak_mb()
    return out


def _in_subprocess(kind: str, size: int, extra: list[str]) -> dict:
    command = [sys.executable, "-m", "benchmarks.bench", "--one", kind, str(size), *extra]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(rows: list[dict]) -> str:
    """Markdown tables of the measurements with rates and ratios."""
    lines = [
        "| ads | way | text → MinHash → LSH pairs | ads/s | peak memory | ratio |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        k, d = row["sketch"], row["datasketch"]
        ours_rate = k["size"] / k["sketch_lsh"]
        fast_rate = d["fast_ads"] / d["fast_seconds"]
        plain_rate = d["plain_ads"] / d["plain_seconds"]
        lines += [
            (
                f"| {k['size']:,} | jobdedup (compiled tokenise, shingle, MinHash, band keys) | "
                f"{k['sketch_lsh']:.1f} s | {ours_rate:,.0f} | {k['peak_mb']:,.0f} MB | 1× |"
            ),
            (
                f"| {k['size']:,} | datasketch bulk + xxhash + insertion session (on {d['fast_ads']:,} ads) | "
                f"{d['fast_seconds']:.1f} s | {fast_rate:,.0f} | {d['peak_mb']:,.0f} MB | "
                f"jobdedup {ours_rate / fast_rate:.1f}× faster |"
            ),
            (
                f"| {k['size']:,} | datasketch update + MinHashLSH (on {d['plain_ads']:,} ads) | "
                f"{d['plain_seconds']:.1f} s | {plain_rate:,.0f} | – | jobdedup {ours_rate / plain_rate:.0f}× faster |"
            ),
        ]
    lines += [
        "",
        (
            "| ads | candidate pairs | read | prepare | candidates | score | group | write "
            "| dedup end to end | peak memory, main process | peak memory, all processes |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        j = row["jobdedup"]
        t = j["timings"]
        lines.append(
            f"| {j['size']:,} | {j['pairs']:,} | {t['read']:.1f} s | {t['prepare']:.1f} s | "
            f"{t['candidates']:.1f} s | {t['score']:.1f} s | {t['group']:.1f} s | {t['write']:.1f} s | "
            f"{t['dedup_end_to_end']:.1f} s | {j['peak_mb']:,.0f} MB | {j['peak_all_mb']:,.0f} MB |"
        )
    return "\n".join(lines)


def plot(rows: list[dict], path: Path) -> None:
    """Time against corpus size, log-log, beside a linear reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = np.array([r["jobdedup"]["size"] for r in rows])
    total = np.array([r["jobdedup"]["timings"]["dedup_end_to_end"] for r in rows])
    fast = np.array(
        [r["datasketch"]["fast_seconds"] * r["jobdedup"]["size"] / r["datasketch"]["fast_ads"] for r in rows]
    )
    plain = np.array(
        [
            r["datasketch"]["plain_seconds"] * r["jobdedup"]["size"] / r["datasketch"]["plain_ads"]
            for r in rows
        ]
    )
    fig, ax = plt.subplots(figsize=(6, 4))
    sketch = np.array([r["sketch"]["sketch_lsh"] for r in rows])
    ax.loglog(sizes, total, "o-", label="jobdedup dedup, end to end")
    ax.loglog(sizes, sketch, "o--", label="jobdedup sketch+LSH only")
    ax.loglog(sizes, fast, "s--", label="datasketch bulk+session (sketch+LSH only, rate × size)")
    ax.loglog(sizes, plain, "^:", label="datasketch update+LSH (rate × size)")
    ax.loglog(sizes, total[0] * sizes / sizes[0], color="grey", lw=0.8, label="linear from the smallest")
    ax.set_xlabel("ads")
    ax.set_ylabel("seconds (2 cores)")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--plain-sample", type=int, default=2_000)
    parser.add_argument("--fast-sample", type=int, default=100_000)
    parser.add_argument("--plot", type=Path, default=ROOT / "benchmarks" / "scaling.png")
    parser.add_argument("--json", type=Path, default=ROOT / "out" / "bench" / "results.json")
    parser.add_argument("--one", nargs=2, metavar=("KIND", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        kind, size = args.one[0], int(args.one[1])
        if kind == "jobdedup":
            result = measure_jobdedup(size, args.jobs)
        elif kind == "sketch":
            result = measure_sketch_lsh(size, args.jobs)
        else:
            result = measure_datasketch(size, args.plain_sample, args.fast_sample)
        print(json.dumps(result))
        return
    print(
        f"machine: {platform.node()} {platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}"
    )
    rows = []
    for size in args.sizes:
        print(f"measuring {size:,} ads ...", file=sys.stderr)
        rows.append(
            {
                "jobdedup": _in_subprocess("jobdedup", size, ["--jobs", str(args.jobs)]),
                "sketch": _in_subprocess("sketch", size, ["--jobs", str(args.jobs)]),
                "datasketch": _in_subprocess(
                    "datasketch",
                    size,
                    ["--plain-sample", str(args.plain_sample), "--fast-sample", str(args.fast_sample)],
                ),
            }
        )
    print(table(rows))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(rows, indent=2))
    plot(rows, args.plot)
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
