"""Lamar where POSIX is missing, emulated on Linux: no `fcntl`, no `os.O_NOFOLLOW`, no `os.geteuid`/`getuid`/`fchmod`
(as on Windows), in a child process, since a module once imported keeps what it found."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hook_answers import lessons_given

ROOT = Path(__file__).resolve().parents[1]
# Set first thing in the child, before lamar is imported: what a Windows Python lacks of these.
_NO_POSIX = ("import os, sys\n"
             "sys.modules['fcntl'] = None\n"
             "for name in ('O_NOFOLLOW', 'geteuid', 'getuid', 'fchmod'):\n"
             "    if hasattr(os, name):\n"
             "        delattr(os, name)\n")


def _run(code: str, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join(filter(None, [str(ROOT), str(ROOT / "integrations"), os.environ.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-c", _NO_POSIX + code, *args], capture_output=True, text=True,
                          check=False, timeout=120, cwd=cwd, env={**os.environ, "PYTHONPATH": path})


_MAIN_PATHS = """
from lamar import Experience, Lamar, Scope, Signal
with Lamar(sys.argv[1], k=2, seed=7, holdout=0.2) as lam:
    for action in ("clear the cache", "rebuild twice"):
        lam.add(Experience(precondition="the build fails", action=action, rationale="stale files",
                           scope=Scope(project="p")))
    for _ in range(60):
        lam.report(lam.recall({"project": "p"}).episode_id, Signal.SHIPPED)
    first = lam.experiences()[0].id
    report = lam.sleep()
    lam.apply(report)
    print(lam.evidence(first).randomized > 0, len(lam.experiences()))
"""


@pytest.mark.parametrize("location", [":memory:", "lessons.db"])
def test_add_recall_report_evidence_and_sleep_run_without_posix(tmp_path: Path, location: str) -> None:
    done = _run(_MAIN_PATHS, location, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "True"


def test_a_store_in_the_lamar_home_opens_without_posix(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".lamar").mkdir(parents=True)
    (home / ".lamar").chmod(0o755)  # open to others, which a POSIX system's Lamar closes
    done = subprocess.run([sys.executable, "-c", _NO_POSIX + _MAIN_PATHS, str(home / ".lamar" / "lessons.db")],
                          capture_output=True, text=True, check=False, timeout=120, env={
                              **os.environ, "HOME": str(home), "PYTHONPATH": os.pathsep.join(
                                  [str(ROOT), str(ROOT / "integrations")])})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "True"


def test_a_json_store_without_posix_locks_is_refused_saying_what_to_use(tmp_path: Path) -> None:
    done = _run("from lamar import Lamar, StoreError\n"
                "try:\n"
                "    Lamar(sys.argv[1])\n"
                "except StoreError as exc:\n"
                "    print(exc)\n", str(tmp_path / "lessons.json"))
    assert done.returncode == 0, done.stderr
    assert "needs POSIX file locks" in done.stdout and '"lessons.db"' in done.stdout
    assert not (tmp_path / "lessons.json").exists()


def test_a_sleep_report_is_saved_without_posix_locks(tmp_path: Path) -> None:
    done = _run("from lamar.cli.review import report_held\n"
                "with report_held(sys.argv[1]):\n"
                "    print('held')\n", str(tmp_path / "report.json"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "held"


def test_the_gym_runs_without_posix() -> None:
    done = _run("import runpy\n"
                "sys.argv = ['lamar.gym', '--episodes', '200', '--seeds', '1', '--workers', '1', '--quiet']\n"
                "runpy.run_module('lamar.gym', run_name='__main__')\n")
    assert done.returncode == 0, done.stderr
    assert "lamar captured" in done.stdout


def test_a_claude_code_hook_answers_a_prompt_without_posix(tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    made = _run("from lamar import Experience, Lamar\n"
                "with Lamar(sys.argv[1]) as lam:\n"
                "    lam.add(Experience(precondition='the tests fail', action='run them one by one',\n"
                "                       rationale='they share a database'))\n", str(store))
    assert made.returncode == 0, made.stderr
    event = {"session_id": "s", "transcript_path": str(tmp_path / "none.jsonl"), "cwd": str(tmp_path),
             "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": "the tests fail"}
    # The first event is handled in the hook's own process, imports and all, within the hook's budget (2 s):
    # on a busy machine it ran out, and the hook rightly answered nothing. What is tested here is POSIX.
    (tmp_path / ".lamar").mkdir()
    (tmp_path / ".lamar" / "claude-code.toml").write_text("[hook]\nbudget_seconds = 60\n")
    path = os.pathsep.join(filter(None, [str(ROOT), str(ROOT / "integrations"), os.environ.get("PYTHONPATH")]))
    quick = ROOT / "integrations" / "lamar_claude_code" / "quick.py"
    done = subprocess.run([sys.executable, "-c", _NO_POSIX + "import runpy\n"
                           "script, sys.argv = sys.argv[2], ['quick.py', '--store', sys.argv[1]]\n"
                           "runpy.run_path(script, run_name='__main__')\n", str(store), str(quick)],
                          input=json.dumps(event), capture_output=True, text=True, check=False, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": path, "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    given = lessons_given(store, "s", done.stdout, event["prompt"])  # None: the coin held the lesson out
    assert given is None or "run them one by one" in given
