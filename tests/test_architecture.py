"""The package's import order, as docs/architecture.md states it, and no import cycles.

docs/architecture.md gives each room of ``catalogue/`` a paragraph ending in a line
``Imports: a, b, c.`` naming the rooms it may import.  This test reads those lines and
every import statement of every module (at module level, inside functions and under
``if TYPE_CHECKING:`` alike, since a function-level import is still a dependency), so the
page and the code cannot drift apart: an import against the order, a room without a
paragraph, or a cycle between modules fails here with the file and line.
"""

from __future__ import annotations

import ast
import pathlib
import re
import tomllib
from collections.abc import Iterator

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "catalogue"
DOC = ROOT / "docs" / "architecture.md"
#: How a module over the limit says why (a comment or its docstring).
LARGE_BECAUSE = re.compile(r"(?i)(over|larger than|longer than|more than) (about )?600 lines")


def module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path: pathlib.Path, name: str, known: set[str]) -> Iterator[tuple[str, int]]:
    """``(imported module, line)`` for every catalogue import of one file."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "catalogue":
                    yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, node.module] if node.module else base)
            else:
                target = node.module or ""
            if target.split(".")[0] != "catalogue":
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                yield (sub if sub in known else target), node.lineno


def room(module: str) -> str:
    """The room of a module: its first-level package or top-level module under catalogue."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "catalogue"


def contract() -> dict[str, set[str]]:
    """Room -> rooms it may import, from the ``Imports:`` lines of docs/architecture.md."""
    allowed: dict[str, set[str]] = {}
    current: str | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        heading = re.match(r"^###\s+`catalogue/([\w]+)(?:/|\.py)`", line)
        if heading:
            current = "catalogue" if heading.group(1) == "__init__" else heading.group(1)
            continue
        found = re.match(r"^Imports:\s*(.*?)\.?\s*$", line)
        if found and current:
            names = {n.strip(" `") for n in found.group(1).split(",")}
            allowed[current] = {n for n in names if n and n != "nothing of catalogue"}
            current = None
    return allowed


def test_every_room_has_a_paragraph() -> None:
    allowed = contract()
    rooms = {room(m) for m in modules()}
    missing = sorted(rooms - allowed.keys())
    assert not missing, f"docs/architecture.md has no paragraph with an Imports: line for {missing}"
    unknown = sorted(allowed.keys() - rooms)
    assert not unknown, f"docs/architecture.md describes rooms that do not exist: {unknown}"


def test_imports_follow_the_documented_order() -> None:
    allowed = contract()
    found = modules()
    known = set(found)
    wrong = []
    for name, path in found.items():
        here = room(name)
        for target, line in imports(path, name, known):
            there = room(target)
            if there != here and there not in allowed.get(here, set()):
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {here} imports {target} ({there})")
    assert not wrong, "imports against docs/architecture.md:\n" + "\n".join(wrong)


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
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


def test_no_import_cycles() -> None:
    found = modules()
    known = set(found)
    graph: dict[str, set[str]] = {name: set() for name in found}
    for name, path in found.items():
        for target, _ in imports(path, name, known):
            if target in known and target != name:
                graph[name].add(target)
    assert cycles(graph) == [], f"import cycles: {cycles(graph)}"


def test_modules_stay_small() -> None:
    """About 600 lines at most, unless the module says why it is larger."""
    large = []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if text.count("\n") > 650 and not LARGE_BECAUSE.search(text):
            large.append(f"{path.relative_to(ROOT)}: {text.count(chr(10))} lines")
    assert not large, "modules over ~600 lines without a reason:\n" + "\n".join(large)


def test_every_package_ships() -> None:
    """pyproject.toml lists packages one by one: a new one left out is missing from the wheel."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    packages = {module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert sorted(packages - listed) == [], "packages missing from pyproject.toml's [tool.setuptools] packages"
