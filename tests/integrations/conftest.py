"""Fixtures the integrations' fault tests share (tests/integrations/store_faults.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.integrations import store_faults as faults


@pytest.fixture
def store_in(tmp_path: Path) -> Iterator[Callable[[str], str]]:
    """Where a store of each kind the fault harness knows lives (`faults.stores`); a module whose stores must all
    sit on the disk that fills (a process of its own) defines its own."""
    with faults.stores(tmp_path) as location:
        yield location
