"""Score a model on the sealed test: pair precision and recall of its groups on two corpora of
`../shared/data/more_ads.parquet` that no rule, setting or training ever saw (issue 50).

The pairs were drawn once by `labelling.draw_sealed` (disjoint strata, each uniform, pool
sizes in `data/judgements/sealed/strata.csv`) and read blind once by three readers, 10 % twice
(`data/judgements/sealed/round50_*`). A pair's label is its first read; a pair whose second read
says 1 where the first says 0 (or the reverse) counts as unsure. The model deduplicates the ads of
the sealed corpora end to end; a labelled pair counts as grouped when both its ads end in one
group. `models.metrics.stratified_estimate` weighs every pair by its stratum's pool size.

Never read the sealed pairs' errors: this script prints figures only.

Run: .venv/bin/python -m benchmarks.sealed [--model FILE | --as-drawn] [--markdown FILE]
     (`--as-drawn` scores the groups of the model that drew the pairs, as recorded then)
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from jobdedup.data import sealed_ads
from jobdedup.models.metrics import stratified_estimate
from jobdedup.pipeline.engine import Deduplicator
from jobdedup.pipeline.io import read_ads
from labelling.assemble_judgements import JUDGEMENTS, _readers, agreement, split_reads

ROOT = Path(__file__).resolve().parent.parent
MORE_ADS = ROOT.parent / "shared" / "data" / "more_ads.parquet"
SEALED = JUDGEMENTS / "sealed"
PREFIX = "round50"


def sealed_labels() -> tuple[pd.DataFrame, dict[str, float]]:
    """Decided sealed pairs (pair_id, ad_id_a, ad_id_b, stratum, same_group as drawn, label) and
    the agreement of the blind second reads."""
    pairs = pd.read_csv(SEALED / f"{PREFIX}_pairs.csv", dtype=str)
    reads = _readers(PREFIX, SEALED).merge(
        pd.read_csv(SEALED / f"{PREFIX}_assignments.csv", dtype={"pair_id": str}), on=["pair_id", "reader"]
    )
    first, second = split_reads(reads)
    figures = agreement(first.loc[second.index, "label"], second["label"])
    label = first["label"].copy()
    decided_both = second["label"].isin(["0", "1"]) & first.loc[second.index, "label"].isin(["0", "1"])
    clash = second.index[decided_both & (first.loc[second.index, "label"] != second["label"])]
    label[clash] = "unsure"
    labelled = pairs.merge(label.rename("label"), left_on="pair_id", right_index=True)
    labelled = labelled[labelled["label"].isin(["0", "1"])].reset_index(drop=True)
    labelled["label"] = labelled["label"].astype(int)
    figures["clashes_made_unsure"] = len(clash)
    return labelled, figures


def grouped_by_model(model: Deduplicator, labelled: pd.DataFrame, ads_path: Path = MORE_ADS) -> pd.Series:
    """Per labelled pair, whether the model's groups on the sealed corpora hold both its ads."""
    ads = read_ads(ads_path)
    ads = ads[sealed_ads(ads)].reset_index(drop=True)
    groups = model.with_config(show_progress=False).run(ads).groups.set_index("ad_id")["group_id"]
    return pd.Series(
        groups.reindex(labelled["ad_id_a"]).to_numpy() == groups.reindex(labelled["ad_id_b"]).to_numpy(),
        index=labelled.index,
    )


def markdown(name: str, estimate: dict[str, float], figures: dict[str, float]) -> str:
    """One table row per scored model, with the reads' agreement below."""
    return (
        "| model | decided pairs | labelled pairs grouped | pair precision (95 %) | recall (95 %) |\n"
        "|---|---:|---:|---|---|\n"
        f"| {name} | {estimate['pairs']} | {estimate['grouped_pairs']} | "
        f"{estimate['precision']:.3f} ({estimate['precision_low']:.3f}-{estimate['precision_high']:.3f}) | "
        f"{estimate['recall']:.3f} ({estimate['recall_low']:.3f}-{estimate['recall_high']:.3f}) |\n\n"
        f"Second reads: {figures['pairs']}, both decided {figures['both_decided']}, agreeing "
        f"{figures['agree_decided']:.3f}, kappa {figures['kappa_decided']:.3f} (decided) / "
        f"{figures['kappa_three_answers']:.3f} (with unsure); {figures['clashes_made_unsure']} 0 / 1 "
        "clashes counted as unsure.\n"
    )


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--model", type=Path, default=None, help="model file (default: the shipped one)")
    which.add_argument("--as-drawn", action="store_true", help="score the drawing model's recorded groups")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table here")
    args = parser.parse_args()
    labelled, figures = sealed_labels()
    if args.as_drawn:
        name = "as drawn (shipped model at the issue's start)"
        grouped = labelled["same_group"].map({"True": True, "False": False})
    else:
        if not MORE_ADS.exists():
            raise SystemExit(f"{MORE_ADS}: not found (the sealed test needs ../shared)")
        path = args.model or ROOT / "models/default/model.json"
        name = str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)
        grouped = grouped_by_model(Deduplicator.load(path), labelled)
    sizes = pd.read_csv(SEALED / "strata.csv").set_index("stratum")["pool_size"]
    estimate = stratified_estimate(labelled.assign(grouped=grouped.to_numpy()), sizes)
    table = markdown(name, estimate, figures)
    print(table)
    if args.markdown:
        args.markdown.write_text(table)


if __name__ == "__main__":
    main()
