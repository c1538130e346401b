"""The `jobdedup` command line: demo, train, dedup, evaluate.

Every command exits 0 on success and non-zero with a one-line reason on error (a traceback only
with `--debug`); progress bars go to stderr, results to stdout and files.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from jobdedup.data import BUNDLED_DATA, HELD_OUT_SETS, TRAINING_SETS, read_sets, sealed_ads
from jobdedup.models.persistence import ModelFileError
from jobdedup.pipeline.config import Config
from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.io import read_ads, read_ads_streamed, read_labels
from jobdedup.pipeline.model_files import model_from_args, write_outputs

if TYPE_CHECKING:  # the engine is imported by the commands that run it
    from jobdedup.pipeline.engine import Deduplicator, DedupResult

FIGURE_ROWS = [
    ("precision", "precision (same final group)"),
    ("recall", "recall (missed candidates count)"),
    ("f1", "F1"),
    ("pr_auc", "PR-AUC (classifier scores)"),
    ("bcubed_precision", "B-cubed precision"),
    ("bcubed_recall", "B-cubed recall"),
    ("candidate_recall", "candidate recall"),
    ("reduction_ratio", "reduction ratio"),
    ("candidate_pairs", "candidate pairs"),
    ("labelled_pairs", "labelled pairs scored"),
    ("threshold", "decision threshold"),
]


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _max_description_chars(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-description-chars",
        type=_positive_int,
        default=None,
        metavar="N",
        help="cut longer descriptions to N characters, with a warning (default: the model's, 100000)",
    )


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--seed", type=int, default=None, help="seed for permutations, splits and trees (default 1)"
    )
    parser.add_argument("--jobs", type=int, default=None, help="threads to use (default 2)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--debug", action="store_true", help="show a full traceback on errors")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every command (also used by the docs)."""
    parser = argparse.ArgumentParser(
        prog="jobdedup",
        description="Find the same job ad posted many times: MinHash LSH + field blocking propose pairs, "
        "a LightGBM classifier decides, and duplicates are grouped without chaining unrelated ads.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="train, deduplicate and evaluate on the bundled data",
        description="Train on the bundled training ads, deduplicate the bundled held-out ads and print "
        "precision/recall beside the plain MinHash-threshold way.",
    )
    demo.add_argument(
        "--out", type=Path, default=Path("jobdedup-demo"), help="output folder (default ./jobdedup-demo)"
    )
    _common(demo)

    train = commands.add_parser(
        "train",
        help="fit a model on labelled ads and save it (one JSON file)",
        description="Fit boilerplate statistics and the pair classifier on ADS with LABELS (pairs or groups form), "
        "pick the decision threshold for --target-precision on held-out vacancies, and save the model.",
    )
    train.add_argument(
        "--ads",
        type=Path,
        required=True,
        action="append",
        help="ads file (.csv, .jsonl or .parquet); repeat --ads/--labels to pool several labelled sets",
    )
    train.add_argument(
        "--labels",
        type=Path,
        required=True,
        action="append",
        help="labels for the --ads at the same position: pairs (ad_id_a, ad_id_b, label) or groups (ad_id, group_id)",
    )
    train.add_argument(
        "--weight",
        type=float,
        action="append",
        metavar="W",
        help="weight of each pair of the --ads/--labels at the same position (give one per set, or none: "
        "1 each; `make model` weighs hand-judged natural pairs 0.5 against synthetic ones)",
    )
    train.add_argument("--model", type=Path, required=True, help="where to write the model (.json)")
    train.add_argument(
        "--target-precision", type=float, default=None, help="precision the threshold aims for (default 0.97)"
    )
    train.add_argument(
        "--members",
        type=_positive_int,
        default=None,
        metavar="N",
        help="boosters with different seeds whose scores are averaged (default 3; 1 trains 3x faster, "
        "its threshold moves more with --seed)",
    )
    train.add_argument("--force", action="store_true", help="overwrite an existing model file")
    _max_description_chars(train)
    _common(train)

    dedup = commands.add_parser(
        "dedup",
        help="find duplicates among a batch of ads",
        description="Writes OUT/pairs.parquet (ad_id_a, ad_id_b, probability, is_duplicate) and OUT/groups.parquet "
        "(ad_id, group_id, group_size, status; one row per input ad).",
    )
    dedup.add_argument("--ads", type=Path, required=True, help="ads file (.csv, .jsonl or .parquet)")
    dedup.add_argument("--model", type=Path, default=None, help="model file (default: the bundled model)")
    dedup.add_argument("--out", type=Path, required=True, help="output folder")
    dedup.add_argument(
        "--format",
        choices=("parquet", "eurostat"),
        default="parquet",
        help="eurostat: also write OUT/duplicates.csv (id1,id2,type; no header; id1 < id2), the submission "
        "file of Eurostat's 2023 deduplication challenge",
    )
    dedup.add_argument(
        "--engine",
        choices=("embedded", "spark"),
        default="embedded",
        help="embedded (default): this process; spark: Apache Spark (needs pip install 'jobdedup[spark]')",
    )
    dedup.add_argument(
        "--spark-master",
        default=None,
        metavar="URL",
        help="with --engine spark: the cluster to run on, e.g. spark://host:7077 (default local[*])",
    )
    _max_description_chars(dedup)
    _common(dedup)

    evaluate = commands.add_parser(
        "evaluate",
        help="deduplicate labelled ads and score precision and recall end to end",
        description="Runs candidate generation, classification and grouping on ADS and scores against LABELS; "
        "a labelled duplicate never proposed as a candidate is a false negative.",
    )
    evaluate.add_argument("--ads", type=Path, required=True, help="ads file")
    evaluate.add_argument("--labels", type=Path, required=True, help="labels file (pairs or groups form)")
    evaluate.add_argument("--model", type=Path, default=None, help="model file (default: the bundled model)")
    evaluate.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    evaluate.add_argument(
        "--baseline", action="store_true", help="also score the plain MinHash-threshold way"
    )
    evaluate.add_argument(
        "--report", type=Path, default=None, help="write an HTML report with plots to REPORT/index.html"
    )
    _max_description_chars(evaluate)
    _common(evaluate)

    from jobdedup.pipeline.explain import add_explain_parser
    from jobdedup.pipeline.label_loop import add_label_parser

    add_explain_parser(commands, _common)
    add_label_parser(commands, _common)
    from jobdedup.pipeline.index.cli import add_index_parser

    add_index_parser(commands, _common)
    from jobdedup.pipeline.service.command import add_serve_parser

    add_serve_parser(commands, _common)
    from jobdedup.pipeline.review.command import add_review_parser

    add_review_parser(commands, _common)
    return parser


def _config(args: argparse.Namespace, base: Config | None = None, **extra: Any) -> Config:
    changes: dict[str, Any] = {k: v for k, v in extra.items() if v is not None}
    if args.seed is not None:
        changes["seed"] = args.seed
    if args.jobs is not None:
        changes["jobs"] = args.jobs
    changes["show_progress"] = not args.quiet
    return (base or Config()).replace(**changes)


def format_figures(figures: dict[str, Any], baseline: dict[str, Any] | None = None) -> str:
    """A plain-text table of evaluation figures (with the baseline beside them if given)."""
    header = f"{'':<36}{'jobdedup':>12}" + (f"{'MinHash threshold':>20}" if baseline else "")
    lines = [header]
    for key, label in FIGURE_ROWS:
        if key not in figures:
            continue
        lines.append(
            f"{label:<36}{_fmt(figures[key]):>12}" + (f"{_fmt(baseline.get(key)):>20}" if baseline else "")
        )
    return "\n".join(lines)


def _fmt(value: Any) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    if isinstance(value, float):
        return f"{value:.4f}"
    return str(value)


def cmd_train(args: argparse.Namespace) -> int:
    from jobdedup.pipeline.engine import Deduplicator

    if args.model.exists() and not args.force:
        raise JobdedupError(f"{args.model}: exists; pass --force to overwrite it")
    if len(args.ads) != len(args.labels):
        raise JobdedupError(
            f"give one --labels per --ads (got {len(args.ads)} --ads and {len(args.labels)} --labels)"
        )
    if args.weight is not None and len(args.weight) != len(args.ads):
        raise JobdedupError(
            f"give one --weight per --ads, or none (got {len(args.ads)} --ads and {len(args.weight)} --weight)"
        )
    if args.weight is not None and not all(w > 0 for w in args.weight):
        raise JobdedupError(f"--weight must be positive (got {args.weight})")
    config = _config(
        args,
        target_precision=args.target_precision,
        max_description_chars=args.max_description_chars,
        classifier_members=args.members,
    )
    ads_sets = [read_ads(path, config.max_description_chars) for path in args.ads]
    for path, ads in zip(args.ads, ads_sets):
        sealed = sealed_ads(ads)
        if sealed.any():
            raise JobdedupError(
                f"{path}: {int(sealed.sum())} ad(s) of a sealed test corpus (e.g. {ads['ad_id'][sealed].iloc[0]}); "
                "the sealed corpora (data/SEALED_CORPORA.txt) are never trained on: leave them out"
            )
    label_sets = [read_labels(path, ads=ads) for path, ads in zip(args.labels, ads_sets)]
    model = Deduplicator(config).fit(ads_sets, label_sets, weights=args.weight)
    model.save(args.model)
    info = model.training_
    print(
        f"trained on {info['ads']} ads, {info['pairs']} pairs ({info['positives']} duplicates); "
        f"threshold {model.threshold_:.4f} for precision {config.target_precision}; saved {args.model}"
    )
    return 0


def cmd_dedup(args: argparse.Namespace) -> int:
    if getattr(args, "spark_master", None) and getattr(args, "engine", "embedded") != "spark":
        raise JobdedupError("--spark-master needs --engine spark")
    if getattr(args, "engine", "embedded") == "spark":
        from jobdedup.pipeline.spark_engine import cmd_dedup_spark

        return cmd_dedup_spark(args)
    model = model_from_args(args)
    # Descriptions are read slice by slice as they are prepared (a million ads' texts never sit
    # in memory at once) and not kept.
    ads, descriptions = read_ads_streamed(
        args.ads, model.config.max_description_chars, model.config.chunk_size
    )
    result = model.run(ads, keep_text=False, descriptions=descriptions)
    write_outputs(result.pairs, result.groups, args.out)
    if args.format == "eurostat":
        from jobdedup.pipeline.eurostat import write_eurostat

        count = write_eurostat(result, args.out / "duplicates.csv")
        print(f"wrote {count} duplicate pairs to {args.out / 'duplicates.csv'} (Eurostat format)")
    groups = result.groups
    duplicated = int((groups["group_size"] > 1).sum())
    print(
        f"{len(groups)} ads, {groups['group_id'].nunique()} groups, {duplicated} ads have a duplicate; "
        f"{len(result.pairs)} candidate pairs, {int(result.pairs['is_duplicate'].sum())} duplicates; "
        f"wrote {args.out / 'pairs.parquet'} and {args.out / 'groups.parquet'}"
    )
    if result.candidates.capped_buckets:
        print(
            f"note: {result.candidates.capped_buckets} oversized buckets ({result.candidates.ads_in_capped_buckets} ads) "
            "were capped to star pairs",
            file=sys.stderr,
        )
    print_employer_splits(result.grouping.employer_splits)
    return 0


def print_employer_splits(splits: list, shown: int = 3) -> None:
    """One line on groups the employer guard split, with the largest few as examples."""
    if not splits:
        print("employer guard: no group joined different employers")
        return
    largest = sorted(splits, key=lambda s: -s.size)[:shown]
    examples = "; ".join(
        f"{s.size} ads of {len(s.employers)} employers ({', '.join(s.employers[:3])}"
        f"{', …' if len(s.employers) > 3 else ''}) -> {s.parts} groups"
        for s in largest
    )
    print(
        f"employer guard: split {len(splits)} groups that joined different employers through ads "
        f"without a company or agency links, e.g. {examples}"
    )


def _evaluate(
    model: Deduplicator, ads_path: Path, labels_path: Path, with_baseline: bool
) -> tuple[DedupResult, dict[str, Any], dict[str, Any] | None]:
    """Run and score the model on labelled ads: (result, figures, baseline figures or None)."""
    from jobdedup.pipeline.baseline import minhash_threshold_baseline

    ads = read_ads(ads_path, model.config.max_description_chars)
    labels = read_labels(labels_path, ads=ads)
    result = model.run(ads)
    figures = model.evaluate(ads, labels, result=result)
    baseline = minhash_threshold_baseline(result.batch, labels, model.config) if with_baseline else None
    return result, figures, baseline


def cmd_evaluate(args: argparse.Namespace) -> int:
    model = model_from_args(args)
    result, figures, baseline = _evaluate(model, args.ads, args.labels, args.baseline)
    print(format_figures(figures, baseline))
    if "estimated_precision" in figures:
        print(format_precision_estimate(figures))
    if "per_type" in figures:
        from jobdedup.pipeline.explain import format_per_type

        print(format_per_type(figures["per_type"]))
    if args.report:
        from jobdedup.pipeline.report import write_report

        labels = read_labels(args.labels, ads=result.batch.ads)
        page = write_report(model, result, labels, figures, args.report)
        print(f"report written to {page}")
    if args.json:
        document = dict(figures)
        if baseline:
            document["baseline_minhash_threshold"] = baseline
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(document, indent=2, sort_keys=True, default=_json_default) + "\n")
    return 0


def format_precision_estimate(figures: dict[str, Any]) -> str:
    """The precision of accepted pairs estimated from a labelled uniform sample of them."""
    line = (
        f"estimated precision of accepted pairs: {figures['estimated_precision']:.3f} "
        f"(95 % interval {figures['estimated_precision_low']:.3f}-{figures['estimated_precision_high']:.3f}, "
        f"from {figures['precision_sample_size']} labelled pairs of a uniform sample)"
    )
    if figures.get("precision_sample_not_accepted_now"):
        line += (
            f"; {figures['precision_sample_not_accepted_now']} sampled pairs are not accepted by this model "
            "and were left out (sample again with this model for an unbiased estimate)"
        )
    return line


def _json_default(value: Any) -> Any:
    return float(value) if hasattr(value, "__float__") else str(value)


def cmd_demo(args: argparse.Namespace) -> int:
    from jobdedup.pipeline.engine import Deduplicator

    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    config = _config(args)
    ads_sets, label_sets, weights = read_sets(TRAINING_SETS)
    print(
        f"1/3 train on {sum(len(a) for a in ads_sets)} bundled training ads "
        f"({', '.join(ads for ads, _ in TRAINING_SETS)} in {BUNDLED_DATA})"
    )
    model = Deduplicator(config).fit(ads_sets, label_sets, weights=weights)
    model.save(out / "model.json")
    print(f"    model saved to {out / 'model.json'} (threshold {model.threshold_:.4f})")
    summary = {}
    for step, (name, ads_file, labels_file) in enumerate(HELD_OUT_SETS):
        target = out / Path(ads_file).stem.removesuffix("_ads")
        print(
            f"{2 + step}/{1 + len(HELD_OUT_SETS)} dedup and evaluate held-out {name} (corpora and employers not in training)"
        )
        result, figures, baseline = _evaluate(
            model, BUNDLED_DATA / ads_file, BUNDLED_DATA / labels_file, True
        )
        write_outputs(result.pairs, result.groups, target)
        print(
            f"    {len(result.groups)} ads; wrote {target / 'pairs.parquet'} and {target / 'groups.parquet'}"
        )
        print(format_figures(figures, baseline))
        summary[name] = {**figures, "baseline_minhash_threshold": baseline}
    (out / "evaluation.json").write_text(
        json.dumps(summary, indent=2, sort_keys=True, default=_json_default) + "\n"
    )
    print(f"figures also in {out / 'evaluation.json'}")
    return 0


COMMANDS = {"demo": cmd_demo, "train": cmd_train, "dedup": cmd_dedup, "evaluate": cmd_evaluate}


def _command(name: str) -> Callable[[argparse.Namespace], int]:
    """The function running a command (explain and label live in their own modules)."""
    if name == "explain":
        from jobdedup.pipeline.explain import cmd_explain

        return cmd_explain
    if name == "label":
        from jobdedup.pipeline.label_loop import cmd_label

        return cmd_label
    if name == "index":
        from jobdedup.pipeline.index.cli import cmd_index

        return cmd_index
    if name == "serve":
        from jobdedup.pipeline.service.command import cmd_serve

        return cmd_serve
    if name == "review":
        from jobdedup.pipeline.review.command import cmd_review

        return cmd_review
    return COMMANDS[name]


_LINE_BREAKS = re.compile(r"\s*[\r\n]+\s*")


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """Print a warning as one line on stderr: ``warning: <message>`` (no source line, no category)."""
    text = _LINE_BREAKS.sub(" ", str(message)).strip()
    print(f"warning: {text}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `jobdedup` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            warnings.showwarning = _show_warning  # restored when the block ends
            return _command(args.command)(args)
    except (JobdedupError, ModelFileError) as error:
        if args.debug:
            raise
        print(f"jobdedup {args.command}: error: {_LINE_BREAKS.sub(' ', str(error))}", file=sys.stderr)
        return 2
    except OSError as error:  # e.g. --out names a file, a full disk, no permission
        if args.debug:
            raise
        where = f"{error.filename}: " if error.filename else ""
        print(
            f"jobdedup {args.command}: error: {where}{error.strerror or error}; "
            "check the path and that it is writable.",
            file=sys.stderr,
        )
        return 2
    except KeyboardInterrupt:
        print(f"jobdedup {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
