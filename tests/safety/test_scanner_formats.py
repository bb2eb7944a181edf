"""`scrub` on 90 token formats from gitleaks, trufflehog and GitHub secret scanning (tests/safety/scanner_formats.py).

The rules were tuned on the `TUNING` half only; the `HELD_OUT` half records what they catch of formats
they were not tuned on. Run with `-s` to print both figures (docs/guarantees.md publishes them).
"""

from __future__ import annotations

import pytest

from lamar.safety import scrub
from tests.safety.scanner_formats import FORMATS, HELD_OUT, TUNING, leaked


def _caught(name: str) -> bool:
    text, body = FORMATS[name]
    cleaned, kinds = scrub(text)
    return bool(kinds) and not leaked(cleaned, body)


def test_the_halves_split_the_corpus() -> None:
    assert len(FORMATS) == 90
    assert sorted(TUNING + HELD_OUT) == sorted(FORMATS) and len(TUNING) == len(HELD_OUT) == 45


@pytest.mark.parametrize("name", TUNING)
def test_a_tuning_format_is_redacted(name: str) -> None:
    text, body = FORMATS[name]
    cleaned, kinds = scrub(text)
    assert kinds and not leaked(cleaned, body), cleaned


# The held-out half was first run once, before any rule was written for it: 41 of 45 caught (docs/guarantees.md).
# Rules were later written for the four it missed (Robinhood's rh-api-, SettleMint's sm_pat_, SonarQube
# Cloud's sqco_ in -Dsonar.token=, Twitch's PASS oauth:), so the half is no longer held out; the second
# held-out corpus (tests/safety/heldout_formats.py) was measured before those rules were written.
HELD_OUT_MISSED: set[str] = set()


def test_the_held_out_formats_caught_are_the_ones_recorded() -> None:
    missed = {name for name in HELD_OUT if not _caught(name)}
    print(f"\ntuning formats caught: {sum(map(_caught, TUNING))}/{len(TUNING)}")
    print(f"held-out formats caught: {len(HELD_OUT) - len(missed)}/{len(HELD_OUT)}, missed {sorted(missed)}")
    assert missed == HELD_OUT_MISSED


@pytest.mark.parametrize("text", [
    "see https://docs.github.com/en/webhooks/using-webhooks/handling-webhook-deliveries for retries",
    "GET https://api.github.com/repos/acme/app/hooks/482913377/deliveries 200",
    "https://react.dev/reference/react/hooks/useEffect",
    "https://example.com/webhook/new and https://example.com/webhooks/settings/2",
    "the route is /webhook/a1b2c3d4e5f6 on the API server",  # a path, no URL: no server to post to
    "https://hooks.example.com/hooks/<your-hook-id>/<your-key>",
    "the publishable key pk_live_51HxYzAbCdEfGhIjKlMnOp is safe in the page",
    "set test_live_reload in the config",
    "pytest -k integration_test_Handles500Errors and unit_test_ParseConfigV2Handler",
    "run smoke_test_checkout2payment3refunds before the release",
    "NRPE-check-disk-space-plugin2 runs every minute",
    "the Salesforce org id 00D5g000004XyZq is in the URL",
    "access-production-hosts and access-sandbox-policy are roles",
    "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7vbqajDhA8Nx1Zq2f9ZmW3tLkP0Xb9yVQ3M5k8r2Wm1oLpQz4Ueh ci@build",
])
def test_a_look_alike_of_a_new_format_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


@pytest.mark.parametrize("key", ["ipqo3M_YopRDiyNvrO1myg", "Ab3_xYz9QrT_kLm2NoPq", "k9_Qz-4vT_pL2x"])
def test_a_webhook_key_with_an_underscore_is_redacted(key: str) -> None:
    # secrets.token_urlsafe spells keys with "_" as well as "-": about half of them hold one
    cleaned, kinds = scrub(f"alerts go to https://hooks.example.com/webhook/{key} on failure")
    assert key not in cleaned and kinds == ["webhook-url"], cleaned
