"""Quality measured on data the model was not trained on, and audits of its groups on real crawls.

Three parts (each skipped with a note when its inputs are missing):

1. **Leave-one-corpus-out over the hand-judged natural pairs** (`data/natural_pairs.csv` and
   the later rounds' `data/natural_pairs_late.csv`): for
   each of the 19 corpora, a model is trained exactly as `make model` trains the shipped one
   (bundled synthetic sets + natural pairs), but without any ad of that corpus (its synthetic
   reposts and its natural pairs are left out), and then deduplicates *all* real ads of that corpus
   (`../shared/data/real_ads.parquet`), end to end: a labelled duplicate LSH and blocking never
   proposed is a miss. Figures per corpus and pooled (counts summed over folds), with candidate
   recall and per-type precision / recall. Pairs spanning two corpora train but are never scored.
2. **Synthetic held-out test**: the demo's model (bundled training sets only) on the bundled and
   full synthetic test splits, beside the plain MinHash-threshold way.
3. **Real-crawl audit** of the shipped default model (or `--model`) on all 12,277 real ads: the
   share of in-group pairs naming clearly different employers, employers per group, and — from a
   labelled uniform sample of accepted pairs (`data/accepted_sample_labels.csv`, made with
   `jobdedup label --sample accepted`) — the estimated precision with its 95 % interval; and, from
   groups read whole by readers (`data/group_audit_labels.csv`: uniform samples of the groups of
   2+ and of 3+ ads), how many of them this model still forms and how many are one vacancy.

With `--seeds 1 2 3` the leave-one-corpus-out runs once per seed (MinHash permutations, the
classifier's bagging and folds): the per-corpus table is the first seed's (the shipped model's),
and a second table gives each seed's pooled figures and their spread, which is how far a change
must move the pooled figures before it is more than chance.

Run: .venv/bin/python -m benchmarks.quality [--model FILE] [--markdown FILE] [--parts loco synthetic audit]
     [--seeds 1 2 3]
     .venv/bin/python -m benchmarks.quality --ablation [--seeds 1 2 3] [--markdown FILE]
       (what each rule and grouping step earns; `benchmarks/ablation.py`)

The natural pairs span the 19 corpora of `real_ads.parquet` and the development corpora of
`more_ads.parquet`; the sealed corpora (`data/SEALED_CORPORA.txt`) are never trained on here:
`benchmarks/sealed.py` scores them.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from jobdedup.data import (
    BUNDLED_DATA,
    NATURAL_PAIR_WEIGHT,
    NATURAL_SETS,
    SYNTHETIC_SETS,
    TRAINING_SETS,
    read_sets,
    sealed_ads,
    set_weights,
)
from jobdedup.models.dup_types import DUP_TYPES
from jobdedup.models.group_audit import employer_mix, read_groups
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.engine import Deduplicator, sample_estimates
from jobdedup.pipeline.io import read_ads, read_labels, validate_labels

ROOT = Path(__file__).resolve().parent.parent
REAL_ADS = ROOT.parent / "shared" / "data" / "real_ads.parquet"
MORE_ADS = ROOT.parent / "shared" / "data" / "more_ads.parquet"
NATURAL_PAIRS = [BUNDLED_DATA / "natural_pairs.csv", BUNDLED_DATA / "natural_pairs_late.csv"]
NATURAL_ADS = [BUNDLED_DATA / ads_file for ads_file, _ in NATURAL_SETS]
ACCEPTED_SAMPLE = BUNDLED_DATA / "accepted_sample_labels.csv"
GROUP_AUDIT = BUNDLED_DATA / "group_audit_labels.csv"
SYNTHETIC_TESTS = [
    ("synthetic test, bundled", BUNDLED_DATA / "test_ads.parquet", BUNDLED_DATA / "test_labels.parquet"),
    (
        "synthetic test, full",
        ROOT / "out/labels_full/test_ads.parquet",
        ROOT / "out/labels_full/test_labels.parquet",
    ),
]
COUNTS = ("true_positives", "false_positives", "false_negatives", "labelled_duplicates", "labelled_pairs")


def _corpus(ad_ids: pd.Series) -> pd.Series:
    return ad_ids.astype(str).str.split(":").str[0]


def _f1(tp: float, fp: float, fn: float) -> dict[str, float]:
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def development_ads() -> pd.DataFrame | None:
    """Every ad of the labelled corpora: the real ads and the new corpora of `more_ads.parquet`
    but the sealed ones (None without `../shared`)."""
    if not REAL_ADS.exists():
        return None
    parts = [read_ads(REAL_ADS)]
    if MORE_ADS.exists():
        more = read_ads(MORE_ADS)
        parts.append(more[~sealed_ads(more)])
    return pd.concat(parts, ignore_index=True)


def natural_pairs() -> pd.DataFrame:
    """Every hand-judged natural pair (all rounds)."""
    return pd.concat([pd.read_csv(path, dtype=str) for path in NATURAL_PAIRS], ignore_index=True)


def _training_sets(held_out: str | None) -> tuple[list[pd.DataFrame], list[Any], list[float]]:
    """The shipped model's training sets and their weights, without any ad of corpus `held_out`."""
    ads_sets, label_sets = [], []
    for ads_file, labels_file in SYNTHETIC_SETS:
        ads = read_ads(BUNDLED_DATA / ads_file)
        groups = pd.read_parquet(BUNDLED_DATA / labels_file)
        if held_out is not None:
            ads = ads[ads["corpus"] != held_out].reset_index(drop=True)
            groups = groups[groups["ad_id"].isin(ads["ad_id"])]
        ads_sets.append(ads)
        label_sets.append(validate_labels(groups, ads, source=labels_file))
    pairs = natural_pairs()
    ads = pd.concat([read_ads(path) for path in NATURAL_ADS], ignore_index=True).drop_duplicates("ad_id")
    if held_out is not None:
        keep = (_corpus(pairs["ad_id_a"]) != held_out) & (_corpus(pairs["ad_id_b"]) != held_out)
        pairs = pairs[keep]
    ads = ads[ads["ad_id"].isin(pd.concat([pairs["ad_id_a"], pairs["ad_id_b"]]))].reset_index(drop=True)
    ads_sets.append(ads)
    label_sets.append(
        validate_labels(pairs[["ad_id_a", "ad_id_b", "label", "dup_type"]], ads, source="natural")
    )
    return ads_sets, label_sets, [*set_weights(SYNTHETIC_SETS), NATURAL_PAIR_WEIGHT]


def leave_one_corpus_out(real_ads: pd.DataFrame, config: Config) -> tuple[list[dict], dict]:
    """Per-corpus and pooled end-to-end figures (see the module docstring)."""
    pairs = natural_pairs()
    corpus_a, corpus_b = _corpus(pairs["ad_id_a"]), _corpus(pairs["ad_id_b"])
    inside = pairs[corpus_a == corpus_b].assign(corpus=corpus_a[corpus_a == corpus_b])
    rows = []
    for corpus, labelled in inside.groupby("corpus", sort=True):
        start = time.perf_counter()
        model = Deduplicator(config).fit(*_training_sets(corpus))
        ads = real_ads[real_ads["corpus"] == corpus].reset_index(drop=True)
        labels = validate_labels(labelled[["ad_id_a", "ad_id_b", "label", "dup_type"]], ads, source=corpus)
        figures = model.evaluate(ads, labels)
        rows.append({"corpus": corpus, "ads": len(ads), "seconds": time.perf_counter() - start, **figures})
        print(
            f"  {corpus}: {len(labelled)} pairs, F1 {figures['f1']:.3f} "
            f"(P {figures['precision']:.3f}, R {figures['recall']:.3f}) in {rows[-1]['seconds']:.0f} s",
            flush=True,
        )
    return rows, pooled(rows)


def pooled(rows: list[dict]) -> dict[str, Any]:
    """Counts summed over folds, and the figures they give (per type too)."""
    total = {key: sum(row[key] for row in rows) for key in COUNTS}
    proposed = sum(
        row["candidate_recall"] * row["labelled_duplicates"] for row in rows if row["labelled_duplicates"]
    )
    total.update(_f1(total["true_positives"], total["false_positives"], total["false_negatives"]))
    total["candidate_recall"] = proposed / total["labelled_duplicates"]
    per_type = {}
    for name in DUP_TYPES:
        counts = {
            key: sum(row.get("per_type", {}).get(name, {}).get(key, 0) for row in rows)
            for key in ("labelled", "found", "typed", "correct")
        }
        counts["precision"] = counts["correct"] / counts["typed"] if counts["typed"] else float("nan")
        counts["recall"] = counts["correct"] / counts["labelled"] if counts["labelled"] else float("nan")
        per_type[name] = counts
    total["per_type"] = per_type
    return total


def synthetic(config: Config) -> list[dict]:
    """The demo's model (bundled training sets only) on the synthetic test splits, with the baseline."""
    from jobdedup.pipeline.baseline import minhash_threshold_baseline

    model = Deduplicator(config).fit(*read_sets(TRAINING_SETS))
    rows = []
    for name, ads_path, labels_path in SYNTHETIC_TESTS:
        if not ads_path.exists():
            print(f"skipped {name}: {ads_path} not found (make labels)")
            continue
        ads = read_ads(ads_path)
        labels = read_labels(labels_path, ads=ads)
        result = model.run(ads)
        figures = model.evaluate(ads, labels, result=result)
        baseline = minhash_threshold_baseline(result.batch, labels, model.config)
        rows.append({"set": name, "ads": len(ads), "jobdedup": figures, "baseline": baseline})
    return rows


def audit(model: Deduplicator, real_ads: pd.DataFrame) -> dict[str, Any]:
    """Employer mix of the model's groups on all real ads, and the accepted-sample precision."""
    result = model.run(real_ads)
    companies = result.batch.inputs.fields["company"]
    found = employer_mix(result.groups["group_id"], companies)
    found["groups"] = int(result.groups["group_id"].nunique())
    found["ads_with_duplicate"] = int((result.groups["group_size"] > 1).sum())
    found["employer_splits"] = len(result.grouping.employer_splits)
    if ACCEPTED_SAMPLE.exists():
        sample = pd.read_csv(ACCEPTED_SAMPLE, dtype=str)
        ids = result.batch.ads["ad_id"].astype(str).to_numpy()
        position = pd.Series(np.arange(len(ids)), index=ids)
        found["accepted_sample"] = sample_estimates(sample, position, result.groups["group_id"].to_numpy())
    if GROUP_AUDIT.exists():
        group_of = result.groups.set_index(result.groups["ad_id"].astype(str))["group_id"]
        found["groups_read"] = read_groups(pd.read_csv(GROUP_AUDIT, dtype=str), group_of)
    return found


GROUP_SAMPLES = {
    "uniform": "a uniform sample of groups of 2+ ads",
    "three_or_more": "a uniform sample of groups of 3+ ads",
}
"""How README's table names the samples of `data/group_audit_labels.csv`."""


def _changed(groups_read: dict[str, Any]) -> str:
    """How many groups read this model grew and split, for the audit table ("" when none)."""
    grown = groups_read["grown"]
    split = groups_read["read"] - groups_read["still_formed"] - grown
    parts = [f"{grown} grown by ads no reader saw"] * (grown > 0) + [f"{split} split"] * (split > 0)
    return f"; {', '.join(parts)}" if parts else ""


def _fmt(value: float) -> str:
    return "–" if np.isnan(value) else f"{value:.3f}"


def seed_spread(pooled_by_seed: dict[int, dict]) -> list[str]:
    """Markdown rows: each seed's pooled leave-one-corpus-out figures, then their mean and range."""
    rows = ["| seed | precision | recall | F1 |", "|---:|---:|---:|---:|"]
    for seed, total in pooled_by_seed.items():
        rows.append(f"| {seed} | {total['precision']:.3f} | {total['recall']:.3f} | {total['f1']:.3f} |")
    columns = {
        name: [total[name] for total in pooled_by_seed.values()] for name in ("precision", "recall", "f1")
    }
    cells = " | ".join(f"{np.mean(v):.3f} ({min(v):.3f}–{max(v):.3f})" for v in columns.values())
    rows.append(f"| mean (range) | {cells} |")
    return rows


def markdown(
    loco: tuple[list[dict], dict] | None,
    synth: list[dict] | None,
    audited: dict | None,
    pooled_by_seed: dict[int, dict] | None = None,
) -> str:
    """The tables README shows."""
    out = []
    if loco is not None:
        rows, total = loco
        out += [
            "| corpus | real ads | labelled pairs | duplicates | precision | recall | F1 | candidate recall |",
            "|---|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for row in rows:
            out.append(
                f"| {row['corpus']} | {row['ads']:,} | {row['labelled_pairs']} | {row['labelled_duplicates']} | "
                f"{_fmt(row['precision'])} | {_fmt(row['recall'])} | {_fmt(row['f1'])} | {_fmt(row['candidate_recall'])} |"
            )
        out.append(
            f"| **pooled** | | **{total['labelled_pairs']}** | **{total['labelled_duplicates']}** | "
            f"**{total['precision']:.3f}** | **{total['recall']:.3f}** | **{total['f1']:.3f}** | "
            f"**{total['candidate_recall']:.3f}** |"
        )
        out += [
            "",
            "| type | labelled | found | typed so | precision | recall |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, counts in total["per_type"].items():
            out.append(
                f"| {name} | {counts['labelled']} | {counts['found']} | {counts['typed']} | "
                f"{_fmt(counts['precision'])} | {_fmt(counts['recall'])} |"
            )
    if pooled_by_seed and len(pooled_by_seed) > 1:
        out += ["", *seed_spread(pooled_by_seed)]
    if synth:
        columns = ["precision", "recall", "f1", "pr_auc", "candidate_recall"]
        out += ["", "| set | ads | way | " + " | ".join(columns) + " |", "|" + "---|" * (3 + len(columns))]
        for row in synth:
            for way in ("jobdedup", "baseline"):
                label = "jobdedup" if way == "jobdedup" else f"MinHash ≥ {row['baseline']['threshold']:.2f}"
                values = " | ".join(_fmt(row[way][c]) for c in columns)
                out.append(f"| {row['set']} | {row['ads']} | {label} | {values} |")
    if audited is not None:
        out += ["", "| real-crawl audit (all 12,277 real ads) | value |", "|---|---:|"]
        out.append(
            f"| in-group pairs with both employers known | {audited['pairs_both_known']:,} |\n"
            f"| … naming clearly different employers | {audited['pairs_different_employers']:,} "
            f"({audited['share_different_employers']:.1%}) |\n"
            f"| most employers in one group | {audited['max_employers']} |\n"
            f"| groups with more than 3 employers | {audited['groups_with_more_than_3_employers']} |\n"
            f"| groups split by the employer guard | {audited['employer_splits']} |"
        )
        if "accepted_sample" in audited:
            s = audited["accepted_sample"]
            drawn = s["precision_sample_size"] + s["precision_sample_not_accepted_now"]
            out.append(
                f"| estimated precision of accepted pairs (the {s['precision_sample_size']} of a uniform sample "
                f"of {drawn} this model still groups) | {s['estimated_precision']:.3f} "
                f"(95 % interval {s['estimated_precision_low']:.3f}–{s['estimated_precision_high']:.3f}) |"
            )
        for sample, g in audited.get("groups_read", {}).items():
            out.append(
                f"| groups read by hand, {GROUP_SAMPLES.get(sample, sample)} ({g['still_formed']} of the "
                f"{g['read']} read this model still forms{_changed(g)}): one vacancy / mixed / unsure | "
                f"{g['one_vacancy']} / {g['mixed']} / {g['unsure']}: {_fmt(g['share'])} of the decided "
                f"(95 % interval {_fmt(g['low'])}–{_fmt(g['high'])}) |"
            )
    return "\n".join(out)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, default=None, help="model to audit (default: the shipped one)")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the tables here")
    parser.add_argument(
        "--parts", nargs="+", choices=("loco", "synthetic", "audit"), default=["loco", "synthetic", "audit"]
    )
    parser.add_argument(
        "--seeds",
        nargs="+",
        type=int,
        default=[1],
        help="leave-one-corpus-out once per seed (the first: the table)",
    )
    parser.add_argument(
        "--ablation",
        action="store_true",
        help="instead: leave-one-corpus-out with each decision step off in turn (benchmarks/ablation.py)",
    )
    args = parser.parse_args()
    config = Config(show_progress=False)
    if args.ablation:
        _ablation(args.seeds, args.markdown)
        return
    real_ads = read_ads(REAL_ADS) if REAL_ADS.exists() else None
    if real_ads is None:
        print(f"skipped leave-one-corpus-out and audit: {REAL_ADS} not found")
    loco = synth = audited = None
    pooled_by_seed: dict[int, dict] = {}
    if "loco" in args.parts and real_ads is not None:
        for seed in args.seeds:
            print(f"leave-one-corpus-out over the natural pairs (seed {seed}):", flush=True)
            found = leave_one_corpus_out(development_ads(), config.replace(seed=seed))
            if loco is None:  # the first seed's per-corpus table is the one shown
                loco = found
            pooled_by_seed[seed] = found[1]
    if "synthetic" in args.parts:
        synth = synthetic(config)
    if "audit" in args.parts and real_ads is not None:
        from jobdedup.pipeline.model_files import load_model

        audited = audit(load_model(args.model).with_config(show_progress=False), real_ads)
    table = markdown(loco, synth, audited, pooled_by_seed)
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")


def _ablation(seeds: list[int], path: Path | None) -> None:
    """Run and print the ablation (`benchmarks.ablation`)."""
    from benchmarks import ablation

    ads = development_ads()
    if ads is None:
        raise SystemExit(f"{REAL_ADS}: not found (the ablation needs ../shared)")
    results = ablation.run(seeds, _training_sets(None), ads, natural_pairs())
    table = ablation.markdown(results)
    print(table)
    if path:
        path.write_text(table)
        path.with_suffix(".json").write_text(json.dumps(results, indent=1, sort_keys=True))


if __name__ == "__main__":
    main()
