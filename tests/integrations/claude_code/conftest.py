"""Claude Code fixtures: a real git repository in a temp folder, a store with lessons, and a runner
that feeds one hook event to the real `lamar claude-code hook` process, as Claude Code does."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lamar import Experience, Lamar, Scope

ROOT = Path(__file__).resolve().parents[3]
BARE_PATH = "/usr/bin:/bin"  # what a desktop launch of Claude Code has on PATH


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return done.stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository named `shop` with Python files and one commit."""
    path = tmp_path / "shop"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.email", "dev@example.com")
    git(path, "config", "user.name", "Dev")
    (path / "app.py").write_text("def main():\n    print('shop')\n")
    (path / "test_app.py").write_text("from app import main\n\ndef test_main():\n    main()\n")
    (path / "README.md").write_text("# shop\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "init")
    return path


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The hook's environment: our tree on the path, a private HOME (no user config leaks in)."""
    home = tmp_path / "home"
    home.mkdir()
    # Short, beside tmp_path rather than in it: a socket's path must fit AF_UNIX's ~100 bytes, and
    # a parallel run's tmp_path alone can take most of them.
    runtime = Path(tempfile.mkdtemp(prefix="lamar-run-"))
    yield {
        **os.environ,
        "HOME": str(home),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")]),
        "LAMAR_STORE": str(tmp_path / "nowhere.db"),  # must be overridden by --store
        "XDG_RUNTIME_DIR": str(runtime),  # the hook daemons' sockets, apart from the machine's
        "LAMAR_HOOK_IDLE": "20",  # a daemon a test started stops soon after it
    }
    shutil.rmtree(runtime, ignore_errors=True)


@dataclasses.dataclass
class Hook:
    """Runs `python -m lamar.cli claude-code hook --store STORE` with one event on stdin."""

    store: Path
    env: dict[str, str]

    def __call__(self, payload: Any, *, raw: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        data = raw if raw is not None else json.dumps(payload).encode()
        return subprocess.run(
            [sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(self.store)],
            input=data, capture_output=True, env=self.env, timeout=60, check=False,
        )

    @property
    def state_file(self) -> Path:
        return self.store.with_name(self.store.name + ".claude-code.state.json")

    @property
    def log_file(self) -> Path:
        return self.store.with_name(self.store.name + ".claude-code.log")

    def state(self) -> dict[str, Any]:
        return json.loads(self.state_file.read_text())


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A SQLite store with lessons scoped to the `shop` project (and one to another project)."""
    path = tmp_path / "experience.db"
    lam = Lamar(str(path), k=3, seed=3)
    lam.add(Experience("the tests fail", "run the failing test alone with -x first", "the first failure explains "
                       "the rest", scope=Scope(project="shop", task="tests_fail")))
    lam.add(Experience("changing the command line", "keep the old flags working", scope=Scope(project="shop")))
    lam.add(Experience("a Python change", "run ruff before committing", scope=Scope(language="python")))
    lam.add(Experience("the iOS build fails", "clear DerivedData", scope=Scope(project="trace")))
    lam.close()
    return path


@pytest.fixture
def hook(store: Path, env: dict[str, str]) -> Hook:
    """The hook on `store`, with a user config that gives it a minute: its budget (2 s by default) counts
    from the event's arrival, imports and all, and a busy machine can overrun it, when the hook rightly
    answers nothing. A test of the budget writes its own."""
    config = Path(env["HOME"]) / ".lamar" / "claude-code.toml"
    config.parent.mkdir(mode=0o700)  # as Lamar makes it
    config.write_text("[hook]\nbudget_seconds = 60\n")
    return Hook(store, env)


def project_config(repo: Path, text: str, home: str | Path) -> Path:
    """Write the repository's .claude/lamar.toml and trust it as `lamar claude-code trust` would for `home`."""
    from lamar_claude_code.trust import trust

    path = repo / ".claude" / "lamar.toml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    trust(path, Path(home) / ".lamar" / "claude-code-trusted.json")
    return path


@pytest.fixture
def claude_env(tmp_path: Path) -> dict[str, str]:
    """Claude Code as a desktop launch starts it: a fresh HOME, no virtual environment on PATH."""
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "run").mkdir(mode=0o700)
    return {"HOME": str(home), "PATH": BARE_PATH, "DISABLE_AUTOUPDATER": "1",
            "XDG_RUNTIME_DIR": str(tmp_path / "run"), "LAMAR_HOOK_IDLE": "20",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            # this source tree, for the interpreter the plugin is configured with (an editable install does the same)
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "integrations")])}


@pytest.fixture
def market(tmp_path: Path) -> Path:
    """A copy of the repository's marketplace and plugin with no clone of Lamar around it, as Claude Code's cache
    holds the plugin: read from this tree, the plugin's launcher would find this clone's own .venv."""
    root = tmp_path / "market"
    shutil.copytree(ROOT / ".claude-plugin", root / ".claude-plugin")
    shutil.copytree(ROOT / "plugins", root / "plugins")
    return root


def payload(event: str, session: str, cwd: Path, **fields: Any) -> dict[str, Any]:
    """An event as Claude Code documents it: the common fields plus the event's own."""
    return {"session_id": session, "transcript_path": str(cwd / ".no-transcript.jsonl"), "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": event, **fields}


ClaudeRun = Callable[..., tuple[subprocess.CompletedProcess[str], list[bytes]]]


@pytest.fixture
def claude_answered(repo: Path, env: dict[str, str]) -> ClaudeRun:
    """`claude -p ARGS` (the real binary) run in `repo` against the local stand-in for the Messages API, which is
    shut down after it: returns the run and the requests Claude Code sent (`server.bodies`)."""
    from .fake_anthropic import serve
    from .test_claude_code_real_cli import _claude

    def run(*args: str) -> tuple[subprocess.CompletedProcess[str], list[bytes]]:
        server, url = serve(str(repo))
        try:
            return _claude(repo, env, url, *args), server.bodies
        finally:
            server.shutdown()

    return run
