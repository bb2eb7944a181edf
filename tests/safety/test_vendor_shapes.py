"""Credential shapes checked against what each vendor writes down: its docs, or its source where the docs give
only a prefix."""

from __future__ import annotations

import pytest

from lamar.safety import scrub

# Convex's deploy keys: prod:, dev: and preview: a deployment's name, or preview: and project: a team and a
# project (the CLI's isPreviewDeployKey and isProjectKey), then "|" and base64.
_CONVEX_BODY = "eyJ2MiI6ImQ0ZTZmYjE3OWIxZjQ4ZmQ5YjA2NjRmNTc1ZDYwNzQ1In0="
_ABLY_DOCS = "I2E_JQ.OqUdfg:EVKVTCBlzLBPYJiCZTsIW_pqylJ9WVRB5K9P19Ap1y0"  # the example of Ably's "API key format"


@pytest.mark.parametrize("text, secret, kind", [
    (f"CONVEX_DEPLOY_KEY=prod:qualified-jaguar-123|{_CONVEX_BODY}", _CONVEX_BODY, "convex-deploy-key"),
    (f"CONVEX_DEPLOY_KEY=preview:acme-team:web-app|{_CONVEX_BODY}", _CONVEX_BODY, "convex-deploy-key"),
    (f"export KEY='project:acme-team:web-app|{_CONVEX_BODY}'", _CONVEX_BODY, "convex-deploy-key"),
    (f"ABLY_API_KEY={_ABLY_DOCS}", _ABLY_DOCS, "ably-api-key"),
    # Ably's own FAQ shows a key of the older kind, its secret 16 characters.
    ('new Ably.Rest("xVLyHw.b4EB6g:MAVW7HX7u5OjqO5n")', "MAVW7HX7u5OjqO5n", "ably-api-key"),
    ("const ablyKey = 'xVLyHw.b4EB6g:MAVW7HX7u5OjqO5n';", "MAVW7HX7u5OjqO5n", "ably-api-key"),
    ("this.realtimeAbly = connect('xVLyHw.b4EB6g:MAVW7HX7u5OjqO5n')", "MAVW7HX7u5OjqO5n", "ably-api-key"),
    # Unkey's root keys: the dashboard's base58 of [1, 16, 16 random bytes], and its API's version 1 keys.
    ("UNKEY_ROOT_KEY=unkey_3ZDz8Q7sFvKh2mXcNpRt4bWy", "unkey_3ZDz8Q7sFvKh2mXcNpRt4bWy", "unkey-root-key"),
    ("UNKEY_ROOT_KEY=unkey_Hk4mP9qRunkeyv1" + "aB3dE5fG7h" * 4 + "1aB2c3", "unkeyv1", "unkey-root-key"),
    ("standard_" + "3f9a0c7e" * 32, "3f9a0c7e" * 32, "appwrite-api-key"),
    ("EXOSCALE_API_KEY=EXO62ad60fc23f324501c53eb9e", "EXO62ad60fc23f324501c53eb9e", "exoscale-api-key"),
    ("Authorization: pk_4753994_EXP7MPOJ7XQM5UJDV2M45MPF0YHH5YHO", "EXP7MPOJ7XQM5UJDV2M45MPF0YHH5YHO", "clickup-token"),
])
def test_a_vendor_shape_is_redacted(text: str, secret: str, kind: str) -> None:
    cleaned, kinds = scrub(text)
    assert secret not in cleaned and kind in kinds, (cleaned, kinds)


@pytest.mark.parametrize("text", [
    # The Ably rule counts from the word Ably, not from inside "probably", "capably" or "PROBABLY".
    "It is probably fine: xVLyHw.Ab3dEf:Kq9Zx2Lm7Rt4Vb8Nc1Hy6Js3Wd5Fp0Gk2Mq9Xz4Lt7R",
    "PROBABLY FINE: xVLyHw.Ab3dEf:Kq9Zx2Lm7Rt4Vb8Nc1Hy6Js3Wd5Fp0Gk2Mq9Xz4Lt7R",
])
def test_the_ably_rule_starts_at_the_word(text: str) -> None:
    assert "ably-api-key" not in scrub(text)[1]
