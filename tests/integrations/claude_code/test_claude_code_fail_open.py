"""Whatever reaches the hook, it prints nothing it should not, exits 0 and logs what went wrong."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from lamar import Experience, Lamar, Scope
from tests.hook_answers import lessons_given

from .conftest import ROOT, Hook, payload, project_config

BAD = {
    "binary junk": b"\x00\xff\xfe garbage \x89PNG\r\n",
    "not an object": b"[1, 2, 3]",
    "truncated JSON": b'{"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": "fix',
    "empty stdin": b"",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_unreadable_input_is_logged_and_ignored(hook: Hook, name: str) -> None:
    done = hook(None, raw=BAD[name])
    assert (done.returncode, done.stdout, done.stderr) == (0, b"", b"")
    assert len(hook.log_file.read_text().splitlines()) == 1


def test_missing_fields_are_logged_and_ignored(hook: Hook, repo: Path) -> None:
    no_prompt = payload("UserPromptSubmit", "s1", repo)
    no_session = {k: v for k, v in payload("UserPromptSubmit", "s1", repo, prompt="fix it").items()
                  if k != "session_id"}
    wrong_type = payload("PostToolUse", "s1", repo, tool_name="Edit", tool_input="app.py")
    for event in (no_prompt, no_session, wrong_type):
        done = hook(event)
        assert (done.returncode, done.stdout) == (0, b"")
    lines = hook.log_file.read_text().splitlines()
    assert len(lines) == 3
    assert "no string 'prompt'" in lines[0] and "no string 'session_id'" in lines[1]
    assert "no tool_input object" in lines[2]
    lam = Lamar(str(hook.store))
    assert lam.stats()["episodes"] == 0  # nothing half-done reached the store
    lam.close()


def test_a_path_longer_than_any_path_is_never_resolved(hook: Hook, repo: Path) -> None:
    # Resolving a path costs time that grows with the square of its parts: a 200 KB cwd held a hook
    # well past Claude Code's 10 s, outside its budget, and an edit's 200 KB file_path held the
    # state lock as long (a warm hook's other sessions waited on it). No file has such a path.
    long = "/a" * 100_000
    first = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert first.returncode == 0
    lessons_given(hook.store, "s1", first.stdout, "the tests fail")  # the lessons, or none: the episode held them out
    edit = payload("PostToolUse", "s1", repo, tool_name="Edit", tool_input={"file_path": f"{repo}{long}"})
    assert hook(edit).returncode == 0
    assert not hook.log_file.exists()  # in its budget, and nothing to say: an edit of no file is passed over
    done = hook(payload("UserPromptSubmit", "s2", Path(f"{repo}{long[:8000]}"), prompt="the tests fail"))
    assert (done.returncode, done.stdout) == (0, b"")
    (line,) = hook.log_file.read_text().splitlines()
    assert "the UserPromptSubmit payload's cwd is" in line and "longer than any path (4096)" in line
    state = json.loads(hook.state_file.read_text())
    assert all(record["files"] == [] for record in state["episodes"].values())


def test_unknown_events_change_nothing(hook: Hook, repo: Path) -> None:
    for event in ("Notification", "PreCompact", "SomethingNew", 42):
        done = hook(payload(event, "s1", repo, message="hi"))  # type: ignore[arg-type]
        assert (done.returncode, done.stdout) == (0, b"")
    assert not hook.log_file.exists() and not hook.state_file.exists()


def test_a_huge_prompt_is_skipped(hook: Hook, repo: Path) -> None:
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail " * 100_000))
    assert (done.returncode, done.stdout) == (0, b"")
    assert "over 1000000 bytes" in hook.log_file.read_text()


def test_a_long_prompt_under_the_limit_is_served(hook: Hook, repo: Path) -> None:
    prompt = "the tests fail with AssertionError\n" + "log line\n" * 50_000
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt=prompt))
    assert done.returncode == 0
    lam = Lamar(str(hook.store))
    (episode,) = [hook.state()["sessions"]["s1"]["episode"]]
    assert lam.episode(episode).context["task"] == "tests_fail"
    if lam.episode(episode).injected:
        assert json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"].startswith("<lamar-lessons>")
    lam.close()



@pytest.mark.parametrize("encoding", ["ascii", "cp1252"])
def test_a_stdout_that_is_not_utf8_still_gets_the_lessons_it_was_logged_with(
        store: Path, env: dict[str, str], repo: Path, encoding: str) -> None:
    # Python writes a pipe in the locale's encoding (a Windows code page, an ASCII locale): a lesson
    # holding a character it lacks made the answer fail, so the episode was logged as injected while
    # Claude never read the lessons. JSON's escapes are ASCII: Claude Code reads them in any encoding.
    with Lamar(str(store)) as lam:
        lam.add(Experience("the tests fail", "run them alone \u2192 then with -x \U0001f680",
                           scope=Scope(project="shop")))
    done = Hook(store, {**env, "PYTHONIOENCODING": encoding})(payload("UserPromptSubmit", "s1", repo,
                                                                     prompt="the tests fail"))
    assert done.returncode == 0 and done.stdout.isascii(), done.stdout
    shown = lessons_given(store, "s1", done.stdout, "the tests fail")
    with Lamar(str(store)) as lam:
        injected = lam.episode(hook_episode(store, "s1")).injected
        assert shown is None or all(lam.get(i).render() in shown for i in injected)


def hook_episode(store: Path, session: str) -> str:
    episode: str = Hook(store, {}).state()["sessions"][session]["episode"]
    return episode


def test_a_context_over_its_limit_leaves_out_its_longest_value_logs_it_and_injects(hook: Hook, repo: Path) -> None:
    project_config(repo, f"[context]\nextra = {{ notes = '{'x' * 5_000}' }}\n", hook.env["HOME"])
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert (done.returncode, done.stderr) == (0, b"")
    (line,) = hook.log_file.read_text().splitlines()
    assert "left out 'notes' (5,000 characters)" in line and "4,000" in line, line
    lam = Lamar(str(hook.store))
    episode = lam.episode(hook.state()["sessions"]["s1"]["episode"])
    assert "notes" not in episode.context and episode.context["task"] == "tests_fail"
    _recalled_alone(lam, episode.injected, episode.held_out, done.stdout)
    lam.close()


_ALONE = b"run the failing test alone"


def _recalled_alone(lam: Lamar, injected: list[str], held_out: list[str], shown: bytes) -> None:
    """The hook recalled the tests_fail lesson: injected and shown, or held out by its evidence coin
    (the hook's engine draws from an unseeded generator) and not shown."""
    (lesson,) = [e.id for e in lam.experiences() if e.action.encode().startswith(_ALONE)]
    assert lesson in [*injected, *held_out]
    assert (_ALONE in shown) == (lesson in injected), shown


def test_a_missing_store_is_logged_not_created(hook: Hook, repo: Path) -> None:
    hook.store.unlink()
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="fix the build"))
    assert (done.returncode, done.stdout) == (0, b"")
    assert "no store at" in hook.log_file.read_text()
    assert not hook.store.exists()


def test_a_store_of_a_newer_version_is_logged(hook: Hook, repo: Path) -> None:
    with sqlite3.connect(hook.store) as db:
        db.execute("UPDATE meta SET value='99' WHERE key='schema_version'")
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="fix the build"))
    assert (done.returncode, done.stdout) == (0, b"")
    assert "schema version 99" in hook.log_file.read_text()


def test_a_locked_store_runs_out_of_budget_and_injects_nothing(hook: Hook, repo: Path) -> None:
    project_config(repo, "[hook]\nbudget_seconds = 0.5\n", hook.env["HOME"])
    blocker = sqlite3.connect(hook.store, isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another writer holds the database
    try:
        done = hook(payload("UserPromptSubmit", "s1", repo, prompt="fix the build"))
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert (done.returncode, done.stdout) == (0, b"")
    assert "budget" in hook.log_file.read_text()


def test_a_broken_config_file_is_logged(hook: Hook, repo: Path) -> None:
    project_config(repo, "[rules]\nerror = ['(unclosed']\n", hook.env["HOME"])
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="fix the build"))
    assert (done.returncode, done.stdout) == (0, b"")
    assert "not a valid regular expression" in hook.log_file.read_text()


def test_never_exit_2_even_when_interrupted(hook: Hook, repo: Path) -> None:
    """Exit 2 would block the prompt; the CLI's usual store-error status must not leak into the hook."""
    hook.store.write_bytes(b"this is not sqlite at all" * 100)
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="fix the build"))
    assert (done.returncode, done.stdout) == (0, b"")
    assert "CorruptStore" in hook.log_file.read_text()


def test_hooks_running_at_once_lose_no_update(hook: Hook, repo: Path) -> None:
    """Parallel tool calls fire PostToolUse hooks together: every edited file must be recorded."""
    import subprocess
    import sys

    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="split app.py into modules")).returncode == 0
    names = [f"part{i}.py" for i in range(8)]
    command = [sys.executable, "-m", "lamar.cli", "claude-code", "hook", "--store", str(hook.store)]
    running = []
    for name in names:
        (repo / name).write_text("X = 1\n")
        event = payload("PostToolUse", "s1", repo, tool_name="Write", tool_use_id=name,
                        tool_input={"file_path": str(repo / name), "content": "X = 1\n"},
                        tool_response={"success": True})
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=hook.env)
        assert process.stdin is not None
        process.stdin.write(json.dumps(event).encode())
        process.stdin.close()
        running.append(process)
    assert [p.wait(timeout=60) for p in running] == [0] * len(names)
    (episode,) = hook.state()["episodes"].values()
    assert sorted(episode["files"]) == names
    assert not hook.log_file.exists()


def test_a_lone_surrogate_in_an_event_is_stored_and_tracked_as_u_fffd(hook: Hook, repo: Path) -> None:
    # Valid JSON that UTF-8 cannot hold: the store kept the episode, then the state's write failed.
    prompt = json.dumps(payload("UserPromptSubmit", "SID", repo, prompt="the tests fail")).replace("SID", "s\\udc00")
    done = hook(None, raw=prompt.encode())
    assert (done.returncode, done.stderr) == (0, b"")
    (repo / "caf.py").write_text("X = 1\n")
    edit = json.dumps(payload("PostToolUse", "SID", repo, tool_name="Write",
                              tool_input={"file_path": str(repo / "caf\\udce9.py"), "content": "X = 1\n"},
                              tool_response={"success": True})).replace("SID", "s\\udc00")
    assert hook(None, raw=edit.encode().replace(b"\\\\udce9", b"\\udce9")).returncode == 0
    state = hook.state()
    (episode,) = state["episodes"]
    assert state["sessions"]["s\ufffd"]["episode"] == episode
    assert state["episodes"][episode]["files"] == ["caf\ufffd.py"]
    with Lamar(str(hook.store)) as lam:
        assert lam.stats()["episodes"] == 1
    assert not hook.log_file.exists()


@pytest.mark.parametrize("command", ["lamar claude-code hook", "quick.py"])
@pytest.mark.parametrize("flag", [["--store", ""], ["--store="], ["--store", "  "]])
def test_an_empty_store_flag_skips_the_event_and_says_so(store: Path, env: dict[str, str], repo: Path,
                                                          command: str, flag: list[str]) -> None:
    # The store the flag would fall back to exists: the event must not reach it either.
    env = {**env, "LAMAR_STORE": str(store)}
    program = [sys.executable, "-m", "lamar.cli", "claude-code", "hook"] if command.startswith("lamar") else \
        [sys.executable, "-S", str(ROOT / "integrations" / "lamar_claude_code" / "quick.py")]
    event = json.dumps(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail")).encode()
    done = subprocess.run([*program, *flag], input=event, capture_output=True, env=env, timeout=60, check=False)
    assert (done.returncode, done.stdout) == (1, b"")  # 1: a non-blocking error Claude Code shows; never 2
    assert b"--store is empty" in done.stderr and b"--store PATH" in done.stderr
    assert not store.with_name(store.name + ".claude-code.state.json").exists()
    lam = Lamar(str(store))
    assert lam.stats()["episodes"] == 0
    lam.close()


def test_with_no_home_folder_the_hook_says_so_and_makes_no_folder_named_tilde(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    # HOME unset and an account the password database does not know (a container run as a bare uid):
    # "~/..." stayed as written. The plugin's hook ended in a traceback; the installed one's default
    # store put its log in ./~/.lamar/ in the project, a folder one `rm -rf ~` away from the real home.
    import pwd

    from lamar.cli.claude_code import fast_hook
    from lamar_claude_code import plugin, quick

    def unknown(uid: int) -> pwd.struct_passwd:
        raise KeyError(uid)

    for name in ("HOME", "LAMAR_STORE", "XDG_DATA_HOME", "CLAUDE_PLUGIN_OPTION_STORE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(pwd, "getpwuid", unknown)
    monkeypatch.chdir(tmp_path)
    for run, code in ((lambda: quick.main(["--plugin"]), 0), (lambda: plugin.main(["hook"]), 0),
                      (lambda: quick.main([]), 1), (lambda: fast_hook([]), 1)):
        assert run() == code  # 0 from the plugin, whose launcher passes stderr on; 1 shows as an error
        said = capsys.readouterr().err
        assert said.startswith("lamar hook: no home folder for ~/") and "set HOME" in said, said
    assert list(tmp_path.iterdir()) == []
    assert quick.homeless(quick.store_of(["--store", str(tmp_path / "x.db")], {})) is None  # named: no home needed
    for home in (None, str(tmp_path / "home")):  # "~backup.db" names no account: a file of that name, home or not
        if home is not None:
            monkeypatch.setenv("HOME", home)
        assert quick.store_of(["--store", "~backup.db"], {}) == str(tmp_path / "~backup.db")
        assert quick.homeless(quick.store_of(["--store", "~backup.db"], {})) is None


def test_a_store_whose_folder_takes_no_file_is_logged_in_the_home_folder(repo: Path, env: dict[str, str],
                                                                          tmp_path: Path) -> None:
    # The log lives beside the store: a store folder that takes no file (read-only, full, a file
    # in its place) lost the hook's line too, so the hook exited 0 and nothing said why nothing was learned.
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the store's folder should be\n")
    store = blocked / "experience.db"
    event = json.dumps(payload("UserPromptSubmit", "s1", repo, prompt="fix the build")).encode()
    done = Hook(store, env)(None, raw=event)
    plugin = subprocess.run([sys.executable, "-m", "lamar_claude_code.plugin", "hook"], input=event,
                            env={**env, "CLAUDE_PLUGIN_OPTION_STORE": str(store)}, capture_output=True, timeout=60,
                            check=False)
    assert (done.returncode, done.stdout, plugin.returncode, plugin.stdout) == (0, b"", 0, b"")
    lines = (Path(env["HOME"]) / ".lamar" / "claude-code.log").read_text().splitlines()
    assert len(lines) == 2 and all(f"{store}.claude-code.log could not be written" in line for line in lines)
    assert all(f"FileExistsError: [Errno 17] File exists: '{blocked}'" in line for line in lines)
    status = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "status", "--store", str(store)],
                            cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert "could not be written there" in status.stdout and "FileExistsError" in status.stdout, status.stdout


def test_a_hook_that_cannot_start_logs_in_the_home_folder_when_the_store_folder_takes_no_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # quick.py writes its own line when the hook's modules fail to load; a store folder that takes
    # no file lost that line, the one trace of a hook that learns nothing.
    from lamar_claude_code import quick
    from lamar_claude_code.hook import paths_for
    from lamar_claude_code.state import UNWRITABLE

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the store's folder should be\n")
    store = str(blocked / "experience.db")
    quick._note(store, "the hook could not start: ModuleNotFoundError: lamar_claude_code")
    lines = (tmp_path / "home" / ".lamar" / "claude-code.log").read_text().splitlines()
    assert len(lines) == 1 and f" {paths_for(store).log} {UNWRITABLE} " in lines[0]  # as `status` looks for it
    assert lines[0].endswith("the hook could not start: ModuleNotFoundError: lamar_claude_code")


def test_an_installed_hook_whose_quick_py_is_gone_never_blocks_the_prompt(
        store: Path, env: dict[str, str], repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `pip uninstall`, or a virtual environment rebuilt with another Python, removes quick.py and
    # leaves the settings' entries: Python exits 2 on a script it cannot open, and exit 2 from
    # UserPromptSubmit erases the prompt (from Stop, it keeps Claude from stopping).
    from lamar_claude_code import quick
    from lamar_claude_code.settings import hook_command

    monkeypatch.setattr(quick, "__file__", str(tmp_path / "uninstalled" / "quick.py"))
    command = hook_command(str(store))
    event = json.dumps(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail")).encode()
    done = subprocess.run(["/bin/sh", "-c", command], input=event, capture_output=True, env=env, timeout=60,
                          check=False)
    assert (done.returncode, done.stdout) == (1, b"")  # 1: a non-blocking error Claude Code shows; never 2
    assert b"quick.py" in done.stderr
    assert done.stderr.startswith(b"Lamar is off")  # the fix named first, not the shell's "can't open file"


@pytest.mark.parametrize("what", ["python", "quick.py"])
def test_an_installed_hook_whose_python_or_quick_py_is_gone_names_the_fix(
        what: str, store: Path, env: dict[str, str], repo: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A virtual environment deleted or moved after install: Claude Code shows each event's stderr as a
    # non-blocking hook error, and the shell's own "/bin/sh: 1: .../python: not found" named no fix.
    from lamar_claude_code import quick
    from lamar_claude_code.settings import gone, hook_command, invocation, runs_without_path

    monkeypatch.setattr(*((sys, "executable", str(tmp_path / "deleted-venv" / "bin" / "python")) if what == "python"
                          else (quick, "__file__", str(tmp_path / "uninstalled" / "quick.py"))))
    command = hook_command(str(store))
    for event in (payload("SessionStart", "s1", repo, source="startup"),
                  payload("UserPromptSubmit", "s1", repo, prompt="the tests fail")):
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(event).encode(), capture_output=True,
                              env=env, timeout=60, check=False)
        assert (done.returncode, done.stdout) == (1, b"")  # never 2, which would erase the prompt
        said = done.stderr.decode()
        assert said.startswith("Lamar is off: the Python or quick.py of its hook is gone. "), said
        assert "`lamar claude-code status` names the install that fixes it" in said, said
        # a moved environment's bin/lamar starts the Python of its old path: the module runs from the new one
        assert "from a moved virtual environment, its `bin/python -m lamar.cli claude-code status`" in said, said
        assert "not found" not in said and said.count("\n") == 1  # one line, the shell's own error never reached
    assert gone(command) and invocation(command).startswith(f"{shlex.quote(sys.executable)} -S ")
    assert runs_without_path(command).startswith("exit 127" if what == "python" else "exit 2")


@pytest.mark.parametrize("shell", ["/bin/sh", "bash"])
def test_the_installed_command_needs_only_posix_sh_whatever_its_paths_hold(
        shell: str, store: Path, env: dict[str, str], repo: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Claude Code runs a command hook with `/bin/sh -c` on Linux and macOS (dash on Debian and
    # Ubuntu, which has no bash syntax) and with Git Bash on Windows: `|| exit 1` and the quoted
    # paths must read the same in both, spaces, quotes, `$` and backquotes included.
    import shutil

    from lamar_claude_code import quick
    from lamar_claude_code.settings import hook_command

    odd = tmp_path / "it's $HOME `id` ü"
    odd.mkdir()
    shutil.copy(quick.__file__, odd / "quick.py")
    (odd / "python").symlink_to(sys.executable)
    monkeypatch.setattr(quick, "__file__", str(odd / "quick.py"))
    monkeypatch.setattr(sys, "executable", str(odd / "python"))
    moved = odd / "store.db"
    shutil.copy(store, moved)
    command = hook_command(str(moved))
    for event in (payload("SessionStart", "s1", repo, source="startup"),
                  payload("UserPromptSubmit", "s1", repo, prompt="the tests fail")):
        done = subprocess.run([shell, "-c", command], input=json.dumps(event).encode(), env=env,
                              capture_output=True, timeout=60, check=False)
        assert done.returncode == 0 and done.stderr == b"", (shell, done.stderr)
    with Lamar(str(moved)) as lam:
        assert lam.stats()["episodes"] == 1
        (logged,) = [e.data for e in lam.store.read() if e.kind == "episode"]
        _recalled_alone(lam, logged["injected"], logged["held_out"], done.stdout)
