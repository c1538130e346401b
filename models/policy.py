"""The decision steps after the classifier, as switches: what `benchmarks.ablation` turns off one at
a time to measure what each earns (every switch on is the shipped behaviour).

Example:
    >>> policy = DecisionPolicy().without("no_shared_text")
    >>> "no_shared_text" in policy.rules, policy.employer_guard
    (False, True)
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from jobdedup.models.rules import RULES


@dataclass(frozen=True)
class DecisionPolicy:
    """Which decision steps run.

    Attributes:
        rules: the pair rules of `models.rules` that apply (all by default).
        copy_units: ads that are copies of one posting are clustered as one unit
            (`pipeline.group.grouping_units`).
        employer_guard: a final group that joins different employers is split
            (`pipeline.employer_guard`).
    """

    rules: tuple[str, ...] = RULES
    copy_units: bool = True
    employer_guard: bool = True

    def without(self, step: str) -> DecisionPolicy:
        """This policy with one rule or one switch (a field name) turned off."""
        if step in self.rules:
            return dataclasses.replace(self, rules=tuple(rule for rule in self.rules if rule != step))
        if step in self.switches():
            switch_off: dict[str, Any] = {step: False}  # (a field named at run time)
            return dataclasses.replace(self, **switch_off)
        raise ValueError(f"unknown decision step {step!r}")

    @staticmethod
    def switches() -> tuple[str, ...]:
        """The grouping switches: every field but `rules`."""
        return tuple(field.name for field in dataclasses.fields(DecisionPolicy) if field.name != "rules")

    @staticmethod
    def steps() -> tuple[str, ...]:
        """Every rule and switch, in the order the ablation reports them."""
        return (*RULES, *DecisionPolicy.switches())
