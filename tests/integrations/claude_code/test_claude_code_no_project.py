"""In the file system's root or the home folder outside git, the hooks name no project, as `lamar mcp`
does: one rule (`lamar.projects.project_of`) for the hooks, the MCP server and the rules importer."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar import InvalidArgument, Lamar
from lamar.rules import export_rules, import_rules

from .conftest import Hook, payload


@pytest.mark.parametrize("where", ["home", "root"])
def test_the_hook_names_no_project_where_the_mcp_server_names_none(where: str, hook: Hook, env: dict[str, str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The hook scoped a prompt typed in ~ to a project named after the user (in /, "root") while `lamar mcp`
    # started there derived none: a lesson one proposed for the work there was never recalled by the other.
    from lamar_mcp.context import ContextReader

    home = Path(env["HOME"])
    (home / "notes.sh").write_text("echo hi\n")  # a language the home folder would be read as
    cwd = home if where == "home" else Path("/")
    prompt = "the tests fail in test_cart.py"
    done = hook(payload("UserPromptSubmit", "s1", cwd, prompt=prompt))
    assert done.returncode == 0, done.stderr
    (episode,) = hook.state()["episodes"]
    with Lamar(str(hook.store)) as lam:
        context = lam.episode(episode).context
    assert context == {"task": "tests_fail"}, context  # no project, and no language of a folder that is none
    monkeypatch.setenv("HOME", str(home))
    assert ContextReader(str(cwd)).from_text(prompt) == context  # the MCP server's recall derives the same


def test_rules_imported_in_the_home_folder_name_their_project(env: dict[str, str], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    # Scoped to the user's name, the rules of ~/CLAUDE.md were lessons no hook there would ever recall.
    home = Path(env["HOME"])
    monkeypatch.setenv("HOME", str(home))
    (home / "CLAUDE.md").write_text("- Always run the tests before committing.\n")
    with Lamar(str(tmp_path / "rules.db")) as lam:
        with pytest.raises(InvalidArgument, match=r"your home folder, outside any git repository.*--project NAME"):
            import_rules(lam, home)
        plan = import_rules(lam, home, project="dotfiles")
        before = (home / "CLAUDE.md").read_bytes()
        with pytest.raises(InvalidArgument, match=r"your home folder, outside any git repository"):
            export_rules(lam, home / "CLAUDE.md")
        assert (home / "CLAUDE.md").read_bytes() == before
    assert plan.project == "dotfiles" and [dict(e.scope) for e in plan.lessons] == [{"project": "dotfiles"}]
