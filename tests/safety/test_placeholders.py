"""A dotted value is a placeholder when it reads as a name (`settings.SECRET_KEY`, a hostname) and a
secret when a part of it looks drawn at random (`app.K8sXq9...`); every value is synthetic."""

from __future__ import annotations

import random
import string

import pytest

from lamar.safety import is_placeholder, scrub

_rng = random.Random(20261204)
ALNUM = string.ascii_letters + string.digits


def _r(n: int) -> str:
    while True:  # with a digit and both cases, as `fake` in test_scrub_secrets.py draws them
        out = "".join(_rng.choice(ALNUM) for _ in range(n))
        if all(set(out) & set(c) for c in (string.digits, string.ascii_lowercase, string.ascii_uppercase)):
            return out


_BODY = _r(40)
_HALVES = _r(20), _r(20)


@pytest.mark.parametrize(("text", "secret"), [
    (f"API_TOKEN=app.{_BODY}", _BODY),
    (f'export API_TOKEN="app.{_BODY}"', _BODY),
    (f"client_secret: prod.{_HALVES[0]}.{_HALVES[1]}", _HALVES[1]),
    (f'{{"apiKey": "live.{_BODY}"}}', _BODY),
    (f"DB_PASSWORD=app.{_BODY}", _BODY),
    (f"curl --token app.{_BODY} https://api.example.com", _BODY),
])
def test_a_dotted_value_with_a_random_part_under_a_secret_key_is_redacted(text: str, secret: str) -> None:
    cleaned, kinds = scrub(text)
    assert secret not in cleaned and "app." not in cleaned, cleaned
    assert kinds


@pytest.mark.parametrize("text", [
    "VERSION=1.2.3",
    "HOST=api.example.com",
    "CONFIG=settings.toml",
    f"BUILD=release.{_BODY}",  # a random part under a key that names no secret is no secret
    # Under a secret key, a name stays what it was: a hostname, an attribute, a module path.
    "API_TOKEN=api.example.com",
    "TOKEN_HOST=auth.example.com",
    "secret = settings.SECRET_KEY",
    "api_key = self.oauth2Client.accessToken",
    "password = config.Base64URLEncoder.V2",
    "GITHUB_TOKEN=secrets.GITHUB_OAUTH2_SECRET_V2",
])
def test_an_ordinary_dotted_value_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


def test_a_dotted_name_is_a_placeholder_and_a_dotted_token_is_not() -> None:
    assert is_placeholder("settings.SECRET_KEY") and is_placeholder("api.example.com")
    assert not is_placeholder(f"app.{_BODY}")


def test_nearly_every_random_dotted_token_is_redacted() -> None:
    # Drawn with no care for digits or cases: a part of 32 characters lacks one about once in 100.
    seeded = random.Random(7)
    bodies = ["".join(seeded.choice(ALNUM) for _ in range(32)) for _ in range(1000)]
    caught = sum(body not in scrub(f"API_TOKEN=app.{body}")[0] for body in bodies)
    print(f"\nrandom dotted tokens redacted: {caught}/1000")
    assert caught >= 970
