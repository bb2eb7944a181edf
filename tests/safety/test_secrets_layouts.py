"""Credentials known by where they stand, each generated anew from a seed: a `.pgpass` line, a Markdown
table's column, a Terraform variable's default, `net use`, wpa_supplicant's `psk=` and `wpa_passphrase`,
a provider token cut into concatenated string literals, and "password" said in Cyrillic."""

from __future__ import annotations

import random
import string
from collections.abc import Iterator
from typing import Any

import pytest

from lamar.safety import scrub

ALNUM = string.ascii_letters + string.digits


def samples(seed: int) -> list[tuple[str, str, str]]:
    """(name, the secret, text holding it), with fresh values drawn from `seed`."""
    rng = random.Random(seed)
    pw = (rng.choice(string.ascii_uppercase) + "".join(rng.choice(ALNUM) for _ in range(9))
          + rng.choice(string.digits) + rng.choice("!#%*_-"))
    body = "".join(rng.choice(ALNUM) for _ in range(93))
    ant = f"sk-ant-api03-{body}-AA"
    cut = rng.randrange(8, len(ant) - 8)
    openai = "sk-proj-" + "".join(rng.choice(ALNUM) for _ in range(40)) + "7"
    gh = "ghp_" + "".join(rng.choice(ALNUM) for _ in range(35)) + "9"
    return [
        (".pgpass line", pw, f"db.internal.example.com:5432:orders:app_rw:{pw}"),
        (".pgpass wildcards", pw, f"cat ~/.pgpass\n*:*:*:postgres:{pw}\n"),
        (".pgpass IP host", pw, f"  10.0.3.7:6432:*:reporting:{pw}\r\n"),
        ("table, password column", pw, f"| user | password |\n|------|----------|\n| alice | {pw} |\n"),
        ("table, token column in bold", pw,
         f"| Service | **API token** | Owner |\n| :-- | :-: | --: |\n| billing | `{pw}` | ops |"),
        ("table, password row", pw, f"| name | value |\n|---|---|\n| host | db1 |\n| password | {pw} |"),
        ("table, no outer bars", pw, f"login | secret\n--- | ---\nci | {pw}"),
        ("terraform default", pw,
         f'variable "db_password" {{\n  type      = string\n  default   = "{pw}"\n  sensitive = true\n}}'),
        ("terraform one line", pw, f'variable "api_token" {{ default = "{pw}" }}'),
        ("net use password first", pw, f"net use Z: \\\\fileserver\\finance {pw} /user:CORP\\alice /persistent:no"),
        ("net use password last", pw, f"NET USE \\\\fileserver\\finance /USER:alice {pw}"),
        ("net use quoted share", pw, f'net use "\\\\fs\\team share" "{pw}" /user:bob'),
        ("wpa_supplicant psk", pw, f'network={{\n    ssid="HomeNet"\n    psk="{pw}"\n}}'),
        ("hostapd wpa_passphrase", pw, f"interface=wlan0\nssid=Office\nwpa_passphrase={pw}\n"),
        ("wpa_passphrase command", pw, f"wpa_passphrase HomeNet {pw} >> /etc/wpa_supplicant.conf"),
        ("wpa_passphrase quoted", pw, f"wpa_passphrase \"Home Net\" '{pw}'"),
        ("concatenated anthropic", ant[cut:], f'ANTHROPIC_KEY = "{ant[:cut]}" + "{ant[cut:]}"'),
        ("concatenated in three", ant[12:40], f"const k = '{ant[:12]}' + '{ant[12:40]}' +\n  '{ant[40:]}';"),
        ("python implicit join", openai[20:], f'key = (\n    "{openai[:20]}"\n    "{openai[20:]}"\n)'),
        ("concatenated github", gh[4:], f'token = "ghp_" + "{gh[4:]}"'),
        ("Russian", pw, f"Пароль от базы — {pw}"),
        ("Russian colon", pw, f"пароль: {pw}"),
        ("Ukrainian", pw, f"пароль до сервера: {pw}"),
        ("Bulgarian", pw, f"Паролата е {pw}"),
        ("Serbian", pw, f"лозинка је {pw}"),
        ("Macedonian", pw, f"Лозинката е «{pw}»"),
        ("Croatian", pw, f"lozinka je {pw}"),
    ]


@pytest.mark.parametrize(("name", "secret", "text"), samples(2718), ids=[s[0] for s in samples(2718)])
def test_a_credential_known_by_where_it_stands_does_not_survive_scrub(name: str, secret: str, text: str) -> None:
    cleaned, kinds = scrub(text)
    assert secret not in cleaned and kinds, (name, cleaned)
    assert "[REDACTED:" in cleaned
    assert scrub(cleaned) == (cleaned, [])


def test_many_seeds_of_every_shape_are_scrubbed() -> None:
    missed = [(name, scrub(text)[0]) for seed in range(150) for name, secret, text in samples(seed)
              if secret in scrub(text)[0]]
    assert missed == []


def test_the_rest_of_the_line_or_table_is_kept() -> None:
    assert scrub("| user | password |\n|---|---|\n| alice | Xq7vR2mZ9tLk |\n| bob | required |")[0] == (
        "| user | password |\n|---|---|\n| alice | [REDACTED:password] |\n| bob | required |")
    assert scrub("db1:5432:app:alice:Xq7vR2mZ9tLk")[0] == "db1:5432:app:alice:[REDACTED:password]"
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    assert scrub(f'token = "{token[:4]}" + "{token[4:]}"\nprint(token)') == (
        'token = "[REDACTED:github-token]"\nprint(token)', ["github-token"])


@pytest.mark.parametrize("text", [
    # .pgpass look-alikes: the format itself, times, /etc/passwd, IPv6, a placeholder
    "hostname:port:database:username:password",
    "01:02:03:04:05",
    "root:x:0:0:root:/root:/bin/bash",
    "fe80:0:0:0:202:b3ff:fe1e:8329",
    "localhost:5432:mydb:me:<your password>",
    "build 2026:11:30:12:00 finished",
    # tables whose credential column holds words, types, placeholders or sentences
    "| option | secret |\n|---|---|\n| DB_URL | yes |\n| API_KEY | required |",
    "| field | type | token |\n|---|---|---|\n| name | str | no |",
    "| name | value |\n|---|---|\n| password | ${DB_PASSWORD} |\n| token | see the vault entry |",
    "| key | where it comes from |\n|---|---|\n| `error_class` | the first error in the prompt |",
    "| case | MB/s |\n|---|---|\n| 'the password is' prose | 0.56 |",
    # terraform: a variable not named for a credential, an empty or templated default
    'variable "password_length" { default = "16" }',
    'variable "region" { default = "eu-west-1" }',
    'variable "db_password" {\n  type = string\n  default = ""\n}',
    'variable "db_password" { default = "${var.fallback}" }',
    # net use without a password, or asking for one
    "net use Z: \\\\fileserver\\finance /user:alice /persistent:yes",
    "net use \\\\fileserver\\finance * /user:alice",
    "net use Z: /delete",
    "to map it, run net use \\\\fileserver\\finance from a prompt",
    # Wi-Fi words that are no key
    "key_mgmt=WPA-PSK\npsk_identity=client1\npsk_file=/etc/hostapd.psk",
    "wpa_passphrase HomeNet > /etc/wpa_supplicant.conf",
    'wpa_passphrase "$SSID" "$PSK"',
    # literals joined that hold no provider token
    'x = "abc" + "def" + name + "ghijk"',
    'print("sk-" + "task-runner")',
    'msg = "see" "the docs"',
    # Cyrillic words about a password
    "пароль: неверный",
    "Пароль — это «секрет»",
    "паролата е сгрешена",
    "лозинка је истекла",
    "Сборка падает после обновления: очистите кэш.",
    "пароли хранятся в Vault",
])
def test_ordinary_text_of_the_same_shapes_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


def test_the_new_rules_are_searched_for_by_their_words() -> None:
    # A rule without needles runs its pattern over every text; the Cyrillic rule's needles are
    # case-sensitive Cyrillic letters, which needles() now reads.
    from lamar.safety import assignments, files
    from lamar.safety.secrets import RULES

    for pattern in (assignments.NET_USE, assignments.WPA_PASSPHRASE, assignments.PROSE_CYRILLIC,
                    files.TERRAFORM_DEFAULT):
        rule = next(rule for rule in RULES if rule.pattern is pattern)
        assert rule.needles is not None and rule.needles.reach is not None, pattern.pattern[:40]
    cyrillic = next(rule for rule in RULES if rule.pattern is assignments.PROSE_CYRILLIC)
    assert cyrillic.needles is not None and ("арол", False) in cyrillic.needles.found


def test_a_text_of_harmless_matches_steps_over_each_place_a_bounded_number_of_times() -> None:
    # Every "net use ... /user:a" here is followed by a plain word, so the rule searches once per
    # match; each search once stepped over every place before it again, which grew as the square.
    from lamar.safety import assignments
    from lamar.safety.needles import Haystack
    from lamar.safety.secrets import RULES, _apply

    rule = next(rule for rule in RULES if rule.pattern is assignments.NET_USE)
    assert rule.needles is not None

    class Counted(list[int]):
        steps = 0

        def __iter__(self) -> Iterator[int]:
            for place in super().__iter__():
                Counted.steps += 1
                yield place

        def __getitem__(self, index: Any) -> Any:
            Counted.steps += 1
            return super().__getitem__(index)

    text = "net use /user:a " * 2_000
    hay = Haystack(text)
    places = Counted(hay._places(rule.needles))
    hay._places_of[rule.needles] = places
    _apply(rule, text, [], hay)
    # A search finds its first place by bisection and steps on from there: a few looks per place and
    # search, where stepping over every earlier place again took as many looks as there are places.
    assert len(places) >= 2_000 and Counted.steps <= 20 * len(places), (len(places), Counted.steps)
