"""Claude Code started outside the user's shell (a desktop launch, a teammate) runs hooks with a
bare PATH: the installed hooks still run and learn, and `status` says which would not."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from lamar.sleep.traces import load_traces

from .conftest import payload

BARE = {"PATH": "/usr/bin:/bin"}


def _lamar(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _commands(settings: Path) -> dict[str, str]:
    hooks = json.loads(settings.read_text())["hooks"]
    return {event: groups[-1]["hooks"][0]["command"] for event, groups in hooks.items()}


def _run_bare(command: str, event: dict[str, object], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    bare = {"HOME": env["HOME"], "XDG_RUNTIME_DIR": env["XDG_RUNTIME_DIR"], "LAMAR_HOOK_IDLE": "20", **BARE}
    return subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event).encode(), env=bare,
                          capture_output=True, timeout=120, check=False)


def test_installed_hooks_store_and_settle_episodes_with_a_bare_path(repo: Path, env: dict[str, str],
                                                                    tmp_path: Path) -> None:
    from lamar_claude_code.settings import invocation

    store = tmp_path / "lessons.db"
    done = _lamar(env, repo, "install", "--store", str(store))
    assert done.returncode == 0, done.stderr
    commands = _commands(repo / ".claude" / "settings.local.json")
    assert set(commands) == {"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"}
    assert all(invocation(c).split()[:2] == [sys.executable, "-S"] and "lamar_claude_code/quick.py --store" in c
               for c in commands.values())
    with Lamar(str(store)) as lam:
        lam.add(Experience("the tests fail", "run the failing test alone first", scope=Scope(project="shop")))

    # A recorded transcript of the session, as Claude Code writes it (see test_claude_code_transcript.py).
    # Written as Claude Code writes it: the second prompt's lines arrive with the second prompt, so
    # the first Stop sees one turn that no later prompt has closed yet.
    transcript = tmp_path / "s1.jsonl"
    lines = (Path(__file__).parent / "fixtures" / "transcript.jsonl").read_text().replace(
        "SESSION", "s1").replace("PROMPT1", "the tests fail in test_app.py").splitlines(keepends=True)
    second = next(i for i, line in enumerate(lines) if '"content": "PROMPT2"' in line)
    transcript.write_text("".join(lines[:second]))
    rest = "".join(lines[second:]).replace("PROMPT2", "no, that's wrong, try again")
    steps = [
        ("SessionStart", payload("SessionStart", "s1", repo, source="startup")),
        ("UserPromptSubmit", payload("UserPromptSubmit", "s1", repo, prompt="the tests fail in test_app.py")),
        ("PostToolUse", payload("PostToolUse", "s1", repo, tool_name="Edit",
                                tool_input={"file_path": str(repo / "app.py")}, tool_response={"success": True})),
        ("Stop", payload("Stop", "s1", repo, stop_hook_active=False)),
        ("UserPromptSubmit", payload("UserPromptSubmit", "s1", repo, prompt="no, that's wrong, try again")),
        ("SessionEnd", payload("SessionEnd", "s1", repo, reason="other")),
    ]
    (repo / "app.py").write_text("def main():\n    print('shop!')\n")  # the Edit the PostToolUse reports
    for event, body in steps:
        if body.get("prompt") == "no, that's wrong, try again":
            with transcript.open("a") as file:
                file.write(rest)
        body["transcript_path"] = str(transcript)
        ran = _run_bare(commands[event], body, env)
        assert ran.returncode == 0, (event, ran.stderr.decode()[-2000:])
    with Lamar(str(store)) as lam:
        stats = lam.stats()
    assert stats["episodes"] == 2 and stats["reports"] >= 1  # the correction reported the first prompt's episode
    out = store.with_name(store.name + ".claude-code.traces.jsonl")
    # A hook past half its budget (a loaded machine) leaves the session's turns to a later event, as
    # documented: the next session's start writes them.
    for later in range(5):
        if out.exists() and len(load_traces(out)) == 2:
            break
        ran = _run_bare(commands["SessionStart"], {**payload("SessionStart", f"s{later + 2}", repo, source="startup"),
                                                   "transcript_path": str(tmp_path / f"s{later + 2}.jsonl")}, env)
        assert ran.returncode == 0, ran.stderr.decode()[-2000:]
    traces = load_traces(out)
    assert [t.id for t in traces] == ["cc-s1-1", "cc-s1-2"] and traces[0].outcome == "corrected"
    assert traces[0].attempted == ("Bash: pytest -x", "Edit: /home/dev/shop/app.py")  # read from the transcript


def test_status_names_a_hook_that_needs_the_shells_path(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    assert _lamar(env, repo, "install", "--store", str(store)).returncode == 0
    settings = repo / ".claude" / "settings.local.json"
    data = json.loads(settings.read_text())
    # As installs of earlier releases wrote it, on a machine where `lamar` was on the shell's PATH only.
    data["hooks"]["Stop"][-1]["hooks"][0]["command"] = f"lamar claude-code hook --store {store}"
    settings.write_text(json.dumps(data))
    status = _lamar(env, repo, "status", "--store", str(store))
    assert status.returncode == 4, status.stderr  # an entry FAILS: Lamar is off when Claude Code starts bare
    lines = status.stdout.splitlines()
    stop = next(i for i, line in enumerate(lines) if line.strip().startswith("Stop: lamar claude-code hook"))
    assert "FAILS without your PATH: exit 127" in lines[stop + 1] and "install again" in lines[stop + 1]
    prompt = next(i for i, line in enumerate(lines) if line.strip().startswith("UserPromptSubmit:"))
    assert lines[prompt + 1].strip() == "runs without your PATH"
    # uninstall still finds the old entry, and a new install replaces it with one that runs
    assert _lamar(env, repo, "install", "--store", str(store)).returncode == 0
    assert "FAILS" not in _lamar(env, repo, "status", "--store", str(store)).stdout


def test_status_names_a_hook_whose_python_lacks_lamar(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    store = tmp_path / "lessons.db"
    assert _lamar(env, repo, "install", "--store", str(store)).returncode == 0
    other = "/usr/bin/python3"
    if subprocess.run([other, "-c", "import lamar_claude_code"], capture_output=True, check=False).returncode == 0:
        pytest.skip("this machine's /usr/bin/python3 has Lamar installed")
    settings = repo / ".claude" / "settings.local.json"
    data = json.loads(settings.read_text())
    entry = data["hooks"]["Stop"][-1]["hooks"][0]
    entry["command"] = entry["command"].replace(sys.executable, other)  # a virtual environment since deleted
    settings.write_text(json.dumps(data))
    lines = _lamar(env, repo, "status", "--store", str(store)).stdout.splitlines()
    stop = next(i for i, line in enumerate(lines) if line.strip().startswith(f"Stop: {other}"))
    assert "FAILS without your PATH: exit 1: this Python cannot import Lamar's hook" in lines[stop + 1]
    ran = _run_bare(entry["command"], payload("Stop", "s1", repo, stop_hook_active=False), env)
    assert ran.returncode == 0  # the hook itself still fails open, and says why in the log
    logged = store.with_name(store.name + ".claude-code.log").read_text()
    assert "the hook could not start: ModuleNotFoundError" in logged


@pytest.mark.parametrize(("suffix", "said"), [
    # As installs of earlier releases wrote it: the hook blocks each prompt once quick.py is gone.
    ("", "no `|| exit 1`"),
    # As the install before the guard wrote it: a Python deleted later showed only "/bin/sh: 1: .../python:
    # not found" at each event, naming no fix, and status called the entry fine.
    (" || exit 1", "no check of its Python and quick.py"),
], ids=["without-exit-1", "without-the-check-of-its-python"])
def test_status_names_an_installed_hook_of_an_earlier_install(repo: Path, env: dict[str, str], tmp_path: Path,
                                                              suffix: str, said: str) -> None:
    from lamar_claude_code.settings import invocation

    store = tmp_path / "lessons.db"
    assert _lamar(env, repo, "install", "--store", str(store)).returncode == 0
    settings = repo / ".claude" / "settings.local.json"
    data = json.loads(settings.read_text())
    entry = data["hooks"]["Stop"][-1]["hooks"][0]
    entry["command"] = invocation(entry["command"]) + suffix
    settings.write_text(json.dumps(data))
    lines = _lamar(env, repo, "status", "--store", str(store)).stdout.splitlines()
    stop = next(i for i, line in enumerate(lines) if line.strip().startswith("Stop:"))
    assert lines[stop + 1].strip() == "runs without your PATH"  # the entry still runs
    assert said in lines[stop + 2] and "install again" in lines[stop + 2]
    assert sum(said in line for line in lines) == 1  # the entries install writes have it
    assert "updated Stop hook" in _lamar(env, repo, "install", "--store", str(store)).stdout
    assert said not in _lamar(env, repo, "status", "--store", str(store)).stdout
