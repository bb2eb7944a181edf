"""Credentials known by what stands around them (lamar/safety/contexts.py and the keyed rules): shapes
beyond the held-out corpora's, and the look-alikes each context must leave alone."""

from __future__ import annotations

import pytest

from lamar.safety import scrub

PW = "Zq8mP2vLx7!k"
HEX64 = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
BCRYPT = "$2y$05$q7Wz3Kp9Lm2Xv8Rt5Ns1Bd4Hg6Jc0Fyq7Wz3Kp9Lm2Xv8Rt5Ns1Bd"


@pytest.mark.parametrize(("text", "secret", "kind"), [
    (f"java -Djavax.net.ssl.keyStorePassword={PW} -jar app.jar", PW, "password"),
    (f"mvn deploy -Dgpg.passphrase='{PW}'", PW, "password"),
    (f"PsExec64.exe \\\\db-02 -u ACME\\sql -p \"{PW}\" -h cmd", PW, "password"),
    (f"Invoke-Sqlcmd -ServerInstance db -Username sa -Password:{PW}", PW, "password"),
    (f"doctl compute droplet list -t {PW}", PW, "secret"),
    (f'const wallet = new ethers.Wallet("0x{HEX64}", provider);', HEX64, "private-key"),
    (f"const account = privateKeyToAccount('{HEX64}')", HEX64, "private-key"),
    ("POST http://tb.lan:8080/api/v1/A1b2C3d4E5f6G7h8I9j0/attributes 200", "A1b2C3d4E5f6G7h8I9j0", "device-token"),
    ("the new bootstrap token: q8x2mz.4kd9w0f7p1c3z5ya", "q8x2mz.4kd9w0f7p1c3z5ya", "kubernetes-bootstrap-token"),
    (f"registry:{BCRYPT}\n", BCRYPT, "password-hash"),
    ("TYPESENSE_ADMIN_KEY=Xk29fjQp3Lm7Rt", "Xk29fjQp3Lm7Rt", "secret"),
    ("the DB_PASSWORD was set to Tr0ub4dor&3 by the installer", "Tr0ub4dor&3", "password"),
])
def test_a_credential_known_by_its_context_is_redacted(text: str, secret: str, kind: str) -> None:
    cleaned, kinds = scrub(text)
    assert secret not in cleaned and kind in kinds, (cleaned, kinds)


@pytest.mark.parametrize("text", [
    f"the transfer is tx 0x{HEX64}, mined in block 19000000",
    f"keccak256 of the payload is {HEX64}",
    "GET /api/v1/items?page=2 and POST /api/v1/devices/telemetry 200",
    "use the -password flag, or Connect-VIServer -Password (Get-Credential) to be asked",
    "Connect-VIServer -Server vc01 -User admin -Password $env:VC_PASSWORD",
    "openssl enc -aes-256-cbc -password env:BACKUP_KEY -in db.sql",
    "psexec runs the command as another user; pass -p with the password",
    "the bootstrap token has the form abcdef.0123456789abcdef in the kubeadm docs",  # said about, not given
    "tokens like settings.database_engine stay names",
    "the ADMIN_KEY_ID is ak-prod and the ADMIN_KEY_HEADER is X-Admin-Key",
    "the price is $5$ per seat and $6$ for teams",
    "run mvn -Dmaven.test.skip=true -Dsonar.projectKey=acme_app verify",
])
def test_a_look_alike_of_a_context_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


def test_a_bcrypt_shaped_api_key_keeps_its_header_kind() -> None:
    # JSONBin's master key has bcrypt's shape; outside an htpasswd line it is named by its header.
    cleaned, kinds = scrub(f'curl -H "X-Master-Key: {BCRYPT}" https://api.jsonbin.io/v3/b')
    assert BCRYPT not in cleaned and "password-hash" not in kinds
