"""The examples in the package's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest


def _modules() -> list[str]:
    names = []
    for package in ("pipeline", "features", "models"):
        root = importlib.import_module(f"jobdedup.{package}")
        names.append(root.__name__)
        for info in pkgutil.walk_packages(root.__path__, prefix=f"{root.__name__}."):
            if ".spark" in info.name:  # needs a JVM; its examples are marked +SKIP anyway
                continue
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name: str):
    """doctest.testmod finds no failing example in the module (examples marked +SKIP are not run)."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} docstring examples fail"


def test_examples_are_found():
    """The walk above reaches the package's examples: at least 50 of them (so the test is not vacuous)."""
    finder = doctest.DocTestFinder()
    found = sum(
        len(test.examples) for name in _modules() for test in finder.find(importlib.import_module(name))
    )
    assert found >= 50
