"""The plain rules: task and error classes, follow-up readings, and the config file that extends them."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lamar.recall import render_prompt
from lamar.tasks import ERROR_CLASS_CHARS
from lamar_claude_code.config import ConfigError, load_config
from lamar_claude_code.context import derive_context, error_class, task_class
from lamar_claude_code.outcomes import read_followup

from .conftest import Hook, git, payload, project_config


@pytest.mark.parametrize(("prompt", "task", "error"), [
    ("pytest fails with AttributeError: 'NoneType' object has no attribute 'id'", "tests_fail", "AttributeError"),
    ("the jest suite is red since the upgrade", "tests_fail", None),
    ("ruff complains about F401 unused import in cart.py", "lint_fails", "F401"),
    ("tsc errors: TS2345 argument of type string", "lint_fails", "TS2345"),
    ("cargo build fails with error[E0308]: mismatched types", "build_fails", "E0308"),
    ("xcodebuild fails: SIGSEGV in the linker", "build_fails", "SIGSEGV"),
    ("the deploy to staging failed with exit code 137", "deploy_fails", "exit code 137"),
    ("refactor the cart totals into one function", "refactor", None),
    ("where is the discount applied?", "question", None),
    ("add a discount code field to the checkout", "feature", None),
    ("thanks", "other", None),
])
def test_task_and_error_rules(prompt: str, task: str, error: str | None) -> None:
    assert (task_class(prompt), error_class(prompt)) == (task, error)


def test_a_long_pasted_line_is_classified_at_once() -> None:
    # One line of a pasted log, many failure words and no test word: each failure word made the
    # rule scan the rest of the line (seconds for 20,000 characters; a hook has a timeout).
    pasted = "red " * 6_000
    started = time.monotonic()
    assert (task_class(pasted), task_class("job 5 fails " * 2_000)) == ("other", "other")
    assert time.monotonic() - started < 4.0  # a bound far above the time it takes, far below the old
    assert task_class("the tests " + "x" * 150 + " fail") == "tests_fail"  # a failure word near enough
    assert task_class("the tests " + "x" * 1_000 + " fail") == "other"  # one far away speaks of another thing


def test_an_error_class_is_a_label_cut_to_its_head_however_long_the_match() -> None:
    pasted = "deploy failed with error: " + "minified.js:1 " * 2_000
    label = error_class(pasted, (r"error: (.+)",))
    assert label is not None and label == ("minified.js:1 " * 2_000)[:ERROR_CLASS_CHARS]
    assert error_class("it raises " + "Ab" * 5_000 + "Error") == ("Ab" * 5_000 + "Error")[:ERROR_CLASS_CHARS]


@pytest.mark.parametrize(("previous", "prompt", "signal"), [
    ("add a verbose flag", "no, use -v instead", "corrected"),
    ("add a verbose flag", "undo that change please", "corrected"),
    ("fix the login test", "that broke the signup page", "corrected"),
    ("fix the login test", "it still fails with the same error", "corrected"),
    ("fix the failing login test in auth", "fix the failing login test in auth please", "reasked"),
    ("fix the failing login test in auth", "now add a logout button", "accepted"),
])
def test_followup_rules(previous: str, prompt: str, signal: str) -> None:
    assert read_followup(previous, prompt)[0] == signal


@pytest.mark.parametrize(("prompt", "signal"), [
    # A polite "no" that lets the answer stand was read as a correction (-0.6 where +0.6 was meant).
    ("no worries, now add a shipping field", "accepted"),
    ("No, that's fine, thanks", "accepted"),
    ("no need for tests, just add the field", "accepted"),
    ("no thanks, that's enough", "accepted"),
    ("no, put it in the header", "corrected"),
    # Plain ways to say the last answer failed were read as moving on (+0.6 where -0.6 was meant).
    ("try again", "corrected"),
    ("I said the header, not the footer", "corrected"),
    ("the tests are failing now", "corrected"),
    ("it still doesn't compile", "corrected"),
    ("please don't touch cart.py", "corrected"),
    ("you deleted my function!", "corrected"),
    ("add a test that is failing now and fix it", "accepted"),
    ("don't worry about the docs, now add the field", "accepted"),
    ("Do not worry about it. Now the footer", "accepted"),
    ("nah, all good", "accepted"),
    ("add a retry so the job is not failing now", "accepted"),
    ("don't, put it in the header", "corrected"),
    ("no, not all good: the footer moved", "corrected"),
])
def test_what_a_user_types_after_an_answer_reads_as_they_mean_it(prompt: str, signal: str) -> None:
    assert read_followup("add a discount code field to the checkout", prompt)[0] == signal


@pytest.mark.parametrize(("prompt", "signal"), [
    # "failing now" counted only at the prompt's end or before . ! ?: the usual comma after it read as moving on.
    ("the tests are failing now, fix to_cents", "corrected"),
    ("it's broken again: see the log below", "corrected"),
    ("the build is crashing again; here is the trace", "corrected"),
    ("the job was failing now and then, add a retry", "accepted"),
])
def test_failing_now_followed_by_more_words_is_a_correction(prompt: str, signal: str) -> None:
    assert read_followup("fix the rounding in to_cents", prompt)[0] == signal


def test_the_log_says_a_followups_reading_in_one_parenthesis(hook: Hook, repo: Path) -> None:
    # It read "accepted (next prompt moves on (0.00 word overlap))".
    assert read_followup("fix the login test", "thanks, now add a footer")[1] == \
        "next prompt moves on, 0.00 word overlap"
    assert read_followup("fix the login test", "fix the login test")[1] == \
        "next prompt repeats the last, 1.00 word overlap"
    for prompt in ("add a health check", "now write the changelog"):
        assert hook(payload("UserPromptSubmit", "s1", repo, prompt=prompt)).returncode == 0
    settled = [line.split(" ", 1)[1] for line in hook.log_file.read_text().splitlines() if " settled " in line]
    assert len(settled) == 1 and re.fullmatch(r"settled ep_\w+: accepted \(next prompt moves on, 0\.00 word overlap\)",
                                              settled[0]), settled


def test_the_config_file_overrides_and_extends(repo: Path, tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("[context]\nextra = { team = 'payments' }\n[hook]\nk = 5\n")
    trusted = tmp_path / ".lamar" / "claude-code-trusted.json"
    config_file = project_config(repo, "[context]\nproject = 'webshop'\n"
                                 "[[rules.task]]\nname = 'migration'\npattern = '(?i)\\bmigrat'\n"
                                 "[rules]\nerror = ['\\b(ORA-\\d{5})\\b']\n"
                                 "[outcome]\ncorrected = ['(?i)^meh\\b']\nreasked_overlap = 0.5\n", tmp_path)
    config = load_config(repo, user=user, trust_file=trusted)
    assert (config.project, config.k, dict(config.extra), config.reasked_overlap) == ("webshop", 5,
                                                                                     {"team": "payments"}, 0.5)
    context = derive_context(str(repo), "the migration fails with ORA-00942 on deploy", config, {})
    assert context == {"project": "webshop", "language": "python", "task": "migration",
                       "error_class": "ORA-00942", "team": "payments"}
    assert read_followup("a", "meh, try again", config.corrected)[0] == "corrected"
    config_file.write_text("[hook]\nk = -1\n")
    assert load_config(repo, user=user, trust_file=trusted).untrusted == str(config_file)  # changed: not trusted
    project_config(repo, "[hook]\nk = -1\n", tmp_path)
    with pytest.raises(ConfigError, match="hook.k"):
        load_config(repo, user=user, trust_file=trusted)


@pytest.mark.parametrize(("section", "line", "named"), [
    ("hook", "k = 2.0", "hook.k"),
    ("hook", "k = true", "hook.k"),
    ("hook", "k = 1001", "hook.k must be a whole number from 0 to 1,000"),
    ("hook", "max_chars = true", "hook.max_chars"),
    ("hook", "max_chars = 500.5", "hook.max_chars"),
    ("hook", "max_chars = 271", "hook.max_chars must be a whole number >= 272, what the fence and one shortened"),
    ("hook", "max_chars = 10001", "hook.max_chars must be at most 10,000, what Claude Code passes whole"),
    ("hook", "budget_seconds = nan", "budget_seconds"),
    ("hook", "budget_seconds = inf", "budget_seconds"),
    ("hook", "budget_seconds = true", "budget_seconds"),
    ("hook", "budget_seconds = 1e300", "hook.budget_seconds must be at most 60"),
    ("hook", "budget_seconds = 60.5", "hook.budget_seconds must be at most 60"),
    ("outcome", "git_window_days = nan", "git_window_days"),
    ("outcome", "reasked_overlap = nan", "outcome.reasked_overlap"),
    ("outcome", "reasked_overlap = '0.5'", "outcome.reasked_overlap"),
])
def test_a_value_toml_can_spell_but_the_hook_cannot_use_is_named(section: str, line: str, named: str,
                                                                  repo: Path, tmp_path: Path) -> None:
    # TOML has nan, inf, booleans and floats; each would otherwise reach the hook as a budget it
    # never meets, a slot count of True or a comparison that is always False.
    project_config(repo, f"[{section}]\n{line}\n", tmp_path)
    with pytest.raises(ConfigError, match=re.escape(named)):
        load_config(repo, user=tmp_path / "none.toml", trust_file=tmp_path / ".lamar" / "claude-code-trusted.json")


def test_a_custom_slash_command_is_classified_by_what_it_asks(repo: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(None, user="/nonexistent.toml")
    commands = repo / ".claude" / "commands"
    (commands / "ci").mkdir(parents=True)
    (commands / "fix.md").write_text("---\ndescription: Fix a failing suite\n---\n"
                                     "The test suite fails on $ARGUMENTS. Find the cause and fix it.\n")
    (commands / "ci" / "redeploy.md").write_text("Find why the deploy of $0 failed and redo it.\n")
    (repo / ".claude" / "skills" / "tidy").mkdir(parents=True)
    (repo / ".claude" / "skills" / "tidy" / "SKILL.md").write_text("---\nname: tidy\n---\nRefactor the module.\n")
    home = tmp_path / "claude-home"
    (home / "commands").mkdir(parents=True)
    (home / "commands" / "why.md").write_text("Explain the code in $ARGUMENTS\n")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home))
    web = repo / "web"
    web.mkdir()

    def context(prompt: str, cwd: Path = repo) -> tuple[str, str | None]:
        found = derive_context(str(cwd), prompt, config, {})
        return found["task"], found.get("error_class")

    assert context("/fix the cart module") == ("tests_fail", None)  # the command file's prompt
    assert context("/fix cart: KeyError 'sku'", web) == ("tests_fail", "KeyError")  # found from a sub-folder
    assert context("/ci:redeploy staging") == ("deploy_fails", None)  # commands/ci/redeploy.md
    assert context("/tidy cart.py") == ("refactor", None)  # a skill
    assert context("/why cart.py") == ("question", None)  # the user's own
    # No file (a plugin's command): its name, as words, and what was typed after it.
    assert context("/review:explain-totals") == ("question", None)
    assert context("/tests-red") == ("tests_fail", None)
    assert context("/usr/bin/python fails to start") == (task_class("/usr/bin/python fails to start"), None)


def test_a_command_with_a_dot_in_its_name_reads_its_own_file(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `/v1.2` is commands/v1.2.md: read as a suffix, the dot would pick commands/v1.md, another command.
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(repo / "no-claude-home"))
    commands = repo / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "v1.md").write_text("Refactor the v1 module.\n")
    (commands / "v1.2.md").write_text("The tests fail on the 1.2 release: find why.\n")
    config = load_config(None, user="/nonexistent.toml")
    assert derive_context(str(repo), "/v1.2", config, {})["task"] == "tests_fail"


def test_language_is_cached_until_the_repository_changes(repo: Path) -> None:
    cache: dict[str, object] = {}
    config = load_config(None, user="/nonexistent.toml")
    assert derive_context(str(repo), "hi", config, cache)["language"] == "python"
    entry = cache[str(repo)]
    assert isinstance(entry, dict)
    entry["language"] = "cobol"  # what git tracks is as it was: the cached answer stands
    assert derive_context(str(repo), "hi", config, cache)["language"] == "cobol"
    (repo / "app.py").write_text("def main():\n    print('shop!')\n")
    git(repo, "status")  # rewrites the index with the same files: no prompt pays for `git ls-files` again
    assert derive_context(str(repo), "hi", config, cache)["language"] == "cobol"
    for name in ("a.rs", "b.rs", "c.rs"):
        (repo / name).write_text("fn main() {}\n")
    git(repo, "add", ".")  # more files in the index: the language is counted again, within the day
    assert derive_context(str(repo), "hi", config, cache)["language"] == "rust"


def test_the_language_outside_git_or_before_a_first_add_is_counted_once_a_day(tmp_path: Path, monkeypatch) -> None:
    # Every prompt runs this hook: a folder outside git (~, /tmp, Downloads) gains and loses entries all day
    # (an app's config saved by a rename), and a scan of up to 5 000 files there takes about 0.1 s.
    import lamar_claude_code.context as context_module

    counted: list[str] = []
    scan, tracked = context_module._scan, context_module._tracked_files
    monkeypatch.setattr(context_module, "_scan", lambda folder: counted.append("scan") or scan(folder))
    monkeypatch.setattr(context_module, "_tracked_files", lambda repo: counted.append("git") or tracked(repo))
    config = load_config(None, user="/nonexistent.toml")
    loose = tmp_path / "downloads"
    loose.mkdir()
    (loose / "plot.py").write_text("print(1)\n")
    cache: dict[str, object] = {}
    for step in range(3):
        (loose / f".config.json.tmp{step}").write_text("{}")
        (loose / f".config.json.tmp{step}").rename(loose / ".config.json")
        assert derive_context(str(loose), "hi", config, cache)["language"] == "python"
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    git(fresh, "init", "-q", "-b", "main")  # no index until a first add
    (fresh / "main.rs").write_text("fn main() {}\n")
    for _ in range(3):
        assert "language" not in derive_context(str(fresh), "hi", config, cache)
    assert counted == ["scan", "git"]


def test_a_tie_between_languages_goes_to_more_bytes_then_to_the_name(tmp_path: Path) -> None:
    config = load_config(None, user="/nonexistent.toml")
    small = tmp_path / "tool"
    small.mkdir()
    git(small, "init", "-q", "-b", "main")
    (small / "setup.py").write_text("import os\n")
    (small / "main.rs").write_text("fn main() {\n" + "    println!(\"tool\");\n" * 40 + "}\n")
    git(small, "add", ".")
    assert derive_context(str(small), "hi", config, {})["language"] == "rust"  # one file each: more code wins
    (small / "setup.py").write_text("x" * (small / "main.rs").stat().st_size)
    assert {derive_context(str(small), "hi", config, {})["language"] for _ in range(3)} == {"python"}


def test_disabled_in_a_project_the_hook_does_nothing(hook: Hook, repo: Path) -> None:
    project_config(repo, "[hook]\nenabled = false\n", hook.env["HOME"])
    done = hook(payload("UserPromptSubmit", "s1", repo, prompt="the tests fail"))
    assert (done.returncode, done.stdout) == (0, b"")
    assert not hook.state_file.exists() and not hook.log_file.exists()


def test_settle_for_cron(hook: Hook, repo: Path) -> None:
    assert hook(payload("UserPromptSubmit", "s1", repo, prompt="add a health check")).returncode == 0
    (repo / "health.py").write_text("OK = True\n")
    hook(payload("PostToolUse", "s1", repo, tool_name="Write", tool_use_id="t",
                 tool_input={"file_path": str(repo / "health.py"), "content": "OK = True\n"},
                 tool_response={"success": True}))
    git(repo, "add", "health.py")
    git(repo, "commit", "-q", "-m", "health")
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "claude-code", "settle", "--store", str(hook.store)],
                          env=hook.env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert "shipped (health.py landed in commit" in done.stdout and "settled 1 outcome\n" in done.stdout
    state = json.loads(hook.state_file.read_text())
    assert [r["signal"] for r in state["episodes"].values()] == ["shipped"]


def test_the_hook_path_imports_only_the_standard_library_and_lamar(hook: Hook, repo: Path) -> None:
    script = (
        "import io, json, sys\n"
        "before = set(sys.modules)  # what the interpreter loaded on its own (site, .pth hooks)\n"
        "from lamar.cli import main\n"
        f"event = {json.dumps(payload('UserPromptSubmit', 's1', repo, prompt='the tests fail'))!r}\n"
        "sys.stdin = io.TextIOWrapper(io.BytesIO(event.encode()))\n"
        f"main(['claude-code', 'hook', '--store', {str(hook.store)!r}])\n"
        "top = {name.split('.')[0] for name in set(sys.modules) - before}\n"
        "print()\n"
        "print(sorted(top - set(sys.stdlib_module_names) - {'lamar', 'lamar_claude_code'}))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], env=hook.env, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.splitlines()[-1] == "[]"
    assert json.loads(hook.state_file.read_text())["sessions"]["s1"]["episode"]


def test_long_lessons_are_all_shown_within_the_size_limit() -> None:
    from lamar import Experience
    from lamar.recall import FENCE_CLOSE, FENCE_OPEN
    from lamar_claude_code.fitting import fit_prompt

    lessons = [Experience(f"situation {i} " + "detail " * 800, f"action {i} " + "step " * 900,
                          "reason " * 300, id=f"exp_{i}") for i in range(3)]
    text = fit_prompt(lessons, 10_000)
    assert len(text) <= 10_000 and text.startswith(FENCE_OPEN) and text.endswith(FENCE_CLOSE)
    assert all(f"When situation {i} " in text and f"action {i} " in text for i in range(3))
    short = [Experience("the tests fail", "run them alone", id="exp_s")]
    assert fit_prompt(short, 10_000) == render_prompt(short)


def test_the_smallest_max_chars_holds_the_fence_and_one_lesson_cut_short() -> None:
    from lamar_claude_code.config import MIN_CONTEXT_CHARS
    from lamar_claude_code.fitting import fitting

    assert fitting(MIN_CONTEXT_CHARS, 3) == 1 and fitting(MIN_CONTEXT_CHARS - 1, 3) == 0
    assert fitting(10_000, 3) == 3


def test_a_small_max_chars_recalls_only_the_lessons_it_shows(repo: Path, tmp_path: Path) -> None:
    # Every lesson recorded as injected must have reached Claude: its evidence counts the episode.
    from lamar import Experience, Lamar, Scope
    from lamar_claude_code.hook import run

    store = tmp_path / "small.db"
    lam = Lamar(str(store), seed=1, holdout=0.0)
    for i in range(3):
        lam.add(Experience(f"the tests fail in suite {i}", "run the failing test alone with -x first",
                           "the first failure explains the rest", scope=Scope(task="tests_fail")))
    project_config(repo, "[hook]\nmax_chars = 300\n", tmp_path / "home")
    home = str(tmp_path / "home")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HOME", home)
        out = io.StringIO()
        event = payload("UserPromptSubmit", "s1", repo, prompt="the tests fail with KeyError")
        run(io.BytesIO(json.dumps(event).encode()), out, str(store), budget=30.0, engine=lambda: lam)
        shown = json.loads(out.getvalue())["hookSpecificOutput"]["additionalContext"]
        state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
        episode = state["sessions"]["s1"]["episode"]
        injected = lam.episode(episode).injected
        assert len(shown) <= 300 and len(injected) == 1 and state["episodes"][episode]["injected"] == list(injected)
        assert "1. > When the tests fa" in shown

        # A lesson whose shortest form still does not fit (its words are quoted longer): nothing is
        # shown, so the episode is kept but never reported.
        lam.add(Experience("System: the tests fail", "System: run the failing test alone",
                           "System: the first failure explains the rest", scope=Scope(project="other")))
        project_config(repo, "[hook]\nmax_chars = 272\n[context]\nproject = 'other'\n", home)
        for session, prompt in (("s2", "the tests fail"), ("s2", "thanks, now add a changelog line")):
            out = io.StringIO()
            event = payload("UserPromptSubmit", session, repo, prompt=prompt)
            run(io.BytesIO(json.dumps(event).encode()), out, str(store), budget=30.0, engine=lambda: lam)
            if prompt == "the tests fail":
                assert out.getvalue() == ""
        state = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
        first = next(r for r in state["episodes"].values() if r["session"] == "s2")
        assert first["injected"] == [] and first["delivered"] is False and first["signal"] is None
        assert "do not fit in hook.max_chars (272)" in (store.with_name(store.name + ".claude-code.log")).read_text()
    lam.close()


def test_a_json_store_works_the_same(env: dict[str, str], repo: Path, tmp_path: Path) -> None:
    from lamar import Experience, Lamar, Scope

    store = tmp_path / "experience.json"
    with Lamar(str(store), seed=1) as lam:
        lam.add(Experience("the tests fail", "run them alone", scope=Scope(project="shop")))
    hook = Hook(store, env)
    first = hook(payload("UserPromptSubmit", "j1", repo, prompt="the tests fail"))
    second = hook(payload("UserPromptSubmit", "j1", repo, prompt="no, that's wrong"))
    assert first.returncode == second.returncode == 0
    with Lamar(str(store)) as lam:
        episodes = [lam.episode(e) for e in hook.state()["episodes"]]
        assert [e.signal for e in episodes] == ["corrected", None]


def test_head_is_read_without_git_and_agrees_with_it(repo: Path, tmp_path: Path) -> None:
    from lamar_claude_code.outcomes import head_commit

    sha = git(repo, "rev-parse", "HEAD").strip()
    assert head_commit(str(repo)) == sha
    git(repo, "pack-refs", "--all")  # the loose ref is gone: git answers
    assert head_commit(str(repo)) == sha
    git(repo, "checkout", "-q", "--detach")
    assert head_commit(str(repo)) == sha
    git(repo, "worktree", "add", "-q", str(tmp_path / "wt"))
    assert head_commit(str(tmp_path / "wt")) == sha
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    assert head_commit(str(empty)) is None


def test_a_resumed_session_can_still_correct_its_last_prompt(hook: Hook, repo: Path) -> None:
    from lamar import Lamar

    hook(payload("UserPromptSubmit", "r1", repo, prompt="add a health check endpoint"))
    hook(payload("Stop", "r1", repo, stop_hook_active=False))
    hook(payload("SessionEnd", "r1", repo, reason="prompt_input_exit"))
    hook(payload("SessionStart", "r1", repo, source="resume"))
    hook(payload("UserPromptSubmit", "r1", repo, prompt="no, that's wrong: it must not need a login"))
    (first, _) = sorted(hook.state()["episodes"].items(), key=lambda item: item[1]["time"])
    assert [a[1] for a in first[1]["audit"]] == ["accepted", "corrected"]
    with Lamar(str(hook.store)) as lam:
        assert lam.episode(first[0]).signal == "corrected"


def test_a_sub_folders_rules_are_recalled_only_where_the_session_works(repo: Path, env: dict[str, str],
                                                                        tmp_path: Path) -> None:
    from lamar import Lamar

    (repo / "CLAUDE.md").write_text("- Run `make test` before committing\n")
    for folder, rule in (("web", "- Never use inline styles\n"), ("api", "- Never return a bare list\n")):
        (repo / folder / "src").mkdir(parents=True)
        (repo / folder / "src" / "main.txt").write_text("x\n")
        (repo / folder / "CLAUDE.md").write_text(rule)
    store = tmp_path / "rules.db"
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "import-rules", "--store", str(store), "--create",
                           "--apply"], cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    lessons = {e.provenance["file"]: e for e in Lamar(str(store)).experiences()}
    assert dict(lessons["web/CLAUDE.md"].scope) == {"project": "shop", "folder": "web/"}
    assert dict(lessons["CLAUDE.md"].scope) == {"project": "shop"}
    hook = Hook(store, env)

    def eligible(session: str, cwd: Path) -> set[str]:
        return _eligible_files(hook, store, session, cwd, "tidy this up")

    assert eligible("s1", repo) == {"CLAUDE.md"}  # at the top, a sub-folder's rules are not read
    edit = payload("PostToolUse", "s1", repo, tool_name="Edit",
                   tool_input={"file_path": str(repo / "web/src/main.txt")})
    assert hook(edit).returncode == 0
    assert eligible("s1", repo) == {"CLAUDE.md", "web/CLAUDE.md"}  # once it edits there, they are
    assert eligible("s1", repo) == {"CLAUDE.md", "web/CLAUDE.md"}  # for the rest of the session
    assert eligible("s2", repo / "api" / "src") == {"CLAUDE.md", "api/CLAUDE.md"}  # started inside the folder


def test_reading_a_file_in_a_sub_folder_recalls_its_rules_as_claude_code_loads_them(
        repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """Claude Code loads web/CLAUDE.md once Claude reads a file under web/, not only once it edits
    one; a read moves the folder of the work but is no edit git could settle."""
    from lamar_claude_code.settings import EVENTS

    assert "Read" in (EVENTS["PostToolUse"][0] or "").split("|")  # the installed entries send reads
    (repo / "CLAUDE.md").write_text("- Run `make test` before committing\n")
    (repo / "web" / "src").mkdir(parents=True)
    (repo / "web" / "src" / "main.txt").write_text("x\n")
    (repo / "web" / "CLAUDE.md").write_text("- Never use inline styles\n")
    store = tmp_path / "rules.db"
    done = subprocess.run([sys.executable, "-m", "lamar.cli", "import-rules", "--store", str(store), "--create",
                           "--apply"], cwd=repo, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    hook = Hook(store, env)

    def eligible(session: str) -> set[str]:
        return _eligible_files(hook, store, session, repo, "why is the page blank?")

    assert eligible("s1") == {"CLAUDE.md"}
    read = payload("PostToolUse", "s1", repo, tool_name="Read",
                   tool_input={"file_path": str(repo / "web/src/main.txt")}, tool_response={"type": "text"})
    assert hook(read).returncode == 0
    episode = hook.state()["sessions"]["s1"]["episode"]
    assert hook.state()["episodes"][episode]["files"] == []  # read, not edited: nothing for git to settle
    assert eligible("s1") == {"CLAUDE.md", "web/CLAUDE.md"}


def test_the_hook_knows_the_folder_rules_files_and_scope_key_of_import_rules() -> None:
    from lamar.rules.importing import FOLDER_KEY
    from lamar.rules.sources import FOLDER_RULES
    from lamar_claude_code import context

    assert set(context.FOLDER_RULES) == {*FOLDER_RULES, ".claude/CLAUDE.md"} and context.FOLDER_KEY == FOLDER_KEY


def _eligible_files(hook: Hook, store: Path, session: str, cwd: Path, prompt: str) -> set[str]:
    """The rules files of the lessons eligible for `prompt`, sent by the hook in `session` from `cwd`."""
    from lamar import Lamar

    hook(payload("UserPromptSubmit", session, cwd, prompt=prompt))
    episode = hook.state()["sessions"][session]["episode"]
    lam = Lamar(str(store))
    try:
        return {lam.get(i).provenance["file"] for i in lam.episode(episode).eligible}
    finally:
        lam.close()
