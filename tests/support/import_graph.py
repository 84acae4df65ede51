"""The import graph of a package, read from its source (nothing is imported), and the two rules
docs/architecture.md states: no import runs up a floor, and no import circle.

Every ``import`` / ``from … import`` of a module of the package counts: at module level, inside a
function (a lazy import still ties the two modules together) and under ``if TYPE_CHECKING:``. One
exception: a module-level ``__getattr__`` (PEP 562) that hands out a name which moved elsewhere is a
compatibility alias, not a dependency, and its imports are not counted.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class Floor:
    number: int
    name: str
    #: what lives on the floor: folders ("store") and top-level modules ("memory"), relative to the package
    members: tuple[str, ...]


@dataclass
class Graph:
    package: str
    #: module -> the package's modules it imports (with the line of the first import)
    edges: dict[str, dict[str, int]] = field(default_factory=dict)
    files: dict[str, Path] = field(default_factory=dict)


def read_floors(markdown: str) -> list[Floor]:
    """The floors table of docs/architecture.md: rows ``| number | name | `member/`, `module.py` … | … |``."""
    floors = []
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            members = tuple(m.rstrip("/").removesuffix(".py") for m in re.findall(r"`([^`]+)`", cells[2]))
            floors.append(Floor(int(cells[0]), cells[1], members))
    return floors


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


class _Imports(ast.NodeVisitor):
    def __init__(self, module: str, is_package: bool, known: set[str], top_level: list[ast.stmt]):
        self.module, self.is_package, self.known = module, is_package, known
        self.top_level = top_level
        self.found: dict[str, int] = {}

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        if node.name == "__getattr__" and any(node is statement for statement in self.top_level):
            return  # a compatibility alias for a moved name
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._add(alias.name, node.lineno)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:  # relative: from the module's package (or the package itself)
            package = self.module.split(".") if self.is_package else self.module.split(".")[:-1]
            package = package[: len(package) - node.level + 1]
            base = ".".join(package + ([base] if base else []))
        submodules = [f"{base}.{a.name}" for a in node.names]
        modules = [s for s in submodules if s in self.known]
        for s in modules:  # ``from pkg import module``: the module, not the package's __init__
            self._add(s, node.lineno)
        if len(modules) < len(submodules):  # and a name defined in the package itself: its __init__ too
            self._add(base, node.lineno)

    def _add(self, name: str, line: int) -> None:
        if name in self.known and name != self.module:
            self.found.setdefault(name, line)


def read_graph(root: Path, package: str) -> Graph:
    """The import graph of ``root/package`` (``root``: the directory that holds the package)."""
    graph = Graph(package)
    for path in sorted((root / package).rglob("*.py")):
        graph.files[_module_name(root, path)] = path
    known = set(graph.files)
    for module, path in graph.files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        visitor = _Imports(module, path.name == "__init__.py", known, tree.body)
        visitor.visit(tree)
        graph.edges[module] = visitor.found
    return graph


def member_of(module: str, package: str) -> str:
    """The folder or top-level module a module belongs to (``memlane.store.sqlite`` -> ``store``);
    the package's own ``__init__`` is ``__init__``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def unplaced(graph: Graph, floors: Iterable[Floor]) -> list[str]:
    """Folders and top-level modules of the package that no floor lists."""
    placed = {m for f in floors for m in f.members}
    return sorted({member_of(m, graph.package) for m in graph.files} - placed)


def upward(graph: Graph, floors: Iterable[Floor]) -> list[str]:
    """Every import of a module on a higher floor than the importer's, as ``a (floor) -> b (floor), line``."""
    floor_of = {m: f for f in floors for m in f.members}
    found = []
    for module, imports in sorted(graph.edges.items()):
        mine = floor_of.get(member_of(module, graph.package))
        for target, line in sorted(imports.items()):
            theirs = floor_of.get(member_of(target, graph.package))
            if mine is not None and theirs is not None and theirs.number > mine.number:
                found.append(f"{module} ({mine.name}) imports {target} ({theirs.name}), "
                             f"{graph.files[module].name}:{line}")
    return found


def circles(edges: Mapping[str, Mapping[str, int]]) -> list[list[str]]:
    """The import circles: each strongly connected set of two or more modules, sorted (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(start: str) -> None:  # iterative, so deep graphs need no recursion limit
        work = [(start, iter(edges.get(start, {})))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            for target in targets:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(edges.get(target, {}))))
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    members = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        members.append(member)
                        if member == node:
                            break
                    if len(members) > 1:
                        found.append(sorted(members))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(found)
