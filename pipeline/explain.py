"""Why the model decided what it did about one pair of ads (`jobdedup explain`).

The pair's features, its duplicate probability, each feature's contribution to the raw score
(LightGBM `pred_contrib`, in log-odds: the contributions plus `bias` sum to the raw score and
`probability = 1 / (1 + exp(-raw_score))`), the duplicate type the rules would give it, and the
text blocks (cleaned by `pipeline.clean`) the two ads share and do not share.

Example:
    >>> # explanation = explain_pair(model, ads, "123", "456")
    >>> # print(format_explanation(explanation))
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from jobdedup.features.pairs import build_pair_features
from jobdedup.models.dup_types import DUP_TYPES, assign_dup_types
from jobdedup.models.rules import rule_names
from jobdedup.pipeline.boilerplate import merge_block_sets
from jobdedup.pipeline.clean import clean_description, split_blocks
from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.prepare import PreparedBatch
from jobdedup.pipeline.sketch import WORD, block_key

if TYPE_CHECKING:
    from jobdedup.pipeline.engine import Deduplicator

SHOWN_FIELDS = ("title", "company", "location", "posted_at", "source", "url")


def _block_key(block: str) -> str:
    """Blocks compare by their words, as boilerplate detection does (punctuation does not count)."""
    return " ".join(WORD.findall(block))


def compare_blocks(
    text_a: str | None, text_b: str | None, boilerplate: np.ndarray | None = None
) -> dict[str, list]:
    """Cleaned blocks of two descriptions: shared (in A's order), only in A, only in B.

    A missing description (None, NaN, pd.NA) has no blocks. Each block is
    `{"text": ..., "boilerplate": bool}`; a block is boilerplate when its hash is in
    `boilerplate` (corpus boilerplate left out of the core text).

    Example:
        >>> compare_blocks("<p>Chef</p><p>Apply now</p>", "Chef\\nSous chef")["only_b"][0]["text"]
        'sous chef'
    """
    known = set(np.asarray(boilerplate if boilerplate is not None else [], dtype=np.uint64).tolist())
    blocks_a = split_blocks(clean_description(text_a))
    blocks_b = split_blocks(clean_description(text_b))
    keys_a = {_block_key(b) for b in blocks_a}
    keys_b = {_block_key(b) for b in blocks_b}

    def entry(block: str) -> dict[str, Any]:
        key = _block_key(block)
        return {"text": block, "boilerplate": bool(key) and block_key(block) in known}

    return {
        "shared": [entry(b) for b in blocks_a if _block_key(b) in keys_b],
        "only_a": [entry(b) for b in blocks_a if _block_key(b) not in keys_b],
        "only_b": [entry(b) for b in blocks_b if _block_key(b) not in keys_a],
    }


def _row_of(batch: PreparedBatch, ad_id: str) -> int:
    rows = np.flatnonzero(batch.ads["ad_id"].astype(str).to_numpy() == str(ad_id))
    if len(rows) == 0:
        raise JobdedupError(f"ad_id {ad_id!r} is not in the ads file; give two ad_ids from it")
    return int(rows[0])


def _plain(value: Any) -> Any:
    if value is None or (np.ndim(value) == 0 and pd.isna(value)):  # None, NaN, NaT, pd.NA
        return None
    if isinstance(value, np.generic):
        return value.item()
    return value


def explain_pair(
    model: Deduplicator, ads: pd.DataFrame, id_a: str, id_b: str, batch: PreparedBatch | None = None
) -> dict[str, Any]:
    """Everything about the model's view of one pair, as a JSON-ready dict.

    `ads` is prepared as a whole (corpus boilerplate depends on the batch, as in `dedup`); pass an
    already prepared `batch` of the same ads to skip that.

    Example:
        >>> # explain_pair(Deduplicator.load("model.json"), ads, "a1", "a2")["probability"]
    """
    if str(id_a) == str(id_b):
        raise JobdedupError("give two different ad_ids")
    batch = batch if batch is not None else model.prepare(ads)
    i, j = _row_of(batch, id_a), _row_of(batch, id_b)
    features = build_pair_features(batch.inputs, np.array([i]), np.array([j]))
    classifier = model.classifier_
    trees_probability = float(classifier.predict_proba(features)[0, 1])
    probability = float(model.predict_proba(features)[0, 1])  # with the decision rules applied
    contributions = classifier.contributions(features).iloc[0]
    raw_score = float(classifier.raw_scores(features)[0])
    boilerplate = merge_block_sets(model.boilerplate_, batch.batch_boilerplate)
    ad_a, ad_b = batch.ads.iloc[i], batch.ads.iloc[j]
    accepted = probability >= model.threshold_
    return {
        "ad_id_a": str(id_a),
        "ad_id_b": str(id_b),
        "probability": probability,
        "trees_probability": trees_probability,
        "rule": rule_names(features, model.policy)[0],
        "threshold": float(model.threshold_),
        "decision": "duplicate" if accepted else "different",
        "dup_type": str(assign_dup_types(features)[0]) if accepted else None,
        "raw_score": raw_score,
        "bias": float(contributions["bias"]),
        "features": {name: _plain(features[name].iloc[0]) for name in classifier.feature_names_},
        "contributions": {name: float(contributions[name]) for name in classifier.feature_names_},
        "fields": {
            name: [_plain(ad_a.get(name)), _plain(ad_b.get(name))]
            for name in SHOWN_FIELDS
            if name in batch.ads.columns
        },
        "blocks": compare_blocks(ad_a["description"], ad_b["description"], boilerplate),
    }


def _short(text: Any, width: int) -> str:
    text = "-" if text is None or (isinstance(text, float) and math.isnan(text)) else str(text)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def format_explanation(explanation: dict[str, Any], block_chars: int = 160) -> str:
    """Plain text for the terminal: decision, fields, features by |contribution|, text blocks."""
    e = explanation
    lines = [
        f"pair {e['ad_id_a']}  ~  {e['ad_id_b']}",
        f"probability {e['probability']:.4f} (threshold {e['threshold']:.4f}) -> {e['decision']}"
        + (f", type {e['dup_type']}" if e["dup_type"] else ""),
        "",
        f"{'field':<12}{'A':<42}  B",
    ]
    for name, (a, b) in e["fields"].items():
        mark = "=" if a == b else "≠"
        lines.append(f"{name:<10}{mark} {_short(a, 40):<42}  {_short(b, 40)}")
    lines += ["", f"{'feature':<28}{'value':>10}{'contribution':>14}"]
    order = sorted(e["contributions"], key=lambda k: -abs(e["contributions"][k]))
    for name in order:
        value = e["features"][name]
        shown = "NaN" if value is None else f"{value:.4f}"
        lines.append(f"{name:<28}{shown:>10}{e['contributions'][name]:>+14.4f}")
    lines.append(f"{'bias':<28}{'':>10}{e['bias']:>+14.4f}")
    lines.append(
        f"{'= raw score (log-odds)':<28}{'':>10}{e['raw_score']:>+14.4f}"
        f"   -> probability 1/(1+exp(-raw)) = {e['trees_probability']:.4f}"
    )
    if e["rule"]:
        lines.append(f"decision rule {e['rule']} holds -> probability {e['probability']:.4f}")
    blocks = e["blocks"]
    for key, title in (("shared", "shared blocks"), ("only_a", "only in A"), ("only_b", "only in B")):
        lines += ["", f"{title} ({len(blocks[key])}):"]
        for block in blocks[key]:
            tag = " [boilerplate]" if block["boilerplate"] else ""
            lines.append(f"  - {_short(block['text'], block_chars)}{tag}")
    return "\n".join(lines)


def format_per_type(per_type: dict[str, dict[str, Any]]) -> str:
    """Plain-text table of `evaluate`'s `per_type` figures."""
    lines = [f"{'duplicate type':<16}{'labelled':>10}{'found':>8}{'typed':>8}{'precision':>11}{'recall':>9}"]
    for name in DUP_TYPES:
        row = per_type.get(name)
        if not row:
            continue
        lines.append(
            f"{name:<16}{row['labelled']:>10}{row['found']:>8}{row['typed']:>8}"
            + "".join(
                f"{'-' if math.isnan(row[key]) else format(row[key], '.4f'):>{width}}"
                for key, width in (("precision", 11), ("recall", 9))
            )
        )
    return "\n".join(lines)


def add_explain_parser(commands: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register `jobdedup explain` on the CLI's sub-parsers."""
    explain = commands.add_parser(
        "explain",
        help="show why the model calls two ads duplicates or not",
        description="Features of the pair ID_A, ID_B in ADS, the duplicate probability, each feature's "
        "contribution to the raw score (LightGBM pred_contrib; they plus the bias sum to the raw score), "
        "the duplicate type and the cleaned text blocks the two ads share and do not share.",
    )
    explain.add_argument("--ads", type=Path, required=True, help="ads file holding both ads")
    explain.add_argument("--model", type=Path, default=None, help="model file (default: the bundled model)")
    explain.add_argument("--json", type=Path, default=None, help="also write the explanation as JSON here")
    explain.add_argument("id_a", metavar="ID_A", help="ad_id of the first ad")
    explain.add_argument("id_b", metavar="ID_B", help="ad_id of the second ad")
    common(explain)


def cmd_explain(args: argparse.Namespace) -> int:
    """Run `jobdedup explain`: plain text on stdout, JSON with `--json`."""
    from jobdedup.pipeline.io import read_ads
    from jobdedup.pipeline.model_files import model_from_args

    model = model_from_args(args)
    ads = read_ads(args.ads, model.config.max_description_chars)
    explanation = explain_pair(model, ads, args.id_a, args.id_b)
    print(format_explanation(explanation))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(explanation, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0
