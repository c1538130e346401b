"""Grouping time against accepted pairs: `group_ads` (components, the cut of oversized components,
every pair of a component scored, average linkage) and the employer guard, as in `dedup`'s group
stage, on synthetic accepted-pair graphs with a giant chained component.

The graph of N accepted pairs (probabilities from the decision threshold 0.334 up, link threshold
0.5, `max_exact_size` 60, as with the default model): 75 % of the pairs inside vacancies of 2-5
reposts (probabilities rounded to 3 decimals: ties), 2 % of the vacancies with an agency copy
under another employer (half linked by evidence); 5 % chaining links between ads of different
vacancies; 20 % in one giant component of N/5 pairs over N/25 ads (a random tree plus random links,
all probabilities distinct), which only the cut of oversized components breaks. Pairs not accepted
are "scored" by a lookup: 0.95 within a vacancy, 0.1 otherwise. Each size runs in a fresh process
(peak RSS is its own; numba kernels compiled or loaded before the timing); `--old` also runs the
algorithms before issue #14 (kept as references in tests/test_group_cut.py and
tests/test_employer_guard.py) with a time limit and checks that they give the same groups. The
machine is shared: wall times vary with its load (printed); CPU time is the steadier figure.

Run: .venv/bin/python -m benchmarks.group_bench [--pairs 10000 100000 1000000 3000000]
     [--old 10000 100000 1000000] [--old-limit 300]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
ACCEPT, LINK, MAX_EXACT = 0.334, 0.5, 60


def _names(rng: np.random.Generator, k: int) -> np.ndarray:
    """k random 8-letter employer names (no two of them fuzzy-similar in practice)."""
    letters = rng.integers(97, 123, (k, 8), dtype=np.uint8)
    return letters.view("S8").ravel().astype(str).astype(object)


def synthetic(pairs: int, seed: int = 1) -> dict:
    """Accepted pairs `i`, `j`, `probability`, employer links, companies and vacancy of each ad."""
    rng = np.random.default_rng(seed)
    # vacancies of 2-5 reposts: all their pairs accepted
    sizes = rng.choice([2, 2, 2, 3, 3, 4, 5], int(0.75 * pairs / 2.4) + 10)
    sizes = sizes[: int(np.searchsorted(np.cumsum(sizes * (sizes - 1) // 2), 0.75 * pairs)) + 1]
    n_small = int(sizes.sum())
    vacancy = np.repeat(np.arange(len(sizes)), sizes)
    starts = np.cumsum(sizes) - sizes
    left, right = [], []
    for size in np.unique(sizes):
        first = starts[sizes == size]
        a, b = np.triu_indices(int(size), 1)
        left.append((first[:, None] + a[None, :]).ravel())
        right.append((first[:, None] + b[None, :]).ravel())
    i, j = np.concatenate(left), np.concatenate(right)
    p = np.round(rng.uniform(0.6, 1.0, len(i)), 3)
    employer = rng.integers(0, max(1, len(sizes) // 3), len(sizes))
    company_of = employer[vacancy]
    # agency copies: one ad of 2 % of the vacancies under another employer
    agency_vacancies = np.flatnonzero(rng.random(len(sizes)) < 0.02)
    company_of[starts[agency_vacancies]] = rng.integers(0, max(1, len(sizes) // 3), len(agency_vacancies))
    agency_pair = np.isin(i, starts[agency_vacancies]) & (rng.random(len(i)) < 0.5)
    # chaining links between different vacancies
    n_chain = int(0.05 * pairs)
    ci, cj = rng.integers(0, n_small, n_chain), rng.integers(0, n_small, n_chain)
    other = vacancy[ci] != vacancy[cj]
    ci, cj = ci[other], cj[other]
    cp = rng.uniform(ACCEPT, 0.7, len(ci))
    # one giant component: a random tree plus random links over its own ads, distinct probabilities
    n_giant_pairs = pairs - len(i) - len(ci)
    g = max(2, n_giant_pairs // 5)
    child = np.arange(1, g)
    gi = np.concatenate(
        [(rng.random(g - 1) * child).astype(np.int64), rng.integers(0, g, n_giant_pairs - g + 1)]
    )
    gj = np.concatenate([child, rng.integers(0, g, n_giant_pairs - g + 1)])
    gp = rng.permutation(np.linspace(ACCEPT + 1e-6, 0.9999, len(gi)))
    n = n_small + g
    vacancy = np.concatenate([vacancy, len(sizes) + np.arange(g)])
    company_of = np.concatenate([company_of, rng.integers(0, max(1, len(sizes) // 3), g)])
    names = _names(rng, int(company_of.max()) + 1)[company_of]
    names[rng.random(n) < 0.1] = None
    accepted = pd.DataFrame(
        {
            "i": np.concatenate([i, ci, n_small + gi]),
            "j": np.concatenate([j, cj, n_small + gj]),
            "probability": np.concatenate([p, cp, gp]),
        }
    )
    named = pd.notna(names)
    linked = np.flatnonzero(agency_pair & named[i] & named[j] & (names[i] != names[j]))  # as `employer_links`
    links = accepted.iloc[linked][["i", "j"]].reset_index(drop=True)
    return {"n": n, "accepted": accepted, "links": links, "companies": pd.Series(names), "vacancy": vacancy}


def run_one(pairs: int, old: bool) -> dict:
    """Group one synthetic graph in this process; times, sizes and peak RSS as a dict."""
    from jobdedup.pipeline import employer_guard, group

    data = synthetic(pairs)
    vacancy = data["vacancy"]
    cut_seconds = [0.0]
    member_lists = group._member_lists
    guard = employer_guard.split_mixed_employers
    if old:
        from tests.test_employer_guard import _reference_split_mixed_employers, _scipy_components
        from tests.test_group_cut import _reference_average_linkage, _reference_member_lists

        member_lists, guard = _reference_member_lists, _reference_split_mixed_employers
        group._average_linkage = _reference_average_linkage
        employer_guard._components = _scipy_components

    def timed_member_lists(*args):
        start = time.perf_counter()
        out = member_lists(*args)
        cut_seconds[0] += time.perf_counter() - start
        return out

    group._member_lists = timed_member_lists
    # compile (or load the cached) numba kernels outside the timing
    warm = synthetic(2_000, seed=2)
    warm_labels = group.group_ads(
        warm["n"], warm["accepted"], lambda a, b: np.full(len(a), 0.1), LINK, MAX_EXACT
    )
    guard(warm_labels, warm["companies"], warm["accepted"], warm["links"])
    cut_seconds[0] = 0.0
    component = group._components(
        data["n"], data["accepted"]["i"].to_numpy(), data["accepted"]["j"].to_numpy()
    )
    report = group.GroupReport()
    start, cpu_start = time.perf_counter(), time.process_time()
    labels = group.group_ads(
        data["n"],
        data["accepted"],
        lambda a, b: np.where(vacancy[a] == vacancy[b], 0.95, 0.1),
        LINK,
        MAX_EXACT,
        report,
    )
    grouped = time.perf_counter()
    labels, splits = guard(labels, data["companies"], data["accepted"], data["links"])
    done, cpu_done = time.perf_counter(), time.process_time()
    return {
        "pairs": len(data["accepted"]),
        "ads": data["n"],
        "largest_component": int(np.bincount(component).max()),
        "oversized": report.oversized_components,
        "extra_pairs": report.extra_pairs_scored,
        "groups": int(labels.max()) + 1,
        "employer_splits": len(splits),
        "labels_sha256": hashlib.sha256(np.asarray(labels, dtype=np.int64).tobytes()).hexdigest(),
        "cut_s": cut_seconds[0],
        "group_ads_s": grouped - start,
        "guard_s": done - grouped,
        "total_s": done - start,
        "total_cpu_s": cpu_done - cpu_start,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _child(pairs: int, old: bool, limit: float | None) -> dict | None:
    """run_one in a fresh process; None when it passes the time limit."""
    command = [sys.executable, "-m", "benchmarks.group_bench", "--one", str(pairs)] + (
        ["--as-old"] if old else []
    )
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=limit, check=True)
    except subprocess.TimeoutExpired:
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, nargs="+", default=[10_000, 100_000, 1_000_000, 3_000_000])
    parser.add_argument("--old", type=int, nargs="*", default=[], help="sizes to run the pre-#14 way too")
    parser.add_argument(
        "--old-limit", type=float, default=300.0, help="seconds before the old way is stopped"
    )
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--as-old", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.as_old)))
        return
    print(
        f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}"
    )
    print(
        "| accepted pairs | ads | largest component | oversized | pairs scored in grouping | groups (employer splits) | "
        "cut oversized (s) | group_ads (s) | employer guard (s) | grouping (s) | CPU (s) | µs per pair | peak RSS (MB) | "
        "before #14 (s) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for pairs in args.pairs:
        new = _child(pairs, False, None)
        assert new is not None
        if pairs in args.old:
            old = _child(pairs, True, args.old_limit)
            if old is None:
                before = f"> {args.old_limit:.0f} (stopped)"
            else:
                same = "same groups" if old["labels_sha256"] == new["labels_sha256"] else "OTHER GROUPS"
                before = f"{old['total_s']:.2f} ({same})"
        else:
            before = "–"
        print(
            f"| {new['pairs']:,} | {new['ads']:,} | {new['largest_component']:,} | {new['oversized']} | "
            f"{new['extra_pairs']:,} | {new['groups']:,} ({new['employer_splits']:,}) | {new['cut_s']:.2f} | {new['group_ads_s']:.2f} | "
            f"{new['guard_s']:.2f} | {new['total_s']:.2f} | {new['total_cpu_s']:.2f} | "
            f"{1e6 * new['total_s'] / new['pairs']:.2f} | "
            f"{new['peak_rss_mb']:,.0f} | {before} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
