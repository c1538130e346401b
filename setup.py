"""Which packages jobdedup installs (everything else is in pyproject.toml).

The repository keeps its folders at the top (pipeline/, features/, models/, data/), but they are
installed under one import package, `jobdedup`: `jobdedup.pipeline`, `jobdedup.features`,
`jobdedup.models`, `jobdedup.data` and every folder below them, found automatically (a folder
without `__init__.py`, such as data/judgements/, is a namespace package holding package data).
`package_dir` maps each of the four names to its folder, for the wheel and for the editable
install (`pip install -e .`) alike. The package `jobdedup` itself is the folder jobdedup/ (its
`__init__.py` only); labelling/, tests/ and benchmarks/ are not installed.
"""

from setuptools import find_namespace_packages, setup

SUBPACKAGES = ("pipeline", "features", "models", "data")

found = find_namespace_packages(
    include=[*SUBPACKAGES, *(f"{name}.*" for name in SUBPACKAGES)], exclude=["*__pycache__*"]
)
setup(
    packages=["jobdedup", *(f"jobdedup.{name}" for name in found)],
    package_dir={f"jobdedup.{name}": name for name in SUBPACKAGES},
)
