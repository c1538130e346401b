"""`jobdedup explain`: contributions add up to the model's raw score; text blocks; the command."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from jobdedup.features.pairs import build_pair_features
from jobdedup.pipeline.cli import main
from jobdedup.pipeline.explain import compare_blocks, explain_pair, format_explanation
from tests.conftest import DATA


def _pair(test_result, duplicate: bool) -> tuple[str, str]:
    pairs = test_result.pairs[test_result.pairs["is_duplicate"] == duplicate]
    row = pairs.iloc[len(pairs) // 2]
    return str(row["ad_id_a"]), str(row["ad_id_b"])


@pytest.mark.parametrize("duplicate", [True, False])
def test_contributions_sum_to_the_raw_score(default_model, test_ads, test_result, duplicate):
    id_a, id_b = _pair(test_result, duplicate)
    explanation = explain_pair(default_model, test_ads, id_a, id_b, batch=test_result.batch)
    total = sum(explanation["contributions"].values()) + explanation["bias"]
    ids = test_result.batch.ads["ad_id"].astype(str).tolist()
    features = build_pair_features(
        test_result.batch.inputs, np.array([ids.index(id_a)]), np.array([ids.index(id_b)])
    )
    # The model's own raw score: the mean of its members' raw scores.
    boosters = default_model.classifier_.boosters_
    model_columns = features[default_model.classifier_.feature_names_]
    raw = float(np.mean([booster.predict(model_columns, raw_score=True)[0] for booster in boosters]))
    assert total == pytest.approx(raw, abs=1e-6)
    assert explanation["raw_score"] == pytest.approx(raw, abs=1e-9)
    assert 1.0 / (1.0 + math.exp(-total)) == pytest.approx(explanation["trees_probability"], abs=1e-9)
    scored = test_result.pairs.set_index(["ad_id_a", "ad_id_b"])["probability"]
    assert explanation["probability"] == pytest.approx(float(scored[(id_a, id_b)]), abs=1e-9)
    assert explanation["decision"] == (
        "duplicate" if explanation["probability"] >= default_model.threshold_ else "different"
    )
    assert set(explanation["features"]) == set(default_model.classifier_.feature_names_)


def test_compare_blocks_shared_and_differing():
    blocks = compare_blocks(
        "<p>Senior chef wanted.</p><p>Apply to jobs@x.example!</p>",
        "Senior chef wanted\n\nFull time, 40 hours\n\nApply to jobs@x.example",
    )
    assert [b["text"] for b in blocks["shared"]] == ["senior chef wanted.", "apply to jobs@x.example!"]
    assert blocks["only_a"] == [] and [b["text"] for b in blocks["only_b"]] == ["full time, 40 hours"]


@pytest.mark.parametrize("missing", [None, float("nan"), pd.NA])
def test_compare_blocks_of_a_missing_description(missing):
    # read_ads gives pd.NA for an ad without text (e.g. LinkedIn rows scraped without a body)
    blocks = compare_blocks(missing, "Senior chef wanted\nFull time")
    assert blocks["shared"] == [] and blocks["only_a"] == []
    assert [b["text"] for b in blocks["only_b"]] == ["senior chef wanted", "full time"]
    assert compare_blocks(missing, missing) == {"shared": [], "only_a": [], "only_b": []}


def test_explain_command_for_ads_without_text(tmp_path, capsys):
    ads = pd.DataFrame(
        {
            "ad_id": ["li-1", "li-2", "x"],
            "description": [None, None, "Senior chef wanted in a busy kitchen, full time"],
            "title": ["Backend engineer", "Frontend engineer", "Chef"],
            "company": ["Helsing", "dotbase", None],
            "source": ["linkedin", "linkedin", None],
        }
    )
    ads.to_parquet(tmp_path / "ads.parquet")
    out_json = tmp_path / "explain.json"
    argv = ["explain", "--ads", str(tmp_path / "ads.parquet"), "li-1", "li-2", "--json", str(out_json)]
    assert main([*argv, "--quiet"]) == 0, capsys.readouterr().err
    assert "shared blocks (0):" in capsys.readouterr().out
    assert json.loads(out_json.read_text())["blocks"] == {"shared": [], "only_a": [], "only_b": []}


def test_explain_command_text_and_json(tmp_path, test_result, capsys):
    id_a, id_b = _pair(test_result, True)
    out_json = tmp_path / "explain.json"
    code = main(
        ["explain", "--ads", str(DATA / "test_ads.parquet"), id_a, id_b, "--json", str(out_json), "--quiet"]
    )
    assert code == 0
    text = capsys.readouterr().out
    assert "raw score" in text and "contribution" in text and "shared blocks" in text and id_a in text
    document = json.loads(out_json.read_text())
    assert {"probability", "raw_score", "bias", "features", "contributions", "blocks", "dup_type"} <= set(
        document
    )
    assert sum(document["contributions"].values()) + document["bias"] == pytest.approx(
        document["raw_score"], abs=1e-6
    )
    assert format_explanation(document).splitlines()[0].startswith("pair ")


def test_explain_unknown_id_is_a_one_line_error(capsys):
    code = main(["explain", "--ads", str(DATA / "test_ads.parquet"), "no-such-ad", "also-missing", "--quiet"])
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-ad" in err[0]


@pytest.mark.parametrize("command", ["explain", "label"])
def test_new_commands_have_help(command, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([command, "--help"])
    assert exit_info.value.code == 0
    assert "--seed" in capsys.readouterr().out


def test_a_decision_rule_shows_and_sets_the_probability(default_model, test_ads, test_result):
    """Where a decision rule holds (e.g. two known employers clearly differ), explain names it and
    reports the probability `dedup` wrote, not the trees' own."""
    from jobdedup.models.rules import rule_names

    pairs = test_result.pairs
    ids = test_result.batch.ads["ad_id"].astype(str).tolist()
    left = np.array([ids.index(a) for a in pairs["ad_id_a"]])
    right = np.array([ids.index(b) for b in pairs["ad_id_b"]])
    rules = rule_names(build_pair_features(test_result.batch.inputs, left, right))
    held = np.flatnonzero(pd.notna(rules))
    assert len(held), "the bundled test ads have pairs a decision rule holds for"
    k = held[0]
    explanation = explain_pair(default_model, test_ads, ids[left[k]], ids[right[k]], batch=test_result.batch)
    assert explanation["rule"] == rules[k]
    assert explanation["probability"] == pytest.approx(float(pairs["probability"].iloc[k]), abs=1e-9)
    assert f"decision rule {rules[k]} holds" in format_explanation(explanation)
