"""The decision policy's switches: each turns one step off and nothing else (the ablation relies
on it), and the generated decisions page names every rule, switch and setting."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from jobdedup.models.policy import DecisionPolicy
from jobdedup.models.rules import CHECK_ORDER, RULES, apply_rules, rule_names
from jobdedup.pipeline.decisions_doc import RULE_CONSTANTS, decisions_markdown

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
    assert rule_names(features, policy.rules).tolist() == ["no_shared_text"]
    assert rule_names(features, policy.without("no_shared_text").rules).tolist() == [None]
    assert apply_rules(np.array([0.9]), features, policy.without("no_shared_text").rules).tolist() == [0.9]


def test_switches_turn_off_one_at_a_time() -> None:
    assert DecisionPolicy().rules == RULES
    assert not DecisionPolicy().without("employer_guard").employer_guard
    assert DecisionPolicy().without("copy_units").employer_guard
    assert set(DecisionPolicy.steps()) == {*RULES, "copy_units", "employer_guard"}
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
    for name in (*RULES, "copy_units", "employer_guard", "RULE_CAP", "RULE_FLOOR",
                 *(c for constants in RULE_CONSTANTS.values() for c in constants)):  # fmt: skip
        assert f"`{name}`" in page, name
