"""`labelling.import_round`: a round of readers' files brought into data/judgements/, checked row by row."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from labelling.assemble_judgements import JUDGEMENTS, ROUNDS
from labelling.import_round import RoundError, import_round


def _round_as_drawn(number: int, into: Path) -> Path:
    """A committed round laid out as `draw_pairs_to_judge` and its readers leave it."""
    into.mkdir()
    shutil.copy(JUDGEMENTS / f"round{number}_pairs.csv", into / "pairs.csv")
    shutil.copy(JUDGEMENTS / f"round{number}_assignments.csv", into / "assignments.csv")
    for path in JUDGEMENTS.glob(f"round{number}_reader_*.csv"):
        shutil.copy(path, into / f"labels_{path.stem.rsplit('_', 1)[1]}.csv")
    return into


def test_rounds_are_the_files_present():
    assert ROUNDS[0] == 2 and 13 in ROUNDS and list(ROUNDS) == sorted(set(ROUNDS))


def test_reimporting_round_13_writes_its_committed_files_and_counts(tmp_path):
    source = _round_as_drawn(13, tmp_path / "judging13")
    summary = import_round(13, source, judgements=tmp_path / "judgements")
    committed = sorted(JUDGEMENTS.glob("round13_*.csv"))
    assert len(committed) == 11  # pairs, assignments, nine readers' files
    for path in committed:  # byte for byte
        assert (tmp_path / "judgements" / path.name).read_bytes() == path.read_bytes(), path.name
    # data/NATURAL_PAIRS.md: 342 pairs, 339 decided (131 duplicates), 3 unsure, 49 read twice, no 0/1 disagreement
    assert (summary["pairs_read"], summary["decided"], summary["duplicates"], summary["unsure"]) == (
        342,
        339,
        131,
        3,
    )
    assert summary["second_reads"] == 49 and summary["disagreements"] == []
    with pytest.raises(RoundError, match="imported already"):
        import_round(13, source, judgements=tmp_path / "judgements")


def test_only_the_reads_made_are_kept(tmp_path):
    source = _round_as_drawn(13, tmp_path / "judging13")
    labels = pd.read_csv(source / "labels_0.csv", dtype=str, keep_default_na=False)
    labels.iloc[:-5].to_csv(source / "labels_0.csv", index=False)  # reader 0 stopped 5 pairs early
    summary = import_round(13, source, judgements=tmp_path / "out")
    made = pd.read_csv(tmp_path / "out" / "round13_assignments.csv", dtype=str)
    assert len(made) == len(pd.read_csv(source / "assignments.csv")) - 5
    assert set(labels["pair_id"].iloc[-5:]).isdisjoint(made.loc[made["reader"] == "0", "pair_id"])
    assert summary["pairs_read"] <= 342


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"label": "2"}, "label '2' is not one of 1, 0, unsure"),
        ({"label": "1", "dup_type": "EXACT"}, "needs a dup_type of FULL"),
        ({"label": "0", "dup_type": "FULL"}, "leave it empty"),
        ({"reason": " "}, "no reason"),
        ({"pair_id": "r13p9999"}, "not a pair of this reader's batch"),
    ],
)
def test_a_bad_row_stops_naming_file_and_row(tmp_path, change, words):
    source = _round_as_drawn(13, tmp_path / "judging13")
    labels = pd.read_csv(source / "labels_3.csv", dtype=str, keep_default_na=False)
    for column, value in change.items():
        labels.loc[4, column] = value
    labels.to_csv(source / "labels_3.csv", index=False)
    with pytest.raises(RoundError, match=rf"labels_3\.csv: row 6 \(r13p\d+\): .*{re.escape(words)}"):
        import_round(13, source, judgements=tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written


def _reader_labels_of_a_pair_read_twice(source: Path, read: str) -> tuple[str, Path, pd.DataFrame]:
    """The first pair read twice, and the labels file (path and rows) of its `read`-th reader."""
    assignments = pd.read_csv(source / "assignments.csv", dtype=str)
    pair_id = assignments.loc[assignments["read"] == "2", "pair_id"].iloc[0]
    reads = assignments[assignments["pair_id"] == pair_id].set_index("read")["reader"]
    path = source / f"labels_{reads[read]}.csv"
    return pair_id, path, pd.read_csv(path, dtype=str, keep_default_na=False)


def test_a_second_read_without_its_first_read_stops(tmp_path):
    source = _round_as_drawn(13, tmp_path / "judging13")
    pair_id, path, labels = _reader_labels_of_a_pair_read_twice(source, "1")
    labels[labels["pair_id"] != pair_id].to_csv(path, index=False)  # the first reader skipped it
    with pytest.raises(RoundError, match=rf"pair {pair_id} has a second read but no first read"):
        import_round(13, source, judgements=tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing written


def test_a_disagreement_between_the_two_reads_is_reported(tmp_path):
    source = _round_as_drawn(13, tmp_path / "judging13")
    pair_id, path, labels = _reader_labels_of_a_pair_read_twice(source, "2")
    row = labels["pair_id"] == pair_id
    flipped = "0" if labels.loc[row, "label"].iloc[0] == "1" else "1"
    labels.loc[row, ["label", "dup_type"]] = [flipped, "FULL" if flipped == "1" else ""]
    labels.to_csv(path, index=False)
    summary = import_round(13, source, judgements=tmp_path / "out")
    assert summary["disagreements"] == [pair_id]


def test_a_pair_read_twice_by_one_reader_stops(tmp_path):
    source = _round_as_drawn(13, tmp_path / "judging13")
    labels = pd.read_csv(source / "labels_1.csv", dtype=str, keep_default_na=False)
    pd.concat([labels, labels.iloc[[0]]]).to_csv(source / "labels_1.csv", index=False)
    with pytest.raises(RoundError, match="read twice"):
        import_round(13, source, judgements=tmp_path / "out")


@pytest.mark.slow
def test_command_line_prints_the_round_and_a_bad_row_as_one_line(tmp_path):
    source = _round_as_drawn(13, tmp_path / "judging13")
    command = [sys.executable, "-m", "labelling.import_round", "13", str(source)]
    done = subprocess.run(
        [*command, "--judgements", str(tmp_path / "a")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "decided: 339" in done.stdout and "second_reads: 49" in done.stdout
    labels = pd.read_csv(source / "labels_2.csv", dtype=str, keep_default_na=False)
    labels.loc[0, "label"] = "yes"
    labels.to_csv(source / "labels_2.csv", index=False)
    done = subprocess.run(
        [*command, "--judgements", str(tmp_path / "b")], capture_output=True, text=True, check=False
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "labels_2.csv: row 2" in done.stderr and "'yes'" in done.stderr
