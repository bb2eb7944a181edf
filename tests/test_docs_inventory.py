"""The pages that promise a full list keep it full: every extra in docs/install.md, every package in CONTRIBUTING.md.

README.md says "Every extra is listed in Install"; a newcomer who reads `lamar mcp` there and
looks for its extra in that table must find it (it was missing when `lamar[mcp]` landed).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_every_extra_is_in_the_install_table() -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    table = (ROOT / "docs" / "install.md").read_text()
    listed = set(re.findall(r"^\| `lamar\[([a-z-]+)\]`", table, flags=re.MULTILINE))
    listed |= set(re.findall(r"`lamar\[([a-z-]+)\]`", table))  # rows naming several, e.g. anthropic/openai/ollama
    assert extras - listed == set(), "extras missing from docs/install.md's table"
    assert listed - extras == set(), "docs/install.md names extras pyproject.toml does not have"


def test_every_integration_package_is_in_the_contributing_layout() -> None:
    packages = {p.name for p in (ROOT / "integrations").iterdir() if (p / "__init__.py").exists()}
    layout = (ROOT / "CONTRIBUTING.md").read_text().split("## Layout", 1)[1].split("\n## ", 1)[0]
    assert {name for name in packages if name not in layout} == set()


def test_every_option_of_every_command_is_on_its_page() -> None:
    """`--force` of sleep, export and html was documented nowhere in The `lamar` command."""
    import argparse

    from lamar.cli.parser import build_parser

    pages = {"ui": "ui.md", "mcp": "mcp.md", "import-rules": "rules.md", "export-rules": "rules.md",
             "claude-code": "claude-code.md"}
    missing = []

    def walk(name: str, parser: argparse.ArgumentParser, text: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub_name, sub in action.choices.items():
                    walk(f"{name} {sub_name}", sub, text)
            missing.extend(f"lamar {name} {option}" for option in action.option_strings
                           if option.startswith("--") and option != "--help"
                           and not re.search(rf"(?<![\w-]){option}(?![\w-])", text))

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in commands.choices.items():
        walk(name, parser, (ROOT / "docs" / pages.get(name, "cli.md")).read_text(encoding="utf-8"))
    assert missing == []


def test_every_gym_command_the_pages_name_parses() -> None:
    """Install's table named `python -m lamar.gym --plot`, which argparse refuses: --plot takes a file."""
    import shlex

    from lamar.gym.__main__ import _parser

    text = "\n".join(p.read_text(encoding="utf-8") for p in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))])
    commands = set(re.findall(r"`python -m lamar\.gym( [^`]*)?`", text))
    assert len(commands) >= 10
    refused = []
    for args in commands:
        try:
            # The pages' placeholders: N a count, D a discount.
            _parser().parse_args(shlex.split(re.sub(r"\bN\b", "2", args).replace("=D", "=0.99")))
        except SystemExit:
            refused.append(f"python -m lamar.gym{args}")
    assert refused == []
