"""install then uninstall on settings files laid out by hand: every byte outside Lamar's hooks kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from lamar_claude_code.settings import installed

from .test_claude_code_install import lamar

PASTED = '{\n  "claudeMdExcludes": ["/home/dev/shop/CLAUDE.md"]\n}\n'  # as `import-rules` prints the snippet
TEAM = ('{\n    "permissions": {"allow": ["Bash(npm run test:*)", "Read(~/.zshrc)"], "deny": []},\n'
        '    "env": {"CITY": "Z\\u00fcrich"},\n    "model" : "sonnet"\n}')
THEIR_HOOKS = ('{\n  "hooks": {\n    "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]\n  },\n'
               '  "env": {"A": "1"}\n}\n')


@pytest.mark.parametrize("written", [PASTED, TEAM, PASTED.replace("\n", "\r\n"), '{"env": {"A": "1"}}'])
def test_uninstall_gives_back_a_hand_laid_file_byte_for_byte(repo: Path, env: dict[str, str], written: str) -> None:
    # The snippet import-rules prints, pasted as it reads, came back from install and uninstall with its list
    # spread over three lines: a file Lamar said it gives back "byte for byte".
    settings = repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_bytes(written.encode())
    done = lamar(env, repo, "install")
    assert done.stdout.count("added") == 5 and len(installed(settings)) == 5, done.stdout + done.stderr
    head = written.split('"hooks"')[0].rstrip("}\r\n ")
    assert settings.read_bytes().decode().startswith(head)  # the user's keys as they were, Lamar's hooks after them
    assert lamar(env, repo, "uninstall").stdout.count("removed") == 5
    assert settings.read_bytes() == written.encode()


def test_hooks_of_their_own_stay_and_the_rest_of_the_file_too(repo: Path, env: dict[str, str]) -> None:
    settings = repo / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(THEIR_HOOKS)
    lamar(env, repo, "install")
    assert len(installed(settings)) == 5 and settings.read_text().endswith('  "env": {"A": "1"}\n}\n')
    lamar(env, repo, "uninstall")
    assert '"command": "say done"' in settings.read_text() and settings.read_text().endswith('"env": {"A": "1"}\n}\n')
