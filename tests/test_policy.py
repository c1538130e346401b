"""The decision policy: each switch turns one step off and nothing else (the ablation relies on
it), its settings are what the rules read, a model file carries it, and the generated decisions
page names every rule, switch and setting."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jobdedup.models.persistence import ModelFileError
from jobdedup.models.policy import CHECK_ORDER, RULES, DecisionPolicy, PolicyError
from jobdedup.models.rules import apply_rules, rule_names
from jobdedup.pipeline.decisions_doc import decisions_markdown
from jobdedup.pipeline.engine import Deduplicator

ROOT = Path(__file__).resolve().parents[1]


def _pair(**changes: float) -> pd.DataFrame:
    base = {"same_listing": np.nan, "employer_conflict": 0.0, "requisition_match": np.nan, "sides_without_text": 0.0,
            "title_token_set": 1.0, "title_level_differs": 0.0, "location_conflict": 0.0, "date_gap_days": 1.0,
            "title_specific_only_max": 0.0, "title_words_unnamed": 0.0,
            "salary_bands_disjoint": np.nan, "containment_core_max": 0.8, "log_words_min": 5.0,
            "email_match": np.nan, "phone_match": np.nan}  # fmt: skip
    return pd.DataFrame([{**base, **changes}])


def test_turning_a_rule_off_lets_the_next_one_decide() -> None:
    features = _pair(salary_bands_disjoint=1.0, containment_core_max=0.0)
    assert rule_names(features).tolist() == ["different_salary_bands"]
    policy = DecisionPolicy().without("different_salary_bands")
    assert rule_names(features, policy).tolist() == ["no_shared_text"]
    assert rule_names(features, policy.without("no_shared_text")).tolist() == [None]
    assert apply_rules(np.array([0.9]), features, policy.without("no_shared_text")).tolist() == [0.9]


def test_the_rules_read_their_settings_from_the_policy() -> None:
    """`no_shared_text` at 30 words: a 35-word pair sharing nothing is refused under a policy of
    30 substantive words, not under the default 40; the cap and floor are the policy's."""
    features = _pair(containment_core_max=0.0, log_words_min=float(np.log1p(35)))
    assert rule_names(features).tolist() == [None]
    thirty = dataclasses.replace(DecisionPolicy(), substantive_words=30.0)
    assert rule_names(features, thirty).tolist() == ["no_shared_text"]
    assert apply_rules(np.array([0.9]), features, dataclasses.replace(thirty, rule_cap=0.2)).tolist() == [0.2]
    listed = _pair(same_listing=1.0)
    assert apply_rules(np.array([0.3]), listed, dataclasses.replace(thirty, rule_floor=0.8)).tolist() == [0.8]


def test_switches_turn_off_one_at_a_time() -> None:
    assert DecisionPolicy().rules == RULES
    assert not DecisionPolicy().without("employer_guard").employer_guard
    assert DecisionPolicy().without("copy_units").employer_guard
    assert set(DecisionPolicy.steps()) == {*RULES, "copy_units", "employer_guard"}
    assert set(DecisionPolicy.settings()).isdisjoint(DecisionPolicy.steps())
    assert sorted(CHECK_ORDER) == sorted(RULES)
    with pytest.raises(ValueError, match="unknown decision step"):
        DecisionPolicy().without("no_such_rule")


def test_a_models_policy_survives_a_config_change(default_model) -> None:
    model = default_model.with_policy(DecisionPolicy().without("no_shared_text"))
    assert "no_shared_text" not in model.with_config(jobs=1).policy.rules
    assert default_model.policy == DecisionPolicy()


def test_the_decisions_page_is_generated_and_names_every_rule_and_constant() -> None:
    page = decisions_markdown()
    assert (ROOT / "docs" / "decisions.md").read_text(encoding="utf-8") == page, (
        "docs/decisions.md is stale: python -m jobdedup.pipeline.decisions_doc > docs/decisions.md"
    )
    for name in (*RULES, *(field.name for field in dataclasses.fields(DecisionPolicy))):
        assert f"`{name}`" in page, name


def test_a_model_file_carries_its_policy(default_model, tmp_path) -> None:
    """A model saved with another policy decides by it when loaded, whatever the defaults."""
    policy = dataclasses.replace(DecisionPolicy().without("employer_guard"), nothing_shared=0.07)
    default_model.with_policy(policy).save(tmp_path / "m.json")
    assert Deduplicator.load(tmp_path / "m.json").policy == policy


def test_a_policy_this_version_cannot_read_is_refused(default_model, tmp_path) -> None:
    """Unknown rules or settings in a saved policy stop with a one-line message, as does a file of
    an older format (saved before the policy was)."""
    with pytest.raises(PolicyError, match="no_such_rule"):
        DecisionPolicy.from_dict({**DecisionPolicy().to_dict(), "rules": ["no_such_rule"]})
    with pytest.raises(PolicyError, match="link_floor"):
        DecisionPolicy.from_dict({**DecisionPolicy().to_dict(), "link_floor": 0.5})
    default_model.save(tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text())
    document["format_version"] = 3
    (tmp_path / "old.json").write_text(json.dumps(document))
    with pytest.raises(ModelFileError, match="version 3.*jobdedup train") as refused:
        Deduplicator.load(tmp_path / "old.json")
    assert "\n" not in str(refused.value)
