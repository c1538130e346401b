"""Propose candidate pairs of natural duplicates / hard negatives in the real ads, for hand judging.

Run:  python -m labelling.find_natural_pairs --ads ../shared/data/real_ads.parquet --out /tmp/candidates.parquet

Strata (a pair may qualify for several; it is listed once, under the first that applies, in this order):
  a  identical normalised description (>= 50 chars) on a different site or url
  b  same normalised title + company, different site
  e  short description (< 400 chars, a snippet) whose words are mostly (>= 0.6) contained in a longer
     ad of the same company or title
  c  5-word-shingle Jaccard >= 0.5 but different title, company or location (template / footer sharing)
  d  Jaccard 0.2-0.5 with the same company
  f  same company, different title, descriptions on both sides (mostly negatives)
  g  different site, company and title similar but not equal after normalisation (rapidfuzz
     token_set_ratio >= 85 for company, >= 80 for title): reposts with re-spelt title or company

Output columns: ad_id_a, ad_id_b (a < b), stratum, strata (all that apply), corpus, jaccard5,
containment (word-set containment of the shorter in the longer description), same_title,
same_company, same_location, same_site, same_url, len_a, len_b.
This is a proposal tool only; labels come from reading the pairs (see data/NATURAL_PAIRS.md).
"""

from __future__ import annotations

import argparse
import html
import re
import sys
from collections import defaultdict
from itertools import combinations

import numpy as np
import pandas as pd
import xxhash

TAG_RE = re.compile(r"<[^>]+>")
WORD_RE = re.compile(r"\w+", re.UNICODE)
GENDER_RE = re.compile(r"\((?:[mwfdhx]\s*/\s*){1,3}[mwfdhx]\)|\b[mwfdhx]/[mwfdhx](?:/[mwfdhx])?\b", re.I)
LEGAL = {
    "ltd",
    "limited",
    "inc",
    "llc",
    "gmbh",
    "bv",
    "b",
    "v",
    "plc",
    "corp",
    "corporation",
    "co",
    "ag",
    "sa",
    "sas",
    "srl",
    "pvt",
    "private",
    "llp",
    "lp",
    "nv",
    "kg",
    "ug",
    "the",
    "group",
}


def clean_text(s: str | None) -> str:
    if s is None or (isinstance(s, float) and np.isnan(s)) or s is pd.NA:
        return ""
    s = html.unescape(html.unescape(str(s)))
    s = TAG_RE.sub(" ", s)
    return " ".join(WORD_RE.findall(s.lower()))


def norm_title(s) -> str:
    if s is None or s is pd.NA:
        return ""
    s = GENDER_RE.sub(" ", str(s))
    return " ".join(WORD_RE.findall(s.lower()))


def norm_company(s) -> str:
    if s is None or s is pd.NA:
        return ""
    s = str(s).lower().replace("&", " and ")
    return " ".join(w for w in WORD_RE.findall(s) if w not in LEGAL)


def shingles(words: list[str], k: int = 5) -> np.ndarray:
    if len(words) < k:
        grams = [" ".join(words)] if words else []
    else:
        grams = [" ".join(words[i : i + k]) for i in range(len(words) - k + 1)]
    return np.unique(
        np.fromiter(
            (xxhash.xxh64_intdigest(g.encode("utf-8")) for g in grams), dtype=np.uint64, count=len(grams)
        )
    )


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    inter = len(np.intersect1d(a, b, assume_unique=True))
    return inter / (len(a) + len(b) - inter)


def containment(wa: set, wb: set) -> float:
    if not wa or not wb:
        return float("nan")
    small, big = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    return len(small & big) / len(small)


def prepare(ads: pd.DataFrame) -> pd.DataFrame:
    ads = ads.reset_index(drop=True).copy()
    ads["_text"] = [clean_text(x) for x in ads["description"]]
    ads["_title"] = [norm_title(x) for x in ads["title"]]
    ads["_company"] = [norm_company(x) for x in ads["company"]]
    ads["_loc"] = [
        " ".join(WORD_RE.findall(str(x).lower())) if x is not pd.NA and x is not None else ""
        for x in ads["location"]
    ]
    ads["_site"] = ads["source"].fillna("").astype(str)
    ads["_url"] = ads["url"].fillna("").astype(str)
    return ads


def lsh_pairs(sh: list[np.ndarray], threshold: float, num_perm: int, seed: int) -> set[tuple[int, int]]:
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=threshold, num_perm=num_perm)
    mhs = {}
    for i, s in enumerate(sh):
        if len(s) < 3:
            continue
        m = MinHash(num_perm=num_perm, seed=seed)
        m.update_batch([int(x).to_bytes(8, "little") for x in s])
        lsh.insert(i, m)
        mhs[i] = m
    out = set()
    for i, m in mhs.items():
        for j in lsh.query(m):
            if j != i:
                out.add((min(i, j), max(i, j)))
    return out


def find_candidates(
    ads: pd.DataFrame, seed: int = 1, max_f_per_company: int = 6, log=lambda *a: print(*a, file=sys.stderr)
) -> pd.DataFrame:
    ads = prepare(ads)
    n = len(ads)
    words = [t.split() for t in ads["_text"]]
    wsets = [set(w) for w in words]
    sh = [shingles(w) for w in words]
    has_desc = np.array([len(t) >= 50 for t in ads["_text"]])
    rng = np.random.default_rng(seed)
    strata: dict[tuple[int, int], set[str]] = defaultdict(set)

    def diff_site_or_url(i, j):
        si, sj = ads.at[i, "_site"], ads.at[j, "_site"]
        ui, uj = ads.at[i, "_url"], ads.at[j, "_url"]
        return si != sj or (ui != uj) or (ui == "" and uj == "")

    # (a) identical normalised descriptions
    by_text = defaultdict(list)
    for i, t in enumerate(ads["_text"]):
        if len(t) >= 50:
            by_text[t].append(i)
    for idx in by_text.values():
        if len(idx) < 2:
            continue
        for i, j in combinations(idx[:30], 2):
            if diff_site_or_url(i, j):
                strata[(i, j)].add("a")
    log(f"a: {sum('a' in v for v in strata.values())}")

    # (b) same title + company, different site
    by_tc = defaultdict(list)
    for i, (t, c) in enumerate(zip(ads["_title"], ads["_company"])):
        if t and c:
            by_tc[(t, c)].append(i)
    for idx in by_tc.values():
        for i, j in combinations(idx[:40], 2):
            if ads.at[i, "_site"] != ads.at[j, "_site"]:
                strata[(i, j)].add("b")
    log(f"b: {sum('b' in v for v in strata.values())}")

    # LSH for (c)/(d)
    near = lsh_pairs(sh, threshold=0.15, num_perm=128, seed=seed)
    log(f"lsh candidates: {len(near)}")
    jac_cache: dict[tuple[int, int], float] = {}
    for i, j in near:
        jv = jaccard(sh[i], sh[j])
        jac_cache[(i, j)] = jv
        if not (has_desc[i] and has_desc[j]) or np.isnan(jv):
            continue
        same_t = ads.at[i, "_title"] == ads.at[j, "_title"]
        same_c = ads.at[i, "_company"] == ads.at[j, "_company"] and ads.at[i, "_company"] != ""
        same_l = ads.at[i, "_loc"] == ads.at[j, "_loc"]
        if jv >= 0.5 and not (same_t and same_c and same_l):
            strata[(i, j)].add("c")
        if 0.2 <= jv < 0.5 and same_c:
            strata[(i, j)].add("d")
    log(f"c: {sum('c' in v for v in strata.values())}  d: {sum('d' in v for v in strata.values())}")

    # (e) snippet contained in a longer ad of the same company or title (same corpus)
    lens = np.array([len(t) for t in ads["_text"]])
    groups = defaultdict(list)
    for i in range(n):
        if lens[i] == 0:
            continue
        corp = ads.at[i, "corpus"]
        if ads.at[i, "_company"]:
            groups[(corp, "c", ads.at[i, "_company"])].append(i)
        if ads.at[i, "_title"]:
            groups[(corp, "t", ads.at[i, "_title"])].append(i)
    for idx in groups.values():
        if len(idx) < 2 or len(idx) > 400:
            continue
        short = [i for i in idx if 0 < lens[i] < 400 and len(wsets[i]) >= 8]
        long_ = [i for i in idx if lens[i] >= 400]
        for i in short:
            for j in long_:
                c = len(wsets[i] & wsets[j]) / len(wsets[i])
                if c >= 0.6:
                    strata[(min(i, j), max(i, j))].add("e")
    log(f"e: {sum('e' in v for v in strata.values())}")

    # (f) same company, different title, both with descriptions (sampled per company)
    by_c = defaultdict(list)
    for i in range(n):
        if ads.at[i, "_company"] and has_desc[i]:
            by_c[(ads.at[i, "corpus"], ads.at[i, "_company"])].append(i)
    for idx in by_c.values():
        pairs = [(i, j) for i, j in combinations(idx[:60], 2) if ads.at[i, "_title"] != ads.at[j, "_title"]]
        if not pairs:
            continue
        take = rng.choice(len(pairs), size=min(max_f_per_company, len(pairs)), replace=False)
        for k in take:
            strata[pairs[k]].add("f")
    log(f"f: {sum('f' in v for v in strata.values())}")

    # (g) cross-site fuzzy title/company (re-spelt reposts), blocked by corpus + first company word
    from rapidfuzz import fuzz

    blocks = defaultdict(list)
    for i in range(n):
        c = ads.at[i, "_company"]
        if c and ads.at[i, "_title"]:
            blocks[(ads.at[i, "corpus"], c.split()[0])].append(i)
    for idx in blocks.values():
        if len(idx) < 2 or len(idx) > 400:
            continue
        for i, j in combinations(idx, 2):
            if ads.at[i, "_site"] == ads.at[j, "_site"]:
                continue
            ti, tj, ci, cj = (
                ads.at[i, "_title"],
                ads.at[j, "_title"],
                ads.at[i, "_company"],
                ads.at[j, "_company"],
            )
            if ti == tj and ci == cj:
                continue
            if fuzz.token_set_ratio(ci, cj) >= 85 and fuzz.token_set_ratio(ti, tj) >= 80:
                strata[(i, j)].add("g")
    log(f"g: {sum('g' in v for v in strata.values())}")

    order = "abecdfg"
    rows = []
    for (i, j), ss in strata.items():
        a, b = ads.at[i, "ad_id"], ads.at[j, "ad_id"]
        if a > b:
            i, j, a, b = j, i, b, a
        jv = jac_cache.get((min(i, j), max(i, j)))
        if jv is None:
            jv = jaccard(sh[i], sh[j])
        ci, cj = ads.at[i, "corpus"], ads.at[j, "corpus"]
        rows.append(
            dict(
                ad_id_a=a,
                ad_id_b=b,
                stratum=next(s for s in order if s in ss),
                strata="".join(s for s in order if s in ss),
                corpus=ci if ci == cj else f"{ci}|{cj}",
                jaccard5=round(float(jv), 4) if not np.isnan(jv) else np.nan,
                containment=round(containment(wsets[i], wsets[j]), 4) if wsets[i] and wsets[j] else np.nan,
                same_title=ads.at[i, "_title"] == ads.at[j, "_title"],
                same_company=ads.at[i, "_company"] == ads.at[j, "_company"],
                same_location=ads.at[i, "_loc"] == ads.at[j, "_loc"],
                same_site=ads.at[i, "_site"] == ads.at[j, "_site"],
                same_url=ads.at[i, "_url"] == ads.at[j, "_url"] and ads.at[i, "_url"] != "",
                len_a=int(lens[i]),
                len_b=int(lens[j]),
            )
        )
    return pd.DataFrame(rows).sort_values(["stratum", "corpus", "ad_id_a", "ad_id_b"]).reset_index(drop=True)


def read_table(path: str) -> pd.DataFrame:
    if path.endswith(".parquet"):
        return pd.read_parquet(path)
    if path.endswith(".jsonl"):
        return pd.read_json(path, lines=True, dtype=False)
    return pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[""])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ads", required=True)
    p.add_argument("--out", required=True, help=".parquet or .csv")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    ads = read_table(args.ads)
    ads["ad_id"] = ads["ad_id"].astype(str)
    for col in ["title", "company", "location", "url", "source", "description", "corpus"]:
        if col not in ads:
            ads[col] = pd.NA if col != "corpus" else "all"
    cand = find_candidates(ads, seed=args.seed)
    if args.out.endswith(".parquet"):
        cand.to_parquet(args.out, index=False)
    else:
        cand.to_csv(args.out, index=False)
    print(f"{len(cand)} candidate pairs -> {args.out}", file=sys.stderr)
    print(cand.groupby("stratum").size().to_string(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
