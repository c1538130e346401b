"""Draw pairs of real ads for judging by reading, so that the labels measure the product as used.

    python -m labelling.draw_pairs_to_judge --ads ../shared/data/real_ads.parquet --out out/judging \
        [--model models/default/model.json] [--seed 13] [--readers 8] \
        [--quota STRATUM=N ...] [--focus CORPUS ...] [--prefix p]

The default model deduplicates all real ads; the pool of pairs is its candidate pairs, every pair
inside its final groups, and (for recall) pairs of one corpus that share a normalised company or a
normalised title whatever the model did. Strata, each drawn round-robin over corpora (so small
corpora are seen) and without repeats across strata:

| stratum | pairs |
|---|---|
| group_uniform | uniform over all pairs of ads in one final group (big groups included) |
| uncertain | candidate pairs the model scored between 0.10 and 0.90 |
| fields_only | one side or both without a description |
| chrome | same source, both with text, full-text overlap high, core overlap or fields low (page chrome) |
| template | same company, core Jaccard >= 0.5, another title or city |
| req_equal / req_diff | both name a requisition / reference / job number: one shared / none shared |
| multicity | same company, similar title, different cities |
| snippet | a short text (< 700 characters) mostly contained in the other, or same company and title |
| retitled | same company, text Jaccard >= 0.5, titles clearly different |
| cross_site | different sites, similar company and title, any overlap |

Outside group_uniform and uncertain, half of each stratum's quota is drawn from its pairs the model
scored >= 0.05 or grouped (where errors would be), the rest from all of them. `--focus CORPUS`
draws half of each stratum but group_uniform from pairs touching the named corpora first (where the
figures are weakest); `--quota` changes a stratum's size.
Pairs already read (any `data/*.csv` or `data/judgements/**.csv` naming ad_id_a, ad_id_b) are left out. 10 % of
the drawn pairs are also put into a second reader's batch for a blind second read.
Output: `pairs.csv` (pair_id, ad_id_a, ad_id_b, stratum, corpus, model facts) and
`batch_<k>.csv` (pair_id, ad_id_a, ad_id_b) per reader, and `assignments.csv` (which reader reads
which pair, first or second read); readers never see the model's facts nor which reads are second.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
import pandas as pd

from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.io import read_ads
from jobdedup.pipeline.training import pair_corpora
from labelling import DATA, REPO

QUOTAS = {
    "group_uniform": 300,
    "uncertain": 220,
    "fields_only": 180,
    "chrome": 150,
    "template": 160,
    "req_equal": 80,
    "req_diff": 80,
    "multicity": 130,
    "snippet": 130,
    "retitled": 120,
    "cross_site": 100,
}
SECOND_READ_SHARE = 0.10
_REF_RE = re.compile(
    r"(?:req(?:uisition)?\.?\s*(?:id|no|number|#)?|job\s*(?:id|no|number|code|ref)|ref(?:erence)?\.?\s*(?:no|number|code|id)?"
    r"|vacancy\s*(?:id|no|number)|posting\s*(?:id|number)|stellen-?id|kennziffer|referenznummer|jr|r-)"
    r"\s*[:#.]?\s*([a-z]{0,4}[-_]?\d[\d\-_/]{3,})",
    re.I,
)


def _refs(text: object) -> frozenset[str]:
    """Requisition-like numbers named in a text (a rough pattern: good enough to stratify)."""
    if not isinstance(text, str):
        return frozenset()
    return frozenset(m.group(1).lower().strip("-_/") for m in _REF_RE.finditer(text))


def _pool(ads: pd.DataFrame, result, seed: int) -> pd.DataFrame:
    """Candidate pairs, in-group pairs and same-company / same-title pairs within a corpus (row indices)."""
    rng = np.random.default_rng(seed)
    n = len(ads)
    ids = ads["ad_id"].to_numpy()
    position = pd.Series(np.arange(n), index=ids)
    cand = result.pairs
    a = position[cand["ad_id_a"]].to_numpy()
    b = position[cand["ad_id_b"]].to_numpy()
    chunks = [np.minimum(a, b) * n + np.maximum(a, b)]
    labels = pd.factorize(result.groups["group_id"])[0]
    for key in (labels, *_blocking_keys(ads, result)):
        frame = pd.DataFrame({"doc": np.arange(n), "key": key})
        frame = frame[frame["key"] >= 0]
        for _, members in frame.groupby("key")["doc"]:
            m = members.to_numpy()
            if len(m) < 2:
                continue
            i, j = np.triu_indices(len(m), 1)
            if len(i) > 4000:
                pick = rng.choice(len(i), 4000, replace=False)
                i, j = i[pick], j[pick]
            chunks.append(np.minimum(m[i], m[j]) * n + np.maximum(m[i], m[j]))
    codes = np.unique(np.concatenate(chunks))
    return pd.DataFrame({"i": codes // n, "j": codes % n})


def _blocking_keys(ads: pd.DataFrame, result) -> list[np.ndarray]:
    fields = result.batch.inputs.fields
    corpus = ads["corpus"].astype(str)
    keys = []
    for column in ("company", "title_tokens"):
        key = corpus + "\x1f" + fields[column].astype(str)
        codes = pd.factorize(key.where(fields[column].notna()))[0]
        keys.append(codes)
    return keys


def _facts(ads: pd.DataFrame, model: Deduplicator, result, pool: pd.DataFrame) -> pd.DataFrame:
    """Model facts of every pool pair: features, probability, same final group, refs."""
    from jobdedup.features.pairs import build_pair_features

    left, right = pool["i"].to_numpy(), pool["j"].to_numpy()
    features = build_pair_features(result.batch.inputs, left, right, 2)
    facts = pool.copy()
    for name in (
        "jaccard_full",
        "jaccard_core",
        "containment_full_max",
        "title_token_set",
        "company_token_set",
        "company_equal",
        "location_conflict",
        "words_ratio",
        "same_source",
    ):
        facts[name] = features[name].to_numpy()
    facts["probability"] = model.predict_proba(features)[:, 1]
    group = result.groups["group_id"].to_numpy()
    facts["same_group"] = group[left] == group[right]
    facts["corpus"] = pair_corpora(ads["corpus"].astype(str).to_numpy(), left, right)
    text = ads["description"].fillna("").astype(str)
    length = text.str.len().to_numpy()
    facts["len_min"] = np.minimum(length[left], length[right])
    facts["len_max"] = np.maximum(length[left], length[right])
    refs = (ads["title"].fillna("") + " " + text).map(_refs).to_numpy()
    ref_l, ref_r = refs[left], refs[right]
    both = np.array([bool(x) and bool(y) for x, y in zip(ref_l, ref_r)])
    shared = np.array([bool(x & y) for x, y in zip(ref_l, ref_r)])
    facts["refs"] = np.where(both, np.where(shared, "equal", "different"), "")
    return facts


def _strata(facts: pd.DataFrame) -> dict[str, np.ndarray]:
    """Boolean mask per stratum over the pool."""
    same_company = (facts["company_equal"] == 1) | (facts["company_token_set"] >= 0.9)
    similar_title = facts["title_token_set"] >= 0.85
    text_both = facts["len_min"] > 0
    return {
        "group_uniform": facts["same_group"].to_numpy(),
        "uncertain": facts["probability"].between(0.10, 0.90).to_numpy(),
        "fields_only": ((facts["len_min"] == 0) & (facts["len_max"] >= 0)).to_numpy(),
        "chrome": (
            text_both
            & (facts["same_source"] == 1)
            & (facts["jaccard_full"] >= 0.25)
            & ((facts["jaccard_core"] < facts["jaccard_full"] - 0.15) | ~same_company | ~similar_title)
        ).to_numpy(),
        "template": (
            same_company
            & (facts["jaccard_core"] >= 0.5)
            & (~similar_title | (facts["location_conflict"] == 1))
        ).to_numpy(),
        "req_equal": (facts["refs"] == "equal").to_numpy(),
        "req_diff": ((facts["refs"] == "different") & (same_company | similar_title)).to_numpy(),
        "multicity": (same_company & similar_title & (facts["location_conflict"] == 1)).to_numpy(),
        "snippet": (
            text_both
            & (facts["len_min"] < 700)
            & (facts["len_max"] >= 1000)
            & ((facts["containment_full_max"] >= 0.3) | (same_company & similar_title))
        ).to_numpy(),
        "retitled": (
            same_company & (facts["jaccard_core"] >= 0.5) & (facts["title_token_set"] < 0.75)
        ).to_numpy(),
        "cross_site": (
            (facts["same_source"] == 0)
            & (facts["company_token_set"] >= 0.85)
            & (facts["title_token_set"] >= 0.8)
        ).to_numpy(),
    }


def _round_robin(candidates: pd.DataFrame, quota: int, rng: np.random.Generator) -> list[int]:
    """Up to `quota` row labels, cycling over corpora in random order within each."""
    queues = [
        list(rng.permutation(group.index.to_numpy())) for _, group in candidates.groupby("corpus", sort=True)
    ]
    chosen: list[int] = []
    while len(chosen) < quota and any(queues):
        for queue in queues:
            if queue and len(chosen) < quota:
                chosen.append(int(queue.pop()))
    return chosen


def _draw_stratum(name: str, pool: pd.DataFrame, quota: int, rng: np.random.Generator) -> list[int]:
    """Up to `quota` row labels of one stratum's pool."""
    if name == "group_uniform":  # uniform over pairs, not round-robin: big groups weigh as they are
        return list(rng.choice(pool.index.to_numpy(), min(quota, len(pool)), replace=False))
    if name == "uncertain":
        return _round_robin(pool, quota, rng)
    # half where the model could err (p >= 0.05 or grouped), the rest anywhere
    risky = pool[(pool["probability"] >= 0.05) | pool["same_group"]]
    chosen = _round_robin(risky, quota // 2, rng)
    return chosen + _round_robin(pool.drop(index=chosen), quota - len(chosen), rng)


def draw(
    facts: pd.DataFrame,
    seed: int,
    judged: set[tuple[str, str]],
    ids: np.ndarray,
    quotas: dict[str, int] = QUOTAS,
    focus: tuple[str, ...] = (),
    prefix: str = "p",
) -> pd.DataFrame:
    """The pairs to judge, one stratum each (the first drawn).

    With `focus` corpora, half of each stratum's quota (group_uniform aside) comes from pairs
    that touch one of them, the rest as usual.
    """
    rng = np.random.default_rng(seed)
    key_a = ids[facts["i"].to_numpy()]
    key_b = ids[facts["j"].to_numpy()]
    fresh = np.array([(min(x, y), max(x, y)) not in judged for x, y in zip(key_a, key_b)])
    taken = ~fresh
    focused = facts["corpus"].str.split("|").map(lambda names: any(n in focus for n in names)).to_numpy()
    rows = []
    for name, mask in _strata(facts).items():
        quota = quotas.get(name, 0)
        chosen: list[int] = []
        if focus and name != "group_uniform":
            chosen = _draw_stratum(name, facts[mask & ~taken & focused], quota // 2, rng)
        pool = facts[mask & ~taken].drop(index=chosen)
        chosen += _draw_stratum(name, pool, quota - len(chosen), rng)
        taken[chosen] = True
        part = facts.loc[chosen].copy()
        part["stratum"] = name
        rows.append(part)
        print(f"{name:14s} {len(part):4d} of {int(mask.sum()):6d} in the pool")
    out = pd.concat(rows, ignore_index=True)
    out.insert(0, "ad_id_a", np.minimum(ids[out["i"]], ids[out["j"]]))
    out.insert(1, "ad_id_b", np.maximum(ids[out["i"]], ids[out["j"]]))
    out = out.drop(columns=["i", "j"])
    out.insert(0, "pair_id", [f"{prefix}{k:04d}" for k in range(len(out))])
    return out


def batches(drawn: pd.DataFrame, readers: int, seed: int) -> list[pd.DataFrame]:
    """One shuffled batch per reader; 10 % of pairs also go, blind, to another reader's batch."""
    rng = np.random.default_rng(seed + 1)
    order = rng.permutation(len(drawn))
    owner = np.empty(len(drawn), dtype=int)
    owner[order] = np.arange(len(drawn)) % readers
    frame = drawn[["pair_id", "ad_id_a", "ad_id_b"]].assign(reader=owner, read=1)
    second = rng.choice(len(drawn), int(round(SECOND_READ_SHARE * len(drawn))), replace=False)
    again = frame.iloc[second].copy()
    again["reader"] = (again["reader"] + 1 + rng.integers(0, readers - 1, len(again))) % readers
    again["read"] = 2
    both = pd.concat([frame, again], ignore_index=True)
    return [
        part.sample(frac=1.0, random_state=seed + k)[["pair_id", "ad_id_a", "ad_id_b", "read"]]
        for k, (_, part) in enumerate(both.groupby("reader", sort=True))
    ]


def write_round(out: Path, drawn: pd.DataFrame, readers: int, seed: int) -> None:
    """Write `pairs.csv`, one `batch_<k>.csv` per reader (ids only) and `assignments.csv` into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    drawn.to_csv(out / "pairs.csv", index=False)
    assignments = []
    for k, batch in enumerate(batches(drawn, readers, seed)):
        batch[["pair_id", "ad_id_a", "ad_id_b"]].to_csv(out / f"batch_{k}.csv", index=False)
        assignments.append(batch.assign(reader=k))
        print(f"batch_{k}: {len(batch)} pairs ({int((batch['read'] == 2).sum())} second reads)")
    pd.concat(assignments).to_csv(out / "assignments.csv", index=False)


def _judged_pairs() -> set[tuple[str, str]]:
    """Every pair any reader has read: natural pairs, accepted samples and their raw judgements."""
    judged: set[tuple[str, str]] = set()
    for path in [*DATA.glob("*.csv"), *(DATA / "judgements").rglob("*.csv")]:
        frame = pd.read_csv(path, dtype=str)
        if {"ad_id_a", "ad_id_b"} <= set(frame.columns):
            judged |= {(min(a, b), max(a, b)) for a, b in zip(frame["ad_id_a"], frame["ad_id_b"])}
    return judged


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ads", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--model", type=Path, default=REPO / "models/default/model.json")
    parser.add_argument("--readers", type=int, default=8)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument(
        "--quota",
        action="append",
        default=[],
        metavar="STRATUM=N",
        help="override one stratum's quota (repeatable)",
    )
    parser.add_argument(
        "--focus",
        action="append",
        default=[],
        metavar="CORPUS",
        help="draw half of each stratum from this corpus",
    )
    parser.add_argument("--prefix", default="p", help="pair id prefix (one per round, e.g. r3p)")
    args = parser.parse_args()
    quotas = dict(QUOTAS)
    for item in args.quota:
        name, _, value = item.partition("=")
        if name not in QUOTAS or not value.isdigit():
            parser.error(f"--quota {item!r}: expected STRATUM=N with STRATUM one of {', '.join(QUOTAS)}")
        quotas[name] = int(value)
    ads = read_ads(args.ads)
    model = Deduplicator.load(args.model).with_config(show_progress=False)
    result = model.run(ads)
    pool = _pool(ads, result, args.seed)
    facts = _facts(ads, model, result, pool)
    judged = _judged_pairs()
    ids = ads["ad_id"].astype(str).to_numpy()
    drawn = draw(facts, args.seed, judged, ids, quotas, tuple(args.focus), args.prefix)
    write_round(args.out, drawn, args.readers, args.seed)
    print(f"{len(drawn)} pairs from a pool of {len(pool):,}; threshold {model.threshold_:.3f}")


if __name__ == "__main__":
    main()
