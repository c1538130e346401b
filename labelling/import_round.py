"""Bring one round of readers' judgements into `data/judgements/`, checked.

    python -m labelling.import_round 14 out/judging14

A round is drawn by `labelling.draw_pairs_to_judge` into a directory (`pairs.csv`, `assignments.csv`,
`batch_<k>.csv`), and each reader k writes `labels_<k>.csv` there (`pair_id,label,dup_type,reason`,
see `data/judgements/READER_BRIEF.md`). This step checks every reader's file — each row a pair of
that reader's batch, read once, `label` 1 / 0 / unsure, `dup_type` one of the definition's types
for a 1 and empty otherwise, a reason — and stops with one line naming the file and row otherwise.
It then writes the round as `assemble_judgements` reads it: `round<N>_pairs.csv` (the pairs read
at least once, the columns earlier rounds have), `round<N>_assignments.csv` (the reads that were
made) and `round<N>_reader_<k>.csv` (each reader's rows, verbatim), and prints what the round holds
and which second reads disagree (those need a line in `adjudications.csv` before `assemble`). A
pair read a second time whose first reader has not read it stops the import (its second read
would count for nothing, and `assemble_judgements` would not know the pair's decision).

Example:
    >>> # summary = import_round(14, Path("out/judging14"))
    >>> # summary["decided"], summary["disagreements"]
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import pandas as pd

from jobdedup.pipeline.io.contract import DUP_TYPES
from labelling.assemble_judgements import JUDGEMENTS, disagreements, split_reads

PAIR_COLUMNS = ["pair_id", "ad_id_a", "ad_id_b", "stratum", "corpus", "probability", "same_group"]
"""The columns of `round<N>_pairs.csv` (as `draw_pairs_to_judge` writes them, model facts trimmed)."""
ASSIGNMENT_COLUMNS = ["pair_id", "ad_id_a", "ad_id_b", "read", "reader"]
LABEL_COLUMNS = ["pair_id", "label", "dup_type", "reason"]
LABELS = ("1", "0", "unsure")


class RoundError(SystemExit):
    """A round's files cannot be imported: the one line says which file, which row and why."""


def _read(path: Path, columns: list[str]) -> pd.DataFrame:
    if not path.exists():
        raise RoundError(f"{path}: not found")
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [column for column in columns if column not in table.columns]
    if missing:
        raise RoundError(f"{path}: missing column(s) {', '.join(missing)} (expected {', '.join(columns)})")
    return table


def check_labels(labels: pd.DataFrame, assigned: set[str], path: Path) -> None:
    """Stop at the first row of one reader's `labels` that is not a valid read of an assigned pair.

    Example:
        >>> rows = pd.DataFrame({"pair_id": ["p1"], "label": ["1"], "dup_type": ["FULL"], "reason": ["same text"]})
        >>> check_labels(rows, {"p1"}, Path("labels_0.csv"))
    """
    seen: set[str] = set()
    for row, (pair_id, label, dup_type, reason) in enumerate(
        labels[LABEL_COLUMNS].itertuples(index=False), 2
    ):
        where = f"{path}: row {row} ({pair_id})"
        if pair_id not in assigned:
            raise RoundError(f"{where}: not a pair of this reader's batch")
        if pair_id in seen:
            raise RoundError(f"{where}: read twice; keep one line per pair")
        seen.add(pair_id)
        if label not in LABELS:
            raise RoundError(f"{where}: label {label!r} is not one of {', '.join(LABELS)}")
        if label == "1" and dup_type not in DUP_TYPES:
            raise RoundError(
                f"{where}: a duplicate needs a dup_type of {', '.join(DUP_TYPES)}, not {dup_type!r}"
            )
        if label != "1" and dup_type:
            raise RoundError(f"{where}: dup_type {dup_type!r} given for label {label}; leave it empty")
        if not reason.strip():
            raise RoundError(f"{where}: no reason; write one line on what decided it")


def import_round(
    number: int, source: Path, judgements: Path = JUDGEMENTS, force: bool = False
) -> dict[str, Any]:
    """Check the readers' files of round `number` in `source` and write them into `judgements`;
    returns what the round holds (see the module docstring)."""
    prefix = judgements / f"round{number}"
    if Path(f"{prefix}_pairs.csv").exists() and not force:
        raise RoundError(
            f"{prefix}_pairs.csv exists: round {number} was imported already (--force replaces it)"
        )
    pairs = _read(source / "pairs.csv", PAIR_COLUMNS)
    assignments = _read(source / "assignments.csv", ASSIGNMENT_COLUMNS)
    unknown = ~assignments["pair_id"].isin(pairs["pair_id"])
    if unknown.any():
        first = int(unknown.to_numpy().argmax())
        raise RoundError(
            f"{source / 'assignments.csv'}: row {first + 2}: pair {assignments['pair_id'].iloc[first]} is not in pairs.csv"
        )
    readers, files = {}, {}
    for path in sorted(source.glob("labels_*.csv"), key=lambda p: int(p.stem.rsplit("_", 1)[1])):
        reader = path.stem.rsplit("_", 1)[1]
        labels = _read(path, LABEL_COLUMNS)
        check_labels(labels, set(assignments.loc[assignments["reader"] == reader, "pair_id"]), path)
        readers[reader], files[reader] = labels[LABEL_COLUMNS], path
    if not readers:
        raise RoundError(f"{source}: no labels_<k>.csv (the readers' files)")
    reads = pd.concat([labels.assign(reader=reader) for reader, labels in readers.items()], ignore_index=True)
    with_reads = assignments.merge(reads, on=["pair_id", "reader"])  # (the reads that were made)
    read_pairs = pairs[pairs["pair_id"].isin(with_reads["pair_id"])]
    try:
        first, second = split_reads(with_reads)
    except ValueError as error:
        raise RoundError(f"{source}: {error}") from None
    judgements.mkdir(parents=True, exist_ok=True)
    read_pairs[PAIR_COLUMNS].to_csv(f"{prefix}_pairs.csv", index=False)
    with_reads[ASSIGNMENT_COLUMNS].to_csv(f"{prefix}_assignments.csv", index=False)
    for reader, path in files.items():
        shutil.copyfile(path, f"{prefix}_reader_{reader}.csv")  # (checked above: kept as written)
    return {
        "pairs_drawn": len(pairs),
        "pairs_read": len(read_pairs),
        "decided": int(first["label"].isin(["0", "1"]).sum()),
        "duplicates": int((first["label"] == "1").sum()),
        "unsure": int((first["label"] == "unsure").sum()),
        "second_reads": len(second),
        "disagreements": sorted(disagreements(first, second)),
    }


def main() -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("number", type=int, help="the round's number (round<N>_* files)")
    parser.add_argument(
        "source", type=Path, help="the round's directory (pairs.csv, assignments.csv, labels_<k>.csv)"
    )
    parser.add_argument(
        "--judgements", type=Path, default=JUDGEMENTS, help="where rounds are kept (default: %(default)s)"
    )
    parser.add_argument("--force", action="store_true", help="replace a round imported before")
    args = parser.parse_args()
    summary = import_round(args.number, args.source, args.judgements, args.force)
    for key, value in summary.items():
        print(f"{key}: {value}")
    if summary["disagreements"]:
        print("adjudicate the disagreements in adjudications.csv, then run labelling.assemble_judgements")


if __name__ == "__main__":
    main()
