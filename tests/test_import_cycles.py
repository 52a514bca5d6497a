"""No import cycles among our modules: each module's imports, run-time ones included
(those inside functions too), form a graph without a loop. Imports under
``if TYPE_CHECKING:`` are for annotations only and run nowhere, so they are left out."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("referee", "tournaments", "clients/python/tavolo_bot")


def _module_name(path: Path) -> str:
    relative = path.relative_to(ROOT)
    if relative.parts[:2] == ("clients", "python"):
        relative = relative.relative_to("clients/python")
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(tree: ast.AST, here: str, is_package: bool) -> set[str]:
    """Every module named by an import in ``tree``, outside ``if TYPE_CHECKING:`` blocks."""
    found: set[str] = set()
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            # ``from package import module`` imports the module too.
            found.update(f"{base}.{alias.name}" for alias in node.names)
        stack.extend(ast.iter_child_nodes(node))
    return found


def import_graph() -> dict[str, set[str]]:
    """Our modules, each with the modules of ours it imports."""
    files = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "proto" in path.relative_to(ROOT).parts[-2:-1]:
                continue  # generated code
            files[_module_name(path)] = path
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        named = _imported(tree, name, path.name == "__init__.py")
        # Importing a.b.c runs a and a.b first: a package's __init__ counts as imported,
        # except the module's own packages, which are running already (a package may
        # import its own modules).
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
        reached = set()
        for module in named:
            parts = module.split(".")
            reached.update(".".join(parts[:i]) for i in range(1, len(parts) + 1))
        reached -= own
        graph[name] = {m for m in reached if m in files and m != name}
    return graph


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return cycles


def test_the_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_holds_the_modules_and_their_imports():
    graph = import_graph()
    assert len(graph) > 100
    assert (
        "referee.engine.cards" in graph["referee.engine.rules"]
        or "referee.engine.registry" in (graph["referee.engine.rules"])
    )
    assert "referee.engine.rules" in graph["referee.families.tressette"]


def test_no_import_cycles():
    cycles = find_cycles(import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in cycles)
