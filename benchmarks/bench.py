"""`make bench`: jobdedup against the plain datasketch way, and at scale on the stress corpus, in one run.

1. A 50,000-ad corpus (`benchmarks.corpus`, real ads replicated): the `jobdedup dedup` command as
   a user runs it (a fresh process, start-up, reading and writing included), timed from outside,
   beside the plain datasketch way: per-shingle `MinHash.update` (sha1), `MinHashLSH.insert` +
   `query`, union-find. That way runs at a few hundred ads/s, so it is timed on the first
   `--plain-sample` ads and reported as a rate. Like for like, the text -> MinHash -> LSH pairs
   step alone of both, and datasketch's fastest way (`MinHash.bulk` with xxhash and an insertion
   session, on up to `--fast-sample` ads). Both datasketch ways use 5-word shingles of
   `str.lower().split()` and 42 bands x 3 rows.
2. The stress corpus of `../shared/bench/make_stress_corpus.py` (vacancies spliced from random
   sentences of the real ads, 40 % edited reposts) at 200,000 and 1,000,000 ads: `dedup`'s work as
   the command does it (descriptions streamed from the file), with its stage timings, scoring
   rate, peak memory of all processes, the largest groups and the share of planted reposts that
   end in their original's group.

Each measurement runs in its own process, so its peak memory is its own. Corpora are built into
out/bench/ on first use (needs ../shared).

Run: .venv/bin/python -m benchmarks.bench [--corpus-size 50000] [--stress-sizes 200000 1000000]
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
OUT = ROOT / "out" / "bench"
STRESS_GENERATOR = ROOT.parent / "shared" / "bench" / "make_stress_corpus.py"
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


def measure_jobdedup(path: Path, jobs: int) -> dict:
    """`jobdedup dedup`'s work end to end in this process as the command does it (read without
    texts, run with descriptions streamed from the file, write outputs), with the engine's stage
    timings and the peak memory of all processes together (workers included); the groups are
    kept in out/bench/ for `stress_outcome` (called in a subprocess)."""
    import tempfile

    from jobdedup.pipeline.engine import Deduplicator
    from jobdedup.pipeline.io import read_ads_streamed
    from jobdedup.pipeline.model_files import write_outputs

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
    result.groups[["ad_id", "group_id", "group_size"]].to_parquet(_groups_path(path))
    timings = {"read": read_seconds, **result.timings, "write": write_seconds, "dedup_end_to_end": total}
    return {
        "ads": len(result.groups),
        "pairs": len(result.pairs),
        "timings": timings,
        "peak_all_mb": memory.peak_mb,
    }


def _groups_path(ads_path: Path) -> Path:
    return OUT / f"{ads_path.stem}.groups.parquet"


def measure_cli(path: Path, jobs: int) -> dict:
    """The `jobdedup dedup` command on `path` in a fresh process, timed from outside (start-up,
    imports, reading and writing included), with the peak memory of its processes."""
    import tempfile

    command = [str(Path(sys.executable).with_name("jobdedup")), "dedup", "--ads", str(path)]
    with tempfile.TemporaryDirectory() as out, TreeMemory() as memory:
        start = time.perf_counter()
        subprocess.run([*command, "--out", out, "--jobs", str(jobs), "--quiet"], check=True, cwd=ROOT)
        seconds = time.perf_counter() - start
    return {
        "ads": len(pd.read_parquet(path, columns=["ad_id"])),
        "seconds": seconds,
        "peak_all_mb": memory.peak_mb,
    }


def ensure_stress(size: int) -> Path:
    """out/bench/stress_SIZE.parquet (and its .truth.parquet), built by ../shared's generator."""
    path = OUT / f"stress_{size}.parquet"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        print(f"building the stress corpus of {size:,} ads ...", file=sys.stderr)
        subprocess.run([sys.executable, str(STRESS_GENERATOR), str(size), str(path)], check=True)
    return path


def stress_outcome(path: Path) -> dict:
    """Group sizes of a measured stress run and the share of planted reposts (the generator's
    truth: repost, original) that share their original's group."""
    groups = pd.read_parquet(_groups_path(path))
    truth = pd.read_parquet(path.with_name(path.stem + ".truth.parquet"))
    group_of = pd.Series(groups["group_id"].to_numpy(), index=groups["ad_id"].astype(str))
    together = group_of.reindex(truth["ad_id"]).to_numpy() == group_of.reindex(truth["repost_of"]).to_numpy()
    sizes = groups.drop_duplicates("group_id")["group_size"]
    return {
        "largest_group": int(sizes.max()),
        "groups_over_25": int((sizes > 25).sum()),
        "reposts_grouped": float(together.mean()),
        "reposts": len(truth),
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


def _in_subprocess(kind: str, target: object, extra: list[str]) -> dict:
    command = [sys.executable, "-m", "benchmarks.bench", "--one", kind, str(target), *extra]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(done.stdout.strip().splitlines()[-1])


def corpus_table(size: int, cli: dict, sketch: dict, plain: dict) -> str:
    """The 50,000-ad comparison: jobdedup against the plain and the fastest datasketch ways."""
    plain_rate = plain["plain_ads"] / plain["plain_seconds"]
    fast_rate = plain["fast_ads"] / plain["fast_seconds"]
    cli_rate = size / cli["seconds"]
    sketch_rate = size / sketch["sketch_lsh"]
    return "\n".join(
        [
            f"| {size:,} ads | seconds | ads/s | peak memory | jobdedup's lead |",
            "|---|---:|---:|---:|---:|",
            (
                f"| `jobdedup dedup`, the command end to end (start-up included) | {cli['seconds']:.1f} | "
                f"{cli_rate:,.0f} | {cli['peak_all_mb']:,.0f} MB | |"
            ),
            (
                f"| plain datasketch: update + MinHashLSH + union-find (rate of {plain['plain_ads']:,} ads) | "
                f"{size / plain_rate:.0f} | {plain_rate:,.0f} | | **{cli_rate / plain_rate:.1f}×** |"
            ),
            (
                f"| jobdedup text → MinHash → LSH pairs alone | {sketch['sketch_lsh']:.1f} | {sketch_rate:,.0f} | "
                f"{sketch['peak_mb']:,.0f} MB | |"
            ),
            (
                f"| datasketch bulk + xxhash + insertion session, same step (rate of {plain['fast_ads']:,} ads) | "
                f"{size / fast_rate:.1f} | {fast_rate:,.0f} | {plain['peak_mb']:,.0f} MB | {sketch_rate / fast_rate:.1f}× |"
            ),
        ]
    )


def stress_table(rows: list[dict]) -> str:
    """Stage timings, memory and groups of `dedup` on the stress corpus at each size."""
    lines = [
        (
            "| ads | candidate pairs | read | prepare | candidates | score | group | write | end to end "
            "| peak memory (all processes) | largest group | groups > 25 | planted reposts grouped |"
        ),
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        t, ads, pairs = row["timings"], row["ads"], row["pairs"]
        lines.append(
            f"| {ads:,} | {pairs:,} ({pairs / ads:.1f} per ad) | {t['read']:.1f} s | {t['prepare']:.1f} s "
            f"({ads / t['prepare']:,.0f} ads/s) | {t['candidates']:.1f} s | {t['score']:.1f} s "
            f"({pairs / max(t['score'], 1e-9) / 1000:,.0f} k pairs/s) | {t['group']:.1f} s | {t['write']:.1f} s | "
            f"**{t['dedup_end_to_end']:.1f} s** | {row['peak_all_mb'] / 1024:.1f} GB | {row['largest_group']} | "
            f"{row['groups_over_25']} | {row['reposts_grouped']:.3f} of {row['reposts']:,} |"
        )
    return "\n".join(lines)


def plot(size: int, cli: dict, plain: dict, stress: list[dict], path: Path) -> None:
    """End-to-end seconds against ads, log-log: the command at 50,000, the stress corpus, and the
    plain datasketch way's rate times the size (its sketch and LSH only)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plain_rate = plain["plain_ads"] / plain["plain_seconds"]
    sizes = np.array([size] + [row["ads"] for row in stress])
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog([size], [cli["seconds"]], "o", label="jobdedup dedup command, replicated real ads")
    if stress:
        ax.loglog(
            [row["ads"] for row in stress],
            [row["timings"]["dedup_end_to_end"] for row in stress],
            "s-",
            label="jobdedup dedup, stress corpus",
        )
    ax.loglog(sizes, sizes / plain_rate, "^:", label="plain datasketch way (its rate × ads)")
    ax.set_xlabel("ads")
    ax.set_ylabel("seconds (2 cores)")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", lw=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def _measure_one(kind: str, target: str, args: argparse.Namespace) -> dict:
    """One measurement in this process (`--one KIND TARGET`)."""
    if kind == "jobdedup":
        path = Path(target)
        return measure_jobdedup(path, args.jobs)
    if kind == "cli":
        return measure_cli(Path(target), args.jobs)
    if kind == "sketch":
        return measure_sketch_lsh(int(target), args.jobs)
    return measure_datasketch(int(target), args.plain_sample, args.fast_sample)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--corpus-size", type=int, default=50_000, help="replicated real ads (default 50,000)"
    )
    parser.add_argument("--stress-sizes", type=int, nargs="*", default=[200_000, 1_000_000])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--plain-sample", type=int, default=5_000)
    parser.add_argument("--fast-sample", type=int, default=50_000)
    parser.add_argument("--plot", type=Path, default=ROOT / "benchmarks" / "scaling.png")
    parser.add_argument("--json", type=Path, default=OUT / "results.json")
    parser.add_argument("--one", nargs=2, metavar=("KIND", "TARGET"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(_measure_one(*args.one, args)))
        return
    from benchmarks.corpus import ensure

    print(
        f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    jobs = ["--jobs", str(args.jobs)]
    size = args.corpus_size
    print(f"measuring {size:,} replicated ads ...", file=sys.stderr)
    cli = _in_subprocess("cli", ensure(size), jobs)
    sketch = _in_subprocess("sketch", size, jobs)
    plain = _in_subprocess(
        "datasketch", size, ["--plain-sample", str(args.plain_sample), "--fast-sample", str(args.fast_sample)]
    )
    print(corpus_table(size, cli, sketch, plain))
    stress = []
    for stress_size in args.stress_sizes:
        path = ensure_stress(stress_size)
        print(f"measuring {stress_size:,} stress ads ...", file=sys.stderr)
        stress.append({**_in_subprocess("jobdedup", path, jobs), **stress_outcome(path)})
    if stress:
        print()
        print(stress_table(stress))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(
        json.dumps({"corpus": {"cli": cli, "sketch": sketch, "plain": plain}, "stress": stress}, indent=2)
    )
    plot(size, cli, plain, stress, args.plot)
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
