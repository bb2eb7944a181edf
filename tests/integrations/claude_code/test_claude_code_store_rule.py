"""Every store command without --store or $LAMAR_STORE reads the store Claude Code's hooks read in the folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from lamar import Experience, Lamar

from .conftest import ROOT
from .test_claude_code_install import _plugin_installed


def lamar(env: dict[str, str], cwd: Path, *args: str, bare: bool = False) -> subprocess.CompletedProcess[str]:
    """`python -m lamar.cli ARGS`; `bare`: without site-packages and $PYTHONPATH, so without the Claude Code
    integration (the core needs neither)."""
    start = ["-m", "lamar.cli"]
    if bare:
        code = f"import sys; sys.path[:0] = [{str(ROOT)!r}]; from lamar.cli import main; sys.exit(main())"
        start = ["-I", "-S", "-c", code]
    return subprocess.run([sys.executable, *start, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=60, check=False)


def _stores(env: dict[str, str], tmp_path: Path) -> tuple[dict[str, str], Path, Path]:
    """The environment without $LAMAR_STORE, the hooks' store and the default one, each with one lesson."""
    bare = {k: v for k, v in env.items() if k not in ("LAMAR_STORE", "XDG_DATA_HOME")}
    hooks, default = tmp_path / "hooks.db", Path(bare["HOME"]) / ".lamar" / "experience.json"
    default.parent.mkdir(mode=0o700)  # as Lamar makes it: one open to others is closed, and said so
    for path, action in ((hooks, "tag the release"), (default, "ask the default store")):
        with Lamar(str(path)) as lam:
            lam.add(Experience("a release", action, scope={"project": "shop"}))
    return bare, hooks, default


def test_ls_and_stats_read_the_store_the_installed_hooks_name(repo: Path, env: dict[str, str],
                                                              tmp_path: Path) -> None:
    """After `lamar claude-code install --store X`, a bare `lamar ls` read ~/.lamar/experience.json,
    where the hooks never write: what they learnt was out of sight."""
    bare, hooks, default = _stores(env, tmp_path)
    installed = lamar(bare, repo, "claude-code", "install", "--project", "--store", str(hooks))
    assert installed.returncode == 0, installed.stderr
    assert "lamar" in (repo / ".claude" / "settings.json").read_text()
    named = f"store: {hooks} (named by the installed hooks)"
    (repo / "src").mkdir()
    for cwd in (repo, repo / "src"):
        shown = lamar(bare, cwd, "ls")
        assert shown.returncode == 0, shown.stderr
        assert "tag the release" in shown.stdout and "ask the default store" not in shown.stdout
        assert shown.stderr.splitlines() == [named]  # once, on stderr: stdout stays the listing
    stats = lamar(bare, repo, "stats", "--json")
    assert stats.returncode == 0 and stats.stderr.splitlines() == [named], stats.stderr
    assert json.loads(stats.stdout)["store"] == str(hooks)

    for chosen, how in ((lamar(bare, repo, "ls", "--store", str(default)), "--store"),
                        (lamar({**bare, "LAMAR_STORE": str(default)}, repo, "ls"), "$LAMAR_STORE"),
                        (lamar(bare, tmp_path, "ls"), "no hooks outside the repository")):
        assert chosen.returncode == 0, (how, chosen.stderr)
        assert "ask the default store" in chosen.stdout and "tag the release" not in chosen.stdout, how
        assert chosen.stderr == "", how


def test_a_plugin_users_ls_reads_the_plugins_store(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """A plugin user's `lamar ls` read the default store, not the one the plugin fills; a --store that
    names no store still hears of the plugin's."""
    bare, hooks, default = _stores(env, tmp_path)
    claude = _plugin_installed(bare)
    settings = claude / "settings.json"
    settings.write_text(json.dumps({"enabledPlugins": {"lamar@lamar": True},
                                    "pluginConfigs": {"lamar@lamar": {"options": {"store": str(hooks)}}}}))
    shown = lamar(bare, repo, "ls")
    assert shown.returncode == 0, shown.stderr
    assert "tag the release" in shown.stdout and "ask the default store" not in shown.stdout
    assert shown.stderr.splitlines() == [f"store: {hooks} (the plugin lamar@lamar's)"]

    typo = lamar(bare, repo, "ls", "--store", str(tmp_path / "typo.db"))
    assert typo.returncode == 2 and f"Claude Code's hooks here read {hooks} (the plugin lamar@lamar's): " \
        f"pass --store {hooks}" in typo.stderr, typo.stderr
    asked = lamar(bare, repo, "ls", "--store", str(hooks))
    assert asked.returncode == 0 and asked.stderr == "", asked.stderr

    hooks.unlink()  # the plugin's store before its hooks have run: not a typo to check
    missing = lamar(bare, repo, "ls")
    assert missing.returncode == 2
    assert (f"no store at {hooks}: Claude Code's hooks here (the plugin lamar@lamar's) make it at their first "
            "prompt; or pass --store PATH or set LAMAR_STORE for another store") in missing.stderr, missing.stderr
    umask = os.umask(0o022)  # a usual umask: the store must not take its modes from it
    try:
        added = lamar(bare, repo, "add", "--precondition", "a hotfix", "--action", "branch from the tag")
    finally:
        os.umask(umask)
    assert added.returncode == 0, added.stderr  # no --create needed: the hooks make that store anyway
    made = [p for p in hooks.parent.iterdir() if p.name.startswith(hooks.name)]
    assert made and {p.name: oct(p.stat().st_mode & 0o777) for p in made} == {p.name: "0o600" for p in made}
    for path, actions in ((hooks, ["branch from the tag"]), (default, ["ask the default store"])):
        with Lamar(str(path)) as lam:
            assert [e.action for e in lam.experiences()] == actions


def test_an_import_that_makes_the_plugins_store_makes_it_yours_only(repo: Path, env: dict[str, str],
                                                                   tmp_path: Path) -> None:
    """`lamar import ~/.lamar/experience.db`, as status advises a user moving to the plugin, made the plugin's
    store with the umask's modes, and the next status asked for a chmod 600."""
    bare, _, default = _stores(env, tmp_path)
    plugin = tmp_path / "share" / "lamar" / "experience.db"
    claude = _plugin_installed(bare)
    (claude / "settings.json").write_text(json.dumps({
        "enabledPlugins": {"lamar@lamar": True},
        "pluginConfigs": {"lamar@lamar": {"options": {"store": str(plugin)}}}}))
    umask = os.umask(0o022)
    try:
        copied = lamar(bare, repo, "import", str(default))
    finally:
        os.umask(umask)
    assert copied.returncode == 0, copied.stderr
    made = [p for p in plugin.parent.iterdir() if p.name.startswith(plugin.name)]
    assert made and {p.name: oct(p.stat().st_mode & 0o777) for p in made} == {p.name: "0o600" for p in made}
    assert plugin.parent.stat().st_mode & 0o077 == 0  # a folder made for it too
    with Lamar(str(plugin)) as lam:
        assert [e.action for e in lam.experiences()] == ["ask the default store"]


def test_a_setup_lamar_cannot_read_leaves_the_default_store(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """The lookup runs before every store command: a broken settings file or a Lamar installed without
    its Claude Code integration must leave `lamar ls` as it was, on the default store."""
    bare, hooks, _ = _stores(env, tmp_path)
    assert lamar(bare, repo, "claude-code", "install", "--project", "--store", str(hooks)).returncode == 0
    without = lamar(bare, repo, "ls", bare=True)
    assert without.returncode == 0, without.stderr
    assert "ask the default store" in without.stdout and without.stderr == ""

    settings = repo / ".claude" / "settings.json"
    for broken in ("{ not json, but it names lamar", "[\"lamar\"]"):
        settings.write_text(broken)
        shown = lamar(bare, repo, "ls")
        assert shown.returncode == 0, shown.stderr
        assert "ask the default store" in shown.stdout and shown.stderr == "", broken
    settings.unlink()
    settings.mkdir()  # a folder where the file should be: unreadable, as any OSError
    shown = lamar(bare, repo, "ls")
    assert shown.returncode == 0 and "ask the default store" in shown.stdout, shown.stderr


def test_hooks_that_name_two_stores_ask_for_store(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """Claude Code runs the hooks of every settings file: with two stores named, which one `ls` means is
    the user's to say, as `settle` asks."""
    bare, hooks, _ = _stores(env, tmp_path)
    for scope, store in (("--project", hooks), ("--local", tmp_path / "other.db")):
        assert lamar(bare, repo, "claude-code", "install", scope, "--store", str(store)).returncode == 0
    refused = lamar(bare, repo, "ls")
    assert refused.returncode == 1
    assert "the installed hooks write to 2 stores" in refused.stderr and "pass --store PATH" in refused.stderr



def test_import_rules_asks_no_create_for_the_plugins_store_it_makes_anyway(repo: Path, env: dict[str, str],
                                                                          tmp_path: Path) -> None:
    """A plugin user's first dry run asked for `--apply --create` "(the store does not exist yet)", while
    `--apply` alone makes the plugin's store, as the page says: the advice asked for a flag not needed."""
    bare, hooks, _ = _stores(env, tmp_path)
    hooks.unlink()  # the plugin's store before its hooks have run
    claude = _plugin_installed(bare)
    (claude / "settings.json").write_text(json.dumps({
        "enabledPlugins": {"lamar@lamar": True}, "pluginConfigs": {"lamar@lamar": {"options": {"store": str(hooks)}}}}))
    (repo / "CLAUDE.md").write_text("- Never push to main\n")
    shown = lamar(bare, repo, "import-rules")
    assert shown.returncode == 0 and not hooks.exists(), shown.stderr
    assert ("run again with --apply to add them (it creates the store the hooks use, which does not exist yet)"
            in shown.stdout), shown.stdout
    applied = lamar(bare, repo, "import-rules", "--apply")  # the advice, as given
    assert applied.returncode == 0 and "1 lesson added" in applied.stdout, applied.stdout + applied.stderr
    with Lamar(str(hooks)) as lam:
        assert [e.action for e in lam.experiences()] == ["Never push to main"]


def test_store_naming_the_hooks_store_is_made_as_the_hooks_make_it(repo: Path, env: dict[str, str],
                                                                 tmp_path: Path) -> None:
    """After starting over (the store deleted), `import-rules --store X --apply` with X the store the installed
    hooks name refused ("pass --create") while the same command without --store made it: X is no typo."""
    bare, hooks, _ = _stores(env, tmp_path)
    assert lamar(bare, repo, "claude-code", "install", "--store", str(hooks)).returncode == 0
    hooks.unlink()
    (repo / "CLAUDE.md").write_text("- Never push to main\n")
    shown = lamar(bare, repo, "import-rules", "--store", str(hooks))
    assert shown.returncode == 0 and not hooks.exists(), shown.stderr
    assert "run again with --apply to add them (it creates the store the hooks use" in shown.stdout, shown.stdout
    umask = os.umask(0o022)  # a usual umask: the hooks' store holds their prompts' contexts, its owner's only
    try:
        applied = lamar(bare, repo, "import-rules", "--store", str(hooks), "--apply")
    finally:
        os.umask(umask)
    assert applied.returncode == 0 and "1 lesson added" in applied.stdout, applied.stdout + applied.stderr
    assert applied.stderr == ""  # the user named the store: nothing to say of where it came from
    assert oct(hooks.stat().st_mode & 0o777) == "0o600"
    with Lamar(str(hooks)) as lam:
        assert [e.action for e in lam.experiences()] == ["Never push to main"]

    typo = tmp_path / "hoks.db"  # a store the hooks do not name is still refused: more likely a typo
    refused = lamar(bare, repo, "import-rules", "--store", str(typo), "--apply")
    assert refused.returncode == 2 and "pass --create" in refused.stderr and not typo.exists(), refused.stderr
    refused = lamar(bare, repo, "add", "--store", str(typo), "--precondition", "a", "--action", "b")
    assert refused.returncode == 2 and "pass --create" in refused.stderr and not typo.exists(), refused.stderr
