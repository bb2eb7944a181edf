"""Prints the import graph's figures for lamar/ and integrations/: files, the largest modules,
circles (strongly connected groups of modules), and reads of another object's private state.

    python tools/import_graph.py
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PRIVATE = re.compile(r"lam\._|\._lessons|\._episodes")


def modules() -> dict[str, Path]:
    found = {}
    for top in (ROOT / "lamar", *sorted((ROOT / "integrations").glob("lamar_*"))):
        for path in sorted(top.rglob("*.py")):
            parts = list(path.relative_to(top.parent).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The known modules `name` imports anywhere in its body (lazy imports count: they still bind)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(block.test) for n in ast.walk(block)}
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue  # an annotation's import runs only under a type checker
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            # `from pkg import sub` depends on the module sub, not on what pkg's __init__ defines
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in known]
            targets = subs if len(subs) == len(node.names) else [base, *subs]
        else:
            continue
        for target in targets:
            while target and target not in known:
                target = target.rpartition(".")[0]
            if target and target != name:
                out.add(target)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    sys.setrecursionlimit(10_000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def graph(found: dict[str, Path] | None = None) -> dict[str, set[str]]:
    found = modules() if found is None else found
    return {name: imports(name, path, set(found)) for name, path in found.items()}


def private_reads(found: dict[str, Path] | None = None) -> list[str]:
    out = []
    for name, path in (modules() if found is None else found).items():
        if name.startswith("lamar.state") or name == "lamar.engine":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if PRIVATE.search(line):
                out.append(f"{path.relative_to(ROOT)}:{number}")
    return out


LONG = 500  # lines: a module past this holds more than one concept (STYLE.md: split before 500)


def sizes(found: dict[str, Path] | None = None) -> dict[str, int]:
    """Each module's lines."""
    return {name: len(path.read_text().splitlines()) for name, path in (modules() if found is None else found).items()}


def capabilities() -> set[str]:
    """The members of the store Protocols in lamar/store/base.py: what a store may or may not have."""
    tree = ast.parse((ROOT / "lamar" / "store" / "base.py").read_text())
    out = set()
    for cls in tree.body:
        if isinstance(cls, ast.ClassDef) and any(ast.unparse(b) == "Protocol" for b in cls.bases):
            for node in cls.body:
                if isinstance(node, ast.FunctionDef):
                    out.add(node.name)
                elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                    out.add(node.target.id)
    return out


def sniffs(source: str, members: set[str]) -> list[int]:
    """Lines of `source` where getattr or hasattr asks an object for a store capability (a member
    of the store Protocols by name), or asks anything of an object named like a store: the
    Protocols answer that with isinstance."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"getattr", "hasattr"} \
                and len(node.args) >= 2:
            target, name = node.args[0], node.args[1]
            asked = name.value if isinstance(name, ast.Constant) else None
            if asked in members or "store" in ast.unparse(target).lower():
                out.append(node.lineno)
    return sorted(out)


def capability_sniffs(found: dict[str, Path] | None = None) -> list[str]:
    members = capabilities()
    return [f"{path.relative_to(ROOT)}:{line}" for path in (modules() if found is None else found).values()
            for line in sniffs(path.read_text(), members)]


def main() -> int:
    found = modules()
    edges = graph(found)
    ranked = sorted(((lines, n) for n, lines in sizes(found).items()), reverse=True)
    print(f"modules: {len(found)}, lines: {sum(s for s, _ in ranked)}")
    print("largest: " + ", ".join(f"{n} {s}" for s, n in ranked[:5]))
    print(f"modules over {LONG} lines: {sum(s > LONG for s, _ in ranked)}")
    groups = circles(edges)
    print(f"circles: {len(groups)}")
    for group in groups:
        print(f"  {len(group)}: {' '.join(group)}")
    up = sorted(n for n in edges if n.startswith("lamar.store") and "lamar.engine" in edges[n])
    print(f"arrows from lamar.store up to lamar.engine: {len(up)} ({' '.join(up)})")
    up = sorted(n for n in edges if n.startswith("lamar.store") and any(t.startswith("lamar.state") for t in edges[n]))
    print(f"arrows from lamar.store up to lamar.state: {len(up)} ({' '.join(up)})")
    state = sorted(n for n in edges if n.startswith("lamar.state") and "lamar.engine" in edges[n])
    print(f"state modules importing the engine: {len(state)} ({' '.join(state)})")
    sleepers = sorted(n for n in edges if n.startswith("lamar.sleep") and "lamar.engine" in edges[n])
    print(f"sleep modules importing the engine: {len(sleepers)} ({' '.join(sleepers)})")
    print(f"private reads outside the engine and lamar/state (lam._, ._lessons, ._episodes): "
          f"{len(private_reads(found))}")
    print(f"store capabilities asked by getattr/hasattr: {len(capability_sniffs(found))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
