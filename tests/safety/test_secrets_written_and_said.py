"""A `.pgpass` line inside a command that writes it to the file, and passwords said with "is:" or
"set the … password to …", each generated anew from a seed, beside the near misses that must stay."""

from __future__ import annotations

import random
import string

import pytest

from lamar.safety import scrub

ALNUM = string.ascii_letters + string.digits


def samples(seed: int) -> list[tuple[str, str, str]]:
    """(name, the secret, text holding it), with fresh values drawn from `seed`."""
    rng = random.Random(seed)
    pw = (rng.choice(string.ascii_uppercase) + "".join(rng.choice(ALNUM) for _ in range(8))
          + rng.choice(string.digits) + rng.choice("!#%*_-"))
    host = (rng.choice(["db", "pg", "orders", "localhost"])
            + rng.choice(["", ".internal", f"{rng.randrange(9)}.example.com"]))
    port = rng.choice(["5432", "6432", "*"])
    user = rng.choice(["app_rw", "postgres", "reporting"])
    service = rng.choice(["SMTP", "root", "admin", "Grafana", "wifi"])
    return [
        ("echo single-quoted", pw, f"echo '{host}:{port}:app:{user}:{pw}' >> ~/.pgpass"),
        ("echo double-quoted", pw, f'echo "{host}:{port}:*:{user}:{pw}" > "$HOME/.pgpass" && chmod 600 ~/.pgpass'),
        ("echo unquoted", pw, f"echo {host}:{port}:app:{user}:{pw} >> ~/.pgpass"),
        ("printf with a line break", pw, f"printf '{host}:{port}:app:{user}:{pw}\\n' >> /root/.pgpass"),
        ("written from code", pw, f'Path(".pgpass").write_text("{host}:{port}:app:{user}:{pw}\\n")'),
        ("in a lesson's one line", pw, f"run echo '{host}:{port}:app:{user}:{pw}' >> ~/.pgpass, then retry"),
        ("is colon", pw, f"the {service} password is: {pw}"),
        ("was colon", pw, f"Password was: {pw} (rotated since)"),
        ("set to", pw, f"Set the {service} password to {pw} before sending"),
        ("reset to", pw, f"reset the {service} password to {pw} and reboot"),
        ("changed to, with a qualifier", pw, f"I changed the password for {host} to {pw} yesterday"),
        ("foreign colon", pw, f"la contraseña es: {pw}"),
    ]


@pytest.mark.parametrize(("name", "secret", "text"), samples(1618), ids=[s[0] for s in samples(1618)])
def test_the_password_does_not_survive_scrub(name: str, secret: str, text: str) -> None:
    cleaned, kinds = scrub(text)
    assert secret not in cleaned and kinds == ["password"], (name, cleaned)
    assert scrub(cleaned) == (cleaned, [])


def test_many_seeds_of_every_shape_are_scrubbed() -> None:
    missed = [(name, scrub(text)[0]) for seed in range(150) for name, secret, text in samples(seed)
              if secret in scrub(text)[0]]
    assert missed == []


def test_the_rest_of_the_command_or_sentence_is_kept() -> None:
    assert scrub("echo 'db1:5432:app:alice:Xq7vR2mZ9tLk' >> ~/.pgpass")[0] == (
        "echo 'db1:5432:app:alice:[REDACTED:password]' >> ~/.pgpass")
    assert scrub("Set the SMTP password to Zq8#mP2!vL before sending")[0] == (
        "Set the SMTP password to [REDACTED:password] before sending")


@pytest.mark.parametrize("text", [
    # .pgpass-shaped strings that are no password: variables, formats, cache keys, times, the format
    "echo \"db:5432:app:app:$PGPASSWORD\" >> ~/.pgpass",
    "echo \"localhost:5432:*:postgres:${PGPASS}\" >> ~/.pgpass",
    "printf 'localhost:5432:*:postgres:%s\\n' \"$PW\" >> ~/.pgpass",
    "echo 'hostname:port:database:username:password' >> ~/.pgpass",
    "redis.get('user:42:session:abc:def')",
    'cache_key = "tenant:7:orders:page:2"',
    "at '12:30:45:01:02' the build hung",
    "echo '01:02:03:04:05' >> ~/.pgpass",
    "ip -6 addr add 'fe80::1:2:3:4:5' dev eth0",
    "cat ~/.pgpass",
    # "is:" and "to" followed by words, or "to" after no verb that sets it
    "the password is: wrong",
    "the token is: expired",
    "set the password to expire after 90 days",
    "change the password to something stronger",
    "reset the admin password to $NEW_PW",
    "set the token to 3600",
    "send the password to ops@example.com",
    "the password to the staging box is in Vault",
    "a token to sign with",
    "the password to 12 servers leaked",
    "set the timeout; the password to Kp9xLm2Q goes elsewhere",
    "forward the token to Kp9xLm2Q-service",
])
def test_ordinary_text_of_the_same_shapes_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])
