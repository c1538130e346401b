"""Held-out quality of a model beside the plain MinHash-threshold way, on every evaluation set.

Sets (each skipped with a note when its files are missing):
- bundled synthetic test split (data/test_*), as `make demo` shows;
- the full synthetic test split (out/labels_full/test_*, made by `make labels` from ../shared);
- the bundled hand-checked natural test pairs, deduplicated among their own ads;
- the same natural test pairs deduplicated inside the whole real corpus (12,277 ads), which is
  how a user meets them (needs ../shared/data/real_ads.parquet).

By default the model is trained here on the bundled *training* sets only (as `jobdedup demo` does),
because the shipped default model has also seen the bundled test sets; `--model` scores another.

Run: .venv/bin/python -m benchmarks.quality [--model FILE] [--markdown FILE]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from pipeline.baseline import minhash_threshold_baseline
from pipeline.engine import Deduplicator
from pipeline.io import read_ads, read_labels

ROOT = Path(__file__).resolve().parent.parent
REAL_ADS = ROOT.parent / "shared" / "data" / "real_ads.parquet"
SETS = [
    ("synthetic test, bundled", ROOT / "data/test_ads.parquet", ROOT / "data/test_labels.parquet"),
    (
        "synthetic test, full",
        ROOT / "out/labels_full/test_ads.parquet",
        ROOT / "out/labels_full/test_labels.parquet",
    ),
    (
        "natural test pairs, own ads",
        ROOT / "data/natural_test_ads.parquet",
        ROOT / "data/natural_test_pairs.csv",
    ),
    ("natural test pairs, whole real corpus", REAL_ADS, ROOT / "data/natural_test_pairs.csv"),
]
COLUMNS = ["precision", "recall", "f1", "pr_auc", "candidate_recall"]


def held_out_model() -> Deduplicator:
    """The demo's model: trained on the bundled synthetic and natural training sets only."""
    from pipeline.cli import BUNDLED_DATA, TRAINING_SETS
    from pipeline.config import Config

    ads = [read_ads(BUNDLED_DATA / a) for a, _ in TRAINING_SETS]
    labels = [read_labels(BUNDLED_DATA / lab, ads=x) for (_, lab), x in zip(TRAINING_SETS, ads)]
    return Deduplicator(Config(show_progress=False)).fit(ads, labels)


def evaluate_sets(model: Deduplicator) -> list[dict]:
    """Figures of the model and the baseline on every available set."""
    rows = []
    for name, ads_path, labels_path in SETS:
        if not ads_path.exists() or not labels_path.exists():
            print(f"skipped {name}: {ads_path if not ads_path.exists() else labels_path} not found")
            continue
        start = time.perf_counter()
        ads = read_ads(ads_path)
        labels = read_labels(labels_path, ads=ads)
        result = model.run(ads)
        figures = model.evaluate(ads, labels, result=result)
        baseline = minhash_threshold_baseline(result.batch, labels, model.config)
        rows.append(
            {
                "set": name,
                "ads": len(ads),
                "labelled duplicates": figures["labelled_duplicates"],
                "labelled pairs": figures["labelled_pairs"],
                "jobdedup": figures,
                "baseline": baseline,
                "seconds": time.perf_counter() - start,
            }
        )
    return rows


def markdown(rows: list[dict]) -> str:
    """One table: each set's figures for jobdedup and the baseline."""
    header = "| set | ads | dup. pairs | way | " + " | ".join(COLUMNS) + " |"
    lines = [header, "|" + "---|" * (4 + len(COLUMNS))]
    for row in rows:
        for way in ("jobdedup", "baseline"):
            label = "jobdedup" if way == "jobdedup" else f"MinHash ≥ {row['baseline']['threshold']:.2f}"
            values = " | ".join(f"{row[way][c]:.3f}" for c in COLUMNS)
            lines.append(
                f"| {row['set']} | {row['ads']} | {row['labelled duplicates']} | {label} | {values} |"
            )
    return "\n".join(lines)


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", type=Path, default=None, help="default: train on the bundled training sets")
    parser.add_argument("--markdown", type=Path, default=None, help="also write the table here")
    args = parser.parse_args()
    model = Deduplicator.load(args.model).with_config(show_progress=False) if args.model else held_out_model()
    table = markdown(evaluate_sets(model))
    print(table)
    if args.markdown:
        args.markdown.write_text(table + "\n")


if __name__ == "__main__":
    main()
