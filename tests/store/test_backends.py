"""The conformance suite on the embedded backends."""

from __future__ import annotations

import unittest
from pathlib import Path

from lamar.conformance import FileStoreConformance, StoreConformance


class TestMemoryStore(StoreConformance, unittest.TestCase):
    persistent = False
    processes = False

    def location(self, folder: Path) -> str:
        return ":memory:"


class TestJsonStore(FileStoreConformance, unittest.TestCase):
    def location(self, folder: Path) -> str:
        return str(folder / "nested" / "store.json")


class TestSqliteStore(FileStoreConformance, unittest.TestCase):
    def location(self, folder: Path) -> str:
        return str(folder / "nested" / "store.db")
