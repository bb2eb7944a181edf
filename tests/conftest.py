"""Shared fixtures: services that CI must have and a laptop may lack."""

from __future__ import annotations

import os
import socket

import pytest

IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}
POSTGRES_URL = os.environ.get("LAMAR_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def service_up(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def require_service(name: str, host: str, port: int) -> None:
    """Fail in CI, skip with a reason on a laptop, when a service is not listening."""
    if service_up(host, port):
        return
    message = f"{name} is not listening on {host}:{port}"
    if IN_CI:
        pytest.fail(f"{message}; CI must provide it")
    pytest.skip(f"{message}; start it to run these tests")


@pytest.fixture
def postgres_url() -> str:
    require_service("PostgreSQL", "127.0.0.1", 5432)
    return POSTGRES_URL
