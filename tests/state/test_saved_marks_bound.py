"""The bound docs/postgres.md gives the episodes a saved state's undo marks name is the one a state keeps."""

from __future__ import annotations

import re
from pathlib import Path

from lamar.state import saved


def test_the_docs_give_the_episodes_a_saved_states_marks_name_as_the_state_bounds_them() -> None:
    text = " ".join((Path(__file__).parents[2] / "docs" / "postgres.md").read_text(encoding="utf-8").split())
    found = re.search(r"whose outcomes name at most ([\d ]+) episodes", text)
    assert found is not None
    assert int(found.group(1).replace(" ", "")) == saved._MARKED
