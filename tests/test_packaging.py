"""The package as installed (issue #14): the repository's folders pipeline/, features/, models/ and
data/ are one import package, `jobdedup`; nothing else goes to the top level, the code uses only the
installed names, and every file besides code in those folders is declared as package data.
Building the wheel, installing it into a fresh venv and running it is `make wheel-check` (CI)."""

from __future__ import annotations

import ast
import fnmatch
import json
import os
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("pipeline", "features", "models", "data")
OLD_NAMES = (*FOLDERS, "labelling", "tests", "benchmarks")


def _python_sources() -> Iterator[tuple[str, str]]:
    """(where, source) of every Python file of the project and every notebook code cell."""
    for folder in (*FOLDERS, "jobdedup", "labelling", "tests", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for number, cell in enumerate(cells):
            if cell["cell_type"] == "code":
                yield f"{path.relative_to(ROOT)} cell {number}", "".join(cell["source"])


def test_code_imports_the_installed_names() -> None:
    old = []
    for where, source in _python_sources():
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            old += [f"{where}:{node.lineno} {name}" for name in names if name.split(".")[0] in FOLDERS]
    assert old == []


def test_commands_name_the_installed_modules() -> None:
    """Modules run with `python -m` or named in a string (subprocess arguments), in code, docs and
    the Makefile, have their installed names (`jobdedup.pipeline.cli`)."""
    old = r"(?:pipeline|features|models|data)"
    run = re.compile(rf"-m\s+{old}\.")
    quoted = re.compile(rf"([\"']){old}(?:\.\w+)+\1")
    data_file = re.compile(r"\.(?:parquet|csv|json|jsonl|md|txt|png|py|html)[\"']$")
    files = [ROOT / "Makefile", ROOT / "README.md", *ROOT.glob(".ci/*")]
    for folder in (*FOLDERS, "labelling", "tests", "benchmarks", "notebooks"):
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".ipynb")]
    found = []
    for path in files:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            hits = [m.group() for m in run.finditer(line)]
            hits += [m.group() for m in quoted.finditer(line) if not data_file.search(m.group())]
            found += [f"{path.relative_to(ROOT)}:{number} {hit}" for hit in hits]
    assert found == []


def test_every_data_file_is_package_data() -> None:
    """A file that is not code in the four folders (the default model, common words, the bundled
    data) goes into the wheel only if pyproject.toml's package-data matches it."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]
    undeclared = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*")):
            parts = path.relative_to(ROOT).parts
            if path.is_dir() or path.suffix in (".py", ".pyc") or "__pycache__" in parts:
                continue
            package = ".".join(("jobdedup", *parts[:-1]))
            if not any(fnmatch.fnmatch(path.name, p) for p in patterns.get(package, [])):
                undeclared.append("/".join(parts))
    assert undeclared == []


@pytest.mark.slow
def test_one_top_level_package(tmp_path: Path) -> None:
    """From an unrelated folder: `jobdedup.*` imports (from the checkout, as installed in editable
    mode), the old top-level names do not, and the command's entry point is jobdedup's."""
    script = f"""
import importlib.metadata, importlib.util
for name in {OLD_NAMES!r}:
    assert importlib.util.find_spec(name) is None, name
import jobdedup.pipeline.cli, jobdedup.data, jobdedup.models.default
print(jobdedup.pipeline.cli.__file__)
print(jobdedup.data.BUNDLED_DATA)
(point,) = importlib.metadata.entry_points(group="console_scripts", name="jobdedup")
print(point.value)
"""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    cli, data, entry = done.stdout.split("\n")[:3]
    assert Path(cli) == ROOT / "pipeline" / "cli.py"
    assert Path(data) == ROOT / "data"
    assert entry == "jobdedup.pipeline.cli:main"
