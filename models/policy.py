"""Every decision step after the classifier and every value it reads, in one object: the pair
rules of `models.rules` and their constants, how accepted pairs become groups, and the employer
guard. A model file saves its policy (`pipeline.engine.Deduplicator.save`), so editing a default
here does not change what an existing model file decides. `benchmarks.ablation` turns the steps
off one at a time (`without`) to measure what each earns; `docs/decisions.md` is generated from
this class (`pipeline.decisions_doc`).

Example:
    >>> policy = DecisionPolicy().without("no_shared_text")
    >>> "no_shared_text" in policy.rules, policy.employer_guard
    (False, True)
    >>> DecisionPolicy.from_dict(policy.to_dict()) == policy
    True
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

REFUSING_RULES = ("title_word_unnamed", "different_salary_bands", "no_shared_text")
"""Rules that refuse a pair: its probability is capped at `DecisionPolicy.rule_cap`."""
ACCEPTING_RULES = ("same_listing", "same_requisition")
"""Rules that accept a pair: its probability is raised to `DecisionPolicy.rule_floor`."""
RULES = REFUSING_RULES + ACCEPTING_RULES
CHECK_ORDER = (
    "same_listing",
    "same_requisition",
    "title_word_unnamed",
    "different_salary_bands",
    "no_shared_text",
)
"""The order the rules are checked in: the first that holds decides."""


class PolicyError(ValueError):
    """A saved policy this version cannot read (unknown rule or setting, or one missing)."""


@dataclass(frozen=True)
class DecisionPolicy:
    """What decides a pair and a group once the classifier has scored the pairs.

    Attributes:
        rules: the pair rules of `models.rules` that apply (all by default).
        rule_cap: probability given to pairs a refusing rule holds for (at most their score).
        rule_floor: probability given to pairs an accepting rule holds for (at least their score).
        substantive_words: words from which a text is substantive for `no_shared_text` (a
            500-character snippet has ~70).
        nothing_shared: core-text containment below which two substantive texts share nothing
            (`no_shared_text`).
        copy_units: ads that are copies of one posting are clustered as one unit
            (`pipeline.group.grouping_units`).
        copy_probability: two ads of one employer, title and city linked at least this strongly
            are copies of one posting, one unit when components are re-clustered (like the
            scrapes of one listing): AECOM's ad under Leeds, Manchester and Birmingham, of which
            one copy per city names the requisition that links the cities.
        max_group_size_exact: components up to this size are re-clustered with every pair
            scored; larger ones are cut first (`pipeline.group`).
        employer_guard: a final group that joins different employers is split
            (`pipeline.employer_guard`).
    """

    rules: tuple[str, ...] = RULES
    rule_cap: float = 0.01
    rule_floor: float = 0.99
    substantive_words: float = 40.0
    nothing_shared: float = 0.05
    copy_units: bool = True
    copy_probability: float = 0.9
    max_group_size_exact: int = 60
    employer_guard: bool = True

    def without(self, step: str) -> DecisionPolicy:
        """This policy with one rule or one switch (a boolean field) turned off."""
        if step in self.rules:
            return dataclasses.replace(self, rules=tuple(rule for rule in self.rules if rule != step))
        if step in self.switches():
            switch_off: dict[str, Any] = {step: False}  # (a field named at run time)
            return dataclasses.replace(self, **switch_off)
        raise ValueError(f"unknown decision step {step!r}")

    @staticmethod
    def switches() -> tuple[str, ...]:
        """The grouping switches: the boolean fields."""
        return tuple(field.name for field in dataclasses.fields(DecisionPolicy) if field.type == "bool")

    @staticmethod
    def settings() -> tuple[str, ...]:
        """The values steps read: every field but `rules` and the switches."""
        skip = {"rules", *DecisionPolicy.switches()}
        return tuple(field.name for field in dataclasses.fields(DecisionPolicy) if field.name not in skip)

    @staticmethod
    def steps() -> tuple[str, ...]:
        """Every rule and switch, in the order the ablation reports them."""
        return (*RULES, *DecisionPolicy.switches())

    def to_dict(self) -> dict[str, Any]:
        """Plain dict for a model file's manifest."""
        values = dataclasses.asdict(self)
        values["rules"] = list(self.rules)
        return values

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> DecisionPolicy:
        """The policy a model file saved; refuses unknown or missing names (`PolicyError`)."""
        names = {field.name for field in dataclasses.fields(cls)}
        if set(values) != names:
            odd = sorted(set(values) ^ names)
            raise PolicyError(f"decision policy with unknown or missing settings: {', '.join(odd)}")
        unknown = [rule for rule in values["rules"] if rule not in RULES]
        if unknown:
            raise PolicyError(f"decision policy names rules this version does not have: {', '.join(unknown)}")
        return cls(**{**values, "rules": tuple(values["rules"])})
