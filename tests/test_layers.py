"""One-way layers: no import circle among the project's modules, `features/` and `models/` never
import `pipeline/`, and the modules split by job (issues #14, #51) stay small."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("pipeline", "features", "models", "data")


def _modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            # Installed under one import package: the folder pipeline/ is `jobdedup.pipeline`.
            name = ".".join(("jobdedup", *path.relative_to(ROOT).with_suffix("").parts))
            found[name.removesuffix(".__init__")] = path
    return found


def _imports() -> dict[str, set[str]]:
    """Each module's project modules imported anywhere in it (functions included), by name."""
    modules = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                found = resolve(target)
                # A package's own submodules and its parents are not edges (`import a.b` loads `a`).
                if found and found != name and not name.startswith(found + "."):
                    graph[name].add(found)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root, edges in graph.items():
        if root in index:
            continue
        work = [(root, iter(sorted(edges)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_no_import_circle() -> None:
    assert _cycles(_imports()) == []


def test_features_and_models_never_import_pipeline() -> None:
    graph = _imports()
    wrong = {
        (module, target)
        for module, targets in graph.items()
        if module.split(".")[1] in ("features", "models")
        for target in targets
        if target.split(".")[1] == "pipeline"
    }
    assert wrong == set()


@pytest.mark.parametrize(
    "package", ["features/normalize", "pipeline/io", "pipeline/index", "pipeline/service"]
)
def test_split_modules_stay_small(package: str) -> None:
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / package).glob("*.py")}
    assert len(sizes) >= 5
    assert max(sizes.values()) <= 600, sizes


def test_public_names_import_from_where_they_were() -> None:
    from jobdedup.features.normalize import LEGAL_FORM_WORDS, normalize_company  # noqa: F401
    from jobdedup.pipeline.index import (  # noqa: F401
        AddResult,
        Index,
        IndexFileError,
        IndexLockedError,
        IndexMismatchError,
        IndexStore,
        SqliteStore,
        open_store,
    )
    from jobdedup.pipeline.index.core import SLEEP_HOOK  # noqa: F401
    from jobdedup.pipeline.io import (  # noqa: F401
        ADS_COLUMNS,
        STRING,
        Labels,
        csv_delimiter,
        read_ads,
        read_ads_streamed,
        read_labels,
        read_table,
        validate_ads,
        validate_labels,
        write_table,
    )
