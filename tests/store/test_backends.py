"""The conformance suite on the embedded backends."""

from __future__ import annotations

from pathlib import Path

from tests.store.conformance import FileStoreConformance, StoreConformance


class TestMemoryStore(StoreConformance):
    persistent = False
    processes = False

    def location(self, tmp_path: Path) -> str:
        return ":memory:"


class TestJsonStore(FileStoreConformance):
    def location(self, tmp_path: Path) -> str:
        return str(tmp_path / "nested" / "store.json")


class TestSqliteStore(FileStoreConformance):
    def location(self, tmp_path: Path) -> str:
        return str(tmp_path / "nested" / "store.db")
