"""The terminal labelling loop, driven through its stdin in a subprocess like a user would."""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
import threading
import time

import pandas as pd
import pytest

from jobdedup.pipeline.cli import main
from jobdedup.pipeline.errors import JobdedupError
from jobdedup.pipeline.io import read_labels, validate_ads
from jobdedup.pipeline.label_loop import (
    PROMPT,
    LabelsFile,
    sample_accepted,
    sample_uncertain,
    uncertain_pairs,
)
from tests.conftest import DATA, ROOT, run_cli

SHOWN = re.compile(r"^\[\d+/\d+\] (\S+)  ~  (\S+)", re.MULTILINE)


@pytest.fixture(scope="module")
def ads_csv(tmp_path_factory):
    folder = tmp_path_factory.mktemp("label")
    ads = pd.read_parquet(DATA / "test_ads.parquet")
    labels = pd.read_parquet(DATA / "test_labels.parquet")
    keep = labels["group_id"].drop_duplicates().iloc[:50]
    ads = ads[ads["ad_id"].isin(labels.loc[labels["group_id"].isin(keep), "ad_id"])]
    ads.to_csv(folder / "ads.csv", index=False)
    return folder / "ads.csv"


def _label(ads_csv, labels, answers: str, *extra: str) -> subprocess.CompletedProcess:
    return run_cli(
        "label",
        "--ads",
        ads_csv,
        "--labels",
        labels,
        "--quiet",
        "--lines",
        "3",
        *extra,
        stdin=answers,
        timeout=120,
    )


def _rows(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.mark.slow
def test_answers_back_and_unsure_end_up_in_the_labels_file(tmp_path, ads_csv):
    labels = tmp_path / "labels.csv"
    # y, n, an invalid answer then unsure, back twice (over the unsure pair, then over the n), y, n, y, quit.
    done = _label(ads_csv, labels, "y\nn\nmaybe\nu\nb\nb\ny\nn\ny\nq\n")
    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout  # no colours when stdout is not a terminal
    assert "please answer" in done.stdout
    shown = [tuple(m) for m in SHOWN.findall(done.stdout)]
    p1, p2, p3, p4, p5 = shown[0], shown[1], shown[2], shown[3], shown[8]
    assert shown == [p1, p2, p3, p4, p3, p2, p3, p4, p5]
    assert _rows(labels) == [
        ["ad_id_a", "ad_id_b", "label"],
        [*p1, "1"],
        [*p2, "1"],
        [*p3, "0"],
        [*p4, "1"],
    ]
    # A second session skips what is labelled and appends after it.
    again = _label(ads_csv, labels, "n\n")  # then end of input: stops like quit
    assert again.returncode == 0, again.stderr
    first = tuple(SHOWN.findall(again.stdout)[0])
    assert first not in {p1, p2, p3, p4}
    assert _rows(labels)[-1] == [*first, "0"] and len(_rows(labels)) == 6


@pytest.mark.slow
def test_nothing_is_lost_on_ctrl_c(tmp_path, ads_csv):
    labels = tmp_path / "labels.csv"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jobdedup.pipeline.cli",
            "label",
            "--ads",
            str(ads_csv),
            "--labels",
            str(labels),
            "--quiet",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        # Ctrl-C as at a terminal: in full-suite runs the child started with SIGINT ignored (the
        # interrupted loop went on waiting; with the default disposition set here it stops), an
        # inheritance from the test process whose source was not found.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 (no threads started)
    )
    shown: list[str] = []
    reader = threading.Thread(
        target=lambda: shown.extend(iter(lambda: process.stdout.read(1), "")), daemon=True
    )
    reader.start()
    try:
        process.stdin.write("n\n")
        process.stdin.flush()
        deadline = time.monotonic() + 60

        # Interrupt only once the loop asks about the second pair (it then waits for the answer).
        def waiting_on_second_pair() -> bool:
            text = "".join(shown)
            return "[2/" in text and text.rstrip().endswith(PROMPT.rstrip())

        while not waiting_on_second_pair():
            assert time.monotonic() < deadline, "".join(shown)[-500:]
            time.sleep(0.05)
        assert len(_rows(labels)) == 2
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        err = process.stderr.read()
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130 and "interrupted" in err
    assert _rows(labels)[1][2] == "0"


@pytest.mark.slow
def test_retrain_at_the_end(tmp_path, ads_csv):
    labels = tmp_path / "labels.csv"
    model = tmp_path / "model.json"
    done = _label(ads_csv, labels, "y\nn\ny\nn\ny\nq\ny\n", "--retrain", str(model), "--labels-only")
    assert done.returncode == 0, done.stderr
    assert "retrained" in done.stdout and model.exists()
    from jobdedup.pipeline.engine import Deduplicator

    assert 0.0 <= Deduplicator.load(model).threshold_ <= 1.0


def test_labels_file_back_rewrites_only_the_last_answer(tmp_path):
    path = tmp_path / "l.csv"
    path.write_text("ad_id_a,ad_id_b,label,note\nx,y,1,kept")  # no final newline, extra column
    labels = LabelsFile(path)
    labels.append("a", "b", 0)
    labels.append("c", "d", 1)
    labels.remove_last("d", "c")
    assert _rows(path) == [
        ["ad_id_a", "ad_id_b", "label", "note"],
        ["x", "y", "1", "kept"],
        ["a", "b", "0", ""],
    ]
    assert labels.known == {frozenset("xy"), frozenset("ab")}
    assert not os.path.exists(str(path) + ".tmp")


@pytest.mark.parametrize("sep", [";", "\t"])
def test_labels_file_keeps_a_semicolon_or_tab_separator(tmp_path, sep):
    path = tmp_path / "l.csv"
    path.write_bytes(
        f"\ufeffad_id_a{sep}ad_id_b{sep}label\r\nx{sep}y{sep}1\r\n".encode()
    )  # as Excel saves it
    labels = LabelsFile(path)
    assert labels.known == {frozenset("xy")}
    labels.append("a", "b;c", 0)
    labels.append("c", "d", 1)
    labels.remove_last("c", "d")
    ads = pd.DataFrame({"ad_id": ["x", "y", "a", "b;c"], "description": ["t"] * 4})
    pairs = read_labels(path, ads=validate_ads(ads)).pairs
    assert pairs[["ad_id_a", "ad_id_b", "label"]].values.tolist() == [["x", "y", 1], ["a", "b;c", 0]]


def test_labels_file_that_is_not_utf8_is_a_clear_error(tmp_path):
    path = tmp_path / "l.csv"
    path.write_bytes("ad_id_a,ad_id_b,label\nCaf\u00e9-1,x,1\n".encode("cp1252"))
    with pytest.raises(JobdedupError, match=r"l.csv: not UTF-8 text \(byte 25\); save it as UTF-8"):
        LabelsFile(path)


def test_most_uncertain_first_and_known_pairs_skipped():
    pairs = pd.DataFrame(
        {"ad_id_a": ["a", "b", "c"], "ad_id_b": ["z", "z", "z"], "probability": [0.95, 0.4, 0.05]}
    )
    order = uncertain_pairs(pairs, 0.3, {frozenset(("z", "c"))})
    assert order["ad_id_a"].tolist() == ["b", "a"]


@pytest.mark.slow
def test_sample_of_accepted_pairs_gives_an_estimated_precision(tmp_path, ads_csv):
    labels = tmp_path / "sample.csv"
    done = _label(
        ads_csv, labels, "y\n" * 8 + "u\n" + "n\n" * 2 + "q\n", "--sample", "accepted", "--size", "15"
    )
    assert done.returncode == 0, done.stderr
    assert "a uniform sample of 15 accepted pairs" in done.stdout
    rows = _rows(labels)
    assert rows[0] == ["ad_id_a", "ad_id_b", "label", "sample"]
    assert [row[2:] for row in rows[1:]] == [["1", "accepted"]] * 8 + [
        ["0", "accepted"]
    ] * 2  # unsure not written
    shown = SHOWN.findall(done.stdout)
    assert len(set(shown)) == len(shown) == 12  # distinct pairs: 11 answered (one unsure), the 12th quit
    report = tmp_path / "eval.json"
    evaluated = run_cli(
        "evaluate", "--ads", ads_csv, "--labels", labels, "--json", report, "--quiet", timeout=120
    )
    assert evaluated.returncode == 0, evaluated.stderr
    assert (
        "estimated precision of accepted pairs: 0.800 (95 % interval 0.490-0.943, from 10" in evaluated.stdout
    )
    figures = pd.read_json(report, typ="series")
    assert figures["estimated_precision"] == pytest.approx(0.8)
    assert figures["precision_sample_size"] == 10 and figures["precision_sample_not_accepted_now"] == 0
    # A second sample leaves out the pairs already labelled.
    again = _label(ads_csv, labels, "q\n", "--sample", "accepted", "--size", "15")
    first_again = SHOWN.findall(again.stdout)
    assert first_again and first_again[0] not in {tuple(row[:2]) for row in rows[1:]}


@pytest.mark.slow
def test_sample_of_a_batch_without_accepted_pairs_says_so(tmp_path):
    ads = tmp_path / "two.csv"
    pd.DataFrame(
        {
            "ad_id": ["1", "2"],
            "description": [
                "Night shift nurse for a care home in Leeds.",
                "Senior Java developer, remote, fintech.",
            ],
            "title": ["Nurse", "Java Developer"],
        }
    ).to_csv(ads, index=False)
    done = _label(ads, tmp_path / "labels.csv", "", "--sample", "accepted")
    assert done.returncode == 0, done.stderr
    assert "no accepted pairs to sample in 2 ads" in done.stdout


def test_no_candidate_pairs_to_choose_from():
    # a batch without candidate pairs (or with all of them labelled) gives empty queues, not a KeyError
    none = pd.DataFrame({"ad_id_a": [], "ad_id_b": [], "probability": []}).astype(
        {"ad_id_a": str, "ad_id_b": str, "probability": float}
    )
    assert uncertain_pairs(none, 0.3, set()).empty
    assert sample_uncertain(none, 10, 1, set()).empty
    singletons = pd.DataFrame({"ad_id": ["a", "b"], "group_id": ["a", "b"]})
    assert list(sample_accepted(singletons, 10, 1, set()).columns) == ["ad_id_a", "ad_id_b"]
    one_pair = pd.DataFrame({"ad_id": ["a", "b"], "group_id": ["a", "a"]})
    assert sample_accepted(one_pair, 10, 1, {frozenset("ab")}).empty


@pytest.mark.parametrize("sample", [None, "accepted", "uncertain"])
def test_label_command_on_ads_without_candidate_pairs(tmp_path, sample, capsys):
    ads = tmp_path / "ads.csv"
    ads.write_text("ad_id,description\n1,Chef wanted in a busy Paris kitchen\n2,\n", encoding="utf-8")
    extra = ["--sample", sample] if sample else []
    # in-process: with nothing to show, the loop never reads stdin
    argv = ["label", "--ads", str(ads), "--labels", str(tmp_path / "labels.csv"), "--quiet", *extra]
    assert main(argv) == 0, capsys.readouterr().err
    assert _rows(tmp_path / "labels.csv") == [
        ["ad_id_a", "ad_id_b", "label", *(["sample"] if sample else [])]
    ]
