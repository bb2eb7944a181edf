"""A block whose armour says it is public (a PGP public key or signature, a PEM public key, a certificate) is
no secret, however random its body; a key with a name or a provider's shape inside one is still redacted."""

from __future__ import annotations

import random
import string

import pytest

from lamar.safety import scrub

R = random.Random(20261208)
B64 = string.ascii_letters + string.digits + "+/"


def body(lines: int, head: str = "") -> str:
    rows = [head + "".join(R.choice(B64) for _ in range(64 - len(head)))]
    rows += ["".join(R.choice(B64) for _ in range(64)) for _ in range(lines - 1)]
    return "\n".join(rows)


def armoured(label: str, lines: int = 8, head: str = "", headers: str = "") -> str:
    return f"-----BEGIN {label}-----\n{headers}{body(lines, head)}\n-----END {label}-----"


PUBLIC = [
    "import the maintainer's key:\n"
    + armoured("PGP PUBLIC KEY BLOCK", 12, "mQINBGZ", "Comment: release signing key\n\n")[:-35]
    + "\n=x7Qa\n-----END PGP PUBLIC KEY BLOCK-----",
    "gpg --import <<'EOF'\n" + armoured("PGP PUBLIC KEY BLOCK", 10, "mQGNBGZ") + "\nEOF",
    armoured("PGP PUBLIC KEY BLOCK", 10, "mDMEZ").replace("\n", "\r\n"),
    armoured("PGP SIGNATURE", 6, "iQIzBAABCAAdFiEE"),
    armoured("PUBLIC KEY", 6, "MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA"),
    armoured("RSA PUBLIC KEY", 4, "MIIBCgKCAQEA"),
    armoured("CERTIFICATE", 16, "MIIDdzCCAl+gAwIBAgIE"),
    armoured("CERTIFICATE REQUEST", 10, "MIICijCCAXICAQAw"),
    armoured("X509 CRL", 6, "MIIBzTCBtgIBATAN"),
]


@pytest.mark.parametrize("text", PUBLIC)
def test_a_public_block_is_kept(text: str) -> None:
    assert scrub(text) == (text, [])


def test_a_key_with_a_shape_inside_a_public_block_is_still_redacted() -> None:
    token = "ghp_" + "".join(R.choice(string.ascii_letters + string.digits) for _ in range(36))
    text = "-----BEGIN PUBLIC KEY-----\n" + token + "\n-----END PUBLIC KEY-----"
    cleaned, kinds = scrub(text)
    assert token not in cleaned and kinds


@pytest.mark.parametrize(
    "text",
    [
        # A private block, a public block's label on a private one's END, and one never closed.
        armoured("PGP PRIVATE KEY BLOCK", 10, "lQdGBGZ"),
        "-----BEGIN PUBLIC KEY-----\n" + body(8) + "\n-----END PRIVATE KEY-----",
        "-----BEGIN CERTIFICATE-----\n" + body(8),
        # A body after the block is not in it.
        armoured("CERTIFICATE", 4, "MIIDdzCCAl+gAwIBAgIE") + "\nand the key:\n" + body(6),
    ],
)
def test_a_random_body_outside_a_closed_public_block_is_redacted(text: str) -> None:
    cleaned, kinds = scrub(text)
    assert kinds and "[REDACTED:" in cleaned


def test_a_kept_block_of_key_lines_is_judged_once_not_from_each_line(monkeypatch: pytest.MonkeyPatch) -> None:
    # Judged again from each of its lines, a kept block costs its length per line: scrubbing 130 KB of base64
    # prose in 64-character lines took tens of seconds. Counted, not timed: the block is judged whole once.
    import base64

    from lamar.safety import secrets

    judged: list[str] = []
    real = secrets.decodes_to_prose

    def counting(run: str) -> bool:
        if "\n" in run:
            judged.append(run)
        return real(run)

    monkeypatch.setattr(secrets, "decodes_to_prose", counting)
    prose = base64.b64encode(
        ("When the build fails, clear the cache and rebuild the module. " * 60).encode()
    ).decode()
    text = "\n".join(prose[i : i + 64] for i in range(0, len(prose), 64))
    assert scrub(text) == (text, [])
    assert len(judged) == 1
