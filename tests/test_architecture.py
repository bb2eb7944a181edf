"""The import graph drawn from the code (tools/import_graph.py): no circles, and arrows only
downwards."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.tools import load_tool


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    """The import graph, parsed from every module once for the tests that only read it."""
    return load_tool("import_graph").graph()


def test_no_module_imports_itself_through_others(graph: dict[str, set[str]]) -> None:
    assert load_tool("import_graph").circles(graph) == []


def _reached(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module that the modules of package `start` import, directly or through others."""
    seen: set[str] = set()
    stack = [n for n in graph if n == start or n.startswith(start + ".")]
    while stack:
        for target in graph[stack.pop()]:
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def test_the_folded_state_and_sleep_reach_no_engine(graph: dict[str, set[str]]) -> None:
    # The engine fronts the state and hands sleep a view of it: neither may need the engine back.
    assert "lamar.engine" not in _reached(graph, "lamar.state")
    assert "lamar.engine" not in _reached(graph, "lamar.sleep")
    assert graph["lamar.state.episode"] == set()  # the folded episode depends on nothing of lamar
    assert _reached({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a"}}, "a") == {"b", "c"}


def test_the_tool_finds_a_circle_where_there_is_one() -> None:
    tool = load_tool("import_graph")
    assert tool.circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert tool.circles({"a": {"b"}, "b": set()}) == []


def test_no_store_module_reaches_the_engine(graph: dict[str, set[str]]) -> None:
    # Checking a copied log folds it with the state's fold (lamar.state), not with an engine.
    assert "lamar.engine" not in _reached(graph, "lamar.store")
    up = sorted(n for n in graph if n.startswith("lamar.store") and any(t.startswith("lamar.state") for t in graph[n]))
    # The arrows from the store up to the state: transfer's dry run, and the state it saves for the copy.
    assert up == ["lamar.store.transfer", "lamar.store.validate"]


def test_built_in_backends_are_experience_stores_without_registering() -> None:
    from lamar.store import ExperienceStore
    from lamar.store.json_file import JsonStore
    from lamar.store.memory import MemoryStore
    from lamar.store.sqlite import SqliteStore

    class Subclassed(SqliteStore):
        pass

    class Unrelated:
        def append(self, events: object) -> list[object]:
            return []

    assert all(issubclass(k, ExperienceStore) for k in (JsonStore, MemoryStore, SqliteStore, Subclassed))
    assert not issubclass(Unrelated, ExperienceStore)
    assert isinstance(ExperienceStore(":memory:"), ExperienceStore)


def test_integrations_import_only_lamars_public_names(graph: dict[str, set[str]]) -> None:
    # Integrations are thin: what they need of the core comes from its public modules, so a private
    # module (lamar._errors) can move without breaking a framework adapter.
    private = sorted(f"{name} -> {target}" for name, targets in graph.items() if name.startswith("lamar_")
                     for target in targets if any(part.startswith("_") for part in target.split(".")[1:]))
    assert private == []


def test_the_places_the_slow_markers_name_exist() -> None:
    # tests/conftest.py marks the slow parts by place: a moved file would silently lose its marker.
    from tests.conftest import _PLACES, _TESTS

    assert all((_TESTS / place).exists() for place in _PLACES.values())
    assert sorted(_PLACES) == ["browser", "notebooks", "typecheck"]  # postgres goes by fixture and file name


# Modules allowed past the size limit, each with why it is still one concept.
_LONG_ALLOWED: dict[str, str] = {
    "lamar.conformance": "one class a third-party backend subclasses, a test per store capability",
}


def test_no_module_is_over_the_size_limit_unless_listed() -> None:
    # Past 500 lines a module has held more than one concept every time (STYLE.md, "split before
    # 500"): split it by concept, or list it above with the reason it is one.
    tool = load_tool("import_graph")
    sizes = tool.sizes()
    assert sorted(n for n, lines in sizes.items() if lines > tool.LONG and n not in _LONG_ALLOWED) == []
    # an entry that no longer needs its exception is taken off, so the list stays true
    assert sorted(n for n in _LONG_ALLOWED if sizes.get(n, 0) <= tool.LONG) == []


def test_the_engine_stays_the_public_face() -> None:
    # One short method per verb over lamar/state, lamar/edit.py and lamar/arguments.py: a body
    # that grows the engine past this belongs in one of those homes.
    assert load_tool("import_graph").sizes()["lamar.engine"] <= 450


def test_store_capabilities_are_asked_with_the_protocols_not_getattr() -> None:
    # A store's capabilities are the runtime-checkable Protocols of lamar/store/base.py; isinstance
    # against them (or lamar.store.base.folded_rows) is the one way to ask, so that every caller
    # sees the engine's mode as the engine does.
    tool = load_tool("import_graph")
    assert {"append", "read", "close", "location", "lookup", "save_state", "rows", "rewrite"} <= tool.capabilities()
    assert tool.capability_sniffs() == []


def test_the_sniff_check_finds_a_capability_asked_by_name() -> None:
    tool = load_tool("import_graph")
    members = tool.capabilities()
    source = (
        'a = getattr(lam.store, "rows", None)\n'  # 1: a capability, of a store
        'b = hasattr(thing, "rewrite")\n'  # 2: a capability, of anything
        'c = all(callable(getattr(store, n, None)) for n in names)\n'  # 3: anything, of a store
        'd = getattr(args, "store", None)\n'  # an argument named store: not a capability
        'e = getattr(response, "text", "")\n'
    )
    assert tool.sniffs(source, members) == [1, 2, 3]


def test_the_doctests_of_the_core_and_the_integrations_run_with_the_suite() -> None:
    import tomllib

    config = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    pytest_config = config["tool"]["pytest"]["ini_options"]
    assert {"lamar", "integrations"} <= set(pytest_config["testpaths"])
    assert "--doctest-modules" in pytest_config["addopts"].split()


def test_every_public_class_has_a_runnable_example() -> None:
    # As river's classes do: a reader sees each class used before reading its arguments.
    import inspect

    import lamar

    bare = [name for name in lamar.__all__ if inspect.isclass(getattr(lamar, name))
            and ">>>" not in (getattr(lamar, name).__doc__ or "")]
    assert bare == []


def _docstring_lines(source: str) -> int:
    """Lines of a module's docstring as a reader sees them: its text, blank ends stripped."""
    import ast

    doc = ast.get_docstring(ast.parse(source), clean=False)
    return 0 if doc is None else len(doc.strip().splitlines())


def _long_module_docstrings() -> dict[str, int]:
    root = Path(__file__).resolve().parent.parent
    found: dict[str, int] = {}
    for package in ("lamar", "integrations"):
        for path in sorted((root / package).rglob("*.py")):
            lines = _docstring_lines(path.read_text(encoding="utf-8"))
            if lines > 3:
                found[path.relative_to(root).as_posix()] = lines
    return found


def test_module_docstrings_say_what_the_module_holds_in_three_lines() -> None:
    # STYLE.md, 9: a module docstring says what the module holds; why a function works as it does
    # belongs on that function, and figures and history in docs/ and the commit log.
    assert _long_module_docstrings() == {}


def test_the_docstring_check_counts_the_lines_of_the_text() -> None:
    sources = ['"""One.\n\nTwo and three.\n"""\n', '"""One.\n\nTwo.\nThree.\n"""\n', '"""One."""\n',
               "# a comment\nx = 1\n"]
    assert [_docstring_lines(s) for s in sources] == [3, 4, 1, 0]


_LINE_LIMIT = 120  # STYLE.md's limit, the one ruff's E501 checks (pyproject.toml)


# As ruff measures: a trailing type-ignore or noqa pragma comment is left out of the length.
_PRAGMA = re.compile(r"\s*#\s*(?:type:\s*ignore|noqa)\b.*$")


def _long_lines(root: Path) -> list[str]:
    """Each line over the limit in the Python of the package, the integrations, the tests and the tools."""
    found = []
    for folder in ("lamar", "integrations", "tests", "tools"):
        for path in sorted((root / folder).rglob("*.py")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if len(_PRAGMA.sub("", line)) > _LINE_LIMIT and "# noqa: E501" not in line:
                    found.append(f"{path.relative_to(root)}:{number}")
    return found


def test_no_line_is_over_the_limit() -> None:
    # CI runs pytest, not ruff: without this check a long line lands wherever ruff is not run.
    # pyproject's line-length is what isort wraps imports to; E501 reads max-line-length.
    root = Path(__file__).resolve().parents[1]
    import tomllib

    lint = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert "E501" in lint["extend-select"] and lint["pycodestyle"]["max-line-length"] == _LINE_LIMIT
    assert _long_lines(root) == [], "wrap them (a URL that cannot break may carry `# noqa: E501`)"
