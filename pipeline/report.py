"""An HTML evaluation report with plots (`jobdedup evaluate --report DIR`).

`DIR/index.html` plus one PNG per plot beside it (matplotlib, Agg backend). The page has no
external CSS or JavaScript and opens from the file system without a server or the internet. All
ad text is escaped with `html.escape`.

Plots: precision-recall curve with the chosen threshold, precision and recall against the
threshold, score histograms of duplicates and non-duplicates, feature importance, candidate
recall (the LSH S-curve beside the measured recall by Jaccard bucket, and recall against
reduction ratio for other bands × rows), group sizes. Then the worst false positives and false
negatives side by side, words in a shared 5-word run highlighted.

Example:
    >>> # result = model.run(ads); figures = model.evaluate(ads, labels, result=result)
    >>> # write_report(model, result, labels, figures, "out/report")
"""

from __future__ import annotations

import html
import math
import os
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jobdedup.features.pairs import build_pair_features
from jobdedup.models.metrics import reduction_ratio
from jobdedup.pipeline.candidates import lsh_candidates, lsh_probability
from jobdedup.pipeline.clean import clean_description
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.engine import Deduplicator, DedupResult, _evaluation_universe
from jobdedup.pipeline.io import Labels
from jobdedup.pipeline.sketch import WORD

if TYPE_CHECKING:  # matplotlib is imported when a report is written
    from matplotlib.figure import Figure

WORST_SHOWN = 20
SHINGLE_WORDS = 5
MAX_WORDS_SHOWN = 350
MAX_ADS_FOR_SWEEP = 20_000
JACCARD_EDGES = np.round(np.arange(0.0, 1.0001, 0.1), 2)
PLOTS = {
    "pr_curve.png": "Precision-recall curve",
    "threshold.png": "Precision and recall against the threshold",
    "score_histogram.png": "Scores of duplicates and non-duplicates",
    "feature_importance.png": "Feature importance",
    "candidates.png": "Candidate recall and reduction ratio",
    "group_sizes.png": "Group sizes",
}


# ---------------------------------------------------------------------------------- shared words
def _words(text: str | None) -> tuple[list[str], list[str]]:
    """Display words of a cleaned description and their comparison keys (letters and digits only);
    none for a missing description."""
    shown = clean_description(text).split()
    return shown, ["".join(WORD.findall(w)) for w in shown]


def shared_word_mask(keys_a: list[str], keys_b: list[str], k: int = SHINGLE_WORDS) -> list[bool]:
    """For each word of A: is it inside a run of `k` words that B also has (a shared shingle)?

    Empty keys (punctuation only) are skipped for the runs and marked like their neighbours.

    Example:
        >>> shared_word_mask("a b c d e x".split(), "a b c d e y".split(), k=5)
        [True, True, True, True, True, False]
    """
    index_a = [i for i, key in enumerate(keys_a) if key]
    seq_a = [keys_a[i] for i in index_a]
    seq_b = [key for key in keys_b if key]
    k = max(1, min(k, len(seq_a), len(seq_b))) if seq_a and seq_b else k
    grams_b = {tuple(seq_b[p : p + k]) for p in range(len(seq_b) - k + 1)}
    marked = np.zeros(len(seq_a), dtype=bool)
    for p in range(len(seq_a) - k + 1):
        if tuple(seq_a[p : p + k]) in grams_b:
            marked[p : p + k] = True
    mask = [False] * len(keys_a)
    for position, original in enumerate(index_a):
        mask[original] = bool(marked[position])
    for i, key in enumerate(keys_a):  # punctuation-only words follow the word before them
        if not key and i > 0:
            mask[i] = mask[i - 1]
    return mask


def _highlighted(text: str | None, other: str | None, limit: int = MAX_WORDS_SHOWN) -> str:
    shown, keys = _words(text)
    _, other_keys = _words(other)
    mask = shared_word_mask(keys, other_keys)
    parts: list[str] = []
    open_mark = False
    for word, shared in zip(shown[:limit], mask[:limit]):
        if shared and not open_mark:
            parts.append("<mark>")
            open_mark = True
        elif not shared and open_mark:
            parts.append("</mark>")
            open_mark = False
        parts.append(html.escape(word) + " ")
    if open_mark:
        parts.append("</mark>")
    if len(shown) > limit:
        parts.append(f"<span class='more'>… {len(shown) - limit} more words</span>")
    if not shown:
        parts.append("<span class='more'>(no description)</span>")
    return "".join(parts)


# ---------------------------------------------------------------------------------- data
def evaluation_pairs(result: DedupResult, labels: Labels) -> pd.DataFrame:
    """Every labelled pair that evaluation scores: rows `i`, `j`, `label`, `predicted`, `probability`,
    `proposed` (a candidate at all), `via_lsh`."""
    ads = result.batch.ads
    n = len(ads)
    ids = ads["ad_id"].astype(str).to_numpy()
    position = pd.Series(np.arange(n), index=ids)
    group_of = result.groups["group_id"].to_numpy()
    pairs = result.pairs
    pa = position.reindex(pairs["ad_id_a"].astype(str)).to_numpy()
    pb = position.reindex(pairs["ad_id_b"].astype(str)).to_numpy()
    pair_codes = (np.minimum(pa, pb) * n + np.maximum(pa, pb)).astype(np.int64)
    scored = pd.Series(pairs["probability"].to_numpy(), index=pair_codes)
    via_lsh = pd.Series(pairs["via_lsh"].to_numpy(dtype=bool), index=pair_codes)
    universe = _evaluation_universe(labels, position, group_of, scored)
    codes = universe["code"].to_numpy(np.int64)
    left, right = codes // n, codes % n
    return pd.DataFrame(
        {
            "i": left,
            "j": right,
            "label": universe["label"].to_numpy(int),
            "predicted": (group_of[left] == group_of[right]).astype(int),
            "probability": scored.reindex(codes).fillna(0.0).to_numpy(),
            "proposed": np.isin(codes, pair_codes),
            "via_lsh": via_lsh.reindex(codes).fillna(False).to_numpy(dtype=bool),
        }
    )


def _precision_recall(truth: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, ...]:
    """Precision and recall of `scores >= t` for every distinct score t (descending)."""
    order = np.argsort(-scores, kind="stable")
    s, y = scores[order], truth[order]
    tp = np.cumsum(y)
    k = np.arange(1, len(y) + 1)
    last = np.append(s[1:] != s[:-1], True)
    positives = max(int(truth.sum()), 1)
    return s[last], (tp / k)[last], (tp / positives)[last]


def _band_sweep(result: DedupResult, evaluated: pd.DataFrame, config: Config) -> pd.DataFrame:
    """Candidate recall and reduction ratio for other LSH bands × rows (same signatures and fields)."""
    signatures = result.batch.inputs.signatures
    n = len(result.batch)
    num_perm = signatures.shape[1]
    positives = evaluated[evaluated["label"] == 1]
    pos_codes = (positives["i"].to_numpy() * n + positives["j"].to_numpy()).astype(np.int64)
    ids = result.batch.ads["ad_id"].astype(str).to_numpy()
    position = pd.Series(np.arange(n), index=ids)
    fields = result.pairs[result.pairs["via_fields"].to_numpy(dtype=bool)]
    fa = position.reindex(fields["ad_id_a"].astype(str)).to_numpy()
    fb = position.reindex(fields["ad_id_b"].astype(str)).to_numpy()
    field_codes = (np.minimum(fa, fb) * n + np.maximum(fa, fb)).astype(np.int64)
    rows = []
    for rows_per_band in (1, 2, 3, 4, 5, 6, 7, 9, 12):
        bands = num_perm // rows_per_band
        if bands < 1:
            continue
        pairs, _ = lsh_candidates(signatures, bands, rows_per_band, config.max_bucket_size)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        codes = np.union1d(np.unique(pairs[:, 0] * n + pairs[:, 1]), field_codes)
        rows.append(
            {
                "bands": bands,
                "rows": rows_per_band,
                "candidate_pairs": len(codes),
                "candidate_recall": float(np.isin(pos_codes, codes).mean()) if len(pos_codes) else math.nan,
                "reduction_ratio": reduction_ratio(len(codes), n),
                "chosen": bands == config.lsh_bands and rows_per_band == config.lsh_rows,
            }
        )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------- plots
def _plots(
    model: Deduplicator, result: DedupResult, evaluated: pd.DataFrame, figures: dict[str, Any], out: Path
) -> dict[str, Any]:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    facts: dict[str, Any] = {}
    threshold = float(model.threshold_)
    truth = evaluated["label"].to_numpy()
    scores = evaluated["probability"].to_numpy()
    cuts, precision, recall = _precision_recall(truth, scores)
    # Score 0 = never proposed as a candidate: no threshold can accept those pairs.
    cuts, precision, recall = cuts[cuts > 0], precision[cuts > 0], recall[cuts > 0]

    def save(fig: Figure, name: str) -> None:
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)

    # 1. PR curve with the chosen threshold
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.step(recall, precision, where="post", color="#1f77b4", label="classifier scores")
    at = cuts >= threshold
    if at.any():
        k = np.flatnonzero(at)[-1]
        ax.plot(recall[k], precision[k], "o", color="#d62728", ms=8, label=f"threshold {threshold:.3f}")
    ax.plot(
        figures.get("recall", np.nan),
        figures.get("precision", np.nan),
        "s",
        color="#2ca02c",
        ms=7,
        label="final groups",
    )
    ax.set(xlabel="recall", ylabel="precision", xlim=(0, 1.02), ylim=(0, 1.02), title=PLOTS["pr_curve.png"])
    ax.legend(loc="lower left")
    ax.grid(alpha=0.3)
    save(fig, "pr_curve.png")

    # 2. precision and recall against threshold
    fig, ax = plt.subplots(figsize=(6, 4.5))
    ax.plot(cuts, precision, label="precision")
    ax.plot(cuts, recall, label="recall")
    ax.axvline(threshold, color="#d62728", ls="--", label=f"chosen {threshold:.3f}")
    ax.set(
        xlabel="threshold on probability",
        ylabel="share",
        xlim=(0, 1),
        ylim=(0, 1.02),
        title=PLOTS["threshold.png"],
    )
    ax.legend(loc="lower left")
    ax.grid(alpha=0.3)
    save(fig, "threshold.png")

    # 3. score histograms
    fig, ax = plt.subplots(figsize=(6, 4.5))
    proposed = evaluated["proposed"].to_numpy()
    bins = np.linspace(0, 1, 41)
    # (matplotlib's stubs take no array for `bins`; matplotlib does)
    ax.hist(
        scores[proposed & (truth == 0)],
        bins=bins,  # type: ignore[arg-type]
        alpha=0.6,
        label="labelled different",
        color="#ff7f0e",
    )
    ax.hist(
        scores[proposed & (truth == 1)],
        bins=bins,  # type: ignore[arg-type]
        alpha=0.6,
        label="labelled duplicate",
        color="#1f77b4",
    )
    ax.axvline(threshold, color="#d62728", ls="--", label="threshold")
    if proposed.any():  # a log scale of nothing makes matplotlib warn
        ax.set_yscale("log")
    missed = int(((truth == 1) & ~proposed).sum())
    ax.set(
        xlabel="duplicate probability (candidate pairs)",
        ylabel="pairs (log)",
        title=f"{PLOTS['score_histogram.png']}\n({missed} labelled duplicates never proposed)",
    )
    ax.legend(loc="upper center")
    save(fig, "score_histogram.png")

    # 4. feature importance
    importance = model.classifier_.feature_importance()
    importance = importance / max(importance.sum(), 1e-12)
    fig, ax = plt.subplots(figsize=(6, 7))
    ax.barh(importance.index[::-1], importance.to_numpy()[::-1], color="#1f77b4")
    ax.set(xlabel="share of total gain", title=PLOTS["feature_importance.png"])
    save(fig, "feature_importance.png")

    # 5. candidates: S-curve beside measured recall by Jaccard bucket; recall vs reduction ratio
    cfg = model.config
    positives = evaluated[evaluated["label"] == 1]
    fig, (left_ax, right_ax) = plt.subplots(1, 2, figsize=(11, 4.5))
    grid = np.linspace(0, 1, 201)
    left_ax.plot(
        grid,
        lsh_probability(grid, cfg.lsh_bands, cfg.lsh_rows),
        color="#7f7f7f",
        label=f"LSH S-curve {cfg.lsh_bands}×{cfg.lsh_rows}",
    )
    buckets = pd.DataFrame()
    if len(positives):
        jaccard = (
            build_pair_features(result.batch.inputs, positives["i"].to_numpy(), positives["j"].to_numpy())[
                "jaccard_core"
            ]
            .fillna(0.0)
            .to_numpy()
        )
        bucket = np.clip(np.digitize(jaccard, JACCARD_EDGES[1:-1]), 0, len(JACCARD_EDGES) - 2)
        frame = pd.DataFrame(
            {
                "bucket": bucket,
                "lsh": positives["via_lsh"].to_numpy(),
                "any": positives["proposed"].to_numpy(),
            }
        )
        buckets = frame.groupby("bucket").agg(pairs=("lsh", "size"), lsh=("lsh", "mean"), any=("any", "mean"))
        middle = (JACCARD_EDGES[buckets.index] + JACCARD_EDGES[buckets.index + 1]) / 2
        left_ax.plot(middle, buckets["lsh"], "o", color="#1f77b4", label="measured: via LSH")
        left_ax.plot(middle, buckets["any"], "^", color="#2ca02c", label="measured: LSH or fields")
        for x, y, count in zip(middle, buckets["any"], buckets["pairs"]):
            left_ax.annotate(
                str(int(count)), (x, y), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=7
            )
    left_ax.set(
        xlabel="Jaccard of core 5-word shingles",
        ylabel="share of labelled duplicates proposed",
        ylim=(0, 1.08),
        title="Candidate recall by Jaccard bucket (n above points)",
    )
    left_ax.legend(loc="lower right", fontsize=8)
    left_ax.grid(alpha=0.3)
    sweep = pd.DataFrame()
    if len(result.batch) <= MAX_ADS_FOR_SWEEP:
        sweep = _band_sweep(result, evaluated, cfg)
        right_ax.plot(sweep["reduction_ratio"], sweep["candidate_recall"], "o-", color="#1f77b4")
        for row in sweep.itertuples():
            right_ax.annotate(
                f"{row.bands}×{row.rows}",
                (row.reduction_ratio, row.candidate_recall),
                textcoords="offset points",
                xytext=(4, -10),
                fontsize=7,
            )
        chosen = sweep[sweep["chosen"]]
        right_ax.plot(
            chosen["reduction_ratio"], chosen["candidate_recall"], "o", color="#d62728", ms=9, label="chosen"
        )
        right_ax.legend(loc="lower left", fontsize=8)
    right_ax.set(
        xlabel="reduction ratio (1 − candidates / all pairs)",
        ylabel="candidate recall",
        title="Bands × rows: recall against reduction ratio",
    )
    right_ax.grid(alpha=0.3)
    save(fig, "candidates.png")
    facts["jaccard_buckets"] = buckets
    facts["band_sweep"] = sweep

    # 6. group sizes
    sizes = result.groups.groupby("group_id").size().value_counts().sort_index()
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.bar(sizes.index.astype(str), sizes.to_numpy(), color="#1f77b4")
    ax.set_yscale("log")
    ax.set(xlabel="ads in group", ylabel="groups (log)", title=PLOTS["group_sizes.png"])
    save(fig, "group_sizes.png")
    return facts


# ---------------------------------------------------------------------------------- html
CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 8px;text-align:left;
vertical-align:top;font-size:13px}th{background:#f4f4f4}td.num{text-align:right;font-variant-numeric:tabular-nums}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plots figure{margin:0}.plots img{max-width:100%;border:1px solid #eee}
figcaption{font-size:12px;color:#555}mark{background:#fff3a0}.pair td{width:50%;font-size:12px;line-height:1.4}
.meta{color:#555;font-size:12px}.more{color:#888;font-style:italic}.fp{color:#b00}.fn{color:#06c}
"""


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float | np.floating):
        return f"{value:.4f}"
    return html.escape(str(value))


def _meta(ad: pd.Series) -> str:
    parts = []
    for name in ("title", "company", "location", "posted_at", "source"):
        value = ad.get(name)
        if value is not None and not (isinstance(value, float) and math.isnan(value)) and not pd.isna(value):
            parts.append(f"<b>{name}</b>: {html.escape(str(value))}")
    return "<br>".join(parts)


def _pair_table(kind: str, rows: pd.DataFrame, ads: pd.DataFrame) -> str:
    if rows.empty:
        return "<p>None.</p>"
    out = []
    for rank, row in enumerate(rows.itertuples(), 1):
        a, b = ads.iloc[int(row.i)], ads.iloc[int(row.j)]
        how = f"probability {row.probability:.4f}" if row.proposed else "never proposed as a candidate"
        out.append(
            f"<h3 class='{kind}'>{rank}. {html.escape(str(a['ad_id']))} ~ {html.escape(str(b['ad_id']))} "
            f"<span class='meta'>({how})</span></h3>"
            "<table class='pair'><tr>"
            f"<td><div class='meta'>{_meta(a)}</div><p>{_highlighted(a['description'], b['description'])}</p></td>"
            f"<td><div class='meta'>{_meta(b)}</div><p>{_highlighted(b['description'], a['description'])}</p></td>"
            "</tr></table>"
        )
    return "\n".join(out)


def _key_values(values: dict[str, Any]) -> str:
    rows = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td class='num'>{_fmt(v)}</td></tr>" for k, v in values.items()
    )
    return f"<table>{rows}</table>"


def _frame_table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return "<p>–</p>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join(
        "<tr>" + "".join(f"<td class='num'>{_fmt(v)}</td>" for v in row) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def write_report(
    model: Deduplicator,
    result: DedupResult,
    labels: Labels,
    figures: dict[str, Any],
    out_dir: str | os.PathLike[str],
    title: str = "jobdedup evaluation",
    worst: int = WORST_SHOWN,
) -> Path:
    """Write `out_dir/index.html` and its PNG plots; returns the page's path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    evaluated = evaluation_pairs(result, labels)
    facts = _plots(model, result, evaluated, figures, out)
    ads = result.batch.ads
    false_pos = evaluated[(evaluated["label"] == 0) & (evaluated["predicted"] == 1)]
    false_pos = false_pos.sort_values("probability", ascending=False, kind="stable").head(worst)
    false_neg = evaluated[(evaluated["label"] == 1) & (evaluated["predicted"] == 0)]
    false_neg = false_neg.sort_values("probability", ascending=True, kind="stable").head(worst)
    headline = {k: v for k, v in figures.items() if not isinstance(v, dict)}
    per_type = figures.get("per_type")
    per_type_html = ""
    if per_type:
        frame = pd.DataFrame(per_type).T.reset_index(names="dup_type")
        per_type_html = "<h2>Per duplicate type</h2>" + _frame_table(frame)
    buckets = facts["jaccard_buckets"]
    if not buckets.empty:
        buckets = buckets.reset_index()
        buckets.insert(
            0,
            "jaccard",
            [f"{JACCARD_EDGES[b]:.1f}–{JACCARD_EDGES[b + 1]:.1f}" for b in buckets.pop("bucket")],
        )
        buckets = buckets.rename(columns={"lsh": "recall via LSH", "any": "recall via LSH or fields"})
    cfg = model.config
    plots = "".join(
        f"<figure><img src='{name}' alt='{html.escape(caption)}'><figcaption>{html.escape(caption)}"
        "</figcaption></figure>"
        for name, caption in PLOTS.items()
    )
    page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{CSS}</style></head><body>
<h1>{html.escape(title)}</h1>
<p>{len(ads)} ads, {len(result.pairs)} candidate pairs, {int(result.pairs["is_duplicate"].sum())} accepted;
decision threshold {model.threshold_:.4f}; LSH {cfg.lsh_bands} bands × {cfg.lsh_rows} rows.
Precision and recall count final groups; a labelled duplicate never proposed is a false negative.</p>
<h2>Figures</h2>{_key_values(headline)}
{per_type_html}
<h2>Plots</h2><div class="plots">{plots}</div>
<h2>Candidate recall by Jaccard bucket</h2>{_frame_table(buckets)}
<h2>Bands × rows</h2>{_frame_table(facts["band_sweep"])}
<h2>Candidate generation and grouping</h2>{_key_values({**asdict(result.candidates), **asdict(result.grouping)})}
<h2>Worst false positives ({len(false_pos)} shown, highest probability first)</h2>
<p class="meta">Highlighted: words inside a run of {SHINGLE_WORDS} words both ads contain.</p>
{_pair_table("fp", false_pos, ads)}
<h2>Worst false negatives ({len(false_neg)} shown, lowest probability first)</h2>
{_pair_table("fn", false_neg, ads)}
</body></html>
"""
    path = out / "index.html"
    path.write_text(page, encoding="utf-8")
    return path
