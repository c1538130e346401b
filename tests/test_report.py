"""`evaluate --report DIR`: the page, every plot it references, escaping, no outside resources."""

from __future__ import annotations

import re

import pandas as pd
import pytest

from jobdedup.pipeline.cli import main
from jobdedup.pipeline.report import _highlighted, _pair_table, shared_word_mask, write_report
from tests.conftest import DATA


def _check_report(directory) -> str:
    page = (directory / "index.html").read_text(encoding="utf-8")
    images = re.findall(r"<img[^>]*src='([^']+)'", page)
    assert len(images) >= 6
    for name in images:
        path = directory / name
        assert path.exists() and path.stat().st_size > 1000, name
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # Opens without a server or the internet: no external scripts, styles or images.
    assert not re.search(r"<script|<link|src=['\"]?https?:|@import", page, re.IGNORECASE)
    return page


@pytest.mark.slow
def test_report_of_the_bundled_test_data(tmp_path, default_model, test_ads, test_labels, test_result):
    figures = default_model.evaluate(test_ads, test_labels, result=test_result)
    page = _check_report(write_report(default_model, test_result, test_labels, figures, tmp_path).parent)
    for text in ("Precision-recall", "Worst false positives", "Worst false negatives", "42 bands × 3 rows"):
        assert text in page
    assert page.count("class='pair'") == figures["false_positives"] + min(20, figures["false_negatives"])
    assert "<mark>" in page


@pytest.mark.slow
def test_evaluate_command_writes_the_report(tmp_path, capsys):
    ads = pd.read_parquet(DATA / "test_ads.parquet")
    labels = pd.read_parquet(DATA / "test_labels.parquet")
    keep = labels["group_id"].drop_duplicates().iloc[:40]
    labels = labels[labels["group_id"].isin(keep)]
    ads[ads["ad_id"].isin(labels["ad_id"])].to_csv(tmp_path / "ads.csv", index=False)
    labels.to_csv(tmp_path / "labels.csv", index=False)
    report = tmp_path / "report"
    code = main(
        [
            "evaluate",
            "--ads",
            str(tmp_path / "ads.csv"),
            "--labels",
            str(tmp_path / "labels.csv"),
            "--report",
            str(report),
            "--quiet",
        ]
    )
    assert code == 0 and "report written" in capsys.readouterr().out
    _check_report(report)


def test_ad_text_is_escaped():
    ads = pd.DataFrame(
        {
            "ad_id": ["<a1>", "a2"],
            "title": ["<img src=x onerror=alert(1)>", "Chef"],
            "company": [None, None],
            "location": [None, None],
            "posted_at": [None, None],
            "source": [None, None],
            "description": [
                "pay 5 < 6 & bonus > 0 for the head chef role in town",
                "pay 5 < 6 & bonus > 0 for",
            ],
        }
    )
    rows = pd.DataFrame({"i": [0], "j": [1], "probability": [0.9], "proposed": [True]})
    html_text = _pair_table("fp", rows, ads)
    assert "<img" not in html_text and "&lt;img" in html_text and "&lt;a1&gt;" in html_text
    assert "&lt;" in _highlighted("5 < 6 & 7 > 1 a b c", "5 < 6 & 7 > 1 a b c")


def test_pair_without_descriptions_is_shown_as_such():
    # a worst pair may have no text on either side; read_ads gives pd.NA there
    ads = pd.DataFrame(
        {
            "ad_id": pd.array(["a1", "a2"], dtype="string[pyarrow]"),
            "title": pd.array(["Backend engineer", None], dtype="string[pyarrow]"),
            "description": pd.array([None, None], dtype="string[pyarrow]"),
        }
    )
    rows = pd.DataFrame({"i": [0], "j": [1], "probability": [0.1], "proposed": [True]})
    assert _pair_table("fn", rows, ads).count("(no description)") == 2
    assert _highlighted(float("nan"), "chef wanted") == "<span class='more'>(no description)</span>"


def test_shared_word_mask_marks_five_word_runs():
    a = ["we", "are", "hiring", "a", "data", "engineer", "in", "london", "today"]
    b = ["great", "news", "we", "are", "hiring", "a", "data", "engineer", "in", "leeds"]
    assert shared_word_mask(a, b) == [True] * 7 + [False, False]
