"""Passwords given to commands and code in the shapes their manuals show, each generated anew from a seed:
quoted or bare, by a short flag (`sshpass -p`, `ldapsearch -w`, `keytool -storepass`), an OpenSSL
`pass:` argument, a long flag that ends in password, an XML element, an HTTP auth object, a JWE."""

from __future__ import annotations

import base64
import json
import random
import string

import pytest

from lamar.safety import scrub

ALNUM = string.ascii_letters + string.digits
URL64 = ALNUM + "-_"


def samples(seed: int) -> list[tuple[str, str, str]]:
    """(name, the secret, text holding it), with fresh values drawn from `seed`."""
    rng = random.Random(seed)

    def fake(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    pw = fake(string.ascii_letters, 2) + fake(string.digits, 2) + fake(ALNUM, 8) + fake("!#%*_", 1)
    header = base64.urlsafe_b64encode(json.dumps({"alg": "dir", "enc": "A256GCM"}).encode()).decode().rstrip("=")
    jwe = f"{header}..{fake(URL64, 16)}.{fake(URL64, 120)}.{fake(URL64, 22)}"
    rsa_header = base64.urlsafe_b64encode(b'{"alg":"RSA-OAEP","enc":"A256GCM"}').decode().rstrip("=")
    jwe_keyed = f"{rsa_header}.{fake(URL64, 342)}.{fake(URL64, 16)}.{fake(URL64, 80)}.{fake(URL64, 22)}"
    return [
        ("sshpass quoted", pw, f"sshpass -p '{pw}' ssh deploy@host"),
        ("sshpass double-quoted", pw, f'sshpass -p "{pw}" scp a host:'),
        ("docker login quoted", pw, f"docker login -u ci -p '{pw}' registry.example.com"),
        ("redis-cli quoted", pw, f'redis-cli -h cache -a "{pw}" ping'),
        ("openssl passin", pw, f"openssl rsa -in key.pem -passin pass:{pw} -out plain.pem"),
        ("openssl passout quoted", pw, f"openssl pkcs12 -export -in c.pem -passout 'pass:{pw}' -out c.p12"),
        ("keytool storepass", pw, f"keytool -list -keystore ks.jks -storepass {pw}"),
        ("keytool keypass", pw, f"keytool -genkey -alias a -keypass '{pw}' -keystore ks.jks"),
        ("ldapsearch -w", pw, f"ldapsearch -x -D cn=admin,dc=example,dc=com -w {pw} -b dc=example,dc=com"),
        ("smbclient user%password", pw, f"smbclient //files/share -U alice%{pw}"),
        ("wget --http-password", pw, f"wget --http-user=bob --http-password={pw} https://files.example.com/a"),
        ("--db-password", pw, f"./manage --db-password '{pw}' migrate"),
        ("gpg --passphrase", pw, f"gpg --batch --passphrase {pw} -d backup.gpg"),
        ("maven settings.xml", pw, f"<server>\n  <id>nexus</id>\n  <password>{pw}</password>\n</server>"),
        ("xml apiKey element", pw, f"<apiKey>{pw}</apiKey>"),
        ("HTTPBasicAuth", pw, f'requests.get(url, auth=HTTPBasicAuth("bob", "{pw}"))'),
        ("httpx BasicAuth", pw, f"httpx.BasicAuth('bob', '{pw}')"),
        ("aiohttp BasicAuth", pw, f'aiohttp.BasicAuth("bob", password="{pw}")'),
        ("JWE, direct key", jwe.split(".")[3], f"next-auth session {jwe} expired"),
        ("JWE, wrapped key", jwe_keyed.split(".")[3], jwe_keyed),
    ]


@pytest.mark.parametrize(("name", "secret", "text"), samples(4242), ids=[s[0] for s in samples(4242)])
def test_the_password_given_to_a_command_does_not_survive_scrub(name: str, secret: str, text: str) -> None:
    cleaned, kinds = scrub(text)
    assert secret not in cleaned and kinds, (name, cleaned)
    assert scrub(cleaned) == (cleaned, [])


def test_many_seeds_of_every_shape_are_scrubbed() -> None:
    missed = [(name, scrub(text)[0]) for seed in range(200) for name, secret, text in samples(seed)
              if secret in scrub(text)[0]]
    assert missed == []


@pytest.mark.parametrize("text", [
    "sshpass -p \"$SSHPASS\" ssh host",
    "openssl req -new -key server.key -passin env:KEY_PASS -out server.csr",
    "openssl rsa -in k.pem -passin file:/run/secrets/pass",
    "keytool -list -keystore ks.jks -storepass:env STOREPASS",
    "ldapsearch -x -w $LDAP_PW -b dc=example,dc=com",
    "ldapsearch -x -W -b dc=example,dc=com",
    "smbclient -L //files -U alice",
    "smbclient //files/share -U alice%$SMB_PASS",
    "pg_dump --no-password --db-password-file /run/secrets/db app",
    "gpg --passphrase-file key.txt --batch -d backup.gpg",
    "<password>${env.MVN_PASSWORD}</password> and <passwordPolicy>strict</passwordPolicy>",
    "<token>{{ token }}</token> <apiKey>YOUR_API_KEY</apiKey> <label>Password</label>",
    "auth=HTTPBasicAuth(user, password) and httpx.BasicAuth(USER, PASSWORD)",
    "The eyJhbGciOiJIUzI1NiJ9 header is {\"alg\":\"HS256\"}; a JWE has five parts.",
])
def test_ordinary_commands_and_placeholders_are_kept(text: str) -> None:
    assert scrub(text) == (text, [])


def said(seed: int) -> list[tuple[str, str, str]]:
    """(name, the password, text holding it): passwords said in other languages, or given to PowerShell."""
    rng = random.Random(seed)
    pw = "".join(rng.choice(ALNUM) for _ in range(10)) + rng.choice("!#%*") + rng.choice(string.digits)
    return [
        ("French", pw, f"Le mot de passe est {pw} pour la base de test."),
        ("French colon", pw, f"mot de passe : {pw}"),
        ("Spanish", pw, f"La contraseña es {pw}"),
        ("Spanish colon", pw, f"contraseña: {pw}"),
        ("Portuguese", pw, f"a senha é {pw}"),
        ("German lautet", pw, f"Das Passwort lautet {pw}"),
        ("Dutch", pw, f"het wachtwoord is {pw}"),
        ("PowerShell", pw, f"$cred = ConvertTo-SecureString '{pw}' -AsPlainText -Force"),
        ("PowerShell -String", pw, f'ConvertTo-SecureString -String "{pw}" -AsPlainText -Force'),
    ]


@pytest.mark.parametrize(("name", "secret", "text"), said(77), ids=[s[0] for s in said(77)])
def test_a_password_said_in_another_language_or_given_to_powershell_does_not_survive(
        name: str, secret: str, text: str) -> None:
    cleaned, kinds = scrub(text)
    assert secret not in cleaned and "password" in kinds, (name, cleaned, kinds)
    assert scrub(cleaned) == (cleaned, [])


@pytest.mark.parametrize("text", [
    "Le mot de passe est incorrect.", "La contraseña es incorrecta.", "a senha é inválida",
    "Das Passwort lautet anders.", "het wachtwoord is verlopen",
    "$secure = Read-Host -AsSecureString; ConvertTo-SecureString $plain -AsPlainText -Force",
    "an ellipsis stands for one: PASSWORD=… and <password>…</password>, smbclient -U alice%…, mot de passe : …",
])
def test_a_word_said_about_a_password_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


def test_the_rules_for_commands_and_prose_are_searched_for_by_their_words() -> None:
    # A rule without needles runs its pattern over every text: on this repository's docs, losing
    # them made PROSE seven times slower and COMMAND_PASSWORD nine times.
    from lamar.safety import assignments
    from lamar.safety.secrets import RULES

    for pattern in (assignments.PROSE, assignments.PROSE_FOREIGN, assignments.COMMAND_PASSWORD,
                    assignments.PASS_ARGUMENT, assignments.CLI_FLAG):
        rule = next(rule for rule in RULES if rule.pattern is pattern)
        assert rule.needles is not None and rule.needles.reach is not None, pattern.pattern[:40]
