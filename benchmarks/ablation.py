"""What each decision step earns: leave-one-corpus-out with every rule and switch of
`models.policy.DecisionPolicy` on, and with each one off in turn, over several seeds (issue 50).

For each seed the training table of the shipped model's sets is built once
(`pipeline.training.training_table`: the bundled synthetic sets and every natural pair, old corpora
and new), and the ads of every corpus with labelled pairs are prepared once with its boilerplate.
Then, per corpus, a classifier is trained on the table's pairs that hold no ad of that corpus, its
candidate pairs are scored once, and every policy decides and groups them; a labelled pair counts
as found when both its ads end in one group. Counts are summed over corpora (pooled).

This is the fast harness: the boilerplate is learnt once from all sets (a left-out corpus's own
blocks are known to its fold, as they would be to a user who deduplicates a whole crawl), and a
step turned off changes the decisions, not the trained trees or their threshold. A step earns its
place when the pooled F1 with it beats the F1 without it by more than the seeds' spread of the
full policy's F1 (largest minus smallest).

Run: .venv/bin/python -m benchmarks.quality --ablation [--seeds 1 2 3] [--markdown FILE]
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import pandas as pd

from benchmarks.quality import _corpus, _f1
from jobdedup.features.pairs import build_pair_features
from jobdedup.models.policy import DecisionPolicy
from jobdedup.models.rules import apply_rules
from jobdedup.pipeline.candidates import batch_candidates
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.prepare import PreparedBatch, prepare_batch
from jobdedup.pipeline.progress import Progress
from jobdedup.pipeline.training import TrainingTable, training_table

FULL = "all steps on"
COUNTS = ("tp", "fp", "fn")


def _counts(labelled: pd.DataFrame, ad_ids: np.ndarray, labels: np.ndarray) -> dict[str, int]:
    """True / false positives and misses of one corpus's labelled pairs under group `labels`."""
    position = pd.Series(np.arange(len(ad_ids)), index=ad_ids)
    a = position.reindex(labelled["ad_id_a"]).to_numpy()
    b = position.reindex(labelled["ad_id_b"]).to_numpy()
    known = ~(np.isnan(a) | np.isnan(b))
    together = np.zeros(len(labelled), dtype=bool)
    together[known] = labels[a[known].astype(int)] == labels[b[known].astype(int)]
    truth = labelled["label"].astype(int).to_numpy() == 1
    return {
        "tp": int((truth & together).sum()),
        "fp": int((~truth & together).sum()),
        "fn": int((truth & ~together).sum()),
    }


def _figures(counts: dict[str, int]) -> dict[str, float]:
    return _f1(counts["tp"], counts["fp"], counts["fn"])


def left_out_scores(
    table: TrainingTable, corpus: str, ads: pd.DataFrame, config: Config
) -> tuple[Deduplicator, PreparedBatch, np.ndarray, np.ndarray, pd.DataFrame, np.ndarray]:
    """A model trained on `table` without `corpus`, `ads` (that corpus) prepared by it, their
    candidate pairs (`left`, `right`), the pairs' features and the trees' scores before any rule."""
    model = Deduplicator(config).fit_table(table.without_corpus(corpus))
    batch = prepare_batch(ads, config, model.boilerplate_)
    candidates, _ = batch_candidates(batch.inputs, config)
    left, right = candidates["i"].to_numpy(), candidates["j"].to_numpy()
    features = build_pair_features(batch.inputs, left, right, config.jobs)
    raw = model.classifier_.predict_proba(features)[:, 1] if len(left) else np.zeros(0)
    return model, batch, left, right, features, raw


def one_seed(
    seed: int,
    training_sets: tuple[list, list, list],
    corpus_ads: dict[str, pd.DataFrame],
    pairs: pd.DataFrame,
) -> dict[str, dict[str, dict[str, int]]]:
    """Per policy (by the step it turns off, `FULL` for none) and per corpus, the counts."""
    config = Config(seed=seed, show_progress=False)
    table = training_table(config, *training_sets, Progress(False))
    policies = {
        FULL: DecisionPolicy(),
        **{step: DecisionPolicy().without(step) for step in DecisionPolicy.steps()},
    }
    out: dict[str, dict[str, dict[str, int]]] = {name: {} for name in policies}
    for corpus, ads in corpus_ads.items():
        start = time.perf_counter()
        model, batch, left, right, features, raw = left_out_scores(table, corpus, ads, config)
        labelled = pairs[pairs["corpus"] == corpus]
        ad_ids = batch.ads["ad_id"].astype(str).to_numpy()
        for name, policy in policies.items():
            decider = model.with_policy(policy)
            probability = apply_rules(raw, features, policy)
            labels, _ = decider.group(batch, left, right, probability, features)
            out[name][corpus] = _counts(labelled, ad_ids, labels)
        full = _figures(out[FULL][corpus])
        print(
            f"  seed {seed} {corpus}: F1 {full['f1']:.3f} (P {full['precision']:.3f}, R {full['recall']:.3f}) "
            f"in {time.perf_counter() - start:.0f} s",
            flush=True,
        )
    return out


def pooled(per_corpus: dict[str, dict[str, int]]) -> dict[str, float]:
    """Counts summed over corpora, and their figures."""
    total = {key: sum(counts[key] for counts in per_corpus.values()) for key in COUNTS}
    return {**total, **_figures(total)}


def run(
    seeds: list[int], training_sets: tuple[list, list, list], all_ads: pd.DataFrame, natural: pd.DataFrame
) -> dict[int, dict[str, dict[str, dict[str, int]]]]:
    """`one_seed` for each seed, over every corpus with labelled pairs inside it."""
    corpus_a, corpus_b = _corpus(natural["ad_id_a"]), _corpus(natural["ad_id_b"])
    inside = natural[corpus_a == corpus_b].assign(corpus=corpus_a[corpus_a == corpus_b])
    names = sorted(inside["corpus"].unique())
    corpus_ads = {name: all_ads[all_ads["corpus"] == name].reset_index(drop=True) for name in names}
    return {seed: one_seed(seed, training_sets, corpus_ads, inside) for seed in seeds}


def markdown(results: dict[int, dict[str, dict[str, dict[str, int]]]]) -> str:
    """The ablation table (pooled, mean over seeds and range) and the full policy's per-corpus table."""
    seeds = sorted(results)
    full = [pooled(results[s][FULL]) for s in seeds]
    full_f1, full_p = [f["f1"] for f in full], [f["precision"] for f in full]
    f1_spread, p_spread = max(full_f1) - min(full_f1), max(full_p) - min(full_p)
    heading = (
        f"Leave-one-corpus-out over {len(results[seeds[0]][FULL])} corpora, seeds {', '.join(map(str, seeds))} "
        f"(fast harness, `benchmarks/ablation.py`). Full policy pooled precision {np.mean(full_p):.4f} "
        f"(spread {p_spread:.4f}), F1 {np.mean(full_f1):.4f} ({min(full_f1):.4f}-{max(full_f1):.4f}; "
        f"spread {f1_spread:.4f})."
    )
    lines = [
        heading,
        "",
        (
            "| step turned off | precision | recall | F1 (range over seeds) | F1 with it minus without (range) | "
            "precision with it minus without | earns its place |"
        ),
        "|---|---:|---:|---|---|---:|---|",
    ]
    for name in results[seeds[0]]:
        figures = [pooled(results[s][name]) for s in seeds]
        f1 = [f["f1"] for f in figures]
        gain = np.mean([a - b for a, b in zip(full_f1, f1)])
        precision_gain = np.mean([a - f["precision"] for a, f in zip(full_p, figures)])
        earns = gain > f1_spread or (precision_gain > p_spread and gain > -f1_spread)
        verdict = "" if name == FULL else ("yes" if earns else "no")
        lines.append(
            f"| {name} | {np.mean([f['precision'] for f in figures]):.4f} | "
            f"{np.mean([f['recall'] for f in figures]):.4f} | {np.mean(f1):.4f} ({min(f1):.4f}-{max(f1):.4f}) | "
            f"{gain:+.4f} ({min(a - b for a, b in zip(full_f1, f1)):+.4f} to "
            f"{max(a - b for a, b in zip(full_f1, f1)):+.4f}) | {precision_gain:+.4f} | {verdict} |"
        )
    lines += [
        "",
        "Full policy per corpus (first seed):",
        "",
        "| corpus | TP | FP | FN | precision | recall | F1 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for corpus, counts in sorted(results[seeds[0]][FULL].items()):
        f = _figures(counts)
        lines.append(
            f"| {corpus} | {counts['tp']} | {counts['fp']} | {counts['fn']} | {f['precision']:.3f} | "
            f"{f['recall']:.3f} | {f['f1']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def summary(results: dict[int, dict[str, dict[str, dict[str, int]]]]) -> dict[str, Any]:
    """Pooled figures per policy and seed (for JSON)."""
    return {str(seed): {name: pooled(per) for name, per in by.items()} for seed, by in results.items()}
