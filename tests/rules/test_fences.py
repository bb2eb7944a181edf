"""Fenced code blocks in rules files, as CommonMark reads them, the same for rules and for `@path` imports."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from lamar import Lamar
from lamar.rules import import_rules


def _shop(tmp_path: Path, claude: str) -> Path:
    shop = tmp_path / "shop"
    shop.mkdir()
    subprocess.run(["git", "init", "-q", str(shop)], check=True)
    (shop / "CLAUDE.md").write_text(claude)
    (shop / "notes.md").write_text("- Always deploy on Fridays\n")
    return shop


def _rules(shop: Path) -> tuple[list[str], list[str]]:
    plan = import_rules(Lamar(":memory:"), shop)
    return plan.files, [e.action for e in plan.lessons]


def test_a_fence_indented_four_spaces_neither_closes_nor_opens_a_block(tmp_path: Path) -> None:
    # Inside a block, an indented run is code; a code line after it is no rule, and the rules after the block count.
    shop = _shop(tmp_path, "# Rules\n\n```markdown\nIndent code by four spaces:\n\n    ```\n- Always answer in French\n"
                           "```\n\n- Use tabs\n")
    assert _rules(shop) == (["CLAUDE.md"], ["Use tabs"])


@pytest.mark.parametrize("opening", ["    ```python", "\t```python"])
def test_an_indented_code_block_showing_a_fence_leaves_the_rules_after_it(tmp_path: Path, opening: str) -> None:
    shop = _shop(tmp_path, f"# Rules\n\nA fence looks like:\n\n{opening}\n\n- Use tabs\n- Never push to main\n")
    assert _rules(shop) == (["CLAUDE.md"], ["Use tabs", "Never push to main"])


@pytest.mark.parametrize("item", ["10. Machine setup:\n\n    ```", "- Machine setup:\n\n\t```",
                                  "- Machine setup:\n  ```"])
def test_a_fence_inside_a_list_item_hides_its_imports(tmp_path: Path, item: str) -> None:
    # Four columns in, a fence in a list item is at the item's margin: its `@path` is an example, not an import.
    shop = _shop(tmp_path, f"# Rules\n\n{item}\n    @notes.md\n    - Always run as root\n    ```\n\n- Use tabs\n")
    assert _rules(shop) == (["CLAUDE.md"], ["Use tabs"])


def test_a_list_item_that_ends_closes_its_fence(tmp_path: Path) -> None:
    shop = _shop(tmp_path, "- Build with:\n  ```\n  make\n\n- Use tabs\n\n@notes.md\n")
    assert _rules(shop) == (["CLAUDE.md", "notes.md"], ["Use tabs", "Always deploy on Fridays"])


def test_a_tilde_fence_with_an_info_string_closes_at_a_longer_run(tmp_path: Path) -> None:
    shop = _shop(tmp_path, "~~~ text `quoted`\n@notes.md\n~~~ not a closing fence\n- Never log secrets\n   ~~~~~ \n"
                           "- Use tabs\n")
    assert _rules(shop) == (["CLAUDE.md"], ["Use tabs"])


@pytest.mark.parametrize("before", ["", "## Testing\n"])
def test_an_indented_code_block_is_code_with_the_fence_it_shows(tmp_path: Path, before: str) -> None:
    # Four spaces in, after a blank line or a heading, every line is code: the fence it shows, a
    # directive and an `@path` inside it alike.
    shop = _shop(tmp_path, f"# Rules\n\n{before}    ```bash\n    Always run pytest -x before you push\n"
                           "    @notes.md\n    ```\n\n- Use tabs\n")
    assert _rules(shop) == (["CLAUDE.md"], ["Use tabs"])
