"""Make labelled duplicate data from real job ads: distinct real vacancies, synthetic reposts, hard negatives.

    python -m labelling.make_labels --ads ../shared/data/real_ads.parquet --out DIR [--n-base N] [--seed S]
                               [--test-corpora C1 C2 ...]

1. Real ads are clustered into vacancies (5-word-shingle Jaccard >= 0.3 of descriptions, or the same
   normalised title + company); one ad per cluster may become a base ad, so no two bases are the same job.
2. The split is by corpus: test corpora never share a vacancy or a (normalised) company with train ones.
3. Each base gets 0-4 reposts (`labelling.reposts`) and sometimes a hard negative (`labelling.negatives`), which
   is its own vacancy and may be reposted as well.
Output per split: `<split>_ads.parquet` (contract columns + `corpus`, `origin`) and
`<split>_labels.parquet` (`ad_id`, `group_id`), all columns strings, zstd.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from datasketch import MinHash, MinHashLSH
from rapidfuzz import fuzz, process

from labelling import textops as tx
from labelling.negatives import make_negative
from labelling.places import towns_by_country
from labelling.reposts import GENDER_RE, LEGAL_RE, context_of, make_repost

COLUMNS = [
    "ad_id",
    "title",
    "company",
    "location",
    "occupation",
    "contact",
    "url",
    "description",
    "posted_at",
    "source",
    "language",
    "corpus",
    "origin",
]
DEFAULT_TEST_CORPORA = [
    "jobspy_yshauly_israel",
    "jobspy_milanakdj_toronto",
    "jobspy_mrtrkmn_germany",
    "jobspy_elkaza_austria",
    "jobspy_fr_paris",
    "jobspy_multisite_bangalore",
    "jobspy_martadatauk_uk",
]
REPOSTS_P = [0.58, 0.16, 0.12, 0.09, 0.05]  # number of reposts 0..4 of a base ad
NEG_REPOSTS_P = [0.6, 0.3, 0.1]  # number of reposts 0..2 of a hard negative
NEGATIVE_RATE = 0.35
SHORT_SHARE = 0.03
DONOR_SHARE = 0.2
MIN_DESC = 300


# ---------------------------------------------------------------- normalisation and clusters
def norm_name(text: str | None) -> str:
    """Lower-case title/company without gender tags, punctuation and legal suffixes."""
    t = GENDER_RE.sub(" ", text if isinstance(text, str) else "")
    for _ in range(2):
        t = LEGAL_RE.sub("", t.strip())
    t = re.sub(r"[^\w]+", " ", t.lower())
    t = re.sub(r"\b(ltd|limited|gmbh|inc|llc|plc|bv|b v|ag|corp|co|sas|pvt)\b", " ", t)
    return " ".join(t.split())


def read_ads(path: str | Path) -> pd.DataFrame:
    """Read an ads table (parquet/csv/jsonl) as object columns with None for missing."""
    path = Path(path)
    if path.suffix == ".parquet":
        df = pd.read_parquet(path)
    elif path.suffix == ".jsonl":
        df = pd.read_json(path, lines=True, dtype=str)
    else:
        df = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])
    df = df.astype(object)
    return df.where(df.notna(), None)


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, i: int, j: int) -> None:
        a, b = sorted((self.find(i), self.find(j)))
        self.parent[b] = a


def vacancy_clusters(ads: pd.DataFrame, threshold: float = 0.3) -> np.ndarray:
    """Cluster id per row: rows joined by description Jaccard >= threshold or same title+company key."""
    n = len(ads)
    uf = _UnionFind(n)
    sets = [tx.shingles(d) if d and len(d) >= 50 else set() for d in ads["description"]]
    lsh = MinHashLSH(threshold=max(0.1, threshold - 0.1), num_perm=64)
    for i, s in enumerate(sets):
        if not s:
            continue
        m = MinHash(num_perm=64, seed=7)
        m.update_batch([" ".join(x).encode("utf8") for x in s])
        for j in sorted(lsh.query(m)):
            if len(s & sets[j]) / len(s | sets[j]) >= threshold:
                uf.union(i, j)
        lsh.insert(i, m)
    keys: dict[str, int] = {}
    for i, (t, c) in enumerate(zip(ads["title"], ads["company"])):
        key = f"{norm_name(t)}|{norm_name(c)}"
        if norm_name(t) and norm_name(c):
            uf.union(i, keys.setdefault(key, i))
    return np.array([uf.find(i) for i in range(n)])


def representatives(ads: pd.DataFrame, clusters: np.ndarray) -> pd.DataFrame:
    """One row per cluster: the member with the longest description (ties: smallest ad_id)."""
    df = ads.assign(_cluster=clusters, _len=ads["description"].map(lambda d: len(d or "")))
    df = df.sort_values(["_cluster", "_len", "ad_id"], ascending=[True, False, True], kind="mergesort")
    return df.drop_duplicates("_cluster").drop(columns=["_len"])


# ---------------------------------------------------------------- split
def split_candidates(ads: pd.DataFrame, test_corpora: list[str]) -> dict[str, pd.DataFrame]:
    """Cluster representatives per split; a test cluster must not touch train corpora or companies."""
    clusters = vacancy_clusters(ads)
    is_test = ads["corpus"].isin(test_corpora).to_numpy()
    touches_train = pd.Series(~is_test).groupby(clusters).any()
    train_companies = {norm_name(c) for c in ads.loc[~is_test, "company"] if norm_name(c)}
    train = representatives(ads[~is_test], clusters[~is_test])
    test = representatives(ads[is_test], clusters[is_test])
    test = test[~test["_cluster"].map(touches_train).astype(bool)]
    test = test[~test["company"].map(lambda c: norm_name(c) in train_companies)]
    return {"train": train.reset_index(drop=True), "test": test.reset_index(drop=True)}


# ---------------------------------------------------------------- generation
def choose_bases(
    cands: pd.DataFrame, n_base: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(bases, donors): ~3 % short/empty-description bases, the rest long; donors are reserved long ads
    never output themselves. Sampling down-weights big corpora (weight 1/sqrt(corpus size))."""
    length = cands["description"].map(lambda d: len((d or "").strip()))
    long_c, short_c = cands[length >= MIN_DESC], cands[length < MIN_DESC]
    order = rng.permutation(len(long_c))
    n_donor = int(round(len(long_c) * DONOR_SHARE))
    donors, pool = long_c.iloc[order[:n_donor]], long_c.iloc[order[n_donor:]]
    n_base = len(pool) + len(short_c) if n_base <= 0 else n_base
    n_short = min(len(short_c), int(round(n_base * SHORT_SHARE)))
    n_long = min(len(pool), n_base - n_short)
    picked = [_weighted_sample(pool, n_long, rng), _weighted_sample(short_c, n_short, rng)]
    return pd.concat(picked, ignore_index=True), donors.reset_index(drop=True)


def _weighted_sample(df: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """n rows without replacement, weight 1/sqrt(rows of the same corpus)."""
    if n >= len(df):
        return df
    w = 1.0 / np.sqrt(df["corpus"].map(df["corpus"].value_counts()).to_numpy(dtype=float))
    idx = rng.choice(len(df), size=n, replace=False, p=w / w.sum())
    return df.iloc[np.sort(idx)]


def _pick_donor(ad: dict, donors: list[dict], used: set[int], rng: np.random.Generator) -> int | None:
    """Index of an unused donor of the same country; for half of the calls the one with the most
    similar title among 40 random ones."""
    country = context_of(ad).country
    lang = ad.get("language")
    same = [
        i
        for i in rng.permutation(len(donors)).tolist()
        if i not in used
        and donors[i]["_country"] == country
        and (not lang or donors[i].get("language") in {lang, None})
    ]
    free = same[:40]
    if not free:
        return None
    if rng.random() < 0.5 and ad.get("title"):
        titles = [donors[i].get("title") or "" for i in free]
        best = process.extractOne(ad["title"], titles, scorer=fuzz.token_set_ratio)
        return free[best[2]] if best else free[0]
    return free[0]


def _with_reposts(ad: dict, n: int, gid: str, rng: np.random.Generator) -> list[dict]:
    """The ad followed by n reposts of it, all in group gid."""
    rows = [dict(ad, _group=gid)]
    for k in range(1, n + 1):
        new, ops = make_repost(ad, rng)
        rows.append(
            dict(new, ad_id=f"{ad['ad_id']}#r{k}", origin=f"repost:{ops}", _group=gid, _parent=ad["ad_id"])
        )
    return rows


def generate(
    real_ads: pd.DataFrame,
    n_base: int,
    seed: int,
    *,
    split: str = "all",
    candidates: pd.DataFrame | None = None,
    towns: dict | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(ads, labels) for one split built from real_ads (or from precomputed cluster `candidates`).

    n_base <= 0 uses every available base ad.
    """
    rng = np.random.default_rng(seed)
    real_ads = real_ads.astype(object).where(real_ads.notna(), None)
    if candidates is None:
        candidates = representatives(real_ads, vacancy_clusters(real_ads))
    towns = (
        towns if towns is not None else towns_by_country(list(real_ads["location"]), list(real_ads["corpus"]))
    )
    bases, donor_df = choose_bases(candidates, n_base, rng)
    donors = [dict(d, _country=context_of(d).country) for d in donor_df.to_dict("records")]
    used: set[int] = set()
    rows: list[dict] = []
    for ad in bases.to_dict("records"):
        ad = {c: ad.get(c) for c in COLUMNS} | {"origin": "real"}
        rows += _with_reposts(ad, int(rng.choice(len(REPOSTS_P), p=REPOSTS_P)), ad["ad_id"], rng)
        if rng.random() >= NEGATIVE_RATE:
            continue
        d_idx = _pick_donor(ad, donors, used, rng)
        made = make_negative(ad, donors[d_idx] if d_idx is not None else None, towns, rng)
        if made is None:
            continue
        neg, kind = made
        if kind != "other_town" and d_idx is not None:
            used.add(d_idx)
        neg = {c: neg.get(c) for c in COLUMNS} | {"ad_id": f"{ad['ad_id']}#n1", "origin": f"negative:{kind}"}
        neg_rows = _with_reposts(neg, int(rng.choice(len(NEG_REPOSTS_P), p=NEG_REPOSTS_P)), neg["ad_id"], rng)
        neg_rows[0]["_negative_of"] = ad["ad_id"]
        rows += neg_rows
    return _assemble(rows, split, rng)


def _assemble(rows: list[dict], split: str, rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shuffle rows, number the groups, and split into ads and labels frames (all strings)."""
    df = pd.DataFrame(rows)
    df = df.iloc[rng.permutation(len(df))].reset_index(drop=True)
    first_seen = {g: i for i, g in reversed(list(enumerate(df["_group"])))}
    number = {g: k for k, g in enumerate(sorted(first_seen, key=first_seen.get))}
    df["group_id"] = [f"{split}-{number[g]:05d}" for g in df["_group"]]
    ads = df[COLUMNS].astype(object)
    ads = ads.where(ads.notna(), None)
    labels = df[["ad_id", "group_id"]].copy()
    ads.attrs["negative_of"] = {
        r: p for r, p in zip(df["ad_id"], df.get("_negative_of", [None] * len(df))) if isinstance(p, str)
    }
    return ads, labels


# ---------------------------------------------------------------- summary and output
def pair_jaccards(ads: pd.DataFrame, labels: pd.DataFrame) -> tuple[list[float], list[float]]:
    """Jaccard of every same-group pair (positives) and of each hard negative with its source ad."""
    desc = dict(zip(ads["ad_id"], ads["description"]))
    pos: list[float] = []
    for _, ids in labels.groupby("group_id")["ad_id"]:
        ids = list(ids)
        for i in range(len(ids)):
            for j in range(i + 1, len(ids)):
                v = tx.jaccard(desc[ids[i]], desc[ids[j]])
                if v is not None:
                    pos.append(v)
    neg = [tx.jaccard(desc[n], desc[b]) for n, b in ads.attrs.get("negative_of", {}).items()]
    return pos, [v for v in neg if v is not None]


def summarize(split: str, ads: pd.DataFrame, labels: pd.DataFrame) -> str:
    """Human-readable figures for one split."""
    sizes = labels["group_id"].map(labels["group_id"].value_counts())
    pos, neg = pair_jaccards(ads, labels)
    kinds = ads["origin"].map(
        lambda o: o.split(":")[0] + (":" + o.split(":")[1] if o.startswith("negative") else "")
    )
    lines = [
        (
            f"[{split}] ads {len(ads)}, groups {labels['group_id'].nunique()}, duplicate share "
            f"{(sizes > 1).mean():.1%}, corpora {ads['corpus'].nunique()}, sites {ads['source'].nunique()}"
        ),
        f"  origin: {dict(kinds.value_counts().sort_index())}",
    ]
    for name, vals in (("positive pairs", pos), ("hard-negative pairs", neg)):
        if vals:
            q = np.quantile(vals, [0.25, 0.5, 0.75])
            v = np.array(vals)
            lines.append(
                f"  {name}: n={len(v)} Jaccard q25/50/75 {q[0]:.2f}/{q[1]:.2f}/{q[2]:.2f}, "
                f"<0.45 {np.mean(v < 0.45):.1%}, 0.30-0.45 {np.mean((v >= 0.3) & (v < 0.45)):.1%}, "
                f">0.6 {np.mean(v > 0.6):.1%}"
            )
    return "\n".join(lines)


def write_parquet(df: pd.DataFrame, path: Path) -> None:
    """All-string zstd Parquet."""
    schema = pa.schema([(c, pa.string()) for c in df.columns])
    table = pa.Table.from_pandas(df, schema=schema, preserve_index=False).replace_schema_metadata(None)
    pq.write_table(table, path, compression="zstd")


def make_splits(
    real_ads: pd.DataFrame, n_base: int, seed: int, test_corpora: list[str]
) -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """Train and test (ads, labels); n_base is shared out in proportion to the candidates of each split."""
    real_ads = real_ads.astype(object).where(real_ads.notna(), None)
    cands = split_candidates(real_ads, test_corpora)
    towns = towns_by_country(list(real_ads["location"]), list(real_ads["corpus"]))
    n_long = {
        k: int((c["description"].map(lambda d: len((d or "").strip())) >= MIN_DESC).sum())
        for k, c in cands.items()
    }
    out = {}
    for k, (split, c) in enumerate(cands.items()):
        n = 0 if n_base <= 0 else int(round(n_base * n_long[split] / sum(n_long.values())))
        out[split] = generate(real_ads, n, seed + k, split=split, candidates=c, towns=towns)
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line entry point."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ads", required=True, help="real ads table (parquet/csv/jsonl) with a `corpus` column")
    ap.add_argument("--out", required=True, help="output directory")
    ap.add_argument("--n-base", type=int, default=0, help="base ads over both splits (0 = all available)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--test-corpora", nargs="+", default=DEFAULT_TEST_CORPORA)
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    splits = make_splits(read_ads(args.ads), args.n_base, args.seed, args.test_corpora)
    for split, (ads, labels) in splits.items():
        write_parquet(ads, out / f"{split}_ads.parquet")
        write_parquet(labels, out / f"{split}_labels.parquet")
        print(summarize(split, ads, labels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
