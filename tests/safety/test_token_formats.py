"""Vendor token formats `scrub` redacts, each in the shape its vendor documents; every value is
synthetic, drawn from a seeded generator."""

from __future__ import annotations

import base64
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


def _discord(user_id: int, last: int) -> str:
    head = base64.urlsafe_b64encode(str(user_id).encode()).decode().rstrip("=")
    return f"{head}.{_r(6, _ALNUM + '_-')}.{_r(last, _ALNUM + '_-')}"


# A Discord bot token: the bot's user id in base64, a timestamp, an HMAC (detect-secrets'
# DiscordBotTokenDetector and the token checks of Discord libraries such as Nostrum).
DISCORD = [_discord(_rng.randrange(10**16, 10**20), last) for last in (27, 38, 38, 27, 38)]


@pytest.mark.parametrize("token", DISCORD)
def test_a_discord_bot_token_is_redacted(token: str) -> None:
    _redacted(f"the bot token is {token}", token, "discord-bot-token")
    _redacted(f'DISCORD_TOKEN="{token}"', token, "discord-bot-token")
    _redacted(f"client.run('{token}')", token, "discord-bot-token")


@pytest.mark.parametrize("text", [
    "mock NotificationServiceClient.cancel.assert_called_once_with_arguments_set",
    "see MigrationsToRunOnStartupOk.Step01.RenameTheLegacyColumnsToSnake",
    "OrderedDictionaryOfValuesX.values.a_long_attribute_name_for_this_x1",
])
def test_a_dotted_name_shaped_like_a_discord_token_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


# Vault tokens: before Vault 1.10, s. (service), b. (batch) and r. (recovery) and a random body;
# since, hvs., hvb. and hvr. (Vault's token documentation; gitleaks' vault-service-token rule).
_VAULT_OLD = f"s.{_r(24)}"


@pytest.mark.parametrize(("text", "token"), [
    (f"export VAULT_TOKEN={_VAULT_OLD}", _VAULT_OLD),
    (f"the vault token is {_VAULT_OLD}.", _VAULT_OLD),
    (f"vault login {_VAULT_OLD}", _VAULT_OLD),
    (f"Unseal Key 1: <kept elsewhere>\nInitial Root Token: r.{_r(24)}", "r."),
    (f'curl -H "X-Vault-Token: {_VAULT_OLD}" http://127.0.0.1:8200/v1/secret/data/app', _VAULT_OLD),
    (f'{{"root_token": "{_VAULT_OLD}"}}', _VAULT_OLD),
    (f"export VAULT_TOKEN=b.AAAAAQ{_r(130, _ALNUM + '_-')}", "b.AAAAAQ"),
    (f"vault login hvs.CAESI{_r(90, _ALNUM + '_-')}", "hvs."),
    (f"token: hvb.AAAAAQ{_r(130, _ALNUM + '_-')}", "hvb."),
    (f"VAULT_TOKEN=hvr.{_r(24)}", "hvr."),
])
def test_a_vault_token_old_or_new_is_redacted(text: str, token: str) -> None:
    _redacted(text, token, "vault-token")


@pytest.mark.parametrize("text", [
    "self.token = s.accessTokenFromHeaderX",
    "vault status shows s.sealedOrUnsealedStatusAb",
    f"see s.{_r(24)} in the diff",  # no Vault or token on the line
])
def test_a_short_dotted_name_near_vault_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


_HEX = "0123456789abcdef"
_LOWER36 = "abcdefghijklmnopqrstuvwxyz0123456789"
_ELEVEN_NEW, _ELEVEN_OLD = f"sk_{_r(48, _HEX)}", _r(32, _HEX)
_MATTERMOST = _r(25, _LOWER36) + "7"


# ElevenLabs: sk_ and 48 hex digits, before that 32 hex digits (trufflehog's elevenlabs v1 and
# v2 detectors). Mattermost: 26 lowercase letters and digits, like every Mattermost id
# (gitleaks' mattermost-access-token rule), so it counts only as the value of a key naming it.
@pytest.mark.parametrize(("text", "secret", "kind"), [
    (f"elevenlabs key {_ELEVEN_NEW}", _ELEVEN_NEW, "elevenlabs-api-key"),
    (f"tts = ElevenLabs(api_key='{_ELEVEN_NEW}')", _ELEVEN_NEW, "elevenlabs-api-key"),
    (f"ELEVENLABS_KEY={_ELEVEN_OLD}", _ELEVEN_OLD, "elevenlabs-api-key"),
    (f'{{"elevenlabs": "{_ELEVEN_OLD}"}}', _ELEVEN_OLD, "elevenlabs-api-key"),
    (f"eleven_labs: {_ELEVEN_OLD}", _ELEVEN_OLD, "elevenlabs-api-key"),
    (f"MATTERMOST_BOT={_MATTERMOST}", _MATTERMOST, "mattermost-token"),
    (f"export MATTERMOST_KEY='{_MATTERMOST}'", _MATTERMOST, "mattermost-token"),
    (f'{{"mattermost": "{_MATTERMOST}"}}', _MATTERMOST, "mattermost-token"),
    (f"mattermost.access = {_MATTERMOST}", _MATTERMOST, "mattermost-token"),
])
def test_an_elevenlabs_or_mattermost_key_is_redacted(text: str, secret: str, kind: str) -> None:
    _redacted(text, secret, kind)


@pytest.mark.parametrize("text", [
    f"MATTERMOST_TEAM_ID={_MATTERMOST}",
    f"mattermost_channel: {_MATTERMOST}",
    f"the channel id is {_MATTERMOST}",
    "mattermost: abcdefghijklmnopqrstuvwxyz",
    f"elevenlabs_voice: {_r(20)}",
    f"sha256 of the mattermost build: {_r(64, _HEX)}",
])
def test_a_mattermost_id_or_an_unrelated_value_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


# A Mattermost incoming webhook (developers.mattermost.com, "Incoming webhooks"): anyone holding its
# URL posts to the channel. The id is a Mattermost id; the server is the user's own.
_HOOK = _r(26, _LOWER36)


@pytest.mark.parametrize("text", [
    f"curl -i -X POST -d @msg.json https://chat.example.com/hooks/{_HOOK}",
    f"MM_HOOK=http://mattermost.internal:8065/hooks/{_HOOK}",
    f'{{"url": "https://example.com/mattermost/hooks/{_HOOK}"}}',
    f"posted to https://chat.example.com/hooks/{_HOOK}.",
])
def test_a_mattermost_webhook_is_redacted(text: str) -> None:
    cleaned, kinds = scrub(text)
    assert _HOOK not in cleaned and "/hooks/[REDACTED:mattermost-webhook]" in cleaned, cleaned
    assert kinds == ["mattermost-webhook"]


@pytest.mark.parametrize("text", [
    "see https://docs.example.com/hooks/pre-commit for the hook list",
    f"https://example.com/hooks/{_HOOK}extra is a longer path segment, not an id",
    f"https://example.com/hooks/{_HOOK[:20]} is too short for one",
])
def test_a_hooks_path_that_holds_no_mattermost_id_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])
