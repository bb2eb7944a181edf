"""Secret formats that issue 38 found reaching traces and prompts: each generated anew from a seed.

`samples(rng)` writes one realistic fake of each format, so no string here is a real credential.
The fixed samples (seed 3838) are checked one by one; hypothesis draws 100 seeds more, through
`scrub`, `add` and `as_prompt`, and the count of cases run is printed (`-s`). The same samples
go through the Claude Code hook's trace file in tests/integrations/claude_code/test_claude_code_hardening.py.
"""

from __future__ import annotations

import base64
import collections
import random
import string
import uuid

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lamar import Experience, InvalidExperience, Lamar
from lamar.safety import scrub

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
CASES: collections.Counter[str] = collections.Counter()


def samples(rng: random.Random) -> list[tuple[str, str, str]]:
    """(format, the secret, text holding it) for each format the issue names, with fresh values."""

    def fake(alphabet: str, n: int) -> str:
        return "".join(rng.choice(alphabet) for _ in range(n))

    npm_uuid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
    npm_auth = base64.b64encode(f"ci-bot:{fake(ALNUM, 18)}".encode()).decode()
    docker_auth = base64.b64encode(f"deployer:{fake(ALNUM, 20)}".encode()).decode()
    ado_pat = fake(string.ascii_lowercase + "234567", 52)
    func_code = fake(ALNUM + "_-", 54) + "=="
    azure_key = fake(B64, 86) + "=="
    aws_secret = fake(B64, 40)
    csv_secret = fake(B64, 40)
    # A key id broken after AKIA is caught only when its body holds a digit (an unbroken one always
    # is): a line of 16 capitals after "AKIA" is too often a word. About 1 random body in 28 has no
    # digit; docs/guarantees.md states that limit.
    aws_id = "AKIA" + fake(string.ascii_uppercase + "234567", 15) + fake("234567", 1)
    xoxd = "xoxd-" + fake(ALNUM, 40) + "%2F" + fake(ALNUM, 30) + "%3D"
    ppk_private = fake(B64, 64)
    pem_lines = [fake(B64, 64) for _ in range(5)]
    jwt_spaced = (
        base64.urlsafe_b64encode(b'{"alg": "HS256", "typ": "JWT"}').rstrip(b"=").decode() + "."
        + base64.urlsafe_b64encode(f'{{"sub": "{rng.randrange(10**6)}", "iat": 1700000000}}'.encode())
        .rstrip(b"=").decode() + "." + fake(ALNUM + "_-", 43)
    )
    pw = fake(string.ascii_letters, 2) + fake(string.digits, 1) + fake(ALNUM, rng.randrange(4, 12)) + fake("!#%*-_", 1)
    return [
        ("npmrc-authtoken", npm_uuid, f"//registry.npmjs.org/:_authToken={npm_uuid}"),
        ("npmrc-auth", npm_auth, f"registry=https://npm.acme.dev/\n_auth={npm_auth}\nalways-auth=true"),
        ("docker-config", docker_auth, f'{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{docker_auth}"}}}}}}'),
        ("azure-devops-pat", ado_pat, f"export AZURE_DEVOPS_EXT_PAT={ado_pat}"),
        ("azure-functions-code", func_code,
         f"curl https://acme-fn.azurewebsites.net/api/HttpTrigger1?code={func_code}&name=ada"),
        ("bare-azure-key", azure_key, f"the key I copied from the portal:\n{azure_key}\n"),
        ("bare-aws-secret", aws_secret, f"{aws_id}\n{aws_secret}\n"),
        ("aws-credentials-csv", csv_secret,
         ("User name,Password,Access key ID,Secret access key,Console login link\n"
          f"ci-bot,,{aws_id},{csv_secret},https://123456789012.signin.aws.amazon.com/console\n")),
        ("slack-xoxd", xoxd, f"cookie d={xoxd} from the browser"),
        ("putty-ppk", ppk_private,
         ("PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: eddsa-key-20240101\n"
          f"Public-Lines: 2\n{fake(B64, 64)}\n{fake(B64, 20)}\nPrivate-Lines: 1\n{ppk_private}\n"
          f"Private-MAC: {fake('0123456789abcdef', 64)}\n")),
        ("pem-body-no-header", pem_lines[2], "here is the key body:\n" + "\n".join(pem_lines) + "\n"),
        ("jwt-spaced-header", jwt_spaced, f"session={jwt_spaced}"),
        ("prose-pw", pw, f"ssh in as deploy, pw: {pw} and then restart"),
        ("netrc", pw, f"machine api.acme.dev login ci-bot password {pw}"),
        ("requests-auth", pw, f'requests.get(url, auth=("admin","{pw}"))'),
        ("creds-slash", pw, f"the staging creds are admin/{pw} for now"),
        ("german", pw, f"Das Passwort ist {pw} bis Freitag"),
        ("aws-id-split", aws_id[4:], f"key id AKIA\n{aws_id[4:]}"),
    ]


SAMPLES = samples(random.Random(3838))


@pytest.mark.parametrize(("name", "secret", "text"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_the_secret_does_not_survive_scrub(name: str, secret: str, text: str) -> None:
    assert secret not in scrub(text)[0]


def _never_prompted(secret: str, text: str) -> str:
    """Add `text` as a lesson's action: refused, or never shown to the model with the secret."""
    lam = Lamar(":memory:", seed=1)
    try:
        exp_id = lam.add(Experience("the deploy needs credentials", text))
    except InvalidExperience as exc:
        assert "secret" in str(exc) and secret not in str(exc)
        return "refused by add"
    prompt = lam.recall({}, candidates=[exp_id]).as_prompt()
    assert secret not in prompt and secret not in lam.get(exp_id).action
    return "added, scrubbed in the prompt"


@pytest.mark.parametrize(("name", "secret", "text"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_the_secret_never_reaches_a_prompt(name: str, secret: str, text: str) -> None:
    _never_prompted(secret, text)


@settings(max_examples=100, derandomize=True, deadline=None)
@given(st.integers(0, 2**32))
def test_generated_samples_of_every_format_are_scrubbed_and_never_prompted(seed: int) -> None:
    for name, secret, text in samples(random.Random(seed)):
        cleaned, kinds = scrub(text)
        assert secret not in cleaned and kinds, (name, text)
        assert scrub(cleaned)[0] == cleaned, (name, text)
        CASES[f"scrub: {name}"] += 1
        CASES[_never_prompted(secret, text)] += 1


def test_a_thousand_fixed_seeds_of_every_format_are_scrubbed() -> None:
    # The seeds hypothesis draws change with its version; these are the same on every run. They
    # hold an AWS secret with no digit beside its key id, and a PEM line that alone looks plain.
    texts = [(seed, name, secret, text) for seed in range(1000) for name, secret, text in samples(random.Random(seed))]
    missed = [(seed, name) for seed, name, secret, text in texts if secret in scrub(text)[0]]
    print(f"\nfixed-seed secret samples: {len(texts)}, missed: {len(missed)}")
    assert missed == []


def test_print_the_count_of_cases() -> None:
    """Runs last in this module: the count the issue asks to see."""
    print(f"\ngenerated secret-format cases run: {sum(CASES.values())}")
    for name, count in sorted(CASES.items()):
        print(f"  {name}: {count}")
