"""The layers of docs/architecture.md, checked on the import statements themselves.

Every ``import`` and ``from ... import`` of the product counts, those inside
functions too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "services"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, module_level_only: bool = False) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = tree.body if module_level_only else ast.walk(tree)
    for node in nodes:
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


MODULES = {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _importers(prefix: str) -> dict[str, set[str]]:
    return {name: {i for i in _imports(path) if i.startswith("services.")} for name, path in MODULES.items()
            if name == prefix or name.startswith(prefix + ".")}  # fmt: skip


def _offenders(importers: str, forbidden: tuple[str, ...], allowed: tuple[str, ...] = ()) -> list[str]:
    return sorted(
        f"{name} imports {imp}"
        for name, imports in _importers(importers).items()
        for imp in imports
        if imp.startswith(forbidden) and not imp.startswith(allowed)
    )


def test_the_command_line_imports_no_api_module() -> None:
    # `tansuo serve` and `tansuo api` reach the API through its tansuo.servers entry points.
    assert _offenders("services.cli", ("services.api",)) == []


@pytest.mark.parametrize("layer", ["services.common.domain", "services.common.analysis"])
def test_the_domain_knows_no_adapter_runtime_or_service(layer: str) -> None:
    forbidden = ("services.common.adapters", "services.common.runtime", "services.common.bootstrap",
                 "services.api", "services.cli", "services.search", "services.crawler", "services.scheduler",
                 "services.indexer", "services.ranker", "services.tasks", "services.evaluation")  # fmt: skip
    # native_code is the C module's loader: the one runtime piece the analysis needs.
    assert _offenders(layer, forbidden, allowed=("services.common.runtime.native_code",)) == []


def test_adapters_depend_on_common_only() -> None:
    assert _offenders("services.common.adapters", ("services.",), allowed=("services.common.",)) == []


def test_only_bootstrap_builds_adapters() -> None:
    # Tests, benchmarks and the adapters themselves may name an adapter; product code
    # outside common/ gets its adapters from bootstrap (or, for the tantivy index's own
    # layout tools, from nowhere else).
    outside = ("services.api", "services.cli", "services.search", "services.evaluation", "services.crawler",
               "services.scheduler", "services.indexer", "services.ranker", "services.tasks")  # fmt: skip
    offenders = [o for prefix in outside for o in _offenders(prefix, ("services.common.adapters",))]
    assert offenders == []


def test_no_module_level_import_cycle() -> None:
    graph = {name: {i for i in _imports(path, module_level_only=True) if i in MODULES} for name, path in MODULES.items()}
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_every_adapter_error_is_a_kind_the_ports_declare() -> None:
    from services.common.adapters.elasticsearch.search_index import IndexWriteError
    from services.common.adapters.kafka.bus import BusError, BusUnavailable
    from services.common.adapters.redis.connection import StateUnavailable
    from services.common.adapters.redis.frontier import FrontierLayoutError
    from services.common.adapters.s3.page_store import StoreError, StoreUnavailable
    from services.common.adapters.tantivy.search_index import IndexLocked
    from services.common.errors import (
        BackendError,
        BackendUnavailable,
        ConfigError,
        IndexUnavailable,
        IndexWriterBusy,
    )

    for unavailable in (BusUnavailable, StateUnavailable, StoreUnavailable, IndexUnavailable):
        assert issubclass(unavailable, BackendUnavailable), unavailable
    for refused in (BusError, StoreError, IndexWriteError):
        assert issubclass(refused, BackendError), refused
    assert issubclass(FrontierLayoutError, ConfigError)
    assert issubclass(IndexLocked, IndexWriterBusy) and issubclass(IndexLocked, IndexUnavailable)


def test_runtime_and_adapters_do_not_import_each_other() -> None:
    assert _offenders("services.common.runtime", ("services.common.adapters",)) == []
    assert _offenders("services.common.adapters", ("services.common.runtime",)) == []
