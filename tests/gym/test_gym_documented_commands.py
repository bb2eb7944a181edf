"""Every gym and audit command the docs quote, and every run the goals table names, is accepted as written;
the flags --volume refuses are the ones the docs name."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

import lamar.audit.__main__ as audit_main
import lamar.audit.null
import lamar.gym.__main__ as gym_main
from lamar.gym import forgetting

ROOT = Path(__file__).resolve().parent.parent.parent
PAGES = ["README.md", *sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").glob("*.md"))]
_PROGRAMS = ("python -m lamar.gym ", "python -m lamar.gym.forgetting ", "python -m lamar.audit ")
# Placeholders a page writes for the reader to fill in, each with a value it stands for here
# (a FILE to read stays unfilled: such a command is left out).
_FILLED = {r"(?<= )N\b": "40", r"=D\b": "=0.999"}


def _spans(text: str) -> list[str]:
    """Inline code spans (one may wrap a line) and the lines of console and bash blocks, `$ ` and
    trailing comments cut, whitespace collapsed."""
    found: list[str] = []
    for block in re.findall(r"```(?:console|bash)\n(.*?)```", text, re.DOTALL):
        found += [line.removeprefix("$ ").split("  #")[0] for line in block.splitlines()]
    prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    found += re.findall(r"`([^`]+)`", prose)
    return [" ".join(span.split()) for span in found]


def _documented() -> list[str]:
    commands = set()
    for page in PAGES:
        for span in _spans((ROOT / page).read_text(encoding="utf-8")):
            for part in span.split(" && "):
                if (part + " ").startswith(_PROGRAMS) and ":" not in part.split()[2] and "FILE" not in part:
                    for placeholder, value in _FILLED.items():
                        part = re.sub(placeholder, value, part)
                    commands.add(part)
    return sorted(commands)


def _goal_runs() -> list[str]:
    """The run column of "The goals at a glance": a span of flags alone is a `python -m lamar.gym` run."""
    text = (ROOT / "docs" / "gym.md").read_text(encoding="utf-8")
    table = text.split("## The goals at a glance", 1)[1].split("\n## ", 1)[0]
    runs = []
    for row in table.splitlines():
        cells = row.split(" | ")
        if row.startswith("| ") and len(cells) >= 4 and not set(cells[2]) <= set("-| "):
            for span in re.findall(r"`([^`]+)`", cells[-2]):
                runs.append(f"python -m lamar.gym {span}" if span.startswith("--") else span)
    return [run for run in runs if (run + " ").startswith(_PROGRAMS)]


def test_the_lists_find_the_commands_they_check() -> None:
    assert "python -m lamar.gym --family 60 --peers --workers 2" in _documented()
    assert "python -m lamar.audit --null 100000 --jobs 2" in _documented()
    assert "python -m lamar.gym --peers --goals" in _goal_runs()
    assert "python -m lamar.audit --physics" in _goal_runs()


def _accepted(command: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The command's exit status with its work left out: what it returns once its flags are all checked."""
    words = command.split()
    program, argv = words[2], words[3:]
    if program == "lamar.gym":
        monkeypatch.setattr(gym_main, "_run", lambda *args: 0)
        return gym_main.main(argv)
    if program == "lamar.gym.forgetting":
        monkeypatch.setattr(forgetting, "frontier", lambda *args, **kwargs: "")
        return forgetting.main(argv) or 0
    monkeypatch.setattr(audit_main, "_job", lambda item: {})
    monkeypatch.setattr(audit_main, "_emit", lambda *args: {})
    monkeypatch.setattr(audit_main, "summarize", lambda rows: [])
    monkeypatch.setattr(audit_main.multiprocessing, "Pool", mock.MagicMock())
    monkeypatch.setattr(lamar.audit.null, "calibrate", lambda *args: "")
    return audit_main.main(argv)


@pytest.mark.parametrize("command", sorted(set(_documented()) | set(_goal_runs())))
def test_a_documented_command_is_accepted_as_written(command: str, monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    # Written files (--json rows.jsonl, --plot gym.png) land in a folder of the test's own.
    monkeypatch.chdir(tmp_path)
    try:
        status = _accepted(command, monkeypatch)
    except SystemExit as exc:
        status = exc.code
    assert status == 0, command


def test_the_volume_section_names_every_flag_volume_refuses() -> None:
    text = (ROOT / "docs" / "gym.md").read_text(encoding="utf-8")
    section = " ".join(text.split("## What a project can expect: volume", 1)[1].split("```", 1)[0].split())
    refused = ["--" + name.replace("_", "-") for name in gym_main._WORLD_FLAGS]
    assert [flag for flag in refused if f"`{flag}`" not in section] == []
