"""Vendor token formats `scrub` redacts, each in the shape its vendor documents; every value is
synthetic, drawn from a seeded generator."""

from __future__ import annotations

import random

import pytest

from lamar.safety import scrub

_rng = random.Random(20261204)
_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"


def _r(n: int, alphabet: str = _ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _redacted(text: str, secret: str, kind: str) -> None:
    cleaned, kinds = scrub(text)
    assert secret not in cleaned, cleaned
    assert kind in kinds, kinds


# Doppler's token formats (docs.doppler.com, "Auth Token Formats"): a service token may carry
# its config's slug between the prefix and the key.
DOPPLER = [
    f"dp.st.prd.{_r(43)}",
    f"dp.st.dev_aws-2.{_r(44)}",
    f"dp.said.{_r(40)}",
    f"dp.st.{_r(43)}",
    f"dp.scim.{_r(43)}",
    f"dp.audit.{_r(43)}",
]


@pytest.mark.parametrize("token", DOPPLER)
def test_a_doppler_token_is_redacted(token: str) -> None:
    _redacted(f"doppler run --token {token} -- npm start", token, "doppler-token")
    _redacted(f"DOPPLER_TOKEN={token}", token, "doppler-token")
