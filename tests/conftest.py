"""Shared fixtures: services that CI must have and a laptop may lack."""

from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import background

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
POSTGRES_URL = os.environ.get("LAMAR_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")

# Under PYTHONDONTWRITEBYTECODE every process a test starts (a hook, `lamar`, an xdist worker
# collecting) compiles Lamar from source again. Bytecode goes to a folder of its own outside the
# tree instead, which the variable's users want kept clean; set before the workers start.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    _PYCACHE = os.path.join(tempfile.gettempdir(), f"lamar-tests-pycache-{os.getuid()}")
    os.environ.setdefault("PYTHONPYCACHEPREFIX", _PYCACHE)
    sys.dont_write_bytecode, sys.pycache_prefix = False, os.environ["PYTHONPYCACHEPREFIX"]


def as_user() -> list[str]:
    """A command prefix under which file modes bind the command: root loses the capabilities that let it
    read and write any file (an ordinary user needs none)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        if IN_CI:
            pytest.fail("setpriv is needed to let file modes bind root")
        pytest.skip("setpriv is not available here")
    caps = "-dac_override,-dac_read_search"
    return ["setpriv", f"--bounding-set={caps}", f"--inh-caps={caps}"]


def service_up(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Fail in CI, skip with a reason on a laptop, when a service is not listening."""
    if service_up(host, port):
        return
    message = f"{name} is not listening on {host}:{port}"
    if IN_CI:
        pytest.fail(f"{message}; CI must provide it")
    pytest.skip(f"{message}; start it to run these tests")


@pytest.fixture
def postgres_url() -> str:
    require_service("PostgreSQL", "127.0.0.1", 5432)
    return POSTGRES_URL


@pytest.fixture(autouse=True)
def _postgres_home(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home folder of the test's own for a PostgreSQL test: every sleep keeps its figures for a database in
    ~/.lamar, which would fill the home of whoever runs the tests."""
    if request.node.get_closest_marker("postgres") is not None:
        _own_home(request, monkeypatch)


def _own_home(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    # Outside tmp_path, which tests list and make their own home in.
    monkeypatch.setenv("HOME", str(request.getfixturevalue("tmp_path_factory").mktemp("home")))


@pytest.fixture
def pg_role(postgres_url: str) -> Iterator[str]:
    """A PostgreSQL role of the test's own, which owns a schema of the same name (tests/pg_role.py)."""
    from tests.pg_role import own_role

    with own_role(postgres_url) as name:
        yield name


@pytest.fixture(params=["sqlite", "json", "postgres-log", "postgres-fold"])
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """Where a store lives, once per backend a process can share with others: a SQLite file, a
    JSON file, and a PostgreSQL namespace with Lamar's fold off and on (dropped afterwards)."""
    if request.param == "sqlite":
        yield str(tmp_path / "shared.db")
    elif request.param == "json":
        yield str(tmp_path / "shared.json")
    else:
        from tests.store.test_postgres import drop_namespaces, namespace_url, unique_namespace

        url = request.getfixturevalue("postgres_url")
        _own_home(request, request.getfixturevalue("monkeypatch"))  # marked by no name it holds: see _postgres_home
        namespace = unique_namespace("shared")
        yield namespace_url(url, namespace, lamar_fold="off" if request.param == "postgres-log" else "on")
        drop_namespaces(url, namespace)



@pytest.fixture
def ollama_host() -> Iterator[str]:
    """The address of a local server that plays an Ollama model (tests.fake_ollama.FakeOllama says what it replies)."""
    from tests.fake_ollama import serving

    with serving() as host:
        yield host

_TESTS = Path(__file__).resolve().parent
# The slow parts by where they live (the markers are registered in pyproject.toml). PostgreSQL's
# tests live in several folders: the test_postgres* files, and any test that uses postgres_url.
_PLACES = {"browser": "integrations/ui/test_ui_browser.py", "notebooks": "notebooks", "typecheck": "test_types.py"}


@pytest.fixture
def copied(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the lessons copied (`Experience.copy`) from here on, in order: what a read handed out."""
    from lamar import Experience

    ids: list[str] = []
    copy = Experience.copy

    def counted(exp: Experience) -> Experience:
        ids.append(exp.id)
        return copy(exp)

    monkeypatch.setattr(Experience, "copy", counted)
    return ids


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        path = Path(item.path)
        if path.name.startswith("test_postgres") or "postgres_url" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.postgres)
        for marker, place in _PLACES.items():
            if path.is_relative_to(_TESTS / place):
                item.add_marker(getattr(pytest.mark, marker))


def pytest_collection_finish(session: pytest.Session) -> None:
    # Each xdist worker collects every test and runs only some: there a check starts when its own
    # test asks for it, or both workers would run it.
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        background.start_selected(session.items)


def pytest_sessionfinish() -> None:
    background.stop_all()
